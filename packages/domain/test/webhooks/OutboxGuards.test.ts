/**
 * The notifications' outbox decides a sale's webhook on the merchant this process knows
 * (`KnownStates`), without reading it, and guards the merchant's stream at that version in the same
 * append (`Outbox.guard`): a merchant changed behind the cache's back (another node) costs a conflict
 * and a retry inside the commit, never a delivery to a webhook the merchant had replaced.
 */
import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as KnownStates from "@cobro/domain/KnownStates"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifications from "@cobro/domain/Notifications"
import * as Outbox from "@cobro/domain/Outbox"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const PROD = "https://merchant.example/webhooks"
const OTHER = "https://merchant.example/new-webhooks"
const MER_1 = "MER_1"
const merchantStream = Notifications.merchantStreamOf(MER_1)

const merchants = CommandHandler.make(Merchant.Merchant)
const loadCurrentMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const loadCheckout = CommandHandler.load(TerminalCheckout.TerminalCheckout)
const decideCheckout = CommandHandler.decider(TerminalCheckout.TerminalCheckout)
const decodeDelivery = Schema.decodeUnknownSync(WebhookDelivery.Event)

/** What the store was asked: the streams read, and each `appendBatch` with its outcome. */
interface Calls {
  readonly reads: Array<string>
  readonly batches: Array<{ readonly items: ReadonlyArray<EventStore.BatchAppend>; failed?: string }>
}
class StoreCalls extends Context.Tag("test/StoreCalls")<StoreCalls, Calls>() {}

/** The in-memory store, recording its calls. */
const recordingStore = Layer.effectContext(
  Effect.gen(function* () {
    const base = yield* EventStore.EventStore
    const calls: Calls = { reads: [], batches: [] }
    const store: Context.Tag.Service<EventStore.EventStore> = {
      ...base,
      readStream: (streamId, options) => {
        calls.reads.push(streamId)
        return base.readStream(streamId, options)
      },
      appendBatch: (items) => {
        const call: Calls["batches"][number] = { items }
        calls.batches.push(call)
        return Effect.tapError(base.appendBatch(items), (error) =>
          Effect.sync(() => {
            call.failed = error._tag === "ConcurrencyConflict" ? error.streamId : error._tag
          })
        )
      }
    }
    return Context.make(EventStore.EventStore, store).pipe(Context.add(StoreCalls, calls))
  })
).pipe(Layer.provide(InMemoryEventStore.layer))

/** A use case's world: the recording store, sequential ids, a process cache and the notifications' outbox. */
const world = <A, E>(
  body: Effect.Effect<A, E, EventStore.EventStore | IdGenerator.IdGenerator | StoreCalls>
) =>
  body.pipe(
    Effect.provide(Layer.merge(recordingStore, IdGenerator.layerSequential)),
    Effect.provideService(KnownStates.KnownStates, KnownStates.unbounded()),
    Effect.provideService(Outbox.Outbox, Notifications.outbox)
  )

/** The deliveries scheduled, decoded, with their events as logged. */
const deliveries = Effect.map(F.eventsOfType("DeliveryScheduled"), (events) =>
  events.map((logged) => ({
    logged,
    scheduled: decodeDelivery(logged.data) as WebhookDelivery.DeliveryScheduled
  }))
)

/** Sets the merchant's production webhook through the store only: the process's cache does not see it. */
const changedElsewhere = (url: string) =>
  Effect.flatMap(DateTime.now, (now) =>
    merchants(MER_1, new Merchant.SetWebhook({ mode: "production", url, now }))
  )

/** The terminal's approval of checkout `n`, decided on the checkout read and written with `commit`. */
const approvedWithCommit = (n: number) =>
  Effect.gen(function* () {
    const id = IntegrationId.make(`INT_${n}`)
    const now = yield* DateTime.now
    const decided = yield* decideCheckout(
      id,
      new TerminalCheckout.ApproveSale({
        transactionId: TransactionId.make(`TRX_${n}`),
        sale: F.cardSale,
        now
      }),
      yield* loadCheckout(id)
    )
    // No `retryOnConflict` here: a conflict on the merchant's guard must not reach this caller.
    yield* CommandHandler.commit([decided])
  })

