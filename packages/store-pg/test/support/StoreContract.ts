/**
 * The one store contract suite: what every database the store runs on must do. Run against PGlite
 * and PostgreSQL by `Pglite.int.test.ts` and `Postgres.int.test.ts`.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { assert, expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as HashChain from "../../src/HashChain.js"
import * as Rows from "../../src/internal/Rows.js"
import * as Projection from "../../src/Projection.js"
import * as Subscription from "../../src/Subscription.js"
import * as Verify from "../../src/Verify.js"
import type { StoreServices } from "./Databases.js"
import * as Eventually from "./Eventually.js"
import { event, streamId } from "./Fixtures.js"
import { storeSuite, withStore } from "./StoreTest.js"

const { Any, Exact, NoStream } = EventStore.ExpectedVersion

/** The test projection: per stream, an order-sensitive fold of amounts, and a log-wide count. */
export const balances = (table: string) =>
  Projection.make({
    name: table,
    tables: [table],
    setup: Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
        stream_id text PRIMARY KEY, total bigint NOT NULL, fold bigint NOT NULL, events integer NOT NULL,
        last_version integer NOT NULL)`
    ).pipe(Effect.asVoid),
    apply: (e) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => {
        if (e.type !== "Deposited" && e.type !== "Withdrawn") return Effect.void
        const amount = (e.data as { amount: number }).amount * (e.type === "Deposited" ? 1 : -1)
        return sql`
          INSERT INTO ${sql(table)} (stream_id, total, fold, events, last_version)
          VALUES (${e.streamId}, ${amount}, ${amount}, 1, ${e.streamVersion})
          ON CONFLICT (stream_id) DO UPDATE SET
            total = ${sql(table)}.total + ${amount},
            fold = (${sql(table)}.fold * 31 + ${amount}) % 1000000007,
            events = ${sql(table)}.events + 1,
            last_version = ${e.streamVersion}`
      }).pipe(Effect.asVoid)
  })

const rowsOf = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM ${sql(table)} ORDER BY stream_id`).pipe(
    Effect.orDie
  )

const exec = (f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.orDie)

/** Removes a stream entirely (events and head), so that tampering tests leave the log verifiable. */
const dropStream = (id: string) =>
  exec((sql) =>
    Effect.zipRight(
      sql`DELETE FROM cobro_events WHERE stream_id = ${id}`,
      sql`DELETE FROM cobro_streams WHERE stream_id = ${id}`
    )
  )

/** `store` with the length of each page `readAll` returns recorded in `pages`. */
const countingPages = (store: EventStore.EventStore["Type"]) => {
  const pages: Array<number> = []
  const counting = EventStore.EventStore.of({
    ...store,
    readAll: (options) =>
      Effect.tap(store.readAll(options), (page) => Effect.sync(() => pages.push(page.length)))
  })
  return { pages, counting }
}

/** A consumer named `name` that records in `seen` the type of each event of stream `id` it is handed. */
const recordingTypes = (name: string, id: string, seen: Array<string>) =>
  Subscription.make(name, (e) =>
    Effect.sync(() => {
      if (e.streamId === id) seen.push(e.type)
    })
  )

/**
 * Appends an event to stream `id` and waits until a running consumer has recorded something in
 * `seen` (about 5 seconds at most): with a 30-second poll, only a wake-up brings it so soon. The
 * wake-up may come while an open transaction elsewhere on the cluster still hides the event from
 * catch-up reads; once it is visible, each further append wakes the consumer again.
 */
const appendAndAwaitWakeUp = (id: string, seen: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const woke = event("Woke")
    yield* store.append(id, [woke], NoStream())
    yield* Eventually.eventsVisible([woke.eventId])
    for (let i = 0; i < 100 && seen.length === 0; i++) {
      if (i % 20 === 10) yield* store.append(streamId("nudge"), [event("Nudge")], NoStream())
      yield* Effect.sleep("50 millis")
    }
  })

