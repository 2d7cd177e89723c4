/**
 * The notifier's handlers against the log's reading handler, in memory. Slow by design: the W18
 * property runs each history three times (the reference, a clean run, a run with one store failure).
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifier from "@cobro/webhooks/Notifier"
import * as Notifications from "@cobro/domain/Notifications"
import * as Outbox from "@cobro/domain/Outbox"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import { buttonActivation, changeMerchant, scheduledByAnother } from "./support/LogSteps.js"

const PROD = "https://merchant.example/webhooks"
const OTHER = "https://merchant.example/new-webhooks"
const TEST = "https://merchant.example/test-webhooks"

/** The clock at T0 and three merchants: MER_1 with both webhooks, MER_2 with the payment button, MER_3 with none. */
const threeMerchants = Effect.gen(function* () {
  yield* F.setTime(0)
  yield* F.merchant("MER_1", { production: PROD, test: TEST })
  yield* F.merchant("MER_2", { production: PROD, keyBase: 10, button: true })
  yield* F.merchant("MER_3", { keyBase: 20 })
})

/**
 * A log with every kind of outcome, merchants whose webhooks change, are deleted and re-registered,
 * and keys rotated between outcomes. Deterministic (sequential ids, test clock): run twice, it writes
 * the same events with the same ids.
 */
