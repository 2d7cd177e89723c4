/**
 * Guards in `appendBatch` (`Outbox.guard`: an item of no events, "commit only if this stream is still
 * at this version"), on PGlite and on PostgreSQL: checked inside the batch's one `cobro_append_batch`
 * statement (migration `16_append_batch_guards`), failing the batch with `ConcurrencyConflict` on the
 * guard's stream and writing nothing when it does not hold, and without locking the guarded head
 * (shown on PostgreSQL, whose sessions really overlap; PGlite has one session).
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Outbox from "@cobro/domain/Outbox"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as Migrations from "../src/Migrations.js"
import * as Verify from "../src/Verify.js"
import * as Databases from "./support/Databases.js"
import { event, streamId } from "./support/Fixtures.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const { Any, Exact, NoStream } = EventStore.ExpectedVersion

const query = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.orDie)

/** A stream's head, with the (sub)transaction that last wrote it. */
const headOf = (id: string) =>
  query(
    (sql) => sql<{ version: number; last_hash: string; xmin: string }>`
    SELECT version, last_hash, xmin::text AS xmin FROM cobro_streams WHERE stream_id = ${id}`
  )

/** How many (sub)transactions (`xmin`) wrote these events. */
const xminsOf = (events: ReadonlyArray<EventStore.NewEvent>) =>
  Effect.map(
    query(
      (sql) => sql<{ xmins: number }>`
      SELECT count(DISTINCT xmin::text)::int AS xmins FROM cobro_events
      WHERE event_id IN ${sql.in(events.map((e) => e.eventId))}`
    ),
    (rows) => rows[0]!.xmins
  )

/** A stream with `length` events. */
const existing = (length: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const id = streamId("guarded")
    yield* store.append(
      id,
      Array.from({ length }, (_, i) => event("Setup", { i })),
      NoStream()
    )
    return id
  })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  storeSuite(database, "60 seconds")(name, (it) => {
    it.effect(
      "a guard at its stream's version: the writes are one statement's, the guard's result is its version, and its head is not written",
      withStore(function* ({ store }) {
        const [guarded, written] = [yield* existing(2), yield* existing(1)]
        const fresh = streamId()
        const head = yield* headOf(guarded)
        const batched = [event("W"), event("N")]
        const results = yield* store.appendBatch([
          { streamId: written, events: [batched[0]!], expected: Exact({ version: 1 }) },
          { streamId: fresh, events: [batched[1]!], expected: NoStream() },
          Outbox.guard(guarded, 2),
          Outbox.guard(streamId(), 0)
        ])
        expect(results.map((r) => r.nextVersion)).toEqual([2, 1, 2, 0])
        expect(results[2]!.lastPosition - results[2]!.firstPosition).toBe(0n)
        // Item by item (the fallback), each write would have run under a savepoint of its own.
        expect(yield* xminsOf(batched)).toBe(1)
        expect(yield* headOf(guarded)).toEqual(head)
        expect((yield* store.readStream(guarded)).map((e) => e.type)).toEqual(["Setup", "Setup"])
        expect(Verify.checkStream(yield* store.readStream(written))).toBeUndefined()
      })
    )

    it.effect(
      "a guard at another version: ConcurrencyConflict on the guard's stream, and nothing is written (no events, heads unchanged)",
      withStore(function* ({ store }) {
        const [guarded, written] = [yield* existing(3), yield* existing(1)]
        const missing = streamId()
        const before = [yield* headOf(guarded), yield* headOf(written)]
        const attempt = (guard: EventStore.BatchAppend) => {
          const fresh = streamId()
          return Effect.map(
            Effect.flip(
              store.appendBatch([
                { streamId: written, events: [event("W")], expected: Exact({ version: 1 }) },
                { streamId: fresh, events: [event("N")], expected: NoStream() },
                guard
              ])
            ),
            (error) => ({ error, fresh })
          )
        }
        for (const [guard, actual] of [
          [Outbox.guard(guarded, 2), 3],
          [Outbox.guard(guarded, 4), 3],
          [Outbox.guard(guarded, 0), 3],
          [Outbox.guard(missing, 1), 0]
        ] as const) {
          const { error, fresh } = yield* attempt(guard)
          expect(error).toMatchObject({ _tag: "ConcurrencyConflict", streamId: guard.streamId, actual })
          expect(yield* store.readStream(fresh)).toEqual([])
          expect(yield* headOf(fresh)).toEqual([])
          expect(yield* headOf(missing)).toEqual([])
          expect([yield* headOf(guarded), yield* headOf(written)]).toEqual(before)
        }
        expect((yield* store.readStream(written)).length).toBe(1)
      })
    )

    it.effect(
      "cobro_append_batch called directly with an item of no events: a row per item, the guard's its stream's version and positions 0; a guard that does not hold raises the conflict's SQLSTATE",
      withStore(function* ({ store, sql }) {
        const guarded = yield* existing(2)
        const fresh = streamId()
        const call = (guardVersion: number) =>
          sql<{ next_version: number; first_position: string; last_position: string }>`
              SELECT next_version, first_position, last_position FROM cobro_append_batch(
                ARRAY[${fresh}, ${guarded}]::text[], ARRAY['NoStream', 'Exact']::text[],
                ARRAY[0, ${guardVersion}]::integer[], ARRAY[1, 0]::integer[], now(),
                ARRAY[${randomUUID()}]::uuid[], ARRAY['X']::text[], ARRAY[1]::integer[],
                ARRAY['{}']::jsonb[], ARRAY['{}']::jsonb[], ARRAY['{'], ARRAY['}'], false)`
        const refused = yield* Effect.flip(call(1))
        expect((refused.cause as { code?: string }).code).toBe(Migrations.batchConflictCode)
        expect(yield* headOf(fresh)).toEqual([])
        const rows = yield* Effect.orDie(call(2))
        expect(
          rows.map((r) => [r.next_version, BigInt(r.first_position) > 0n, Number(r.last_position)])
        ).toEqual([
          [1, true, Number(rows[0]!.first_position)],
          [2, false, 0]
        ])
        expect((yield* store.readStream(fresh)).map((e) => e.type)).toEqual(["X"])
      })
    )

    it.effect.prop(
      "for random batches of writes and guards, the store ends as the in-memory store does",
      [
        FastCheck.array(FastCheck.integer({ min: 0, max: 2 }), { minLength: 6, maxLength: 6 }),
        FastCheck.uniqueArray(
          FastCheck.record({
            slot: FastCheck.integer({ min: 0, max: 5 }),
            guard: FastCheck.boolean(),
            expected: FastCheck.constantFrom("right", "right", "right", "wrong", "any"),
            pick: FastCheck.nat()
          }),
          { minLength: 1, maxLength: 6, selector: (item) => item.slot }
        )
      ],
      withStore(function* ({ store }, [lengths, specs]) {
        const memory = yield* InMemoryEventStore.make
        const streams = lengths.map(() => streamId("guards"))
        for (const [slot, length] of lengths.entries()) {
          if (length === 0) continue
          const events = Array.from({ length }, (_, i) => event("Setup", { slot, i }))
          yield* store.append(streams[slot]!, events, NoStream())
          yield* memory.append(streams[slot]!, events, NoStream())
        }
        const items = specs.map((spec): EventStore.BatchAppend => {
          const length = lengths[spec.slot]!
          const version =
            spec.expected === "right"
              ? length
              : length === 0
                ? 1 + (spec.pick % 2)
                : (length + 1 + spec.pick) % 4
          if (spec.guard && spec.expected !== "any") return Outbox.guard(streams[spec.slot]!, version)
          return {
            streamId: streams[spec.slot]!,
            events: spec.guard ? [] : [event("Batched", { pick: spec.pick })],
            expected: spec.expected === "any" ? Any() : version === 0 ? NoStream() : Exact({ version })
          }
        })
        const [actual, model] = [
          yield* Effect.either(store.appendBatch(items)),
          yield* Effect.either(memory.appendBatch(items))
        ]
        expect(actual._tag).toBe(model._tag)
        if (Either.isLeft(actual) && Either.isLeft(model)) {
          const fields = (error: EventStore.ConcurrencyConflict | EventStore.EventIdReused) =>
            error._tag === "ConcurrencyConflict"
              ? { _tag: error._tag, streamId: error.streamId, actual: error.actual }
              : { _tag: error._tag }
          expect(fields(actual.left)).toEqual(fields(model.left))
        }
        if (Either.isRight(actual) && Either.isRight(model)) {
          expect(actual.right.map((r) => r.nextVersion)).toEqual(model.right.map((r) => r.nextVersion))
        }
        for (const id of streams) {
          const [stored, modelled] = [yield* store.readStream(id), yield* memory.readStream(id)]
          expect(stored.map((e) => e.eventId)).toEqual(modelled.map((e) => e.eventId))
          expect(Verify.checkStream(stored)).toBeUndefined()
          expect((yield* headOf(id)).map((h) => h.version)).toEqual(
            stored.length === 0 ? [] : [stored.length]
          )
        }
      }),
      { fastCheck: { numRuns: propRuns } }
    )
  })

