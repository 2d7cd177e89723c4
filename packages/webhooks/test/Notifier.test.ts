import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifier from "@cobro/webhooks/Notifier"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as F from "@cobro/domain/testing/WebhookFixtures"

const PROD = "https://merchant.example/webhooks"
const OTHER = "https://merchant.example/new-webhooks"
const TEST = "https://merchant.example/test-webhooks"

/**
 * A log with every kind of outcome, merchants whose webhooks change, are deleted and re-registered,
 * and keys rotated between outcomes. Deterministic (sequential ids, test clock): run twice, it writes
 * the same events with the same ids.
 */
const history = Effect.gen(function* () {
  const merchants = CommandHandler.make(Merchant.Merchant)
  yield* F.setTime(0)
  yield* F.merchant("MER_1", { production: PROD, test: TEST })
  yield* F.merchant("MER_2", { production: PROD, keyBase: 10, button: true })
  yield* F.merchant("MER_3", { keyBase: 20 })
  let t = 0
  const tick = () => F.setTime((t += 7))
  for (let n = 1; n <= 12; n++) {
    yield* tick()
    const merchantId = `MER_${(n % 3) + 1}`
    yield* F.approvedSale({ merchantId, n, sandbox: n % 4 === 0 })
    if (n % 3 === 0) {
      yield* tick()
      yield* F.checkoutOutcome(n, "void")
    }
    if (n === 5) yield* F.deleteWebhook("MER_1", "production")
    if (n === 7) {
      const now = yield* DateTime.now
      yield* merchants("MER_1", new Merchant.SetWebhook({ mode: "production", url: OTHER, now }))
      yield* merchants("MER_3", new Merchant.SetWebhook({ mode: "production", url: OTHER, now }))
    }
  }
  yield* tick()
  yield* F.sentCheckout({ merchantId: "MER_2", n: 20 })
  yield* tick()
  yield* F.checkoutOutcome(20, "rejectWithCard")
  yield* F.linkPayment({ merchantId: "MER_1", n: 30 }, "paid")
  yield* F.linkPayment({ merchantId: "MER_2", n: 31 }, "failed")
  yield* F.onlinePayment({ merchantId: "MER_3", n: 40 }, ["approve", "void"])
  yield* F.onlinePayment({ merchantId: "MER_1", n: 41 }, ["reject"])
})

/** Runs `handle` over the whole log, `from` events on (the events before are taken as handled). */
const consume = (
  handle: (e: EventStore.RecordedEvent) => Effect.Effect<void, never, EventStore.EventStore>,
  from = 0
) =>
  Effect.gen(function* () {
    const events = yield* F.allEvents
    for (const event of events.slice(from)) yield* handle(event)
  })

/** What the notifier scheduled: every delivery stream's events, in log order. */
const scheduled = Effect.map(F.allEvents, (events) =>
  events
    .filter((e) => e.streamId.startsWith("WebhookDelivery-"))
    .map((e) => ({ stream: e.streamId, type: e.type, id: e.eventId, data: e.data }))
)

const run = (
  make: Effect.Effect<(e: EventStore.RecordedEvent) => Effect.Effect<void, never, EventStore.EventStore>>,
  from = 0
) =>
  Effect.gen(function* () {
    yield* history
    yield* consume(yield* make, from)
    return yield* scheduled
  }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))

describe("Notifier", () => {
  it.effect(
    "the handler that keeps streams from the log schedules exactly what the reading handler does",
    () =>
      Effect.gen(function* () {
        const reference = yield* run(Effect.succeed(Notifier.handle))
        // 12 sales, 4 voids, a rejection, 2 link payments, 3 online outcomes; MER_3's early ones without URL.
        expect(reference.filter((e) => e.type === "DeliveryScheduled")).toHaveLength(22)
        expect(reference.some((e) => e.type === "DeliveryCancelled")).toBe(true)
        expect(yield* run(Notifier.makeHandler())).toEqual(reference)
        // A memory too small for the log: streams dropped and read again.
        expect(yield* run(Notifier.makeHandler({ streams: 2 }))).toEqual(reference)
      })
  )

  it.effect("a handler started mid-log reads the streams it has not seen from their start", () =>
    Effect.gen(function* () {
      const reference = yield* run(Effect.succeed(Notifier.handle), 0)
      for (const from of [5, 17, 40]) {
        // The events before `from` were handled by an earlier process (the reading handler).
        const twoProcesses = yield* Effect.gen(function* () {
          yield* history
          const events = yield* F.allEvents
          for (const event of events.slice(0, from)) yield* Notifier.handle(event)
          yield* consume(yield* Notifier.makeHandler(), from)
          return yield* scheduled
        }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
        expect(twoProcesses.map((e) => [e.stream, e.type, e.data])).toEqual(
          reference.map((e) => [e.stream, e.type, e.data])
        )
      }
    })
  )
})
