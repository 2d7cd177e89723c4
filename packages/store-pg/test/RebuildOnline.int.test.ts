/**
 * `Projection.rebuildAll` beside a running server (CLI-7): the read models are rebuilt in a shadow
 * schema in short transactions and swapped in at the end, so the live tables stay readable, the
 * log's consumers keep moving, and the live runner loses and repeats no event across the swap. On
 * PGlite and on a real PostgreSQL server.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as Projection from "../src/Projection.js"
import * as Subscription from "../src/Subscription.js"
import * as Counters from "./support/Counters.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { taggedEvent } from "./support/Fixtures.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

/** A counter of the streams `<prefix>-…`, in table `table`. */
const counter = (prefix: string, table = `rb_${prefix}`) => Counters.counter(prefix, table)

/** What the counter must hold for these appends: `[stream, amount]` each one event. */
const expected = (appended: ReadonlyArray<readonly [string, number]>) => {
  const byStream = new Map<string, { stream_id: string; events: number; total: number }>()
  for (const [stream, amount] of appended) {
    const row = byStream.get(stream) ?? { stream_id: stream, events: 0, total: 0 }
    byStream.set(stream, { stream_id: stream, events: row.events + 1, total: row.total + amount })
  }
  return [...byStream.values()].sort((a, b) => (a.stream_id < b.stream_id ? -1 : 1))
}

const checkpointOf = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ position: string }>`
      SELECT global_position::text AS position FROM cobro_checkpoints WHERE name = ${name}`
  ).pipe(
    Effect.map((found) => found[0]?.position),
    Effect.orDie
  )

