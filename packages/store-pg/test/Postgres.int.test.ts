/**
 * The store contract on a real PostgreSQL server, in a fresh database of its own; plus the torture
 * test of catch-up reads under concurrent writers that commit late or roll back.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Deferred from "effect/Deferred"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { randomUUID } from "node:crypto"
import * as Redacted from "effect/Redacted"
import * as Migrations from "../src/Migrations.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PgPool from "../src/PgPool.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as Verify from "../src/Verify.js"
import * as Databases from "./support/Databases.js"
import { event } from "./support/Fixtures.js"
import { storeContract } from "./support/StoreContract.js"
import { storeSuite, withDatabase, withStore } from "./support/StoreTest.js"

storeContract("store on PostgreSQL", Databases.postgres, { propRuns: 10, sessions: "many" })

describe("migrations on PostgreSQL", () => {
  it.scopedLive(
    "six processes' clients migrating one new database at once all succeed, and the migrations run once",
    withDatabase(function* (url) {
      // Six separate pools, as six nodes starting together would have.
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () =>
          Migrations.run.pipe(
            Effect.provide(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 })),
            Effect.either
          )
        ),
        { concurrency: "unbounded" }
      )
      expect(results.filter(Either.isLeft)).toEqual([])
      const ran = results.flatMap((result) => (Either.isRight(result) ? result.right : []))
      expect(ran.map(([id]) => id).sort((a, b) => a - b)).toEqual(
        Object.keys(Migrations.migrations).map((key) => Number(key.split("_")[0]))
      )
    })
  )
})

storeSuite(Databases.postgres, "60 seconds")("torture on PostgreSQL", (it) => {
  it.effect(
    "16 writers with random delays and rollbacks: a catch-up reader sees every committed event once, each stream in version order",
    withStore(function* ({ store, sql }) {
      const prefix = `torture-${randomUUID().slice(0, 8)}`
      const streams = Array.from({ length: 6 }, (_, i) => `${prefix}-${i}`)
      const committed = new Set<string>()
      let rolledBack = 0

      const writer = (w: number) =>
        Effect.gen(function* () {
          for (let i = 0; i < 20; i++) {
            const stream = streams[yield* Random.nextIntBetween(0, streams.length)]!
            const events = Array.from({ length: yield* Random.nextIntBetween(1, 4) }, (_, n) =>
              event("Tortured", { w, i, n })
            )
            const rollback = (yield* Random.next) < 0.15
            const delay = yield* Random.nextIntBetween(0, 20)
            // The append commits only when the outer transaction does, after a random delay:
            // positions are taken early and committed late, out of order.
            const attempt = sql.withTransaction(
              Effect.gen(function* () {
                const version = (yield* store.readStream(stream)).length
                yield* store.append(stream, events, EventStore.ExpectedVersion.Exact({ version }))
                yield* Effect.sleep(delay)
                if (rollback) return yield* Effect.fail("rollback" as const)
              })
            )
            const result = yield* attempt.pipe(
              Effect.retry({
                while: (error) => (error === "rollback" ? false : error._tag === "ConcurrencyConflict")
              }),
              Effect.either
            )
            if (Either.isRight(result)) for (const e of events) committed.add(e.eventId)
            else if (result.left === "rollback") rolledBack++
            else return yield* Effect.die(result.left)
            yield* Effect.sleep(yield* Random.nextIntBetween(0, 5))
          }
        })

      const seen: Array<EventStore.LoggedEvent> = []
      let after = EventStore.Start
      const readOnce = Effect.gen(function* () {
        const page = yield* store.readAll({ after, limit: 50 })
        seen.push(...page)
        const last = page[page.length - 1]
        if (last !== undefined) after = last.checkpoint
        return page.length
      })
      const reader = Effect.forever(Effect.zipRight(readOnce, Effect.sleep("2 millis")))

      const readerFiber = yield* Effect.fork(reader)
      // One late commit for certain, whatever the random workload does: `early` takes its
      // transaction id first, `late` appends and commits (a smaller position, a larger id),
      // then `early` appends and commits. Commit-safe order puts `early`'s larger position first.
      const lateAppended = yield* Deferred.make<void>()
      const early = event("Early", {})
      const late = event("Late", {})
      const earlyFiber = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT pg_current_xact_id()`
            yield* Deferred.await(lateAppended)
            yield* store.append(`${prefix}-early`, [early], EventStore.ExpectedVersion.NoStream())
          })
        )
      )
      yield* Effect.sleep("20 millis")
      yield* sql.withTransaction(
        store.append(`${prefix}-late`, [late], EventStore.ExpectedVersion.NoStream())
      )
      yield* Deferred.succeed(lateAppended, undefined)
      yield* Fiber.join(earlyFiber)
      committed.add(early.eventId)
      committed.add(late.eventId)
      yield* Effect.all(
        Array.from({ length: 16 }, (_, w) => writer(w)),
        { concurrency: "unbounded" }
      )
      yield* Fiber.interrupt(readerFiber)
      // Final catch-up; transactions elsewhere on the cluster may hold the snapshot's xmin back a while.
      const mine = () => seen.filter((e) => e.streamId.startsWith(prefix))
      for (let i = 0; i < 400 && mine().length < committed.size; i++) {
        if ((yield* readOnce) === 0) yield* Effect.sleep("50 millis")
      }

      const read = mine()
      const ids = read.map((e) => e.eventId)
      expect(new Set(ids).size).toBe(ids.length)
      expect(new Set(ids)).toEqual(committed)
      expect(rolledBack).toBeGreaterThan(0)
      for (const stream of streams) {
        const versions = read.filter((e) => e.streamId === stream).map((e) => e.streamVersion)
        expect(versions).toEqual(versions.map((_, i) => i + 1))
        expect((yield* store.readStream(stream)).map((e) => e.eventId)).toEqual(
          read.filter((e) => e.streamId === stream).map((e) => e.eventId)
        )
      }
      // The late commits did happen: commit order differs from position order somewhere.
      const positions = read.map((e) => e.globalPosition)
      expect(positions.some((p, i) => i > 0 && p < positions[i - 1]!)).toBe(true)
      expect((yield* Verify.verify).breaks).toEqual([])
    }),
    { timeout: 60_000 }
  )
})

/** Every node of an `EXPLAIN (FORMAT JSON)` plan. */
const planNodes = (plan: Record<string, unknown>): Array<Record<string, unknown>> => [
  plan,
  ...((plan["Plans"] as Array<Record<string, unknown>> | undefined) ?? []).flatMap(planNodes)
]

