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
import * as MetricKey from "effect/MetricKey"

const salesKey = MetricKey.counter("cobro.sales", {
  description: "Terminal sales (A3) by outcome.",
  incremental: true
})

const linksKey = MetricKey.counter("cobro.links", {
  description: "Payment links (B) by outcome.",
  incremental: true
})

const paymentsKey = MetricKey.counter("cobro.payments", {
  description: "Online payments (C) by outcome.",
  incremental: true
})

/** `cobro.sales`: terminal sales by outcome. */
export const sales: Metric.Metric.Counter<number> = Metric.fromMetricKey(salesKey)

/** `cobro.links`: payment links by outcome (created, paid, rejected, cancelled, expired). */
export const links: Metric.Metric.Counter<number> = Metric.fromMetricKey(linksKey)

/** `cobro.payments`: online payments by outcome. */
export const payments: Metric.Metric.Counter<number> = Metric.fromMetricKey(paymentsKey)

/** One outcome's counter, its key built once (`Metric.tagged` would build and hash it per update). */
const outcome = (key: MetricKey.MetricKey.Counter<number>, name: string) =>
  Metric.fromMetricKey(MetricKey.tagged(key, "outcome", name))

/** The outcome events of one counter, each with the outcome it counts. */
const outcomesOf = (key: MetricKey.MetricKey.Counter<number>, outcomes: Record<string, string>) =>
  Object.entries(outcomes).map(([type, name]) => [type, outcome(key, name)] as const)

/** The counter each outcome event adds one to. */
export const OUTCOMES: ReadonlyMap<string, Metric.Metric.Counter<number>> = new Map([
  ...outcomesOf(salesKey, {
    SaleApproved: "approved",
    SaleRejected: "rejected",
    SaleVoided: "voided",
    CheckoutCancelled: "cancelled"
  }),
  ...outcomesOf(linksKey, {
    LinkCreated: "created",
    LinkPaid: "paid",
    LinkRejected: "rejected",
    LinkCancelled: "cancelled",
    LinkExpired: "expired"
  }),
  ...outcomesOf(paymentsKey, {
    PaymentApproved: "approved",
    PaymentRejected: "rejected",
    PaymentVoided: "voided",
    PaymentRefunded: "refunded"
  })
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
