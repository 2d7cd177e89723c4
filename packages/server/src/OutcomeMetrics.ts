/**
 * Sales, links and payments by outcome, counted where they are recorded: the event store's appends.
 * A decorator of the `EventStore` port, so that no use case carries a counter: every outcome is an
 * event (`SaleApproved`, `LinkPaid`, `PaymentRefunded`…), and an append that returns has committed
 * (a request's decisions commit in one atomic append). Each node counts its own appends; a
 * dashboard sums the nodes. An identical re-append (a retry whose first try committed) is counted
 * again: rare, and an over-count of one, never a loss.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"

/** `cobro.sales`: terminal sales by outcome. */
export const sales = Metric.counter("cobro.sales", {
  description: "Terminal sales (A3) by outcome.",
  incremental: true
})

/** `cobro.links`: payment links by outcome (created, paid, rejected, cancelled, expired). */
export const links = Metric.counter("cobro.links", {
  description: "Payment links (B) by outcome.",
  incremental: true
})

/** `cobro.payments`: online payments by outcome. */
export const payments = Metric.counter("cobro.payments", {
  description: "Online payments (C) by outcome.",
  incremental: true
})

/** The counter each outcome event adds one to. */
export const OUTCOMES: ReadonlyMap<string, Metric.Metric.Counter<number>> = new Map([
  ["SaleApproved", Metric.tagged(sales, "outcome", "approved")],
  ["SaleRejected", Metric.tagged(sales, "outcome", "rejected")],
  ["SaleVoided", Metric.tagged(sales, "outcome", "voided")],
  ["CheckoutCancelled", Metric.tagged(sales, "outcome", "cancelled")],
  ["LinkCreated", Metric.tagged(links, "outcome", "created")],
  ["LinkPaid", Metric.tagged(links, "outcome", "paid")],
  ["LinkRejected", Metric.tagged(links, "outcome", "rejected")],
  ["LinkCancelled", Metric.tagged(links, "outcome", "cancelled")],
  ["LinkExpired", Metric.tagged(links, "outcome", "expired")],
  ["PaymentApproved", Metric.tagged(payments, "outcome", "approved")],
  ["PaymentRejected", Metric.tagged(payments, "outcome", "rejected")],
  ["PaymentVoided", Metric.tagged(payments, "outcome", "voided")],
  ["PaymentRefunded", Metric.tagged(payments, "outcome", "refunded")]
])

const count = (events: ReadonlyArray<EventStore.NewEvent>) => {
  for (const event of events) OUTCOMES.get(event.type)?.unsafeUpdate(1, [])
}

/** The event store in context, counting the outcomes it appends. */
export const counting = (store: EventStore.EventStore["Type"]): EventStore.EventStore["Type"] => ({
  ...store,
  append: (streamId, events, expected) =>
    Effect.map(store.append(streamId, events, expected), (result) => {
      count(events)
      return result
    }),
  appendBatch: (items) =>
    Effect.map(store.appendBatch(items), (results) => {
      for (const item of items) count(item.events)
      return results
    })
})

/**
 * {@link counting} as a layer over the event store. Every outcome's series starts at 0, so that a
 * rate over it exists before its first event.
 */
export const layer: Layer.Layer<EventStore.EventStore, never, EventStore.EventStore> = Layer.effect(
  EventStore.EventStore,
  Effect.map(EventStore.EventStore, (store) => {
    for (const counter of OUTCOMES.values()) counter.unsafeUpdate(0, [])
    return counting(store)
  })
)
