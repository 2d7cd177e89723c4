/**
 * The batch command handler (issue 5, webhooks throughput): many commands on their own streams,
 * decided on the states held and written with one `appendBatch`, each ending as if handled alone.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import { TransactionId } from "@cobro/domain/Ids"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { createLinkCommand, now, startPaymentCommand } from "../fixtures/Links.js"
import { type Interloper, watchedStore } from "../fixtures/Stores.js"

const handle = CommandHandler.make(PaymentLink.PaymentLink)
const handleBatch = CommandHandler.makeBatch(PaymentLink.PaymentLink)
const fresh = CommandHandler.fresh(PaymentLink.PaymentLink)

type Kind = "create" | "start" | "complete" | "fail" | "cancel"
interface Item {
  readonly link: number
  readonly kind: Kind
  readonly trx: number
}

const transactionId = (item: Item) => TransactionId.make(`TRX_${item.link}x${item.trx}`)

const commandOf = (item: Item): PaymentLink.Command => {
  switch (item.kind) {
    case "create":
      return createLinkCommand(item.link)
    case "start":
      return startPaymentCommand(transactionId(item))
    case "complete":
      return new PaymentLink.CompletePayment({ transactionId: transactionId(item), now })
    case "fail":
      return new PaymentLink.FailPayment({ transactionId: transactionId(item), now })
    case "cancel":
      return new PaymentLink.CancelLink({ now })
  }
}

const itemArb = FastCheck.record({
  link: FastCheck.integer({ min: 1, max: 3 }),
  kind: FastCheck.constantFrom<Kind>("create", "create", "start", "complete", "fail", "cancel"),
  trx: FastCheck.integer({ min: 1, max: 2 })
})
/** Rounds of commands, each round on distinct links (one stream once per batch). */
const distinctRounds = FastCheck.array(
  FastCheck.uniqueArray(itemArb, { selector: (i) => i.link, maxLength: 3 }),
  {
    maxLength: 10
  }
)
/** Rounds in which a link may come several times. */
const anyRounds = FastCheck.array(FastCheck.array(itemArb, { maxLength: 5 }), { maxLength: 8 })

type Result = CommandHandler.BatchResult<PaymentLink.Event, PaymentLink.State, PaymentLink.Error>
const summary = (result: Result) =>
  Either.match(result, {
    onLeft: (error) => ({ error: error._tag }),
    onRight: (handled) => ({
      events: handled.events.map((e) => e._tag),
      state: handled.state._tag,
      version: handled.version
    })
  })

/**
 * Every stored event: in log order with ids and positions; else stream by stream (a command on a
 * stream already in its batch is written after the batch, so the log interleaves streams otherwise).
 */
const stored = (withIds: boolean) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ after: EventStore.Start, limit: 10_000 }), (events) =>
      (withIds
        ? events
        : [...events].sort(
            (a, b) => a.streamId.localeCompare(b.streamId) || a.streamVersion - b.streamVersion
          )
      ).map((e) => ({
        ...(withIds ? { eventId: e.eventId, globalPosition: e.globalPosition } : {}),
        streamId: e.streamId,
        streamVersion: e.streamVersion,
        type: e.type,
        schemaVersion: e.schemaVersion,
        data: e.data,
        metadata: e.metadata
      }))
    )
  )

const metadataOf = (round: number, index: number): EventStore.EventMetadata => ({
  actor: `round-${round}`,
  requestId: `req-${index}`
})

/** The reference: every command handled alone by `make`, on the state its previous command left. */
const oneByOne = (rounds: ReadonlyArray<ReadonlyArray<Item>>, withIds: boolean) =>
  Effect.gen(function* () {
    const known = new Map<string, CommandHandler.Known<PaymentLink.State>>()
    const results: Array<ReturnType<typeof summary>> = []
    for (const [r, round] of rounds.entries()) {
      for (const [i, item] of round.entries()) {
        const id = `LNK_${item.link}`
        const result = yield* Effect.either(
          handle(id, commandOf(item), metadataOf(r, i), known.get(id) ?? fresh)
        )
        if (Either.isRight(result)) known.set(id, result.right)
        results.push(summary(result))
      }
    }
    return { results, events: yield* stored(withIds) }
  }).pipe(Effect.provide(InMemoryEventStore.layerWithSequentialIds))

