import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { YieldWrap } from "effect/Utils"
import * as EventStore from "@cobro/domain/EventStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"

const event = (eventId: string, data: unknown = { n: eventId }): EventStore.NewEvent => ({
  eventId,
  type: "Happened",
  schemaVersion: 1,
  data,
  metadata: {}
})
const { NoStream, Exact, Any } = EventStore.ExpectedVersion

/** Runs a test body on a fresh, empty store, which it is given. */
const onStore = <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  body: (store: EventStore.EventStore["Type"]) => Generator<Eff, A, never>
) =>
  Effect.flatMap(EventStore.EventStore, (store) => Effect.gen(() => body(store))).pipe(
    Effect.provide(InMemoryEventStore.layer)
  )

/** Given: s-1 with a, b, then d after s-2's c. */
const givenTwoStreams = (store: EventStore.EventStore["Type"]) =>
  Effect.gen(function* () {
    yield* store.append("s-1", [event("a"), event("b")], NoStream())
    yield* store.append("s-2", [event("c")], NoStream())
    yield* store.append("s-1", [event("d")], Exact({ version: 2 }))
  })

describe("InMemoryEventStore keeps the port's contract", () => {
  it.effect("a new stream appends at NoStream and starts at version 1", () =>
    onStore(function* (store) {
      const result = yield* store.append("s-1", [event("e1"), event("e2")], NoStream())
      expect(result.nextVersion).toBe(2)
      const read = yield* store.readStream("s-1")
      expect(read.map((e) => [e.eventId, e.streamVersion])).toEqual([
        ["e1", 1],
        ["e2", 2]
      ])
    })
  )

  it.effect("a stale expected version is a ConcurrencyConflict and writes nothing", () =>
    onStore(function* (store) {
      yield* store.append("s-1", [event("e1")], NoStream())
      const again = yield* Effect.either(store.append("s-1", [event("e2")], NoStream()))
      expect(Either.getLeft(again).pipe((o) => o._tag === "Some" && o.value._tag)).toBe("ConcurrencyConflict")
      const stale = yield* Effect.either(store.append("s-1", [event("e3")], Exact({ version: 0 })))
      expect(Either.isLeft(stale)).toBe(true)
      yield* store.append("s-1", [event("e4")], Exact({ version: 1 }))
      yield* store.append("s-1", [event("e5")], Any())
      expect((yield* store.readStream("s-1")).map((e) => e.eventId)).toEqual(["e1", "e4", "e5"])
    })
  )

  it.effect("re-appending a stored event id with the same content returns the original position", () =>
    onStore(function* (store) {
      const first = yield* store.append("s-1", [event("e1")], NoStream())
      const again = yield* store.append("s-1", [event("e1")], NoStream())
      expect(again).toEqual(first)
      const clash = yield* Effect.either(store.append("s-1", [event("e1", { other: true })], Any()))
      expect(Either.getLeft(clash).pipe((o) => o._tag === "Some" && o.value._tag)).toBe("EventIdReused")
      expect((yield* store.readStream("s-1")).length).toBe(1)
    })
  )

  it.effect("readStream honours from and to versions", () =>
    onStore(function* (store) {
      yield* store.append(
        "s-1",
        ["a", "b", "c", "d"].map((id) => event(id)),
        NoStream()
      )
      const window = yield* store.readStream("s-1", { fromVersion: 2, toVersion: 3 })
      expect(window.map((e) => e.eventId)).toEqual(["b", "c"])
    })
  )

  it.effect("readStreams reads several whole streams at once; an unknown one is empty", () =>
    onStore(function* (store) {
      yield* givenTwoStreams(store)
      const read = yield* store.readStreams(["s-2", "s-1", "s-none"])
      expect([...read.keys()]).toEqual(["s-2", "s-1", "s-none"])
      expect(read.get("s-1")).toEqual(yield* store.readStream("s-1"))
      expect(read.get("s-2")!.map((e) => e.eventId)).toEqual(["c"])
      expect(read.get("s-none")).toEqual([])
    })
  )

  it.effect("the whole log reads in commit order from a checkpoint, paged or streamed", () =>
    onStore(function* (store) {
      yield* givenTwoStreams(store)
      const firstPage = yield* store.readAll({ limit: 2 })
      expect(firstPage.map((e) => e.eventId)).toEqual(["a", "b"])
      const rest = yield* store.readAll({ after: firstPage[1]!.checkpoint })
      expect(rest.map((e) => e.eventId)).toEqual(["c", "d"])
      const streamed = yield* Stream.runCollect(store.streamAll({ limit: 1 }))
      expect(Chunk.toReadonlyArray(streamed).map((e) => e.eventId)).toEqual(["a", "b", "c", "d"])
    })
  )
})