/** No shadow schema, no shadow checkpoint: a finished or failed rebuild leaves nothing behind. */
const nothingLeft = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const schemas = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${Projection.rebuildSchema}`
  const shadows = yield* sql`SELECT name FROM cobro_checkpoints WHERE name LIKE 'rebuild:%'`
  return { schemas: schemas.length, shadows: shadows.length }
}).pipe(Effect.orDie)

/** Appends `[stream, amount]` events one per append, and remembers them. */
const appendAll = (
  appended: Array<readonly [string, number]>,
  items: ReadonlyArray<readonly [string, number]>
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    for (const [stream, amount] of items) {
      yield* store.append(stream, [taggedEvent("Added", { amount })], EventStore.ExpectedVersion.Any())
      appended.push([stream, amount])
    }
  })

/**
 * A counter of a fresh prefix (`letter` and a random tag), caught up with `count` events of its own,
 * the i-th adding `amount(i)` to stream `i % streams`.
 */
const caughtUpCounter = (letter: string, count: number, streams: number, amount = (i: number) => i + 1) =>
  Effect.gen(function* () {
    const tag = randomUUID().slice(0, 8)
    const prefix = `${letter}${tag}`
    const p = counter(prefix)
    const appended: Array<readonly [string, number]> = []
    const stream = (i: number) => `${prefix}-${i % streams}`
    yield* appendAll(
      appended,
      Array.from({ length: count }, (_, i) => [stream(i), amount(i)] as const)
    )
    yield* Eventually.logVisible
    yield* Projection.catchUp(p)
    return { tag, prefix, p, appended, stream }
  })

/**
 * A rebuild of `projections` forked and held after its first replay transaction (between two
 * transactions: nothing of it is open); `resume` lets it go on.
 */
const pausedRebuild = (projections: ReadonlyArray<Counters.Counter>, batchSize: number) =>
  Effect.gen(function* () {
    const paused = yield* Deferred.make<void>()
    const resume = yield* Deferred.make<void>()
    let calls = 0
    const fiber = yield* Effect.fork(
      Projection.rebuildAll(projections, {
        batchSize,
        onProgress: () =>
          calls++ === 0
            ? Effect.zipRight(Deferred.succeed(paused, undefined), Deferred.await(resume))
            : Effect.void
      })
    )
    yield* Deferred.await(paused)
    return { fiber, resume: Deferred.succeed(resume, undefined) }
  })

const long = { timeout: "90 seconds" } as const

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  storeSuite(database, "180 seconds")(name, (it) => {
    it.effect.prop(
      "a rebuild gives every projection the rows the whole log gives, its indexes, and a checkpoint at the end, however far its runner was",
      [
        FastCheck.array(
          FastCheck.tuple(FastCheck.integer({ min: 0, max: 3 }), FastCheck.integer({ min: 1, max: 9 })),
          { minLength: 0, maxLength: 15 }
        ),
        FastCheck.integer({ min: 0, max: 15 })
      ],
      withStore(function* ({ sql }, [history, caughtUp]) {
        const tag = randomUUID().slice(0, 8)
        const p = counter(`p${tag}`)
        const q = counter(`q${tag}`)
        const appended: Array<readonly [string, number]> = []
        const items = history.map(
          ([stream, amount]) => [`${stream % 2 === 0 ? "p" : "q"}${tag}-${stream}`, amount] as const
        )
        // The live read models have seen the first `caughtUp` events only.
        yield* appendAll(appended, items.slice(0, caughtUp))
        yield* Eventually.logVisible
        yield* Projection.catchUp(p, { batchSize: 3 })
        yield* Projection.catchUp(q, { batchSize: 3 })
        yield* appendAll(appended, items.slice(caughtUp))
        yield* Eventually.logVisible
        const seen: Array<number> = []
        const replayed = yield* Projection.rebuildAll([p, q], {
          batchSize: 4,
          onProgress: (progress) => Effect.sync(() => seen.push(progress.events))
        })
        const want = [
          expected(appended.filter(([s]) => s.startsWith("p"))),
          expected(appended.filter(([s]) => s.startsWith("q")))
        ]
        expect([yield* Counters.rowsOf(p.name), yield* Counters.rowsOf(q.name)]).toEqual(want)
        expect(replayed).toBeGreaterThanOrEqual(history.length)
        expect(seen[seen.length - 1]).toBe(replayed)
        expect([...seen].sort((a, b) => a - b)).toEqual(seen)
        // The index moved with its table, into the live schema.
        const indexes = yield* sql<{ indexname: string }>`
            SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ${p.name}
            ORDER BY indexname`.pipe(Effect.orDie)
        expect(indexes.map((i) => i.indexname)).toEqual([`${p.name}_pkey`, `${p.name}_total`])
        // The checkpoints are at the end of the log: a catch-up after the rebuild applies nothing.
        expect(yield* Projection.catchUp(p)).toBe(0)
        expect(yield* Projection.catchUp(q)).toBe(0)
        expect([yield* Counters.rowsOf(p.name), yield* Counters.rowsOf(q.name)]).toEqual(want)
        expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })
      }),
      { fastCheck: { numRuns: 6 } }
    )

    it.effect(
      "while a rebuild replays, the live tables answer at once and the log's consumers move on; after the swap the live runner loses and repeats no event",
      withStore(function* ({ sql }) {
        const { appended, p, prefix, stream, tag } = yield* caughtUpCounter("l", 30, 4, (i) => (i % 7) + 1)
        const before = yield* Counters.rowsOf(p.name)
        expect(before).toEqual(expected(appended))
        const runner = yield* Effect.fork(Projection.run(p, { pollInterval: "50 millis", batchSize: 5 }))

        const rebuild = yield* pausedRebuild([p], 7)
        // (a) A read of the live table takes no lock wait, and gives the old rows.
        const read = yield* sql
          .withTransaction(Effect.zipRight(sql`SET LOCAL lock_timeout = '500ms'`, Counters.rowsOf(p.name)))
          .pipe(Effect.orDie)
        expect(read).toEqual(before)
        // (b) An event appended now reaches another consumer of the log, and the live runner.
        const late = taggedEvent("Added", { amount: 100 })
        yield* (yield* EventStore.EventStore).append(stream(0), [late], EventStore.ExpectedVersion.Any())
        appended.push([stream(0), 100])
        let seen = false
        const other = Subscription.make(`other-${tag}`, (e) =>
          e.eventId === late.eventId
            ? Effect.sync(() => {
                seen = true
              })
            : Effect.void
        )
        yield* Eventually.eventually(
          "the event appended during the rebuild, by another consumer",
          Effect.zipRight(
            Subscription.catchUp(other),
            Effect.sync(() => seen)
          ),
          (s) => s,
          long
        )
        yield* Eventually.eventually(
          (last) => `the live table kept current during the rebuild: ${JSON.stringify(last)}`,
          Counters.rowsOf(p.name),
          (now) => JSON.stringify(now) === JSON.stringify(expected(appended)),
          long
        )

        // Appends during the rest of the replay and the swap, then after it.
        const appender = yield* Effect.fork(
          Effect.forEach(
            Array.from({ length: 25 }, (_, i) => i),
            (i) => Effect.zipRight(appendAll(appended, [[stream(i), i + 1]]), Effect.sleep("5 millis")),
            { discard: true }
          )
        )
        yield* rebuild.resume
        const replayed = yield* Fiber.join(rebuild.fiber)
        expect(replayed).toBeGreaterThanOrEqual(31)
        yield* Fiber.join(appender)
        yield* appendAll(appended, [
          [stream(1), 1000],
          [stream(2), 2000]
        ])
        yield* Eventually.logVisible

        const fresh = counter(prefix, `rb_fresh_${tag}`)
        const want = expected(appended)
        yield* Eventually.eventually(
          (last) => `the live runner's rows after the swap: ${JSON.stringify(last)}`,
          Counters.rowsOf(p.name),
          (now) => JSON.stringify(now) === JSON.stringify(want),
          long
        )
        yield* Projection.catchUp(fresh)
        expect(yield* Counters.rowsOf(fresh.name)).toEqual(want)
        yield* Fiber.interrupt(runner)
        // The live runner's checkpoint is where a fresh full catch-up ended: nothing is left to apply.
        expect(yield* checkpointOf(Projection.checkpointName(p))).toBe(
          yield* checkpointOf(Projection.checkpointName(fresh))
        )
        expect(yield* Projection.catchUp(p)).toBe(0)
        expect(yield* Counters.rowsOf(p.name)).toEqual(want)
        expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })
      })
    )

    it.effect(
      "a rebuild interrupted mid-replay or mid-transaction leaves the live tables as they were; after a crash the next one succeeds",
      withStore(function* ({ sql }) {
        const { appended, p, prefix } = yield* caughtUpCounter("c", 20, 3)
        const before = yield* Counters.rowsOf(p.name)
        const checkpoint = yield* checkpointOf(Projection.checkpointName(p))
        expect(before).toEqual(expected(appended))

        // Interrupted between two replay transactions.
        const between = yield* pausedRebuild([p], 6)
        yield* Fiber.interrupt(between.fiber)
        expect(yield* Counters.rowsOf(p.name)).toEqual(before)
        expect(yield* checkpointOf(Projection.checkpointName(p))).toBe(checkpoint)
        expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })

        // Interrupted inside a replay transaction (its projection waits on the 10th event).
        const mine = (yield* (yield* EventStore.EventStore).readStream(`${prefix}-0`))[3]!
        const inside = yield* Deferred.make<void>()
        const stuck = Projection.make({
          ...p,
          apply: (e) =>
            e.eventId === mine.eventId
              ? Effect.zipRight(Deferred.succeed(inside, undefined), Effect.never)
              : p.apply(e)
        })
        const within = yield* Effect.fork(Projection.rebuildAll([stuck], { batchSize: 1000 }))
        yield* Deferred.await(inside)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(within))).toBe(true)
        expect(yield* Counters.rowsOf(p.name)).toEqual(before)
        expect(yield* checkpointOf(Projection.checkpointName(p))).toBe(checkpoint)
        expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })

        // A crash leaves its shadow schema (here with a table that does not fit) and checkpoint.
        yield* sql`CREATE SCHEMA ${sql(Projection.rebuildSchema)}`.pipe(Effect.orDie)
        yield* sql`CREATE TABLE ${sql(`${Projection.rebuildSchema}.${p.name}`)} (junk integer)`.pipe(
          Effect.orDie
        )
        yield* sql`INSERT INTO cobro_checkpoints (name, transaction_id, global_position)
            VALUES (${Projection.rebuildCheckpointName(p)}, '0', 0)`.pipe(Effect.orDie)
        yield* Projection.rebuildAll([p], { batchSize: 6 })
        expect(yield* Counters.rowsOf(p.name)).toEqual(before)
        expect(yield* checkpointOf(Projection.checkpointName(p))).toBe(checkpoint)
        expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })
      })
    )

    it.effect(
      "a rebuild started while another replays takes over; the first stops without touching the live tables",
      () =>
        Effect.gen(function* () {
          const { appended, p } = yield* caughtUpCounter("t", 12, 2)
          const first = yield* pausedRebuild([p], 5)
          yield* Projection.rebuildAll([p], { batchSize: 5 })
          expect(yield* Counters.rowsOf(p.name)).toEqual(expected(appended))
          yield* first.resume
          const exit = yield* Fiber.await(first.fiber)
          expect(Exit.isFailure(exit) && !Exit.isInterrupted(exit)).toBe(true)
          expect(yield* Counters.rowsOf(p.name)).toEqual(expected(appended))
          expect(yield* Projection.catchUp(p)).toBe(0)
          expect(yield* nothingLeft).toEqual({ schemas: 0, shadows: 0 })
        })
    )
  })

suite("online rebuild on PGlite", Databases.pglite)
suite("online rebuild on PostgreSQL", Databases.postgres)
