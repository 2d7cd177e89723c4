/**
 * The embedded database: PGlite (PostgreSQL compiled to WebAssembly) persisted to a folder, exposed
 * as `@effect/sql-pg`'s `PgClient` through PGlite's node-postgres adapter, so the store runs the
 * same SQL on it as on a server. `npm start` needs no server.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite } from "@electric-sql/pglite"
import { createPgConfig } from "@electric-sql/pglite/node-postgres"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Pg from "pg"
import * as LogNotifications from "./LogNotifications.js"

/** Where PGlite keeps its files. */
export interface PgliteClientConfig {
  /** A folder to persist to (created if missing); omitted: in memory, lost on close. */
  readonly dataDir?: string | undefined
}

/** The file that marks a PGlite folder as open by a process: its process id. */
export const LOCK_FILE = "cobro.lock"

/** Whether a process with this id is running (signal 0 checks without signalling). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** ` (<its command line>)` where the system tells it (Linux), for the message naming a lock's holder. */
const describeProcess = (pid: number): string => {
  try {
    const command = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
    return command === "" ? "" : ` (${command.slice(0, 120)})`
  } catch {
    return ""
  }
}

/**
 * Takes the folder for this process, or fails naming the process that has it open. PGlite is one
 * process's database and does not guard its folder: two processes on one folder (a second `npm
 * start`, or the command line beside a running server) would corrupt it. A lock left by a process
 * that is gone (a crash) is taken over. Released, if still ours, when the scope closes.
 */
const lockFolder = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        Fs.mkdirSync(dataDir, { recursive: true })
        const file = Path.join(dataDir, LOCK_FILE)
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            Fs.writeFileSync(file, String(process.pid), { flag: "wx" })
            return file
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
            const holder = Number.parseInt(Fs.readFileSync(file, "utf8"), 10)
            if (Number.isInteger(holder) && holder !== process.pid && isRunning(holder)) {
              throw new Error(
                `the embedded database in ${dataDir} is in use by process ${holder}${describeProcess(holder)}; stop it first (PGlite is one process's database), or use PostgreSQL (DATABASE_URL) to share a database`
              )
            }
            // Gone, unreadable, or this process's own: take it over.
            Fs.rmSync(file, { force: true })
          }
        }
        throw new Error(`could not lock ${file}`)
      },
      catch: (cause) => new SqlError({ cause, message: `PgliteClient: ${(cause as Error).message}` })
    }),
    (file) =>
      Effect.sync(() => {
        try {
          if (Fs.readFileSync(file, "utf8") === String(process.pid)) Fs.rmSync(file, { force: true })
        } catch {
          // already gone
        }
      })
  )

/** The PGlite instance behind the client, for tools that need it directly (dumps, tests). */
export class Pglite extends Context.Tag("@cobro/store-pg/Pglite")<Pglite, PGlite>() {}

/** Everything the PGlite layers provide. */
export type Services = PgClient.PgClient | SqlClient.SqlClient | LogNotifications.LogNotifications | Pglite

/**
 * Opens PGlite and wraps it. PGlite is a single session: the pool has one connection, so statements
 * of different fibers queue, and a transaction holds the session until it ends.
 */
export const make = (
  config: PgliteClientConfig
): Effect.Effect<Context.Context<Services>, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    if (config.dataDir !== undefined) yield* lockFolder(config.dataDir)
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => (config.dataDir === undefined ? PGlite.create() : PGlite.create(config.dataDir)),
        catch: (cause) => new SqlError({ cause, message: "PgliteClient: failed to open PGlite" })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    // NOTIFY from appends reaches PGlite's own listeners; subscribed before any transaction runs.
    const appended = yield* PubSub.sliding<string>(64)
    yield* Effect.tryPromise({
      try: () =>
        pglite.listen(LogNotifications.channel, (payload) =>
          Effect.runSync(PubSub.publish(appended, payload))
        ),
      catch: (cause) => new SqlError({ cause, message: "PgliteClient: failed to LISTEN" })
    })
    const client = yield* PgClient.fromPool({
      acquire: Effect.acquireRelease(
        Effect.sync(
          () =>
            // One connection that is never closed for idleness: PGlite's adapter shares one session.
            new Pg.Pool({ ...createPgConfig(pglite), max: 1, idleTimeoutMillis: 0 })
        ),
        (pool) => Effect.promise(() => pool.end()).pipe(Effect.ignore)
      ),
      applicationName: "cobro"
    })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(Pglite, pglite),
      Context.add(LogNotifications.LogNotifications, { appended: Stream.fromPubSub(appended) })
    )
  })

/**
 * PGlite as `PgClient` and `SqlClient`, with `LogNotifications` from its NOTIFY. Do not call
 * `PgClient.listen` on it (it would open a second session on the shared one): use `LogNotifications`.
 */
export const layer = (config: PgliteClientConfig): Layer.Layer<Services, SqlError> =>
  Layer.scopedContext(make(config)).pipe(Layer.provide(Reactivity.layer))

/** {@link layer}, configured: `config` is typically `{ dataDir: Config.string("COBRO_DATA_DIR") }`. */
export const layerConfig = (
  config: Config.Config.Wrap<PgliteClientConfig>
): Layer.Layer<Services, SqlError | ConfigError.ConfigError> =>
  Layer.scopedContext(Effect.flatMap(Config.unwrap(config), make)).pipe(Layer.provide(Reactivity.layer))