const history = Effect.gen(function* () {
  yield* threeMerchants
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
      for (const merchantId of ["MER_1", "MER_3"]) {
        yield* changeMerchant(
          merchantId,
          (now) => new Merchant.SetWebhook({ mode: "production", url: OTHER, now })
        )
      }
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

  describe("in batches", () => {
    type BatchHandler = (
      events: ReadonlyArray<EventStore.LoggedEvent>
    ) => Effect.Effect<void, never, EventStore.EventStore>

    /** Runs a batch handler over the log in consecutive batches of the given sizes (the last takes the rest). */
    const consumeInBatches = (handle: BatchHandler, sizes: ReadonlyArray<number>, from = 0) =>
      Effect.gen(function* () {
        const events = (yield* F.allEvents).slice(from)
        let at = 0
        for (const size of sizes) {
          if (at >= events.length) return
          yield* handle(events.slice(at, at + size))
          at += size
        }
        if (at < events.length) yield* handle(events.slice(at))
      })

    /** The in-memory store with its writes counted. */
    const counted = () => {
      const counts = { append: 0, appendBatch: 0, failedBatches: 0 }
      const layer = Layer.effect(
        EventStore.EventStore,
        Effect.map(InMemoryEventStore.make, (inner) =>
          EventStore.EventStore.of({
            ...inner,
            append: (streamId, events, expected) =>
              Effect.suspend(() => {
                counts.append++
                return inner.append(streamId, events, expected)
              }),
            appendBatch: (items) =>
              Effect.suspend(() => {
                counts.appendBatch++
                return inner
                  .appendBatch(items)
                  .pipe(Effect.tapError(() => Effect.sync(() => counts.failedBatches++)))
              })
          })
        )
      )
      return { counts, layer: Layer.merge(layer, IdGenerator.layerSequential) }
    }

    const sizes = FastCheck.array(FastCheck.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 })

    it.effect.prop(
      "the batch handler schedules exactly what the per-event handler schedules, whatever the batches",
      [sizes],
      ([batches]) =>
        Effect.gen(function* () {
          const reference = yield* run(Effect.succeed(Notifier.handle))
          const batched = yield* Effect.gen(function* () {
            yield* history
            yield* consumeInBatches(yield* Notifier.makeBatchHandler(), batches)
            return yield* scheduled
          }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
          expect(batched).toEqual(reference)
        }),
      { fastCheck: { numRuns: 15 } }
    )

    /** One outcome (or merchant change) of a random log. */
    const step = FastCheck.oneof(
      FastCheck.record({
        kind: FastCheck.constant("sale" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        sandbox: FastCheck.boolean(),
        then: FastCheck.constantFrom("none" as const, "void" as const, "rejectVoid" as const)
      }),
      FastCheck.record({
        kind: FastCheck.constant("rejected" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        withCard: FastCheck.boolean()
      }),
      FastCheck.record({
        kind: FastCheck.constant("link" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        paid: FastCheck.boolean()
      }),
      FastCheck.record({
        kind: FastCheck.constant("online" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        outcomes: FastCheck.constantFrom<ReadonlyArray<"approve" | "reject" | "void">>(
          ["approve"],
          ["reject"],
          ["approve", "void"]
        )
      }),
      FastCheck.record({
        kind: FastCheck.constant("webhook" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        mode: FastCheck.constantFrom("production" as const, "test" as const),
        set: FastCheck.boolean()
      }),
      FastCheck.record({
        kind: FastCheck.constant("rotate" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 }),
        mode: FastCheck.constantFrom("production" as const, "test" as const)
      }),
      FastCheck.record({
        kind: FastCheck.constant("button" as const),
        merchant: FastCheck.integer({ min: 1, max: 3 })
      }),
      FastCheck.record({ kind: FastCheck.constant("tick" as const) })
    )
    type Step = typeof step extends FastCheck.Arbitrary<infer A> ? A : never

    /**
     * A deterministic log from the steps: run twice, it writes the same events with the same ids.
     * `spaced`: each step a second after the previous one, so that no merchant change shares the
     * instant of an outcome logged before it (the reading handler takes the merchant as of the instant).
     */
    const randomHistory = (steps: ReadonlyArray<Step>, spaced = false) =>
      Effect.gen(function* () {
        yield* threeMerchants
        let t = 0
        for (const [i, s] of steps.entries()) {
          const n = i + 1
          if (spaced) yield* F.setTime((t += 1))
          switch (s.kind) {
            case "tick":
              yield* F.setTime((t += 5))
              break
            case "sale":
              yield* F.approvedSale({ merchantId: `MER_${s.merchant}`, n, sandbox: s.sandbox })
              if (s.then !== "none") yield* F.checkoutOutcome(n, s.then)
              break
            case "rejected":
              yield* F.sentCheckout({ merchantId: `MER_${s.merchant}`, n })
              yield* F.checkoutOutcome(n, s.withCard ? "rejectWithCard" : "reject")
              break
            case "link":
              yield* F.linkPayment({ merchantId: `MER_${s.merchant}`, n }, s.paid ? "paid" : "failed")
              break
            case "online":
              yield* F.onlinePayment({ merchantId: `MER_${s.merchant}`, n }, s.outcomes)
              break
            case "webhook":
              yield* changeMerchant(`MER_${s.merchant}`, (now) =>
                s.set
                  ? new Merchant.SetWebhook({ mode: s.mode, url: `${OTHER}/${n}`, now })
                  : new Merchant.DeleteWebhook({ mode: s.mode, now })
              ).pipe(Effect.ignore)
              break
            case "rotate":
              yield* changeMerchant(
                `MER_${s.merchant}`,
                (now) =>
                  new Merchant.RotateKey({
                    integration: "terminal_api",
                    mode: s.mode,
                    keyPair: F.pair(1000 + n),
                    now
                  })
              ).pipe(Effect.ignore)
              break
            case "button":
              yield* changeMerchant(`MER_${s.merchant}`, (now) =>
                buttonActivation(now, 2000 + n, 3000 + n)
              ).pipe(Effect.ignore)
              break
          }
        }
      })

    it.effect.prop(
      "over random sale outcomes, the batch handler schedules what the per-event handler schedules",
      [FastCheck.array(step, { minLength: 1, maxLength: 25 }), sizes],
      ([steps, batches]) =>
        Effect.gen(function* () {
          const within = <A>(
            body: Effect.Effect<A, never, EventStore.EventStore | IdGenerator.IdGenerator>
          ) =>
            Effect.gen(function* () {
              yield* randomHistory(steps)
              return yield* body
            }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
          const reference = yield* within(
            Effect.gen(function* () {
              yield* consume(yield* Notifier.makeHandler({ streams: 4 }))
              return yield* scheduled
            })
          )
          const batched = yield* within(
            Effect.gen(function* () {
              yield* consumeInBatches(yield* Notifier.makeBatchHandler({ streams: 4 }), batches)
              return yield* scheduled
            })
          )
          expect(batched).toEqual(reference)
        }),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect.prop(
      "over random logs with merchant changes, the handlers that keep few streams schedule what the reading handler schedules",
      [FastCheck.array(step, { minLength: 1, maxLength: 30 }), sizes, FastCheck.integer({ min: 1, max: 6 })],
      ([steps, batches, streams]) =>
        Effect.gen(function* () {
          const within = <A>(
            body: Effect.Effect<A, never, EventStore.EventStore | IdGenerator.IdGenerator>
          ) =>
            Effect.gen(function* () {
              yield* randomHistory(steps, true)
              return yield* body
            }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
          const reference = yield* within(
            Effect.gen(function* () {
              yield* consume(Notifier.handle)
              return yield* scheduled
            })
          )
          const kept = yield* within(
            Effect.gen(function* () {
              yield* consume(yield* Notifier.makeHandler({ streams }))
              return yield* scheduled
            })
          )
          const batched = yield* within(
            Effect.gen(function* () {
              yield* consumeInBatches(yield* Notifier.makeBatchHandler({ streams }), batches)
              return yield* scheduled
            })
          )
          expect(kept).toEqual(reference)
          expect(batched).toEqual(reference)
        }),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect.prop(
      "over random logs, the outbox schedules with each outcome exactly what the log's notifier schedules after it, and a notifier run over that log then schedules nothing more",
      [FastCheck.array(step, { minLength: 1, maxLength: 30 })],
      ([steps]) =>
        Effect.gen(function* () {
          const byStream = (all: ReadonlyArray<{ readonly stream: string }>) =>
            [...all].sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0))
          const reference = yield* Effect.gen(function* () {
            yield* randomHistory(steps, true)
            yield* consume(Notifier.handle)
            return yield* scheduled
          }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
          const inline = yield* Effect.gen(function* () {
            yield* randomHistory(steps, true)
            const withOutcomes = yield* scheduled
            // Every delivery stream follows its source event at once in the log: one commit.
            const events = yield* F.allEvents
            for (const [i, e] of events.entries()) {
              if (e.type !== "DeliveryScheduled") continue
              const source = events[i - 1]
              expect(source !== undefined && Notifications.mayRaise(source)).toBe(true)
              expect(e.metadata.causationId).toBe(source!.eventId)
            }
            yield* consume(Notifier.handle)
            expect(yield* scheduled).toEqual(withOutcomes)
            return withOutcomes
          }).pipe(
            Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)),
            Effect.provideService(Outbox.Outbox, Notifications.outbox)
          )
          expect(byStream(inline)).toEqual(byStream(reference))
        }),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect("a batch's deliveries are appended with one appendBatch", () => {
      const { counts, layer } = counted()
      return Effect.gen(function* () {
        yield* history
        counts.append = 0
        yield* consumeInBatches(yield* Notifier.makeBatchHandler(), [10_000])
        expect(counts).toEqual({ append: 0, appendBatch: 1, failedBatches: 0 })
        expect((yield* scheduled).filter((e) => e.type === "DeliveryScheduled")).toHaveLength(22)
      }).pipe(Effect.provide(layer))
    })

    it.effect("a replay of a batch schedules nothing twice, by the same handler or a new one", () => {
      const { layer } = counted()
      return Effect.gen(function* () {
        yield* history
        const handle = yield* Notifier.makeBatchHandler()
        yield* consumeInBatches(handle, [25, 25])
        const first = yield* F.allEvents
        // The same batches again (a checkpoint not saved), then a restarted notifier over the whole log.
        yield* consumeInBatches(handle, [25, 25])
        yield* consumeInBatches(yield* Notifier.makeBatchHandler(), [7, 30])
        yield* consume(Notifier.handle)
        expect(yield* F.allEvents).toEqual(first)
      }).pipe(Effect.provide(layer))
    })

    it.effect("a batch in which one delivery is scheduled already still schedules the others", () => {
      const { counts, layer } = counted()
      return Effect.gen(function* () {
        yield* history
        const events = yield* F.allEvents
        const sales = events.filter((e) => e.type === "SaleApproved")
        // Another notifier scheduled the first sale's delivery already, with an event id of its own.
        const otherId = "00000000-0000-4000-8000-0000000fffff"
        const notificationId = yield* scheduledByAnother(sales[0]!, otherId)
        counts.append = 0
        yield* consumeInBatches(yield* Notifier.makeBatchHandler(), [10_000])
        // The batch failed on that stream; each delivery was then appended alone.
        expect(counts.failedBatches).toBe(1)
        const reference = yield* run(Effect.succeed(Notifier.handle))
        const decode = Schema.decodeUnknownSync(WebhookDelivery.Event)
        const mine = yield* scheduled
        expect(mine.map((e) => [e.stream, e.type, decode(e.data)])).toEqual(
          reference.map((e) => [e.stream, e.type, decode(e.data)])
        )
        expect(mine.filter((e) => e.id === otherId)).toHaveLength(1)
        expect(mine.filter((e) => e.stream === Notifications.deliveryStreamOf(notificationId))).toHaveLength(
          1
        )
      }).pipe(Effect.provide(layer))
    })
  })

  describe("when the store fails, or an event cannot be read (W18)", () => {
    type BatchHandler = (
      events: ReadonlyArray<EventStore.LoggedEvent>
    ) => Effect.Effect<void, never, EventStore.EventStore>

    /** The three handlers, each as a consumer's batch handler. */
    const handlers: ReadonlyArray<[string, Effect.Effect<BatchHandler>]> = [
      ["handle", Effect.succeed((events) => Effect.forEach(events, Notifier.handle, { discard: true }))],
      [
        "makeHandler",
        Effect.map(
          Notifier.makeHandler({ streams: 3 }),
          (handle) => (events) => Effect.forEach(events, handle, { discard: true })
        )
      ],
      ["makeBatchHandler", Notifier.makeBatchHandler({ streams: 3 })]
    ]

    /**
     * The in-memory store, where, once armed, the `failAt`-th call of the notifier (a read or a write)
     * dies once, as a lost connection would; `calls` counts the calls made since arming.
     */
    const faulty = () => {
      const fault = { armed: false, failAt: 0, calls: 0, fired: 0 }
      const once = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.suspend(() => {
          if (!fault.armed) return effect
          if (++fault.calls !== fault.failAt) return effect
          fault.fired++
          return Effect.die(new Error("Connection terminated unexpectedly"))
        })
      const layer = Layer.effect(
        EventStore.EventStore,
        Effect.map(InMemoryEventStore.make, (inner) =>
          EventStore.EventStore.of({
            ...inner,
            append: (streamId, events, expected) => once(inner.append(streamId, events, expected)),
            appendBatch: (items) => once(inner.appendBatch(items)),
            readStream: (streamId, options) => once(inner.readStream(streamId, options)),
            readStreams: (streamIds) => once(inner.readStreams(streamIds))
          })
        )
      )
      return { fault, layer: Layer.merge(layer, IdGenerator.layerSequential) }
    }

    /**
     * Consumes the log in batches as a `Subscription` consumer does: a batch whose handler fails is
     * not checkpointed and is handled again, by the same handler. Returns how many batches failed.
     */
    const consumeAsSubscription = (handle: BatchHandler, sizes: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        const events = yield* F.allEvents
        let failed = 0
        for (let at = 0, i = 0; at < events.length; at += sizes[i % sizes.length]!, i++) {
          const batch = events.slice(at, at + sizes[i % sizes.length]!)
          while (Exit.isFailure(yield* Effect.exit(handle(batch)))) failed++
        }
        return failed
      })

    it.effect.prop(
      "a failure of the store fails the batch, and the batch handled again schedules every delivery: none skipped",
      [
        FastCheck.constantFrom(...handlers),
        FastCheck.array(FastCheck.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
        FastCheck.nat()
      ],
      ([[, make], sizes, seed]) =>
        Effect.gen(function* () {
          const reference = yield* run(Effect.succeed(Notifier.handle))
          // A clean run counts the store calls the handler makes; the faulty run fails one of them.
          const clean = faulty()
          yield* Effect.gen(function* () {
            yield* history
            clean.fault.armed = true
            yield* consumeAsSubscription(yield* make, sizes)
          }).pipe(Effect.provide(clean.layer))
          expect(clean.fault.calls).toBeGreaterThan(0)
          const { fault, layer } = faulty()
          fault.failAt = 1 + (seed % clean.fault.calls)
          const failed = yield* Effect.gen(function* () {
            yield* history
            fault.armed = true
            const failed = yield* consumeAsSubscription(yield* make, sizes)
            expect(yield* scheduled).toEqual(reference)
            return failed
          }).pipe(Effect.provide(layer))
          expect(fault.fired).toBe(1)
          expect(failed).toBe(1)
        }),
      { fastCheck: { numRuns: 30 } }
    )

    it.effect(
      "an event whose stream cannot be decoded is logged and skipped; the events after it are notified",
      () =>
        Effect.gen(function* () {
          for (const [name, make] of handlers) {
            const logs: Array<string> = []
            const logger = Logger.make(({ message }) => {
              logs.push(Array.isArray(message) ? String(message[0]) : String(message))
            })
            const events = yield* Effect.gen(function* () {
              yield* history
              const store = yield* EventStore.EventStore
              // A sale outcome in a stream this version cannot decode (its data is not a checkout event).
              yield* store.append(
                "TerminalCheckout-CHK_UNREADABLE",
                [
                  {
                    eventId: "00000000-0000-4000-8000-00000000bad1",
                    type: "SaleApproved",
                    schemaVersion: 1,
                    data: { nonsense: true },
                    metadata: {}
                  }
                ],
                EventStore.ExpectedVersion.NoStream()
              )
              yield* F.approvedSale({ merchantId: "MER_1", n: 50 })
              const handle = yield* make
              yield* handle(yield* F.allEvents)
              return yield* scheduled
            }).pipe(
              Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)),
              Effect.provide(Logger.replace(Logger.defaultLogger, logger))
            )
            const sale = yield* Effect.gen(function* () {
              yield* history
              yield* F.approvedSale({ merchantId: "MER_1", n: 50 })
              yield* consume(Notifier.handle)
              return yield* scheduled
            }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
            expect(events, name).toEqual(sale)
            expect(
              logs.filter((m) => m.includes("event skipped")),
              name
            ).toHaveLength(1)
          }
        })
    )
  })
})
