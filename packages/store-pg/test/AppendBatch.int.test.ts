/**
 * `appendBatch` (one `cobro_append_batch` statement, migration 6, with the item-by-item transaction
 * as its fallback) and batch consumers (`Subscription.makeBatch`), on PGlite and on PostgreSQL: a
 * batch is every item appended in order in one transaction, all or nothing, as the in-memory store
 * does it.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as Migrations from "../src/Migrations.js"
import * as Subscription from "../src/Subscription.js"
import * as Verify from "../src/Verify.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { event, streamId } from "./support/Fixtures.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const { Any, Exact, NoStream } = EventStore.ExpectedVersion

const query = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.orDie)

const headOf = (id: string) =>
  query(
    (sql) => sql<{ version: number; last_hash: string }>`
    SELECT version, last_hash FROM cobro_streams WHERE stream_id = ${id}`
  )

/** How many transactions, and how many (sub)transactions (`xmin`), wrote the events of these streams. */
const writersOf = (ids: ReadonlyArray<string>) =>
  Effect.map(
    query(
      (sql) => sql<{ transactions: number; xmins: number; events: number }>`
      SELECT count(DISTINCT transaction_id)::int AS transactions, count(DISTINCT xmin::text)::int AS xmins,
        count(*)::int AS events
      FROM cobro_events WHERE stream_id IN ${sql.in(ids)}`
    ),
    (rows) => rows[0]!
  )

/** Each stream's events as the port reads them, without what only one store knows (positions, hashes, time). */
const contents = (store: EventStore.EventStore["Type"], ids: ReadonlyArray<string>) =>
  Effect.forEach(ids, (id) =>
    Effect.map(store.readStream(id), (events) =>
      events.map((e) => ({ eventId: e.eventId, type: e.type, streamVersion: e.streamVersion, data: e.data }))
    )
  )

class Refused extends Data.TaggedError("Refused")<{ readonly eventId: string }> {}

/**
 * Runs batches at once, each with a stale last item (`Exact(5)` on a stream at version 1): each must
 * fail with that item's conflict, never with a defect.
 */
/**
 * `rounds` times over two fresh streams a and b (each set up by `given`): `batches` batches at once,
 * `batch(a, b)` and `batch(b, a)` in turn. Each fails with the stale item's ConcurrencyConflict (never
 * a defect), and both streams then hold the event types `after`.
 */
