/**
 * The pool and the append on a real PostgreSQL server as a failover shows itself to them (issue 33):
 * connections that answer as a replica's, statements that must not outlive a transaction behind a
 * transaction-mode pooler, and a LISTEN that receives nothing.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import type * as Pg from "pg"
import * as LogNotifications from "../src/LogNotifications.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PgPool from "../src/PgPool.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as Databases from "./support/Databases.js"
import { event } from "./support/Fixtures.js"
import { withDatabase } from "./support/StoreTest.js"

const { NoStream } = EventStore.ExpectedVersion

/** The store on a fresh database with a pool of `connections`, and the pool itself. */
const storeWithPool = (connections: number) =>
  Effect.gen(function* () {
    const url = yield* Databases.postgresDatabase
    const context = yield* Layer.build(
      PgEventStore.layerMigrated.pipe(
        Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: connections })),
        Layer.orDie
      )
    )
    return {
      context,
      url,
      pool: Option.getOrThrow(yield* Effect.serviceOption(PgPool.PgPool).pipe(Effect.provide(context)))
    }
  })

/** Checks out `n` connections at once, runs `statement` on each, and gives them back to the pool. */
const onEachConnection = (pool: Pg.Pool, n: number, statement: string) =>
  Effect.promise(async () => {
    const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()))
    for (const client of clients) await client.query(statement)
    for (const client of clients) client.release()
  })

/** As a primary demoted behind a proxy looks to connections that stayed open: read-only sessions. */
const demote = (pool: Pg.Pool, n: number) =>
  onEachConnection(pool, n, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

/** The store with a pool of `connections`, every one of them a replica's (demoted), and the pool. */
const storeOnReplica = (connections: number) =>
  Effect.gen(function* () {
    const { context, pool } = yield* storeWithPool(connections)
    yield* demote(pool, connections)
    return { pool, store: yield* Effect.provide(EventStore.EventStore, context) }
  })

const readOnlyOfEach = (pool: Pg.Pool, n: number) =>
  Effect.promise(async () => {
    const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()))
    const shown = []
    for (const client of clients)
      shown.push((await client.query("SHOW transaction_read_only")).rows[0].transaction_read_only)
    for (const client of clients) client.release()
    return shown
  })

describe("the pool when its server turns into a replica", () => {
  it.scopedLive(
    "every pooled connection answering as a replica's: an append that meets one (25006) succeeds once, on a fresh connection, after which none of them is handed out again; /ready's check says read-only once, then writable",
    () =>
      Effect.gen(function* () {
        const { pool, store } = yield* storeOnReplica(4)
        const streamId = `failover-${randomUUID()}`
        const first = yield* store.append(streamId, [event("Opened")], NoStream())
        expect(first.nextVersion).toBe(1)
        const read = yield* store.readStream(streamId)
        expect(read.map((e) => e.type)).toEqual(["Opened"])
        expect(yield* readOnlyOfEach(pool, 4)).toEqual(["off", "off", "off", "off"])
        // /ready's check: read-only once, then, the connections of the old server discarded, writable at once.
        yield* demote(pool, 4)
        expect(yield* PgPool.writable(pool)).toBe(false)
        expect(yield* PgPool.writable(pool)).toBe(true)
      }),
    60_000
  )

  it.scopedLive(
    "a batch append inside no transaction meets a replica's connection and still commits once",
    () =>
      Effect.gen(function* () {
        const { store } = yield* storeOnReplica(3)
        const a = `failover-a-${randomUUID()}`
        const b = `failover-b-${randomUUID()}`
        yield* store.appendBatch([
          { streamId: a, events: [event("One")], expected: NoStream() },
          { streamId: b, events: [event("Two"), event("Three")], expected: NoStream() }
        ])
        expect((yield* store.readStream(a)).map((e) => e.type)).toEqual(["One"])
        expect((yield* store.readStream(b)).map((e) => e.type)).toEqual(["Two", "Three"])
      }),
    60_000
  )
})

