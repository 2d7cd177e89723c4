import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { createLinkCommand, now, startPaymentCommand } from "../fixtures/Links.js"
import { freshly } from "../fixtures/Scenario.js"
import { type Interloper, watchedStore } from "../fixtures/Stores.js"

const createLink = createLinkCommand(1)
const startPayment = startPaymentCommand

/**
 * A store in which another writer slips in between a handler's read and its append: just before
 * the `nth` append (1-based), `interloper` runs against the underlying store.
 */
const racingStore = (nth: number, interloper: Interloper) => {
  let appends = 0
  return watchedStore((method) => (method === "append" && ++appends === nth ? interloper : undefined))
}

/** The tag of a command's refusal, if it was refused. */
const refusal = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>) =>
  Either.getLeft(result).pipe(Option.map((e) => e._tag))

/** Runs a test body on its own in-memory store and sequential ids. */
const onStore = freshly(InMemoryEventStore.layerWithSequentialIds)

describe("CommandHandler", () => {
  const handle = CommandHandler.make(PaymentLink.PaymentLink)

  it.effect("after a conflict the command is decided again on the fresh state (two tabs pay once)", () =>
    // The second append is this tab's payment: the other tab's lands just before it.
    freshly(racingStore(2, CommandHandler.make(PaymentLink.PaymentLink)("LNK_1", startPayment("TRX_1"))))(
      function* () {
        yield* handle("LNK_1", createLink)
        // The other tab's payment lands between this handler's read and its append.
        const result = yield* Effect.either(handle("LNK_1", startPayment("TRX_2")))
        expect(refusal(result)).toEqual(Option.some("LinkNotInState"))
        const loaded = yield* CommandHandler.load(PaymentLink.PaymentLink)("LNK_1")
        expect(loaded.version).toBe(2)
        expect(loaded.state._tag === "PROCESSING" && Option.getOrThrow(loaded.state.transactionId)).toBe(
          "TRX_1"
        )
      }
    )
  )

  it.effect("a lost race followed by a still-valid decision appends after the winner", () =>
    freshly(racingStore(1, CommandHandler.make(PaymentLink.PaymentLink)("LNK_1", createLink)))(function* () {
      const result = yield* handle("LNK_1", createLink).pipe(Effect.either)
      // The interloper created the link first: this creation is refused, nothing is duplicated.
      expect(refusal(result)).toEqual(Option.some("LinkAlreadyExists"))
      const store = yield* EventStore.EventStore
      expect((yield* store.readStream("PaymentLink-LNK_1")).map((e) => e.type)).toEqual(["LinkCreated"])
    })
  )

  it.effect("a no-op appends nothing and keeps the version", () =>
    onStore(function* () {
      yield* handle("LNK_1", createLink)
      yield* handle("LNK_1", new PaymentLink.CancelLink({ now }))
      const again = yield* handle("LNK_1", new PaymentLink.CancelLink({ now }))
      expect(again.events).toEqual([])
      expect(again.version).toBe(2)
    })
  )

  it.effect("events are stored with their type, schema version and metadata", () =>
    onStore(function* () {
      yield* handle("LNK_1", createLink, { actor: "MER_1", requestId: "req-1" })
      const store = yield* EventStore.EventStore
      const [stored] = yield* store.readStream("PaymentLink-LNK_1")
      expect(stored).toMatchObject({
        type: "LinkCreated",
        schemaVersion: 1,
        metadata: { actor: "MER_1", requestId: "req-1" },
        data: { _tag: "LinkCreated", linkId: "LNK_1", createdAt: "2026-11-21T15:00:00.000Z" }
      })
    })
  )

  /** A store that counts the stream reads. */
  const countingStore = Layer.effect(
    EventStore.EventStore,
    Effect.gen(function* () {
      const inner = yield* InMemoryEventStore.make
      const reads = yield* Ref.make(0)
      return {
        ...inner,
        readStream: (streamId, options) =>
          Effect.zipRight(
            Ref.update(reads, (n) => n + 1),
            inner.readStream(streamId, options)
          ),
        reads
      } as EventStore.EventStore["Type"]
    })
  ).pipe(Layer.provideMerge(IdGenerator.layerSequential))
  const counting = freshly(countingStore)
  const readsOf = Effect.map(
    EventStore.EventStore,
    (store) => (store as unknown as { reads: Ref.Ref<number> }).reads
  )

  it.effect("a command decided on the state the caller holds reads nothing", () =>
    counting(function* () {
      const created = yield* handle("LNK_1", createLink)
      const reads = yield* readsOf
      const before = yield* Ref.get(reads)
      const started = yield* handle("LNK_1", startPayment("TRX_1"), {}, created)
      expect(yield* Ref.get(reads)).toBe(before)
      expect(started.version).toBe(2)
      expect(started.state._tag).toBe("PROCESSING")
    })
  )

  it.effect("a stale known state conflicts, and the command is decided again on the stream", () =>
    onStore(function* () {
      const created = yield* handle("LNK_1", createLink)
      // Another writer moved the link on after `created` was taken.
      yield* handle("LNK_1", startPayment("TRX_1"))
      const result = yield* Effect.either(handle("LNK_1", startPayment("TRX_2"), {}, created))
      expect(refusal(result)).toEqual(Option.some("LinkNotInState"))
      const store = yield* EventStore.EventStore
      expect((yield* store.readStream("PaymentLink-LNK_1")).map((e) => e.type)).toEqual([
        "LinkCreated",
        "LinkPaymentStarted"
      ])
    })
  )

  it.effect(
    "a creation on a fresh id reads nothing; on an id already taken it is decided on the stored state",
    () =>
      counting(function* () {
        const reads = yield* readsOf
        const created = yield* handle("LNK_1", createLink, {}, CommandHandler.fresh(PaymentLink.PaymentLink))
        expect(yield* Ref.get(reads)).toBe(0)
        expect(created.version).toBe(1)
        const again = yield* Effect.either(
          handle("LNK_1", createLink, {}, CommandHandler.fresh(PaymentLink.PaymentLink))
        )
        expect(refusal(again)).toEqual(Option.some("LinkAlreadyExists"))
        expect(yield* Ref.get(reads)).toBe(1)
      })
  )
})