/** Each round as one batch, on the states the previous rounds left. */
const inBatches = (rounds: ReadonlyArray<ReadonlyArray<Item>>, withIds: boolean) =>
  Effect.gen(function* () {
    const known = new Map<string, CommandHandler.Known<PaymentLink.State>>()
    const results: Array<ReturnType<typeof summary>> = []
    for (const [r, round] of rounds.entries()) {
      const batch = yield* handleBatch(
        round.map((item, i) => ({
          id: `LNK_${item.link}`,
          command: commandOf(item),
          metadata: metadataOf(r, i),
          known: known.get(`LNK_${item.link}`) ?? fresh
        }))
      )
      for (const [i, result] of batch.entries()) {
        if (Either.isRight(result)) known.set(`LNK_${round[i]!.link}`, result.right)
        results.push(summary(result))
      }
    }
    return { results, events: yield* stored(withIds) }
  }).pipe(Effect.provide(InMemoryEventStore.layerWithSequentialIds))

/** The in-memory store with its writes counted; `beforeBatch` runs (once) just before the first batch. */
const counted = (beforeBatch?: Interloper) => {
  const counts = { append: 0, appendBatch: 0 }
  let pending = beforeBatch
  const layer = watchedStore((method) => {
    counts[method]++
    const interloper = method === "appendBatch" ? pending : undefined
    if (interloper !== undefined) pending = undefined
    return interloper
  })
  return { counts, layer }
}

const item = (link: number, kind: Kind, trx = 1, known: CommandHandler.Known<PaymentLink.State> = fresh) => ({
  id: `LNK_${link}`,
  command: commandOf({ link, kind, trx }),
  known
})

const typesOf = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(streamId), (events) => events.map((e) => e.type))
  )