describe("InMemoryEventStore.appendBatch: every item in order, in one transaction, all or nothing", () => {
  it.effect(
    "items are written in order at consecutive positions, their checkpoints sharing one transaction id",
    () =>
      onStore(function* (store) {
        yield* store.append("s-1", [event("a")], NoStream())
        const results = yield* store.appendBatch([
          { streamId: "s-2", events: [event("b"), event("c")], expected: NoStream() },
          { streamId: "s-1", events: [event("d")], expected: Exact({ version: 1 }) },
          { streamId: "s-3", events: [event("e")], expected: Any() }
        ])
        expect(results).toEqual([
          { nextVersion: 2, firstPosition: 2n, lastPosition: 3n },
          { nextVersion: 2, firstPosition: 4n, lastPosition: 4n },
          { nextVersion: 1, firstPosition: 5n, lastPosition: 5n }
        ])
        const log = yield* store.readAll()
        expect(log.map((e) => [e.eventId, e.streamId, e.streamVersion])).toEqual([
          ["a", "s-1", 1],
          ["b", "s-2", 1],
          ["c", "s-2", 2],
          ["d", "s-1", 2],
          ["e", "s-3", 1]
        ])
        const batch = new Set(log.slice(1).map((e) => e.checkpoint.transactionId))
        expect(batch.size).toBe(1)
        expect(batch.has(log[0]!.checkpoint.transactionId)).toBe(false)
        // Later appends still order after the batch.
        yield* store.append("s-3", [event("f")], Exact({ version: 1 }))
        const [after] = yield* store.readAll({ after: log[4]!.checkpoint })
        expect(after!.checkpoint.transactionId).toBeGreaterThan([...batch][0]!)
      })
  )

  it.effect(
    "a failing item undoes the items before it and gives its error; the first failing item wins",
    () =>
      onStore(function* (store) {
        yield* store.append("s-1", [event("a")], NoStream())
        const conflict = yield* Effect.flip(
          store.appendBatch([
            { streamId: "s-2", events: [event("b")], expected: NoStream() },
            { streamId: "s-1", events: [event("c")], expected: Exact({ version: 3 }) },
            { streamId: "s-3", events: [event("a", { other: true })], expected: NoStream() }
          ])
        )
        expect(conflict).toMatchObject({ _tag: "ConcurrencyConflict", streamId: "s-1", actual: 1 })
        const reused = yield* Effect.flip(
          store.appendBatch([
            { streamId: "s-2", events: [event("b")], expected: NoStream() },
            { streamId: "s-3", events: [event("b", { other: true })], expected: NoStream() }
          ])
        )
        expect(reused).toEqual(new EventStore.EventIdReused({ eventId: "b" }))
        expect((yield* store.readAll()).map((e) => e.eventId)).toEqual(["a"])
        expect(yield* store.readStream("s-2")).toEqual([])
        // Undone ids are free again; a retried item is a no-op next to new ones.
        const results = yield* store.appendBatch([
          { streamId: "s-1", events: [event("a")], expected: NoStream() },
          { streamId: "s-2", events: [event("b")], expected: NoStream() }
        ])
        expect(results.map((r) => r.firstPosition)).toEqual([1n, 2n])
        expect(yield* store.appendBatch([])).toEqual([])
      })
  )
})