/** Given: MER_1 with its production webhook, and its checkouts 1 to `count` sent to the terminal. */
const givenSentCheckouts = (count: number) =>
  Effect.gen(function* () {
    yield* F.merchant(MER_1, { production: PROD })
    for (let n = 1; n <= count; n++) yield* F.sentCheckout({ merchantId: MER_1, n })
  })

describe("the outbox decides on the merchant this process knows, guarded", () => {
  it.effect(
    "with the merchant known, a sale's outcome schedules its delivery without reading the merchant, guarded at its version",
    () =>
      world(
        Effect.gen(function* () {
          const calls = yield* StoreCalls
          yield* givenSentCheckouts(1)
          // The request read the merchant (its API key's merchant): the process knows it.
          const known = yield* loadCurrentMerchant(MER_1)
          calls.reads.length = 0
          calls.batches.length = 0
          yield* F.checkoutOutcome(1, "approve")
          expect(calls.reads.filter((stream) => stream === merchantStream)).toEqual([])
          expect(calls.batches).toHaveLength(1)
          const guards = calls.batches[0]!.items.filter(Outbox.isGuard)
          expect(guards).toEqual([Outbox.guard(merchantStream, known.version)])
          const [delivery] = yield* deliveries
          expect(delivery!.scheduled.url).toBe(PROD)
        })
      )
  )

  it.effect(
    "a merchant changed behind the cache's back: the commit conflicts on the guard, decides again on the merchant read, and the delivery goes to the new webhook",
    () =>
      world(
        Effect.gen(function* () {
          const calls = yield* StoreCalls
          yield* givenSentCheckouts(2)
          const known = yield* loadCurrentMerchant(MER_1)
          yield* changedElsewhere(OTHER)
          calls.batches.length = 0
          // Through `make` (the terminal's answers) …
          yield* F.checkoutOutcome(1, "approve")
          expect(calls.batches.map((b) => b.failed)).toEqual([merchantStream, undefined])
          expect(calls.batches[0]!.items.filter(Outbox.isGuard)).toEqual([
            Outbox.guard(merchantStream, known.version)
          ])
          expect(calls.batches[1]!.items.filter(Outbox.isGuard)).toEqual([
            Outbox.guard(merchantStream, known.version + 1)
          ])
          // … and through `commit` (an adapter's answer with its own decisions), with the cache stale again.
          yield* changedElsewhere(PROD)
          calls.batches.length = 0
          yield* approvedWithCommit(2)
          expect(calls.batches.map((b) => b.failed)).toEqual([merchantStream, undefined])
          const scheduled = yield* deliveries
          expect(scheduled.map((d) => d.scheduled.url)).toEqual([OTHER, PROD])
          expect(scheduled.map((d) => d.scheduled.subject)).toEqual(["TRX_1", "TRX_2"])
        })
      )
  )

  it.effect(
    "a merchant that keeps moving: the guard's retries are bounded, then its conflict is returned",
    () =>
      Effect.gen(function* () {
        let batches = 0
        const restless = Layer.effect(
          EventStore.EventStore,
          Effect.gen(function* () {
            const base = yield* EventStore.EventStore
            const ids = yield* IdGenerator.IdGenerator
            return {
              ...base,
              // Another node changes the merchant just before each batch is written.
              appendBatch: (items) =>
                Effect.gen(function* () {
                  batches++
                  if (items.some(Outbox.isGuard)) {
                    const now = yield* DateTime.now
                    yield* Effect.orDie(
                      merchants(
                        MER_1,
                        new Merchant.SetWebhook({ mode: "production", url: `${OTHER}/${batches}`, now })
                      )
                    ).pipe(
                      Effect.provideService(EventStore.EventStore, base),
                      Effect.provideService(IdGenerator.IdGenerator, ids)
                    )
                  }
                  return yield* base.appendBatch(items)
                })
            } satisfies Context.Tag.Service<EventStore.EventStore>
          })
        ).pipe(Layer.provideMerge(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
        const outcome = yield* Effect.gen(function* () {
          yield* givenSentCheckouts(1)
          batches = 0
          return yield* Effect.flip(approvedWithCommit(1))
        }).pipe(
          Effect.provide(restless),
          Effect.provideService(KnownStates.KnownStates, KnownStates.unbounded()),
          Effect.provideService(Outbox.Outbox, Notifications.outbox)
        )
        expect(outcome).toMatchObject({ _tag: "ConcurrencyConflict", streamId: merchantStream })
        expect(batches).toBe(CommandHandler.MAX_RETRIES + 1)
      })
  )

  /** One step of a history: what the process does, and what another node does to the merchant. */
  const step = FastCheck.oneof(
    FastCheck.record({
      _tag: FastCheck.constant("sale" as const),
      outcome: FastCheck.constantFrom("approve" as const, "reject" as const),
      via: FastCheck.constantFrom("make" as const, "commit" as const)
    }),
    FastCheck.record({ _tag: FastCheck.constant("link" as const), paid: FastCheck.boolean() }),
    // The request's read of its merchant: the process knows it (fresh) from here.
    FastCheck.constant({ _tag: "request" as const }),
    FastCheck.record({
      _tag: FastCheck.constant("elsewhere" as const),
      change: FastCheck.constantFrom("url" as const, "delete" as const, "button" as const),
      url: FastCheck.constantFrom(PROD, OTHER, `${OTHER}/2`)
    })
  )

  it.effect.prop(
    "for random interleavings of merchant changes and outcomes, every delivery is decided on the merchant as it was when its outcome was committed",
    [FastCheck.array(step, { minLength: 1, maxLength: 25 })],
    ([steps]) =>
      world(
        Effect.gen(function* () {
          yield* F.merchant(MER_1, { production: PROD })
          let n = 0
          let seconds = 0
          for (const s of steps) {
            yield* F.setTime((seconds += 5))
            switch (s._tag) {
              case "sale": {
                n++
                yield* F.sentCheckout({ merchantId: MER_1, n })
                if (s.via === "commit" && s.outcome === "approve") yield* approvedWithCommit(n)
                else yield* F.checkoutOutcome(n, s.outcome)
                break
              }
              case "link":
                n++
                yield* F.linkPayment({ merchantId: MER_1, n }, s.paid ? "paid" : "failed")
                break
              case "request":
                yield* loadCurrentMerchant(MER_1)
                break
              case "elsewhere": {
                const now = yield* DateTime.now
                // Refused changes (a button activated twice) change nothing: as on another node.
                yield* Effect.either(
                  merchants(
                    MER_1,
                    s.change === "url"
                      ? new Merchant.SetWebhook({ mode: "production", url: s.url, now })
                      : s.change === "delete"
                        ? new Merchant.DeleteWebhook({ mode: "production", now })
                        : new Merchant.ActivateIntegration({
                            integration: "payment_button",
                            production: F.pair(30),
                            test: F.pair(31),
                            now
                          })
                  )
                )
              }
            }
          }
          const log = yield* F.allEvents
          const raising = log.filter(Notifications.mayRaise)
          const scheduled = yield* deliveries
          // Every outcome scheduled its delivery, in its own commit.
          expect(scheduled.map((d) => d.logged.metadata.causationId)).toEqual(raising.map((e) => e.eventId))
          for (const { logged, scheduled: delivery } of scheduled) {
            const source = log.find((e) => e.eventId === logged.metadata.causationId)!
            expect(source.checkpoint.transactionId).toBe(logged.checkpoint.transactionId)
            const history = log.filter(
              (e) => e.streamId === source.streamId && e.streamVersion <= source.streamVersion
            )
            const notice = Option.getOrThrow(Notifications.noticeFromHistory(source, history))
            // The merchant as of the commit: every merchant event logged before the delivery.
            const merchant = Notifications.merchantFromHistory(
              log.filter((e) => e.streamId === merchantStream && e.globalPosition < logged.globalPosition),
              Number.MAX_SAFE_INTEGER
            )
            const expected = Either.getOrThrow(Notifications.deliveryOf(source.eventId, notice, merchant))
            expect({ url: delivery.url, signingKey: delivery.signingKey }).toEqual({
              url: expected.url,
              signingKey: expected.signingKey
            })
          }
        })
      ),
    { fastCheck: { numRuns: 60 } }
  )
})