describe("CommandHandler.makeBatch", () => {
  // On distinct streams the log is the same to the event ids; with a stream named twice, stream by stream.
  for (const [title, arbitrary, withIds] of [
    [
      "a batch on distinct streams writes what the commands handled one by one write, event ids included",
      distinctRounds,
      true
    ],
    [
      "a batch naming a stream twice ends as the commands handled one by one: same results, same streams",
      anyRounds,
      false
    ]
  ] as const) {
    it.effect.prop(title, [arbitrary], ([rounds]) =>
      Effect.gen(function* () {
        const reference = yield* oneByOne(rounds, withIds)
        expect(yield* inBatches(rounds, withIds)).toEqual(reference)
      })
    )
  }

  it.effect.prop(
    "loadMany gives every id, written or unknown, the state and version that load gives it",
    [anyRounds],
    ([rounds]) =>
      Effect.gen(function* () {
        for (const [r, round] of rounds.entries()) {
          for (const [i, item] of round.entries()) {
            yield* Effect.either(handle(`LNK_${item.link}`, commandOf(item), metadataOf(r, i)))
          }
        }
        const ids = [...new Set(rounds.flat().map((item) => `LNK_${item.link}`)), "LNK_unknown"]
        const many = yield* CommandHandler.loadMany(PaymentLink.PaymentLink)(ids)
        expect([...many.keys()]).toEqual(ids)
        for (const id of ids) {
          const one = yield* CommandHandler.load(PaymentLink.PaymentLink)(id)
          expect(many.get(id)).toEqual({ state: one.state, version: one.version })
        }
      }).pipe(Effect.provide(InMemoryEventStore.layerWithSequentialIds))
  )

  it.effect("refusals and no-ops are reported per item; the others are written with one appendBatch", () => {
    const { counts, layer } = counted()
    return Effect.gen(function* () {
      const created = yield* handle("LNK_1", commandOf({ link: 1, kind: "create", trx: 1 }))
      const cancelled = yield* handle("LNK_1", commandOf({ link: 1, kind: "cancel", trx: 1 }), {}, created)
      counts.append = 0
      const results = yield* handleBatch([
        item(2, "create"),
        item(1, "cancel", 1, cancelled), // a no-op: cancelled already
        item(3, "start"), // refused: no such link
        item(4, "create")
      ])
      expect(results.map(summary)).toEqual([
        { events: ["LinkCreated"], state: "ACTIVE", version: 1 },
        { events: [], state: "CANCELLED", version: 2 },
        { error: "LinkNotFound" },
        { events: ["LinkCreated"], state: "ACTIVE", version: 1 }
      ])
      expect(counts).toEqual({ append: 0, appendBatch: 1 })
      expect(yield* typesOf("LinkCreated-LNK_3")).toEqual([])
      expect(yield* typesOf("PaymentLink-LNK_1")).toEqual(["LinkCreated", "LinkCancelled"])
      // Nothing to write: no appendBatch at all.
      yield* handleBatch([item(1, "cancel", 1, cancelled)])
      expect(counts.appendBatch).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "a stale state fails the batch: every item is handled alone, the stale one decided again on its stream",
    () => {
      const { counts, layer } = counted()
      return Effect.gen(function* () {
        const one = yield* handle("LNK_1", commandOf({ link: 1, kind: "create", trx: 1 }))
        const two = yield* handle("LNK_2", commandOf({ link: 2, kind: "create", trx: 1 }))
        // Another writer moved LNK_1 on after `one` was taken.
        yield* handle("LNK_1", commandOf({ link: 1, kind: "start", trx: 9 }))
        counts.append = 0
        const results = yield* handleBatch([item(1, "start", 1, one), item(2, "start", 1, two)])
        expect(results.map(summary)).toEqual([
          { error: "LinkNotInState" },
          { events: ["LinkPaymentStarted"], state: "PROCESSING", version: 2 }
        ])
        expect(counts.appendBatch).toBe(1)
        // Both alone after the failed batch: the first conflicts, is decided again and refused.
        expect(counts.append).toBe(2)
        expect(yield* typesOf("PaymentLink-LNK_1")).toEqual(["LinkCreated", "LinkPaymentStarted"])
        expect(yield* typesOf("PaymentLink-LNK_2")).toEqual(["LinkCreated", "LinkPaymentStarted"])
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect(
    "a writer slipping in before the batch: the batch writes nothing, each item ends as if handled alone",
    () => {
      // Another writer creates LNK_2 between the decisions and the batch's write.
      const { counts, layer } = counted(handle("LNK_2", commandOf({ link: 2, kind: "create", trx: 1 })))
      return Effect.gen(function* () {
        const results = yield* handleBatch([item(1, "create"), item(2, "create"), item(3, "create")])
        expect(results.map(summary)).toEqual([
          { events: ["LinkCreated"], state: "ACTIVE", version: 1 },
          { error: "LinkAlreadyExists" },
          { events: ["LinkCreated"], state: "ACTIVE", version: 1 }
        ])
        expect(counts.appendBatch).toBe(1)
        // Each stream written once: the failed batch left nothing behind.
        for (const link of [1, 2, 3])
          expect(yield* typesOf(`PaymentLink-LNK_${link}`)).toEqual(["LinkCreated"])
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("an EventIdReused from the batch also falls back to one append per item", () =>
    Effect.gen(function* () {
      let failures = 0
      const failingOnce = Layer.effect(
        EventStore.EventStore,
        Effect.map(InMemoryEventStore.make, (inner) => ({
          ...inner,
          appendBatch: (items: ReadonlyArray<EventStore.BatchAppend>) =>
            failures++ === 0
              ? Effect.fail(new EventStore.EventIdReused({ eventId: items[0]!.events[0]!.eventId }))
              : inner.appendBatch(items)
        }))
      )
      const results = yield* handleBatch([item(1, "create"), item(2, "create")]).pipe(
        Effect.zipLeft(
          Effect.gen(function* () {
            expect(yield* typesOf("PaymentLink-LNK_1")).toEqual(["LinkCreated"])
            expect(yield* typesOf("PaymentLink-LNK_2")).toEqual(["LinkCreated"])
          })
        ),
        Effect.provide(Layer.merge(failingOnce, IdGenerator.layerSequential))
      )
      expect(results.map(Either.isRight)).toEqual([true, true])
      expect(failures).toBe(1)
    })
  )
})