/** Runs the contract against `storeLayer`, a fresh database per suite. */
export const storeContract = (
  name: string,
  storeLayer: Layer.Layer<StoreServices>,
  options: {
    readonly propRuns: number
    /** Whether the database has more than one session (PostgreSQL; PGlite has one). */
    readonly sessions?: "one" | "many"
  }
) =>
  storeSuite(storeLayer, "60 seconds")(name, (it) => {
    it.effect(
      "a new stream accepts NoStream, then refuses it with a typed ConcurrencyConflict",
      withStore(function* ({ store }) {
        const id = streamId()
        const first = yield* store.append(id, [event("Opened")], NoStream())
        expect(first.nextVersion).toBe(1)
        const again = yield* Effect.flip(store.append(id, [event("Opened")], NoStream()))
        expect(again).toBeInstanceOf(EventStore.ConcurrencyConflict)
        expect(again).toMatchObject({ streamId: id, expected: "NoStream", actual: 1 })
      })
    )

    it.effect(
      "Exact(version) appends only at that version; Any appends whatever the version",
      withStore(function* ({ store }) {
        const id = streamId()
        const missing = yield* Effect.flip(store.append(id, [event("A")], Exact({ version: 3 })))
        expect(missing).toMatchObject({ _tag: "ConcurrencyConflict", actual: 0 })
        yield* store.append(id, [event("A")], Exact({ version: 0 }))
        yield* store.append(id, [event("B")], Exact({ version: 1 }))
        const stale = yield* Effect.flip(store.append(id, [event("C")], Exact({ version: 1 })))
        expect(stale).toMatchObject({ _tag: "ConcurrencyConflict", expected: "Exact(1)", actual: 2 })
        const any = yield* store.append(id, [event("C")], Any())
        expect(any.nextVersion).toBe(3)
        const fresh = yield* store.append(streamId(), [event("A")], Any())
        expect(fresh.nextVersion).toBe(1)
        const read = yield* store.readStream(id)
        expect(read.map((e) => [e.streamVersion, e.type])).toEqual([
          [1, "A"],
          [2, "B"],
          [3, "C"]
        ])
      })
    )

    it.effect(
      "an unknown stream reads as empty; an empty append checks the version only",
      withStore(function* ({ store }) {
        const id = streamId()
        expect(yield* store.readStream(id)).toEqual([])
        expect((yield* store.append(id, [], NoStream())).nextVersion).toBe(0)
        const wrong = yield* Effect.flip(store.append(id, [], Exact({ version: 2 })))
        expect(wrong._tag).toBe("ConcurrencyConflict")
      })
    )

    it.effect(
      "several events append atomically: all, in order, with consecutive versions",
      withStore(function* ({ store }) {
        const id = streamId()
        const events = [event("A", { n: 1 }), event("B", { n: 2 }), event("C", { n: 3 })]
        const result = yield* store.append(id, events, NoStream())
        expect(result.nextVersion).toBe(3)
        expect(result.lastPosition - result.firstPosition).toBe(2n)
        const read = yield* store.readStream(id)
        expect(read.map((e) => e.eventId)).toEqual(events.map((e) => e.eventId))
        expect(read.map((e) => e.globalPosition)).toEqual([
          result.firstPosition,
          result.firstPosition + 1n,
          result.lastPosition
        ])
        // A batch with one reused id leaves nothing behind.
        const other = streamId()
        const clash = yield* Effect.flip(
          store.append(other, [event("X"), { ...events[0]!, type: "Y" }], NoStream())
        )
        expect(clash).toMatchObject({ _tag: "EventIdReused", eventId: events[0]!.eventId })
        expect(yield* store.readStream(other)).toEqual([])
      })
    )

    it.effect(
      "re-appending stored events is a no-op that returns the original positions",
      withStore(function* ({ store }) {
        const id = streamId()
        const events = [
          event("A", { amount: 1 }, { actor: "merchant" }),
          event("B", { list: [1, "x", null] })
        ]
        const first = yield* store.append(id, events, NoStream())
        // Retried with the same expectation (the reply was lost), and with a stale one.
        expect(yield* store.append(id, events, NoStream())).toEqual(first)
        expect(yield* store.append(id, events, Any())).toEqual(first)
        yield* store.append(id, [event("C")], Exact({ version: 2 }))
        expect(yield* store.append(id, events, Exact({ version: 0 }))).toEqual(first)
        expect(yield* store.append(id, events, Exact({ version: 3 }))).toEqual(first)
        // Keys in another order are the same JSON content.
        const reordered = { ...events[0]!, data: { amount: 1 }, metadata: { actor: "merchant" } }
        expect(yield* store.append(id, [reordered, events[1]!], Any())).toEqual(first)
        expect((yield* store.readStream(id)).length).toBe(3)
      })
    )

    it.effect(
      "an event id stored with other content is EventIdReused, never retried",
      withStore(function* ({ store }) {
        const id = streamId()
        const original = event("A", { amount: 1 })
        yield* store.append(id, [original], NoStream())
        for (const changed of [
          { ...original, data: { amount: 2 } },
          { ...original, type: "B" },
          { ...original, schemaVersion: 2 },
          { ...original, metadata: { actor: "someone" } }
        ]) {
          const error = yield* Effect.flip(store.append(id, [changed], Any()))
          expect(error).toEqual(new EventStore.EventIdReused({ eventId: original.eventId }))
        }
        const elsewhere = yield* Effect.flip(store.append(streamId(), [original], NoStream()))
        expect(elsewhere._tag).toBe("EventIdReused")
        expect((yield* store.readStream(id)).length).toBe(1)
      })
    )

    it.effect(
      "readStream reads a window of versions and the stream as of an instant",
      withStore(function* ({ store }) {
        const id = streamId()
        for (let i = 1; i <= 5; i++) {
          yield* store.append(id, [event("Step", { i })], Exact({ version: i - 1 }))
          yield* Effect.sleep("3 millis")
        }
        const all = yield* store.readStream(id)
        expect(all.map((e) => e.streamVersion)).toEqual([1, 2, 3, 4, 5])
        expect(
          (yield* store.readStream(id, { fromVersion: 2, toVersion: 4 })).map((e) => e.streamVersion)
        ).toEqual([2, 3, 4])
        expect((yield* store.readStream(id, { fromVersion: 4 })).map((e) => e.streamVersion)).toEqual([4, 5])
        expect((yield* store.readStream(id, { toVersion: 0 })).length).toBe(0)
        const third = all[2]!
        const asOf = yield* store.readStream(id, { asOf: third.recordedAt })
        expect(asOf.map((e) => e.streamVersion)).toEqual([1, 2, 3])
        expect(yield* store.readStream(id, { asOf: new Date(all[0]!.recordedAt.getTime() - 1) })).toEqual([])
        expect((yield* store.readStream(id, { asOf: third.recordedAt, fromVersion: 2 })).length).toBe(2)
      })
    )

    it.effect(
      "recorded events carry their metadata, time and a hash chain anyone can recompute",
      withStore(function* ({ store }) {
        const id = streamId()
        const meta = { causationId: "c-1", correlationId: "k-1", actor: "api", requestId: "r-1" }
        yield* store.append(
          id,
          [event("A", { b: 2, a: [1, { z: 1, y: 2 }] }, meta), event("B", "text")],
          NoStream()
        )
        const [a, b] = yield* store.readStream(id)
        assert(a !== undefined && b !== undefined)
        expect(a.metadata).toEqual(meta)
        expect(b.data).toBe("text")
        expect(a.prevHash).toBe("")
        expect(b.prevHash).toBe(a.hash)
        expect(HashChain.hashEvent("", a)).toBe(a.hash)
        expect(HashChain.hashEvent(a.hash, b)).toBe(b.hash)
        expect(Verify.checkStream([a, b])).toBeUndefined()
      })
    )

    it.effect(
      "readAll resumes strictly after a checkpoint; streamAll pages through the whole log",
      withStore(function* ({ store }) {
        const ids = [streamId(), streamId()]
        for (const id of ids) yield* store.append(id, [event("A"), event("B"), event("C")], NoStream())
        yield* Eventually.logVisible
        const everything: Array<EventStore.LoggedEvent> = []
        let after = EventStore.Start
        while (true) {
          const page = yield* store.readAll({ after, limit: 4 })
          if (page.length === 0) break
          everything.push(...page)
          after = page[page.length - 1]!.checkpoint
        }
        const positions = everything.map((e) => e.globalPosition)
        expect(new Set(positions).size).toBe(positions.length)
        const mine = everything.filter((e) => ids.includes(e.streamId))
        expect(mine.length).toBe(6)
        const streamed = yield* Stream.runCollect(store.streamAll({ limit: 5 }))
        expect([...streamed].map((e) => e.globalPosition)).toEqual(positions)
        const tail = yield* Stream.runCollect(
          store.streamAll({ after: everything[everything.length - 3]!.checkpoint })
        )
        expect([...tail].map((e) => e.globalPosition)).toEqual(positions.slice(-2))
      })
    )

    it.effect(
      "on one stream, concurrent writers: exactly one wins each version, no event is lost",
      withStore(function* ({ store }) {
        const id = streamId()
        const writers = 8
        for (let version = 0; version < 5; version++) {
          const attempts = yield* Effect.all(
            Array.from({ length: writers }, (_, w) =>
              Effect.either(store.append(id, [event("Raced", { w, version })], Exact({ version })))
            ),
            { concurrency: "unbounded" }
          )
          expect(attempts.filter(Either.isRight).length).toBe(1)
          for (const lost of attempts.filter(Either.isLeft))
            expect(lost.left._tag).toBe("ConcurrencyConflict")
        }
        // Writers that retry on conflict all get their events in.
        const retrying = (w: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < 3; i++) {
              const mine = event("Retried", { w, i })
              while (true) {
                const version = (yield* store.readStream(id)).length
                const result = yield* Effect.either(store.append(id, [mine], Exact({ version })))
                if (Either.isRight(result)) break
                expect(result.left._tag).toBe("ConcurrencyConflict")
              }
            }
          })
        yield* Effect.all(
          Array.from({ length: writers }, (_, w) => retrying(w)),
          { concurrency: "unbounded" }
        )
        const read = yield* store.readStream(id)
        expect(read.map((e) => e.streamVersion)).toEqual(
          Array.from({ length: 5 + writers * 3 }, (_, i) => i + 1)
        )
        expect(read.filter((e) => e.type === "Retried").length).toBe(writers * 3)
        expect(Verify.checkStream(read)).toBeUndefined()
      })
    )

    it.effect(
      "a subscription applies each event once, saving its checkpoint in the same transaction",
      withStore(function* ({ store, sql }) {
        const name = `sub_${randomUUID().slice(0, 8)}`
        const seen: Array<string> = []
        const consumer = Subscription.make(name, (e) => Effect.sync(() => seen.push(e.eventId)))
        yield* Eventually.logVisible
        const start = yield* Subscription.catchUp(consumer)
        expect(start).toBe(seen.length)
        const id = streamId()
        const events = [event("A"), event("B")]
        yield* store.append(id, events, NoStream())
        yield* Eventually.logVisible
        // A handler that fails rolls its batch back: nothing applied, checkpoint unchanged.
        const before = yield* Subscription.checkpoint(name)
        const failing = Subscription.make(name, (e) =>
          e.streamId === id
            ? sql`INSERT INTO no_such_table VALUES (1)`.pipe(Effect.orDie, Effect.asVoid)
            : Effect.void
        )
        const exit = yield* Effect.exit(Subscription.catchUp(failing))
        expect(exit._tag).toBe("Failure")
        expect(yield* Subscription.checkpoint(name)).toEqual(before)
        expect(yield* Subscription.catchUp(consumer, { batchSize: 1 })).toBe(2)
        expect(seen.slice(-2)).toEqual(events.map((e) => e.eventId))
        expect(yield* Subscription.catchUp(consumer)).toBe(0)
      })
    )

    it.effect(
      "readStreams reads several whole streams in one statement, each as readStream does",
      withStore(function* ({ store }) {
        const [a, b, none] = [streamId(), streamId(), streamId()]
        yield* store.append(a, [event("A1"), event("A2")], NoStream())
        yield* store.append(b, [event("B1")], NoStream())
        yield* store.append(a, [event("A3")], Exact({ version: 2 }))
        const read = yield* store.readStreams([b, a, none])
        expect([...read.keys()]).toEqual([b, a, none])
        expect(read.get(a)).toEqual(yield* store.readStream(a))
        expect(read.get(b)).toEqual(yield* store.readStream(b))
        expect(read.get(a)!.map((e) => e.streamVersion)).toEqual([1, 2, 3])
        expect(read.get(none)).toEqual([])
        expect((yield* store.readStreams([])).size).toBe(0)
      })
    )

    it.effect(
      "a catch-up stops at its first short batch: no empty transaction after it",
      withStore(function* ({ store }) {
        const name = `short_${randomUUID().slice(0, 8)}`
        const consumer = Subscription.make(name, () => Effect.void)
        yield* Eventually.logVisible
        yield* Subscription.catchUp(consumer)
        yield* store.append(streamId(), [event("A"), event("B"), event("C")], NoStream())
        yield* Eventually.logVisible
        // The log's pages as the consumer reads them, counted.
        const { pages, counting } = countingPages(store)
        const catchUp = (batchSize: number) =>
          Subscription.catchUp(consumer, { batchSize }).pipe(
            Effect.provideService(EventStore.EventStore, counting)
          )
        // Three events in batches of 10: one page of 3, and done.
        expect(yield* catchUp(10)).toBe(3)
        expect(pages).toEqual([3])
        // Nothing new: one empty page.
        expect(yield* catchUp(10)).toBe(0)
        expect(pages).toEqual([3, 0])
        // A full batch may have more behind it: 3 in batches of 3 reads again, and finds the end.
        yield* store.append(streamId(), [event("D"), event("E"), event("F")], NoStream())
        yield* Eventually.logVisible
        expect(yield* catchUp(3)).toBe(3)
        expect(pages).toEqual([3, 0, 3, 0])
      })
    )

    it.effect(
      "a consumer is handed only the events it concerns, each once, also with two runners; a batch of others only moves its checkpoint",
      withStore(function* ({ store }) {
        const name = `concerns_${randomUUID().slice(0, 8)}`
        const handed: Array<string> = []
        const consumer: Subscription.Consumer = {
          ...Subscription.make(name, (e) => Effect.sync(() => handed.push(e.type))),
          concerns: (e) => e.type === "Wanted"
        }
        yield* Eventually.logVisible
        yield* Subscription.catchUp(consumer)
        handed.length = 0
        // Others only: the checkpoint moves to the last of them, the handler never runs.
        yield* store.append(streamId(), [event("Other"), event("Other")], NoStream())
        yield* Eventually.logVisible
        expect(yield* Subscription.catchUp(consumer)).toBe(2)
        expect(handed).toEqual([])
        const [last] = (yield* store.readAll({ after: EventStore.Start, limit: 100_000 })).slice(-1)
        expect(yield* Subscription.checkpoint(name)).toEqual(last!.checkpoint)
        if (options.sessions === "many") {
          // Two runners at once, in small batches, over concerned events among many others: each
          // concerned event is handed over once, and the checkpoint ends at the log's end (a runner
          // that moves past others never moves the checkpoint back behind the other's work).
          const kinds = Array.from({ length: 60 }, (_, i) =>
            i % 7 === 3 || i % 11 === 0 ? "Wanted" : "Other"
          )
          for (const kind of kinds) yield* store.append(streamId(), [event(kind)], NoStream())
          yield* Eventually.logVisible
          handed.length = 0
          const [a, b] = yield* Effect.all(
            [
              Subscription.catchUp(consumer, { batchSize: 4 }),
              Subscription.catchUp(consumer, { batchSize: 4 })
            ],
            { concurrency: 2 }
          )
          expect(a + b).toBeGreaterThanOrEqual(kinds.length)
          expect(handed).toEqual(kinds.filter((kind) => kind === "Wanted"))
          const [end] = (yield* store.readAll({ after: EventStore.Start, limit: 100_000 })).slice(-1)
          expect(yield* Subscription.checkpoint(name)).toEqual(end!.checkpoint)
          handed.length = 0
        }
        // A batch with one concerned event among others: that one alone is handed over, in its transaction.
        yield* store.append(streamId(), [event("Other"), event("Wanted"), event("Other")], NoStream())
        yield* Eventually.logVisible
        expect(yield* Subscription.catchUp(consumer)).toBe(3)
        expect(handed).toEqual(["Wanted"])
        const [end] = (yield* store.readAll({ after: EventStore.Start, limit: 100_000 })).slice(-1)
        expect(yield* Subscription.checkpoint(name)).toEqual(end!.checkpoint)
      })
    )

    it.effect(
      "a running consumer whose checkpoint is reset starts over, even when its next batch concerns it not at all",
      withStore(function* ({ store }) {
        const id = streamId()
        const name = `reset_${randomUUID().slice(0, 8)}`
        const handed: Array<string> = []
        const consumer: Subscription.Consumer = {
          ...recordingTypes(name, id, handed),
          concerns: (e) => e.type === "Wanted"
        }
        yield* store.append(id, [event("Wanted"), event("Other")], NoStream())
        yield* Eventually.logVisible
        const fiber = yield* Effect.fork(Subscription.run(consumer, { pollInterval: "100 millis" }))
        const until = (done: () => boolean) =>
          Effect.gen(function* () {
            for (let i = 0; i < 200 && !done(); i++) yield* Effect.sleep("50 millis")
          })
        yield* until(() => handed.length === 1)
        expect(handed).toEqual(["Wanted"])
        // Reset (as `Projection.reset` does) while it runs; then a batch of others only.
        yield* Subscription.resetCheckpoint(name)
        yield* store.append(id, [event("Other")], Exact({ version: 2 }))
        yield* Eventually.logVisible
        // It starts over from the beginning of the log: the Wanted event is handed again.
        yield* until(() => handed.length === 2)
        yield* Fiber.interrupt(fiber)
        expect(handed).toEqual(["Wanted", "Wanted"])
      })
    )

    it.effect(
      "consumers run as a group read each page of the log once for all of them, and each applies every event after its own checkpoint once, in order",
      withStore(function* ({ store }) {
        const ours = new Set<string>()
        const tag = randomUUID().slice(0, 8)
        /** A consumer that records the ids of this test's events it is handed (one at a time, or in batches). */
        const recording = (name: string, how: { readonly batches?: boolean; readonly wanted?: string }) => {
          const handed: Array<string> = []
          const record = (events: ReadonlyArray<EventStore.LoggedEvent>) =>
            Effect.sync(() => {
              for (const e of events) if (ours.has(e.streamId)) handed.push(e.eventId)
            })
          const consumer: Subscription.Consumer = {
            ...(how.batches === true
              ? Subscription.makeBatch(`${name}_${tag}`, record)
              : Subscription.make(`${name}_${tag}`, (e) => record([e]))),
            ...(how.wanted === undefined
              ? {}
              : { concerns: (e: EventStore.LoggedEvent) => e.type === how.wanted })
          }
          return { consumer, handed }
        }
        const ahead = recording("ahead", {})
        const batch = recording("batch", { batches: true })
        const behind = recording("behind", {})
        const choosy = recording("choosy", { wanted: "Wanted" })
        yield* Eventually.logVisible
        // Two consumers at the end of the log, two at its start.
        yield* Subscription.catchUp(ahead.consumer)
        yield* Subscription.catchUp(batch.consumer)
        const append = (types: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const id = streamId("group")
            ours.add(id)
            const events = types.map((type) => event(type))
            yield* store.append(id, events, NoStream())
            return events
          })
        const first = [...(yield* append(["Other", "Wanted"])), ...(yield* append(["Other"]))]
        yield* Eventually.logVisible
        const { pages, counting } = countingPages(store)
        const all = [ahead, batch, behind, choosy]
        const catchUpAll = (batchSize: number) =>
          Subscription.catchUpAll(
            all.map((c) => c.consumer),
            { batchSize }
          ).pipe(Effect.provideService(EventStore.EventStore, counting))
        const ids = (events: ReadonlyArray<EventStore.NewEvent>) => events.map((e) => e.eventId)
        const wanted = (events: ReadonlyArray<EventStore.NewEvent>) =>
          ids(events.filter((e) => e.type === "Wanted"))
        // The whole log fits one page: read once, from the earliest checkpoint, for all four.
        yield* catchUpAll(1_000_000)
        expect(pages).toEqual([pages[0]])
        for (const c of [ahead, batch, behind]) expect(c.handed).toEqual(ids(first))
        expect(choosy.handed).toEqual(wanted(first))
        // All at one checkpoint now: 5 new events in pages of 2 are 3 reads for the four, not 12.
        pages.length = 0
        const second = [
          ...(yield* append(["Wanted", "Other", "Other"])),
          ...(yield* append(["Other", "Wanted"]))
        ]
        yield* Eventually.logVisible
        yield* catchUpAll(2)
        expect(pages).toEqual([2, 2, 1])
        for (const c of [ahead, batch, behind]) expect(c.handed).toEqual(ids([...first, ...second]))
        expect(choosy.handed).toEqual(wanted([...first, ...second]))
        const [end] = (yield* store.readAll({ after: EventStore.Start, limit: 1_000_000 })).slice(-1)
        for (const c of all) expect(yield* Subscription.checkpoint(c.consumer.name)).toEqual(end!.checkpoint)
        // One consumer set back to the start: it is caught up in full pages of its own while the
        // others, at the end, are served by the short page read from their checkpoint.
        yield* Subscription.resetCheckpoint(behind.consumer.name)
        behind.handed.length = 0
        ahead.handed.length = 0
        const third = yield* append(["Wanted"])
        yield* Eventually.logVisible
        yield* catchUpAll(3)
        expect(behind.handed).toEqual(ids([...first, ...second, ...third]))
        expect(ahead.handed).toEqual(ids(third))
        expect(choosy.handed).toEqual(wanted([...first, ...second, ...third]))
      })
    )

    it.effect(
      "in a running group, a consumer whose batch fails rests, then starts again from its saved checkpoint, while the others go on",
      withStore(function* ({ store }) {
        const id = streamId("flaky")
        const tag = randomUUID().slice(0, 8)
        const steady: Array<string> = []
        const flaky: Array<string> = []
        let failures = 0
        const consumers: ReadonlyArray<Subscription.Consumer<string>> = [
          recordingTypes(`steady_${tag}`, id, steady),
          Subscription.makeBatch(`flaky_${tag}`, (events) =>
            Effect.gen(function* () {
              const mine = events.filter((e) => e.streamId === id).map((e) => e.type)
              // Fails twice on the batch holding "B" (after handling "A" in it: rolled back).
              if (mine.includes("B") && failures < 2) {
                failures++
                return yield* Effect.fail("refused")
              }
              flaky.push(...mine)
            })
          )
        ]
        yield* Eventually.logVisible
        yield* Subscription.catchUpAll(consumers)
        const fiber = yield* Effect.fork(
          Subscription.runAll(consumers, { pollInterval: "50 millis", retryDelay: "300 millis" })
        )
        yield* store.append(id, [event("A"), event("B")], NoStream())
        yield* Eventually.eventually(
          "the steady consumer has both events",
          Effect.sync(() => steady.length),
          (n) => n === 2
        )
        // The steady one is not held back by the failing one.
        expect(flaky).toEqual([])
        yield* store.append(id, [event("C")], Exact({ version: 2 }))
        yield* Eventually.eventually(
          "the flaky consumer has all three events",
          Effect.sync(() => flaky.length),
          (n) => n >= 3
        )
        yield* Fiber.interrupt(fiber)
        expect(failures).toBe(2)
        expect(steady).toEqual(["A", "B", "C"])
        expect(flaky).toEqual(["A", "B", "C"])
      })
    )

    it.effect(
      "in a running group, a consumer saves its checkpoint past pages it does not concern at most once per saveSkippedEvery, applies a page it concerns at once, and after a restart applies nothing twice",
      withStore(function* ({ store }) {
        const id = streamId("lazy")
        const tag = randomUUID().slice(0, 8)
        const everything: Array<string> = []
        const wanted: Array<string> = []
        const choosy: Subscription.Consumer<never> = {
          ...Subscription.make(`choosy_${tag}`, (e) =>
            Effect.sync(() => {
              wanted.push(e.eventId)
            })
          ),
          concerns: (e) => e.streamId === id && e.type === "Wanted"
        }
        const all = recordingTypes(`all_${tag}`, id, everything)
        yield* Eventually.logVisible
        yield* Subscription.catchUpAll([choosy, all])
        const start = yield* Subscription.checkpoint(choosy.name)
        const fiber = yield* Effect.fork(
          Subscription.runAll([choosy, all], { pollInterval: "50 millis", saveSkippedEvery: "1 hour" })
        )
        yield* store.append(id, [event("Other"), event("Other")], NoStream())
        yield* Eventually.eventually(
          "the other consumer has both events",
          Effect.sync(() => everything.length),
          (n) => n === 2
        )
        // The runner went past them in memory; the saved checkpoint has not moved (no statement).
        yield* Effect.sleep("200 millis")
        expect(yield* Subscription.checkpoint(choosy.name)).toEqual(start)
        const wantedEvent = event("Wanted")
        yield* store.append(id, [wantedEvent], Exact({ version: 2 }))
        // Its handler runs inside the transaction that saves the checkpoint: wait for that commit.
        yield* Eventually.eventually(
          "the choosy consumer has its event, its checkpoint saved with it",
          Effect.map(Subscription.checkpoint(choosy.name), (saved) => ({ saved, applied: wanted.length })),
          ({ applied, saved }) =>
            applied === 1 &&
            (saved.transactionId !== start.transactionId || saved.globalPosition !== start.globalPosition)
        )
        yield* Fiber.interrupt(fiber)
        expect(wanted).toEqual([wantedEvent.eventId])
        const saved = yield* Subscription.checkpoint(choosy.name)
        expect(saved).not.toEqual(start)
        // A restart reads from the saved checkpoint: nothing is handed over twice.
        yield* Subscription.catchUpAll([choosy])
        expect(wanted).toEqual([wantedEvent.eventId])
      })
    )

    it.effect(
      "in a running group, a position skipped in memory is saved once saveSkippedEvery has passed, also when nothing more is appended",
      withStore(function* ({ store }) {
        const id = streamId("idle")
        const tag = randomUUID().slice(0, 8)
        const choosy: Subscription.Consumer<never> = {
          ...Subscription.make(`idle_${tag}`, () => Effect.void),
          concerns: () => false
        }
        yield* Eventually.logVisible
        yield* Subscription.catchUpAll([choosy])
        const fiber = yield* Effect.fork(
          Subscription.runAll([choosy], { pollInterval: "50 millis", saveSkippedEvery: "300 millis" })
        )
        yield* store.append(id, [event("Other"), event("Other")], NoStream())
        yield* Eventually.logVisible
        const [head] = (yield* store.readAll({ after: EventStore.Start, limit: 1_000_000 })).slice(-1)
        yield* Eventually.eventually(
          "the skipped position saved",
          Subscription.checkpoint(choosy.name),
          (saved) => saved.globalPosition === head!.checkpoint.globalPosition
        )
        yield* Fiber.interrupt(fiber)
      })
    )

    it.effect("a running subscription wakes on appends", () =>
      Effect.gen(function* () {
        const id = streamId()
        const seen: Array<string> = []
        const consumer = recordingTypes(`live_${randomUUID().slice(0, 8)}`, id, seen)
        const fiber = yield* Effect.fork(Subscription.run(consumer, { pollInterval: "30 seconds" }))
        yield* Effect.sleep("200 millis")
        yield* appendAndAwaitWakeUp(id, seen)
        yield* Fiber.interrupt(fiber)
        expect(seen).toEqual(["Woke"])
      })
    )

    it.effect("a consumer that stops does not silence the wake-ups of the others", () =>
      Effect.gen(function* () {
        const id = streamId()
        const seen: Array<string> = []
        const watching = (name: string, record: Array<string>) =>
          Subscription.run(recordingTypes(`${name}_${randomUUID().slice(0, 8)}`, id, record), {
            pollInterval: "30 seconds"
          })
        const staying = yield* Effect.fork(watching("stays", seen))
        const leaving = yield* Effect.fork(watching("leaves", []))
        yield* Effect.sleep("300 millis")
        yield* Fiber.interrupt(leaving)
        yield* Effect.sleep("200 millis")
        yield* appendAndAwaitWakeUp(id, seen)
        yield* Fiber.interrupt(staying)
        expect(seen).toEqual(["Woke"])
      })
    )

    it.effect(
      "a subscription that has just caught up waits its batchInterval before it runs again",
      withStore(function* ({ store }) {
        const id = streamId()
        const name = `paced_${randomUUID().slice(0, 8)}`
        const seen: Array<string> = []
        const consumer = recordingTypes(name, id, seen)
        const fiber = yield* Effect.fork(
          Subscription.run(consumer, { pollInterval: "50 millis", batchInterval: "10 minutes" })
        )
        // Its first catch-up saves a checkpoint; from then on it pauses.
        for (let i = 0; i < 200; i++) {
          if ((yield* Subscription.checkpoint(name)).globalPosition > 0n) break
          yield* Effect.sleep("50 millis")
        }
        const late = event("Late")
        yield* store.append(id, [late], NoStream())
        yield* Eventually.eventsVisible([late.eventId])
        yield* Effect.sleep("1 second")
        yield* Fiber.interrupt(fiber)
        // Woken and polled many times over, it still waits: the event is left for its next batch.
        expect(seen).toEqual([])
        expect(yield* Subscription.catchUp(consumer)).toBeGreaterThanOrEqual(1)
        expect(seen).toEqual(["Late"])
      })
    )

    it.effect(
      "a projection can be reset and rebuilt from the log alone",
      withStore(function* ({ store }) {
        const table = `proj_${randomUUID().slice(0, 8)}`
        const projection = balances(table)
        const id = streamId()
        yield* store.append(
          id,
          [event("Deposited", { amount: 10 }), event("Withdrawn", { amount: 3 })],
          NoStream()
        )
        yield* Eventually.logVisible
        yield* Projection.catchUp(projection)
        const built = yield* rowsOf(table)
        expect(built.find((r) => r["stream_id"] === id)).toMatchObject({
          total: "7",
          events: 2,
          last_version: 2
        })
        yield* Projection.reset(projection)
        expect(yield* rowsOf(table)).toEqual([])
        yield* Projection.rebuild(projection)
        expect(yield* rowsOf(table)).toEqual(built)
      })
    )

    it.effect.prop(
      "for random histories, a rebuilt projection equals the incrementally maintained one",
      [
        FastCheck.array(
          FastCheck.record({
            stream: FastCheck.integer({ min: 0, max: 3 }),
            amounts: FastCheck.array(FastCheck.integer({ min: -50, max: 100 }), {
              minLength: 1,
              maxLength: 3
            }),
            catchUp: FastCheck.boolean()
          }),
          { minLength: 1, maxLength: 12 }
        )
      ],
      withStore(function* ({ store }, [history]) {
        const table = `prop_${randomUUID().slice(0, 8)}`
        const projection = balances(table)
        const streams = Array.from({ length: 4 }, () => streamId("prop"))
        for (const step of history) {
          const events = step.amounts.map((amount) =>
            amount >= 0 ? event("Deposited", { amount }) : event("Withdrawn", { amount: -amount })
          )
          yield* store.append(streams[step.stream]!, events, Any())
          if (step.catchUp) yield* Projection.catchUp(projection, { batchSize: 7 })
        }
        yield* Eventually.logVisible
        yield* Projection.catchUp(projection, { batchSize: 7 })
        const incremental = yield* rowsOf(table)
        const expected = streams
          .map((id) => history.filter((s) => streams[s.stream] === id).flatMap((s) => s.amounts))
          .filter((amounts) => amounts.length > 0)
        expect(incremental.filter((r) => streams.includes(r["stream_id"] as string)).length).toBe(
          expected.length
        )
        yield* Projection.rebuild(projection)
        expect(yield* rowsOf(table)).toEqual(incremental)
        yield* exec((sql) => sql`DROP TABLE ${sql(table)}`)
      }),
      { fastCheck: { numRuns: options.propRuns } }
    )

    it.effect.prop(
      "the one-statement append (hash linked in SQL) and the auditor's recipe in JS agree on every row",
      [
        FastCheck.array(
          FastCheck.record({
            data: FastCheck.jsonValue({ stringUnit: "grapheme", maxDepth: 3 }),
            type: FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 8 }),
            actor: FastCheck.option(FastCheck.string({ unit: "grapheme", maxLength: 8 }), { nil: undefined })
          }),
          { minLength: 1, maxLength: 6 }
        ),
        FastCheck.string({ unit: "grapheme", maxLength: 6 })
      ],
      withStore(function* ({ store, sql }, [specs, suffix]) {
        // PostgreSQL text and jsonb refuse U+0000: such events cannot be stored at all.
        const storable = (text: string) => !text.includes("\u0000") && !text.includes("\\u0000")
        const events = specs
          .filter((spec) => storable(JSON.stringify(spec)))
          .map((spec) => event(spec.type, spec.data, spec.actor === undefined ? {} : { actor: spec.actor }))
        if (events.length === 0 || !storable(JSON.stringify(suffix))) return
        const id = `${streamId("hash")}-ñ😀"\\-${suffix}`
        // Every expectation kind: the version is known in JS (NoStream, Exact) or only in SQL (Any).
        const thirds = [events.slice(0, 1), events.slice(1, 3), events.slice(3)]
        yield* store.append(id, thirds[0]!, NoStream())
        if (thirds[1]!.length > 0) yield* store.append(id, thirds[1]!, Exact({ version: 1 }))
        if (thirds[2]!.length > 0) yield* store.append(id, thirds[2]!, Any())
        const rows = yield* Effect.orDie(
          sql<Rows.EventRow>`SELECT ${sql.literal(Rows.columns)} FROM cobro_events
              WHERE stream_id = ${id} ORDER BY stream_version`
        )
        expect(rows.length).toBe(events.length)
        let prevHash = HashChain.genesis
        rows.forEach((row, i) => {
          const sent = events[i]!
          // Recomputed from what the writer sent, and from what the row holds.
          const fromInput = HashChain.hashEvent(prevHash, {
            streamId: id,
            streamVersion: i + 1,
            eventId: sent.eventId.toLowerCase(),
            type: sent.type,
            schemaVersion: sent.schemaVersion,
            data: HashChain.normalizeJson(sent.data),
            metadata: HashChain.normalizeJson(sent.metadata),
            recordedAt: row.recorded_at
          })
          const recorded = Rows.toRecorded(row)
          expect(row.prev_hash).toBe(prevHash)
          expect(row.hash).toBe(fromInput)
          expect(HashChain.hashEvent(prevHash, recorded)).toBe(row.hash)
          expect(HashChain.canonicalJson(recorded.data)).toBe(
            HashChain.canonicalJson(HashChain.normalizeJson(sent.data))
          )
          prevHash = row.hash
        })
        const head = yield* Effect.orDie(
          sql<{ version: number; last_hash: string }>`
              SELECT version, last_hash FROM cobro_streams WHERE stream_id = ${id}`
        )
        expect(head).toEqual([{ version: events.length, last_hash: prevHash }])
      }),
      { fastCheck: { numRuns: options.propRuns } }
    )

    it.effect(
      "inside a caller's transaction, a refused append leaves the transaction usable",
      withStore(function* ({ store, sql }) {
        const taken = event("A")
        yield* store.append(streamId(), [taken], NoStream())
        const id = streamId()
        const refused = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const reused = yield* Effect.flip(store.append(id, [{ ...taken, type: "Other" }], NoStream()))
              const conflict = yield* Effect.flip(store.append(id, [event("B")], Exact({ version: 4 })))
              yield* store.append(id, [event("C")], NoStream())
              return [reused._tag, conflict._tag]
            })
          )
          .pipe(Effect.orDie)
        expect(refused).toEqual(["EventIdReused", "ConcurrencyConflict"])
        expect((yield* store.readStream(id)).map((e) => e.type)).toEqual(["C"])
      })
    )

    it.effect(
      "inside a caller's transaction, reads see its own appends; a rollback leaves nothing",
      withStore(function* ({ store, sql }) {
        const id = streamId()
        const seen = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              // Both appends take the autocommit fast paths when no transaction is open.
              yield* store.append(id, [event("A")], NoStream())
              yield* store.append(id, [event("B")], Exact({ version: 1 }))
              const inside = (yield* store.readStream(id)).map((e) => e.type)
              return yield* Effect.fail({ _tag: "RollBack" as const, inside })
            })
          )
          .pipe(Effect.flip, Effect.orDie)
        expect(seen).toEqual({ _tag: "RollBack", inside: ["A", "B"] })
        expect(yield* store.readStream(id)).toEqual([])
      })
    )

    it.effect(
      "verify finds nothing on an untouched log",
      withStore(function* ({ store }) {
        yield* store.append(streamId(), [event("A"), event("B")], NoStream())
        const report = yield* Verify.verify
        expect(report.breaks).toEqual([])
        expect(report.events).toBeGreaterThan(2)
      })
    )

    it.effect.prop(
      "verify finds any single altered, removed or reordered event, or a wrong prev_hash",
      [
        FastCheck.integer({ min: 1, max: 6 }),
        FastCheck.nat(),
        FastCheck.constantFrom("alter-data", "alter-time", "remove", "reorder", "prev-hash")
      ],
      withStore(function* ({ store, sql }, [length, pick, tampering]) {
        const id = streamId("tamper")
        const control = streamId("control")
        const events = Array.from({ length }, (_, i) => event("Deposited", { amount: i + 1 }))
        yield* store.append(id, events, NoStream())
        yield* store.append(
          control,
          events.map((e) => ({ ...e, eventId: randomUUID() })),
          NoStream()
        )
        const canReorder = length >= 2
        const kind = tampering === "reorder" && !canReorder ? "alter-data" : tampering
        const v = kind === "reorder" ? 1 + (pick % (length - 1)) : 1 + (pick % length)
        const run = (statement: Effect.Effect<unknown, unknown>) => Effect.orDie(statement)
        switch (kind) {
          case "alter-data":
            yield* run(
              sql`UPDATE cobro_events SET data = '{"amount": 1000}' WHERE stream_id = ${id} AND stream_version = ${v}`
            )
            break
          case "alter-time":
            yield* run(
              sql`UPDATE cobro_events SET recorded_at = recorded_at - interval '1 day' WHERE stream_id = ${id} AND stream_version = ${v}`
            )
            break
          case "remove":
            yield* run(sql`DELETE FROM cobro_events WHERE stream_id = ${id} AND stream_version = ${v}`)
            break
          case "reorder":
            yield* run(
              sql`UPDATE cobro_events SET stream_version = 1000000 WHERE stream_id = ${id} AND stream_version = ${v}`
            )
            yield* run(
              sql`UPDATE cobro_events SET stream_version = ${v} WHERE stream_id = ${id} AND stream_version = ${v + 1}`
            )
            yield* run(
              sql`UPDATE cobro_events SET stream_version = ${v + 1} WHERE stream_id = ${id} AND stream_version = 1000000`
            )
            break
          case "prev-hash":
            yield* run(
              sql`UPDATE cobro_events SET prev_hash = repeat('0', 64) WHERE stream_id = ${id} AND stream_version = ${v}`
            )
            break
        }
        const report = yield* Verify.verify
        const found = report.breaks.filter((b) => b.streamId === id)
        expect(report.breaks.filter((b) => b.streamId !== id)).toEqual([])
        expect(found.length).toBe(1)
        const expectedTag =
          kind === "alter-data" || kind === "alter-time"
            ? "AlteredEvent"
            : kind === "remove"
              ? v === length
                ? "HeadMismatch"
                : "MissingEvent"
              : "BrokenLink"
        expect(found[0]).toMatchObject({ _tag: expectedTag, streamId: id })
        if (expectedTag !== "HeadMismatch") {
          expect(found[0]).toMatchObject(
            expectedTag === "MissingEvent"
              ? { expectedVersion: v, foundVersion: v + 1 }
              : { streamVersion: v }
          )
        }
        yield* dropStream(id)
        expect((yield* Verify.verify).breaks).toEqual([])
      }),
      { fastCheck: { numRuns: options.propRuns } }
    )
  })