storeSuite(Databases.postgres, "60 seconds")("plans on PostgreSQL, without fresh statistics", (it) => {
  it.effect(
    "the pool's sessions never JIT-compile a plan",
    withStore(function* ({ sql }) {
      // The layer under test has the pool (typed away from the store's services).
      const pool = Option.getOrThrow(yield* Effect.serviceOption(PgPool.PgPool))
      // Through @effect/sql and through `pg` directly, on several connections at once.
      const shown = yield* Effect.all(
        [
          ...Array.from({ length: 4 }, () =>
            sql<{ jit: string }>`SHOW jit`.pipe(Effect.map((r) => r[0]!.jit))
          ),
          ...Array.from({ length: 4 }, () =>
            Effect.promise(() => pool.query<{ jit: string }>("SHOW jit")).pipe(
              Effect.map((r) => r.rows[0]!.jit)
            )
          )
        ],
        { concurrency: "unbounded" }
      )
      expect(shown).toEqual(Array.from({ length: 8 }, () => "off"))
    })
  )

  it.effect(
    "readStreams looks each stream up through the stream index, not by scanning the log, in a log grown since its last ANALYZE",
    withStore(function* ({ store, sql }) {
      // 6,000 events in 3,000 streams, appended at once: this new database has no statistics of
      // them yet (unless autovacuum analysed it meanwhile, which only makes the planner better informed).
      const prefix = `plan-${randomUUID().slice(0, 8)}`
      yield* store.appendBatch(
        Array.from({ length: 3_000 }, (_, i) => ({
          streamId: `${prefix}-${i}`,
          events: [event("Opened", { i, padding: "x".repeat(200) }), event("Closed", { i })],
          expected: EventStore.ExpectedVersion.NoStream()
        }))
      )
      const ids = Array.from({ length: 100 }, (_, i) => `${prefix}-${i * 30}`)
      const [row] = yield* sql.unsafe<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(
        `EXPLAIN (FORMAT JSON) ${PgEventStore.readStreamsStatement}`,
        [ids]
      )
      const nodes = planNodes(row!["QUERY PLAN"][0]!.Plan)
      const scansOfLog = nodes.filter((n) => n["Relation Name"] === "cobro_events")
      expect(scansOfLog.length).toBeGreaterThan(0)
      expect(scansOfLog.map((n) => n["Node Type"])).not.toContain("Seq Scan")
      // And it reads what it should: each stream whole, in version order.
      const read = yield* store.readStreams(ids)
      expect([...read.values()].map((events) => events.map((e) => e.type))).toEqual(
        ids.map(() => ["Opened", "Closed"])
      )
    })
  )
})

