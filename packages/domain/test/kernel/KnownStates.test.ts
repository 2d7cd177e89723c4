/**
 * Loads through known states (`CommandHandler.loadCurrent`): the same state and version as a replay
 * of the whole stream, whatever the history and however loads and appends interleave, while reading
 * only the events appended since the state kept.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as KnownStates from "@cobro/domain/KnownStates"
import * as Merchant from "@cobro/domain/Merchant"
import { amount } from "@cobro/domain/Money"

const MER_1 = MerchantId.make("MER_1")
const now = DateTime.unsafeMake(Date.UTC(2026, 10, 21, 15))
const handle = CommandHandler.make(Merchant.Merchant)
const replay = CommandHandler.load(Merchant.Merchant)
const loadCurrent = CommandHandler.loadCurrent(Merchant.Merchant)

/** The in-memory store, recording the `fromVersion` of each read of a stream. */
class Reads extends Context.Tag("test/Reads")<Reads, Array<number | undefined>>() {}
const recordingStore = Layer.effectContext(
  Effect.gen(function* () {
    const base = yield* EventStore.EventStore
    const reads: Array<number | undefined> = []
    const store: Context.Tag.Service<EventStore.EventStore> = {
      ...base,
      readStream: (streamId, options) => {
        reads.push(options?.fromVersion)
        return base.readStream(streamId, options)
      }
    }
    return Context.make(EventStore.EventStore, store).pipe(Context.add(Reads, reads))
  })
).pipe(Layer.provide(InMemoryEventStore.layer))

const command = FastCheck.oneof(
  FastCheck.record({
    min: FastCheck.integer({ min: 1, max: 1000 }),
    span: FastCheck.integer({ min: 0, max: 1000 })
  }).map(
    ({ min, span }) =>
      new Merchant.SetLinkMethod({ method: "CREDIT_CARD", min: amount(min), max: amount(min + span), now })
  ),
  FastCheck.constant(new Merchant.DisableMerchant({ now })),
  FastCheck.constant(new Merchant.EnableMerchant({ now }))
)
const step = FastCheck.oneof(
  command.map((c) => ({ _tag: "append" as const, command: c })),
  FastCheck.constant({ _tag: "load" as const })
)

describe("loads through known states", () => {
  it.effect.prop(
    "a load through known states equals a replay of the whole stream, after any history of appends and loads",
    [FastCheck.array(step, { maxLength: 30 })],
    ([steps]) =>
      Effect.gen(function* () {
        yield* handle(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Tienda", now }))
        for (const s of [...steps, { _tag: "load" as const }]) {
          if (s._tag === "append") {
            yield* Effect.either(handle(MER_1, s.command))
            continue
          }
          const known = yield* loadCurrent(MER_1)
          const replayed = yield* replay(MER_1)
          expect(known.version).toBe(replayed.version)
          expect(known.state).toEqual(replayed.state)
        }
      }).pipe(
        Effect.provide(Layer.mergeAll(InMemoryEventStore.layer, IdGenerator.layerSequential)),
        Effect.provideService(KnownStates.KnownStates, KnownStates.unbounded())
      )
  )

  it.effect("a kept state is brought up to date by reading only the events after its version", () =>
    Effect.gen(function* () {
      yield* handle(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Tienda", now }))
      for (let i = 1; i <= 20; i++) {
        yield* handle(
          MER_1,
          new Merchant.SetLinkMethod({ method: "CREDIT_CARD", min: amount(i), max: amount(1000), now })
        )
      }
      const reads = yield* Reads
      /** The `fromVersion` of each read a load made. */
      const readsOf = <A, E, R>(load: Effect.Effect<A, E, R>) =>
        Effect.gen(function* () {
          reads.length = 0
          const result = yield* load
          return { result, reads: [...reads] }
        })
      const first = yield* readsOf(loadCurrent(MER_1))
      expect(first.reads).toEqual([undefined]) // nothing kept yet: a replay
      yield* handle(MER_1, new Merchant.DisableMerchant({ now }))
      const second = yield* readsOf(loadCurrent(MER_1))
      expect(second.reads).toEqual([first.result.version + 1])
      const third = yield* readsOf(loadCurrent(MER_1))
      expect(third.reads).toEqual([second.result.version + 1])
      expect(second.result.state._tag).toBe("DISABLED")
      expect(third.result).toEqual(second.result)
    }).pipe(
      Effect.provide(Layer.mergeAll(recordingStore, IdGenerator.layerSequential)),
      Effect.provideService(KnownStates.KnownStates, KnownStates.unbounded())
    )
  )

  it.effect("without a cache (the default), every load replays the stream", () =>
    Effect.gen(function* () {
      yield* handle(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Tienda", now }))
      const reads = yield* Reads
      reads.length = 0
      yield* loadCurrent(MER_1)
      yield* loadCurrent(MER_1)
      expect(reads).toEqual([undefined, undefined])
    }).pipe(Effect.provide(Layer.mergeAll(recordingStore, IdGenerator.layerSequential)))
  )
})

describe("decisions on known states (loadKnown, commit)", () => {
  const decide = CommandHandler.decider(Merchant.Merchant)
  const loadKnown = CommandHandler.loadKnown(Merchant.Merchant)
  const setMin = (min: number) =>
    new Merchant.SetLinkMethod({ method: "CREDIT_CARD", min: amount(min), max: amount(1000), now })
  /** Decides `command` on the kept state and commits it, retrying from fresh reads on conflict. */
  const decideAndCommit = (command: Merchant.Command) =>
    CommandHandler.retryOnConflict(
      Effect.gen(function* () {
        const decided = yield* decide(MER_1, command, yield* loadKnown(MER_1))
        yield* CommandHandler.commit([decided])
        return decided.handled
      })
    )

  it.effect(
    "a committed state is decided on again without a read; once another writer moves the stream on, the commit conflicts, forgets it, and the retry reads and decides on what is stored",
    () =>
      Effect.gen(function* () {
        const reads = yield* Reads
        yield* handle(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Tienda", now }))
        reads.length = 0
        const first = yield* decideAndCommit(setMin(5))
        expect(reads).toEqual([undefined]) // nothing kept yet: a replay
        reads.length = 0
        const second = yield* decideAndCommit(setMin(6))
        expect(reads).toEqual([]) // the state the first commit wrote
        expect(second.version).toBe(first.version + 1)
        // Another writer (another node) disables the account behind the kept state's back.
        yield* handle(MER_1, new Merchant.DisableMerchant({ now }))
        reads.length = 0
        const third = yield* decideAndCommit(setMin(7))
        expect(reads).toEqual([undefined]) // the conflict forgot the kept state; the retry replayed
        expect(third.version).toBe(second.version + 2)
        expect(third.state).toEqual((yield* replay(MER_1)).state)
        expect(third.state._tag).toBe("DISABLED")
      }).pipe(
        Effect.provide(Layer.mergeAll(recordingStore, IdGenerator.layerSequential)),
        Effect.provideService(KnownStates.KnownStates, KnownStates.unbounded())
      )
  )
})