describe("a connection the server ends while it is checked out and idle", () => {
  it.scopedLive(
    "does not end the process (its error has a listener), and is discarded when it is given back",
    withDatabase(function* (url) {
      const pool = yield* PgPool.make({ url: Redacted.make(url), maxConnections: 2 })
      const admin = yield* Databases.databaseClient(url)
      const client = yield* Effect.promise(() => pool.connect())
      const pid = (yield* Effect.promise(() => client.query("SELECT pg_backend_pid() AS pid"))).rows[0].pid
      const errors: Array<unknown> = []
      client.on("error", (error) => errors.push(error))
      // No statement runs on it: the FATAL 57P01 is emitted on the client, as in a switchover.
      yield* Effect.promise(() => admin.query("SELECT pg_terminate_backend($1)", [pid]))
      const deadline = Date.now() + 5_000
      while (errors.length === 0 && Date.now() < deadline) yield* Effect.sleep("50 millis")
      expect(errors.length).toBeGreaterThan(0)
      // The pool's own listener is there beside the test's: without it, this emit would have thrown.
      expect(client.listenerCount("error")).toBeGreaterThanOrEqual(2)
      client.release()
      const fresh = yield* Effect.promise(() => pool.query("SELECT pg_backend_pid() AS pid"))
      expect(fresh.rows[0].pid).not.toBe(pid)
    }),
    30_000
  )
})

describe("the pool behind a transaction-mode pooler", () => {
  const preparedAfterNamedStatement = (poolMode: PgPool.PoolMode) =>
    Effect.gen(function* () {
      const url = yield* Databases.postgresDatabase
      const pool = yield* PgPool.make({ url: Redacted.make(url), maxConnections: 1, poolMode })
      yield* PgPool.query(pool, "SELECT $1::int AS n", [1], "cobro_probe_1")
      yield* PgPool.query(pool, "SELECT $1::int AS n", [2], "cobro_probe_1")
      const rows = yield* PgPool.query<{ n: number }>(
        pool,
        "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'cobro_probe_1'",
        []
      )
      return rows[0]!.n
    })

  it.scopedLive("in transaction mode a named statement runs unnamed: nothing prepared outlives it", () =>
    Effect.gen(function* () {
      expect(yield* preparedAfterNamedStatement("transaction")).toBe(0)
      // The control: in session mode the name prepares the statement once per connection.
      expect(yield* preparedAfterNamedStatement("session")).toBe(1)
    })
  )

  it.scopedLive(
    "its connections carry no startup parameter but the application's name, and still never JIT-compile",
    withDatabase(function* (url) {
      const migrated = yield* Layer.build(
        PgEventStore.layerMigrated.pipe(
          Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 })),
          Layer.orDie
        )
      )
      yield* Effect.void.pipe(Effect.provide(migrated))
      // A new pool in transaction mode: it sends no `SET`, so `jit` is the database's own setting.
      const pool = yield* PgPool.make({
        url: Redacted.make(url),
        maxConnections: 1,
        poolMode: "transaction"
      })
      expect((pool.options as { options?: unknown }).options).toBeUndefined()
      const rows = yield* PgPool.query<{ jit: string }>(pool, "SHOW jit", [])
      expect(rows[0]!.jit).toBe("off")
    })
  )
})

describe("LISTEN that receives nothing", () => {
  it.scopedLive(
    "is detected: its own NOTIFY does not come back, and it says what to set, instead of silently leaving consumers to poll",
    withDatabase(function* (url) {
      // NOTIFY through the pool reaches another database than the one LISTEN is on: as through pgbouncer.
      const elsewhere = yield* Databases.postgresDatabase
      const logs: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ cause, message }) => logs.push(`${String(message)} ${String(cause)}`))
      )
      const context = yield* Layer.build(
        PostgresClient.layer({
          url: Redacted.make(url),
          listenUrl: Redacted.make(elsewhere),
          maxConnections: 2
        }).pipe(Layer.orDie)
      )
      const notifications = yield* Effect.provide(LogNotifications.LogNotifications, context)
      yield* notifications.appended.pipe(Stream.runDrain, Effect.provide(logger), Effect.forkScoped)
      const deadline = Date.now() + 15_000
      while (!logs.some((line) => line.includes("did not come back")) && Date.now() < deadline) {
        yield* Effect.sleep("200 millis")
      }
      const lost = logs.find((line) => line.includes("did not come back"))
      expect(lost, logs.join("\n")).toBeDefined()
      expect(lost).toContain("DATABASE_LISTEN_URL")
    }),
    30_000
  )
})