suite("appendBatch's guards on PGlite", Databases.pglite, 15)
suite("appendBatch's guards on PostgreSQL", Databases.postgres, 30)

storeSuite(Databases.postgres, "60 seconds")("appendBatch's guards take no lock, on PostgreSQL", (it) => {
  it.effect(
    "while a batch guarding a stream is uncommitted, its head is free (locked NOWAIT from another session) and another batch guarding it commits; the head it writes is locked",
    withStore(function* ({ store, sql }) {
      const guarded = yield* existing(1)
      const [first, second] = [yield* existing(1), yield* existing(1)]
      const appended = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const held = yield* Effect.fork(
        sql
          .withTransaction(
            Effect.gen(function* () {
              yield* store.appendBatch([
                { streamId: first, events: [event("A")], expected: Exact({ version: 1 }) },
                Outbox.guard(guarded, 1)
              ])
              yield* Deferred.succeed(appended, undefined)
              yield* Deferred.await(release)
            })
          )
          .pipe(Effect.orDie)
      )
      yield* Deferred.await(appended)
      // Another session: `NOWAIT` fails at once (55P03) on a row another transaction has locked.
      const lockNow = (id: string) =>
        Effect.either(sql`SELECT stream_id FROM cobro_streams WHERE stream_id = ${id} FOR UPDATE NOWAIT`)
      expect(Either.isRight(yield* lockNow(guarded))).toBe(true)
      const busy = yield* lockNow(first)
      expect(Either.isLeft(busy) && (busy.left.cause as { code?: string }).code).toBe("55P03")
      // A second sale of the same merchant: its batch guards the same head and commits meanwhile.
      const other = yield* store
        .appendBatch([
          { streamId: second, events: [event("B")], expected: Exact({ version: 1 }) },
          Outbox.guard(guarded, 1)
        ])
        .pipe(Effect.timeout("5 seconds"))
      expect(other.map((r) => r.nextVersion)).toEqual([2, 1])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(held)
      expect((yield* store.readStream(first)).map((e) => e.type)).toEqual(["Setup", "A"])
      expect((yield* store.readStream(second)).map((e) => e.type)).toEqual(["Setup", "B"])
      expect((yield* headOf(guarded)).map((h) => h.version)).toEqual([1])
    })
  )
})