const inOppositeOrdersAtOnce = <E, R>(
  store: EventStore.EventStore["Type"],
  options: {
    readonly rounds: number
    readonly batches: number
    readonly given: (streamId: string) => Effect.Effect<unknown, E, R>
    readonly batch: (first: string, second: string) => Effect.Effect<unknown, E, R>
    readonly after: ReadonlyArray<string>
  }
) =>
  Effect.gen(function* () {
    for (let round = 0; round < options.rounds; round++) {
      const [a, b] = [streamId(), streamId()]
      yield* options.given(a)
      yield* options.given(b)
      const exits = yield* Effect.all(
        Array.from({ length: options.batches }, (_, i) =>
          Effect.exit(i % 2 === 0 ? options.batch(a, b) : options.batch(b, a))
        ),
        { concurrency: "unbounded" }
      )
      for (const exit of exits) {
        expect(exit._tag === "Failure" ? Cause.failureOption(exit.cause) : undefined).toEqual(
          Option.some(
            expect.objectContaining({ _tag: "ConcurrencyConflict", expected: "Exact(5)", actual: 1 })
          )
        )
      }
      for (const id of [a, b]) expect((yield* store.readStream(id)).map((e) => e.type)).toEqual(options.after)
    }
  })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  storeSuite(database, "60 seconds")(name, (it) => {
    it.effect(
      "new streams and existing streams at Exact versions in one batch: consecutive positions, the right versions, chains that verify, heads that match",
      withStore(function* ({ store }) {
        const [a, b, n1, n2, n3] = [streamId(), streamId(), streamId(), streamId(), streamId()]
        yield* store.append(a, [event("A1"), event("A2")], NoStream())
        yield* store.append(b, [event("B1")], NoStream())
        const items: ReadonlyArray<EventStore.BatchAppend> = [
          { streamId: n1, events: [event("N1", { amount: 1 })], expected: NoStream() },
          {
            streamId: a,
            events: [event("A3"), event("A4", { list: [1, "x"] })],
            expected: Exact({ version: 2 })
          },
          { streamId: n2, events: [event("N2")], expected: Exact({ version: 0 }) },
          {
            streamId: b,
            events: [event("B2"), event("B3", "text"), event("B4", null, { actor: "api" })],
            expected: Exact({ version: 1 })
          },
          { streamId: n3, events: [event("N3a"), event("N3b")], expected: Any() }
        ]
        const results = yield* store.appendBatch(items)
        expect(results.map((r) => r.nextVersion)).toEqual([1, 4, 1, 4, 2])
        results.forEach((result, i) => {
          expect(result.lastPosition - result.firstPosition).toBe(BigInt(items[i]!.events.length - 1))
          if (i > 0) expect(result.firstPosition).toBe(results[i - 1]!.lastPosition + 1n)
        })
        for (const [i, item] of items.entries()) {
          const stored = yield* store.readStream(item.streamId)
          const mine = stored.slice(stored.length - item.events.length)
          expect(mine.map((e) => e.eventId)).toEqual(item.events.map((e) => e.eventId))
          expect(mine.map((e) => e.data)).toEqual(item.events.map((e) => e.data))
          expect(mine.map((e) => e.globalPosition)).toEqual(
            item.events.map((_, k) => results[i]!.firstPosition + BigInt(k))
          )
          expect(stored.map((e) => e.streamVersion)).toEqual(stored.map((_, k) => k + 1))
          expect(Verify.checkStream(stored)).toBeUndefined()
          expect(yield* headOf(item.streamId)).toEqual([
            { version: stored.length, last_hash: stored[stored.length - 1]!.hash }
          ])
        }
        // The chains go on from the batch through the single-stream appends.
        yield* store.append(a, [event("A5")], Exact({ version: 4 }))
        expect(Verify.checkStream(yield* store.readStream(a))).toBeUndefined()
      })
    )

    it.effect(
      "the fast path: a successful batch is one statement, its rows written by one (sub)transaction, outside and inside a caller's transaction",
      withStore(function* ({ store, sql }) {
        const existing = streamId()
        yield* store.append(existing, [event("A")], NoStream())
        const outside = [streamId(), streamId()]
        yield* store.appendBatch([
          { streamId: existing, events: [event("B"), event("C")], expected: Exact({ version: 1 }) },
          { streamId: outside[0]!, events: [event("A")], expected: NoStream() },
          { streamId: outside[1]!, events: [event("A"), event("B")], expected: Any() }
        ])
        // Item by item, each append would run under a savepoint of its own: one xmin per item.
        expect(yield* writersOf(outside)).toEqual({ transactions: 1, xmins: 1, events: 3 })
        const [batchRows] = yield* query(
          (sql) => sql<{ xmins: number }>`
            SELECT count(DISTINCT xmin::text)::int AS xmins FROM cobro_events
            WHERE stream_id IN ${sql.in(outside)} OR (stream_id = ${existing} AND stream_version > 1)`
        )
        expect(batchRows).toEqual({ xmins: 1 })
        const inside = [streamId(), streamId(), streamId()]
        yield* sql
          .withTransaction(
            store.appendBatch(
              inside.map((id) => ({ streamId: id, events: [event("A")], expected: NoStream() }))
            )
          )
          .pipe(Effect.orDie)
        expect(yield* writersOf(inside)).toEqual({ transactions: 1, xmins: 1, events: 3 })
      })
    )

    it.effect(
      "cobro_append_batch called directly: one row per item in order; a stream not at its expected version raises its SQLSTATE and writes nothing",
      withStore(function* ({ store, sql }) {
        const existing = streamId()
        const fresh = streamId()
        yield* store.append(existing, [event("A")], NoStream())
        const call = (expectedVersion: number) =>
          sql<{ next_version: number; first_position: string; last_position: string }>`
              SELECT next_version, first_position, last_position FROM cobro_append_batch(
                ARRAY[${fresh}, ${existing}]::text[], ARRAY['NoStream', 'Exact']::text[],
                ARRAY[0, ${expectedVersion}]::integer[], ARRAY[1, 2]::integer[], now(),
                ARRAY[${randomUUID()}, ${randomUUID()}, ${randomUUID()}]::uuid[], ARRAY['X', 'Y', 'Z']::text[],
                ARRAY[1, 1, 1]::integer[], ARRAY['{}', '{}', '{}']::jsonb[], ARRAY['{}', '{}', '{}']::jsonb[],
                ARRAY['{', '{', '{'], ARRAY['}', '}', '}'], false)`
        const refused = yield* Effect.flip(call(5))
        expect((refused.cause as { code?: string }).code).toBe(Migrations.batchConflictCode)
        expect(yield* store.readStream(fresh)).toEqual([])
        expect(yield* headOf(fresh)).toEqual([])
        const rows = yield* Effect.orDie(call(1))
        expect(rows.map((r) => r.next_version)).toEqual([1, 3])
        expect(BigInt(rows[1]!.first_position)).toBe(BigInt(rows[0]!.last_position) + 1n)
        expect(BigInt(rows[1]!.last_position)).toBe(BigInt(rows[1]!.first_position) + 1n)
        expect((yield* store.readStream(existing)).map((e) => e.type)).toEqual(["A", "Y", "Z"])
      })
    )

    it.effect(
      "a batch where one item conflicts writes nothing and fails with the first conflicting item's ConcurrencyConflict",
      withStore(function* ({ store }) {
        const [fresh, existing, other] = [streamId(), streamId(), streamId()]
        yield* store.append(existing, [event("A"), event("B")], NoStream())
        yield* store.append(other, [event("A")], NoStream())
        const conflict = yield* Effect.flip(
          store.appendBatch([
            { streamId: fresh, events: [event("New")], expected: NoStream() },
            { streamId: existing, events: [event("C")], expected: Exact({ version: 1 }) },
            { streamId: other, events: [event("B")], expected: NoStream() }
          ])
        )
        expect(conflict).toEqual(
          new EventStore.ConcurrencyConflict({ streamId: existing, expected: "Exact(1)", actual: 2 })
        )
        expect(yield* store.readStream(fresh)).toEqual([])
        expect(yield* headOf(fresh)).toEqual([])
        expect((yield* store.readStream(existing)).map((e) => e.type)).toEqual(["A", "B"])
        expect((yield* store.readStream(other)).map((e) => e.type)).toEqual(["A"])
        const missing = yield* Effect.flip(
          store.appendBatch([
            { streamId: other, events: [event("B")], expected: Exact({ version: 1 }) },
            { streamId: streamId(), events: [event("X")], expected: Exact({ version: 3 }) }
          ])
        )
        expect(missing).toMatchObject({ _tag: "ConcurrencyConflict", expected: "Exact(3)", actual: 0 })
        expect((yield* store.readStream(other)).map((e) => e.type)).toEqual(["A"])
      })
    )

    it.effect(
      "conflicting batches over the same streams in opposite item orders, at once: each fails with its ConcurrencyConflict, never a deadlock's defect, and nothing is written",
      withStore(function* ({ store }) {
        // Each batch's last item is stale, so each fails its statement and replays item by item,
        // holding its first item's head while it asks for the second: in opposite orders, the
        // replays would wait on each other.
        yield* inOppositeOrdersAtOnce(store, {
          rounds: 12,
          batches: 4,
          given: (id) => store.append(id, [event("A")], NoStream()),
          batch: (first, second) =>
            store.appendBatch([
              { streamId: first, events: [event("B")], expected: Exact({ version: 1 }) },
              { streamId: second, events: [event("B")], expected: Exact({ version: 5 }) }
            ]),
          after: ["A"]
        })
      })
    )

    it.effect(
      "conflicting batches creating the same new streams in opposite item orders, at once: each fails with its ConcurrencyConflict, never a deadlock's defect, and nothing is written",
      withStore(function* ({ store }) {
        // New heads cannot be locked before they exist: each replay creates its first new stream and
        // waits for the other's. The deadlock rolls one replay back, and it runs again. (Each deadlock
        // costs the server's deadlock_timeout, a second: two batches a round.)
        yield* inOppositeOrdersAtOnce(store, {
          rounds: 6,
          batches: 2,
          given: () => Effect.void,
          batch: (first, second) =>
            Effect.gen(function* () {
              const stale = streamId()
              yield* store.append(stale, [event("A")], NoStream())
              return yield* store.appendBatch([
                { streamId: first, events: [event("New")], expected: NoStream() },
                { streamId: second, events: [event("New")], expected: NoStream() },
                { streamId: stale, events: [event("B")], expected: Exact({ version: 5 }) }
              ])
            }),
          after: []
        })
      })
    )

    it.effect(
      "a reused event id in a batch is EventIdReused, and nothing is written",
      withStore(function* ({ store }) {
        const taken = event("Taken", { amount: 1 })
        yield* store.append(streamId(), [taken], NoStream())
        const [fresh, changed] = [streamId(), streamId()]
        const elsewhere = yield* Effect.flip(
          store.appendBatch([
            { streamId: fresh, events: [event("New")], expected: NoStream() },
            { streamId: changed, events: [event("X"), { ...taken, data: { amount: 2 } }], expected: Any() }
          ])
        )
        expect(elsewhere).toEqual(new EventStore.EventIdReused({ eventId: taken.eventId }))
        expect(yield* store.readStream(fresh)).toEqual([])
        expect(yield* store.readStream(changed)).toEqual([])
        // Twice in one batch: the second item finds the first item's event.
        const twice = event("Twice")
        const inBatch = yield* Effect.flip(
          store.appendBatch([
            { streamId: fresh, events: [twice], expected: NoStream() },
            { streamId: changed, events: [{ ...twice, type: "Other" }], expected: NoStream() }
          ])
        )
        expect(inBatch).toEqual(new EventStore.EventIdReused({ eventId: twice.eventId }))
        expect(yield* store.readStream(fresh)).toEqual([])
      })
    )

    it.effect(
      "re-appending a whole batch is a no-op that returns the original positions",
      withStore(function* ({ store }) {
        const existing = streamId()
        yield* store.append(existing, [event("A")], NoStream())
        const items: ReadonlyArray<EventStore.BatchAppend> = [
          {
            streamId: streamId(),
            events: [event("A", { amount: 1 }, { actor: "merchant" })],
            expected: NoStream()
          },
          { streamId: existing, events: [event("B"), event("C")], expected: Exact({ version: 1 }) },
          { streamId: streamId(), events: [event("A")], expected: Any() }
        ]
        const first = yield* store.appendBatch(items)
        // The reply was lost: the same batch again, with the same (now stale) expectations.
        expect(yield* store.appendBatch(items)).toEqual(first)
        expect(yield* store.appendBatch(items.map((item) => ({ ...item, expected: Any() })))).toEqual(first)
        for (const item of items) {
          expect((yield* store.readStream(item.streamId)).length).toBe(item.streamId === existing ? 3 : 1)
        }
        // A retried item next to a new one: the retry is a no-op, the new one is written.
        const added = streamId()
        const mixed = yield* store.appendBatch([
          items[1]!,
          { streamId: added, events: [event("D")], expected: NoStream() }
        ])
        expect(mixed[0]).toEqual(first[1])
        expect(mixed[1]!.nextVersion).toBe(1)
      })
    )

    it.effect(
      "inside a caller's transaction, the batch rolls back with it; a refused batch leaves it usable",
      withStore(function* ({ store, sql }) {
        const [a, b] = [streamId(), streamId()]
        const seen = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* store.appendBatch([
                { streamId: a, events: [event("A")], expected: NoStream() },
                { streamId: b, events: [event("B")], expected: NoStream() }
              ])
              const inside = (yield* store.readStream(b)).map((e) => e.type)
              return yield* Effect.fail({ _tag: "RollBack" as const, inside })
            })
          )
          .pipe(Effect.flip, Effect.orDie)
        expect(seen).toEqual({ _tag: "RollBack", inside: ["B"] })
        expect(yield* store.readStream(a)).toEqual([])
        expect(yield* headOf(b)).toEqual([])
        const kept = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const refused = yield* Effect.flip(
                store.appendBatch([
                  { streamId: a, events: [event("A")], expected: NoStream() },
                  { streamId: b, events: [event("B")], expected: Exact({ version: 7 }) }
                ])
              )
              yield* store.appendBatch([{ streamId: b, events: [event("C")], expected: NoStream() }])
              return refused._tag
            })
          )
          .pipe(Effect.orDie)
        expect(kept).toBe("ConcurrencyConflict")
        expect(yield* store.readStream(a)).toEqual([])
        expect((yield* store.readStream(b)).map((e) => e.type)).toEqual(["C"])
      })
    )

    it.effect(
      "an empty batch writes nothing; an item of no events checks its version only",
      withStore(function* ({ store }) {
        expect(yield* store.appendBatch([])).toEqual([])
        const [a, b] = [streamId(), streamId()]
        yield* store.append(a, [event("A")], NoStream())
        const results = yield* store.appendBatch([
          { streamId: a, events: [], expected: Exact({ version: 1 }) },
          { streamId: b, events: [event("B")], expected: NoStream() }
        ])
        expect(results.map((r) => r.nextVersion)).toEqual([1, 1])
        const refused = yield* Effect.flip(
          store.appendBatch([
            { streamId: streamId(), events: [event("C")], expected: NoStream() },
            { streamId: a, events: [], expected: NoStream() }
          ])
        )
        expect(refused).toMatchObject({ _tag: "ConcurrencyConflict", streamId: a, actual: 1 })
      })
    )

    it.effect.prop(
      "for random batches over new and existing streams, the store ends as the in-memory store does",
      [
        FastCheck.array(FastCheck.integer({ min: 0, max: 2 }), { minLength: 5, maxLength: 5 }),
        FastCheck.uniqueArray(
          FastCheck.record({
            slot: FastCheck.integer({ min: 0, max: 4 }),
            count: FastCheck.integer({ min: 1, max: 3 }),
            expected: FastCheck.constantFrom("right", "right", "wrong", "any"),
            events: FastCheck.constantFrom("fresh", "fresh", "fresh", "retry", "reused"),
            pick: FastCheck.nat()
          }),
          { minLength: 1, maxLength: 5, selector: (item) => item.slot }
        )
      ],
      withStore(function* ({ store }, [lengths, specs]) {
        const memory = yield* InMemoryEventStore.make
        const streams = lengths.map(() => streamId("batch"))
        const setup = lengths.map((length, slot) =>
          Array.from({ length }, (_, i) => event("Setup", { slot, i }))
        )
        for (const [slot, events] of setup.entries()) {
          if (events.length === 0) continue
          yield* store.append(streams[slot]!, events, NoStream())
          yield* memory.append(streams[slot]!, events, NoStream())
        }
        const stored = setup.flat()
        const items = specs.map((spec): EventStore.BatchAppend => {
          const length = lengths[spec.slot]!
          const fresh = Array.from({ length: spec.count }, (_, i) => event("Batched", { i }))
          const events =
            spec.events === "retry" && length > 0
              ? setup[spec.slot]!
              : spec.events === "reused" && stored.length > 0
                ? fresh.map((e, i) =>
                    i === spec.pick % fresh.length
                      ? { ...stored[spec.pick % stored.length]!, data: { changed: spec.pick } }
                      : e
                  )
                : fresh
          const expected =
            spec.expected === "any"
              ? Any()
              : spec.expected === "right"
                ? length === 0 && spec.pick % 2 === 0
                  ? NoStream()
                  : Exact({ version: length })
                : length > 0 && spec.pick % 2 === 0
                  ? NoStream()
                  : Exact({ version: length + 1 + (spec.pick % 3) })
          return { streamId: streams[spec.slot]!, events, expected }
        })
        const [actual, model] = [
          yield* Effect.either(store.appendBatch(items)),
          yield* Effect.either(memory.appendBatch(items))
        ]
        expect(actual._tag).toBe(model._tag)
        if (Either.isLeft(actual) && Either.isLeft(model)) {
          expect(actual.left._tag).toBe(model.left._tag)
          const fields = (error: EventStore.ConcurrencyConflict | EventStore.EventIdReused) =>
            error._tag === "EventIdReused"
              ? { eventId: error.eventId }
              : { streamId: error.streamId, actual: error.actual }
          expect(fields(actual.left)).toEqual(fields(model.left))
        }
        if (Either.isRight(actual) && Either.isRight(model)) {
          const shape = (results: ReadonlyArray<EventStore.AppendResult>) =>
            results.map((r) => [r.nextVersion, r.lastPosition - r.firstPosition])
          expect(shape(actual.right)).toEqual(shape(model.right))
        }
        expect(yield* contents(store, streams)).toEqual(yield* contents(memory, streams))
        for (const id of streams) {
          const events = yield* store.readStream(id)
          expect(Verify.checkStream(events)).toBeUndefined()
          expect(yield* headOf(id)).toEqual(
            events.length === 0
              ? []
              : [{ version: events.length, last_hash: events[events.length - 1]!.hash }]
          )
        }
      }),
      { fastCheck: { numRuns: propRuns } }
    )

    it.effect(
      "a batch consumer receives the events in commit order, each once, in batches, and its writes commit with the checkpoint",
      withStore(function* ({ store, sql }) {
        const name = `batch_${randomUUID().slice(0, 8)}`
        const table = `seen_${randomUUID().slice(0, 8)}`
        yield* Effect.orDie(sql`CREATE TABLE ${sql(table)} (event_id uuid PRIMARY KEY)`)
        const batches: Array<ReadonlyArray<string>> = []
        let refuse: string | undefined
        const consumer = Subscription.makeBatch(name, (events) =>
          Effect.gen(function* () {
            const ids = events.map((e) => e.eventId)
            yield* Effect.orDie(
              sql`INSERT INTO ${sql(table)} ${sql.insert(ids.map((event_id) => ({ event_id })))}`
            )
            if (refuse !== undefined && ids.includes(refuse)) return yield* new Refused({ eventId: refuse })
            batches.push(ids)
          })
        )
        yield* Eventually.logVisible
        yield* Subscription.catchUp(consumer)
        const start = yield* Subscription.checkpoint(name)
        batches.length = 0
        yield* Effect.orDie(sql`DELETE FROM ${sql(table)}`)
        const ids = [streamId(), streamId(), streamId()]
        yield* store.appendBatch(
          ids.map((id) => ({ streamId: id, events: [event("A"), event("B")], expected: NoStream() }))
        )
        yield* store.append(ids[0]!, [event("C")], Exact({ version: 2 }))
        yield* Eventually.logVisible
        const expected = (yield* store.readAll({ after: start })).map((e) => e.eventId)
        expect(expected.length).toBe(7)
        // A batch that fails rolls back the consumer's writes with it, and the checkpoint stays.
        refuse = expected[5]
        const failed = yield* Effect.flip(Subscription.catchUp(consumer, { batchSize: 3 }))
        expect(failed).toEqual(new Refused({ eventId: expected[5]! }))
        expect(batches).toEqual([expected.slice(0, 3)])
        const afterFirst = yield* Subscription.checkpoint(name)
        expect(afterFirst).not.toEqual(start)
        const written = (table: string) =>
          Effect.map(
            query((sql) => sql<{ event_id: string }>`SELECT event_id FROM ${sql(table)}`),
            (rows) => rows.map((r) => r.event_id).sort()
          )
        expect(yield* written(table)).toEqual([...expected.slice(0, 3)].sort())
        refuse = undefined
        expect(yield* Subscription.catchUp(consumer, { batchSize: 3 })).toBe(4)
        expect(batches).toEqual([expected.slice(0, 3), expected.slice(3, 6), expected.slice(6)])
        expect(yield* written(table)).toEqual([...expected].sort())
        expect(yield* Subscription.catchUp(consumer)).toBe(0)
        expect(batches.flat()).toEqual(expected)
        // Its per-event `handle` is a batch of one.
        yield* Effect.orDie(sql`DELETE FROM ${sql(table)}`)
        const one = (yield* store.readAll({ after: start, limit: 1 }))[0]!
        yield* sql.withTransaction(consumer.handle(one)).pipe(Effect.orDie)
        expect(batches[batches.length - 1]).toEqual([one.eventId])
      })
    )
  })

suite("appendBatch on PGlite", Databases.pglite, 15)
suite("appendBatch on PostgreSQL", Databases.postgres, 30)