storeSuite(Databases.postgres, "60 seconds")("concurrent batches on PostgreSQL", (it) => {
  it.effect(
    "two batches over the same streams in opposite item orders do not deadlock: the heads are locked in stream id order, and each batch is written by its one statement",
    withStore(function* ({ store, sql }) {
      const prefix = `lock-${randomUUID().slice(0, 8)}`
      const [a, b, c] = ["a", "b", "c"].map((s) => `${prefix}-${s}`) as [string, string, string]
      for (const id of [a, b, c])
        yield* store.append(id, [event("Opened")], EventStore.ExpectedVersion.NoStream())
      // A third session holds c: locking in item order, each batch would take the stream before c
      // (a, b) and wait; once c is free the first would wait for b and the second for c: a deadlock.
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT 1 FROM cobro_streams WHERE stream_id = ${c} FOR UPDATE`
              yield* Deferred.succeed(held, undefined)
              yield* Deferred.await(release)
            })
          )
          .pipe(Effect.orDie)
      )
      yield* Deferred.await(held)
      const batch = (order: ReadonlyArray<string>) =>
        store.appendBatch(
          order.map((id) => ({
            streamId: id,
            events: [event("Touched", { order: order.join(" ") })],
            expected: EventStore.ExpectedVersion.Any()
          }))
        )
      const first = yield* Effect.fork(batch([a, c, b]))
      const second = yield* Effect.fork(batch([b, c, a]))
      // Both batches wait on a lock before c is given back.
      const waiting = sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%cobro_append_batch%'`
      let n = 0
      for (let i = 0; i < 200 && n < 2; i++) {
        n = (yield* Effect.orDie(waiting))[0]!.n
        if (n < 2) yield* Effect.sleep("25 millis")
      }
      expect(n).toBe(2)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const results = [yield* Fiber.join(first), yield* Fiber.join(second)]
      // One batch went first (either): each stream is at version 3, one batch having taken each to 2.
      expect(results.map((r) => r.map((x) => x.nextVersion).sort()).sort()).toEqual([
        [2, 2, 2],
        [3, 3, 3]
      ])
      // Each batch's three events come from one (sub)transaction: neither was a deadlock's victim,
      // replayed item by item (one savepoint each) after PostgreSQL broke the cycle.
      const writers = yield* Effect.orDie(sql<{ order: string; xmins: number }>`
            SELECT data->>'order' AS order, count(DISTINCT xmin::text)::int AS xmins FROM cobro_events
            WHERE stream_id IN (${a}, ${b}, ${c}) AND type = 'Touched' GROUP BY 1 ORDER BY 1`)
      expect(writers).toEqual([
        { order: [a, c, b].join(" "), xmins: 1 },
        { order: [b, c, a].join(" "), xmins: 1 }
      ])
      for (const id of [a, b, c]) {
        const stored = yield* store.readStream(id)
        expect(stored.map((e) => e.streamVersion)).toEqual([1, 2, 3])
        expect(Verify.checkStream(stored)).toBeUndefined()
      }
    })
  )
})
