/**
 * The databases the store's suites run on, each isolated per run: PGlite in a fresh temp folder (a
 * copy of one migrated once per worker), and a fresh `cobro_test_<random>` database on a real
 * PostgreSQL server (found, or started).
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Pg from "pg"
import * as Cluster from "./Cluster.js"
import type * as LogNotifications from "../../src/LogNotifications.js"
import * as Migrations from "../../src/Migrations.js"
import * as PgEventStore from "../../src/PgEventStore.js"
import * as PgliteClient from "../../src/PgliteClient.js"
import * as PostgresClient from "../../src/PostgresClient.js"

/** What every store suite gets. */
export type StoreServices =
  EventStore.EventStore | SqlClient.SqlClient | PgClient.PgClient | LogNotifications.LogNotifications

/** The default server of this machine and CI (PostgreSQL 15, trust auth). */
export const defaultUrl = "postgres://postgres@127.0.0.1:5432/test"

const answers = async (url: string): Promise<boolean> => {
  const client = new Pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  client.on("error", () => {})
  try {
    await client.connect()
    await client.query("SELECT 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A server for this run: `DATABASE_URL` if set, else the default URL; if nothing answers, a cluster
 * started from the installed binaries. Fails (never skips) when none of these works.
 */
const server = Effect.acquireRelease(
  Effect.promise(async () => {
    const url = process.env["DATABASE_URL"] ?? defaultUrl
    if (await answers(url)) return { url, stop: () => {} }
    console.warn(`No PostgreSQL answers at ${url}: starting a throwaway cluster from installed binaries.`)
    const started = await Cluster.start()
    if ("error" in started) {
      throw new Error(
        `The store's PostgreSQL suite needs a server and found none: nothing answers at ${url} ` +
          `(set DATABASE_URL to one), and ${started.error}.`
      )
    }
    return started
  }),
  (found) => Effect.sync(found.stop)
)

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

const admin = (url: string, statement: string) =>
  Effect.promise(async () => {
    const client = new Pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  })

/** A connection of the test's own to a database (`pg`), ended with the scope. */
export const databaseClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Pg.Client({ connectionString: url })
      client.on("error", () => {})
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end().catch(() => undefined))
  )

/** A fresh database on the server, dropped when the scope closes: parallel runs never collide. */
export const postgresDatabase = Effect.gen(function* () {
  const { url } = yield* server
  const name = `cobro_test_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(admin(url, `CREATE DATABASE ${name}`), () =>
    admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
  )
  return withDatabase(url, name)
})

/** The store (migrated) on a fresh PostgreSQL database. */
export const postgres: Layer.Layer<StoreServices> = Layer.unwrapScoped(
  Effect.map(postgresDatabase, (url) =>
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 24 }))
    )
  )
).pipe(Layer.orDie)

/** A temp folder removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-pglite-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/**
 * A PGlite folder the store's migrations have run in, made once per worker on first use and removed
 * when the worker exits: a suite copies it (under a second of CPU) instead of paying initdb and the
 * migrations in WebAssembly (about 4 s of CPU) for each store.
 */
const migratedPglite: Effect.Effect<string> = Effect.runSync(
  Effect.cached(
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-pglite-migrated-"))
      process.once("exit", () => Fs.rmSync(dir, { recursive: true, force: true }))
      const dataDir = Path.join(dir, "data")
      yield* Layer.build(
        PgEventStore.layerMigrated.pipe(Layer.provideMerge(PgliteClient.layer({ dataDir })))
      ).pipe(Effect.scoped, Effect.orDie)
      return dataDir
    })
  )
)

/** The store (migrated) on PGlite persisted to a fresh temp folder: a copy of {@link migratedPglite}. */
export const pglite: Layer.Layer<StoreServices> = Layer.unwrapScoped(
  Effect.gen(function* () {
    const migrated = yield* migratedPglite
    const dataDir = Path.join(yield* tempDir, "data")
    Fs.cpSync(migrated, dataDir, { recursive: true })
    return PgEventStore.layerMigrated.pipe(Layer.provideMerge(PgliteClient.layer({ dataDir })))
  })
).pipe(Layer.orDie)

/** What a suite of an unmigrated database gets: the connection alone. */
export type StoreServicesUnmigrated =
  SqlClient.SqlClient | PgClient.PgClient | LogNotifications.LogNotifications

/** A fresh PostgreSQL database, not migrated: for suites of the migrations themselves. */
export const postgresUnmigrated: Layer.Layer<StoreServicesUnmigrated> = Layer.unwrapScoped(
  Effect.map(postgresDatabase, (url) => PostgresClient.layer({ url: Redacted.make(url), maxConnections: 8 }))
).pipe(Layer.orDie)

/** PGlite in a fresh temp folder, not migrated: for suites of the migrations themselves. */
export const pgliteUnmigrated: Layer.Layer<StoreServicesUnmigrated> = Layer.unwrapScoped(
  Effect.map(tempDir, (dataDir) => PgliteClient.layer({ dataDir }))
).pipe(Layer.orDie)

/** The store's migrations up to (and with) `last`, on an unmigrated database: where an upgrade starts from. */
export const migrateTo = (last: number) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(
      Object.fromEntries(
        Object.entries(Migrations.migrations).filter(([key]) => Number(key.split("_")[0]) <= last)
      )
    ),
    table: Migrations.table
  })
