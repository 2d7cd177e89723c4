/**
 * The database the command line works on, chosen as the server chooses it (`DATABASE_URL`, else
 * PGlite in `DATA_DIR`), and what each family of commands needs over it. The audit commands read
 * the log directly and need neither the server nor the sealing key; the admin commands build the
 * server's own store and key vault, so that they run the same use cases as the admin API.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as PasswordHashing from "@cobro/panel/PasswordHashing"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgPanelSessions from "@cobro/store-pg/PgPanelSessions"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Config from "../Config.js"
import * as Ids from "../Ids.js"
import * as NodeKeyVault from "../NodeKeyVault.js"
import * as Server from "../Server.js"
import * as Store from "../Store.js"
import { UserError } from "./CliError.js"

/** Connections the command line opens on PostgreSQL: it does one thing at a time. */
export const poolSize = 3

/** The configured database, with a readable name for messages. */
export const database = Effect.map(Config.config, (config) => config.database)

/**
 * PGlite's folder must hold a database already: an auditor's typo in `DATA_DIR` must not create an
 * empty database and then report it clean.
 */
const requireExisting = (database: Config.Database) =>
  database._tag === "Pglite" && !Fs.existsSync(Path.join(Path.resolve(database.dataDir), "PG_VERSION"))
    ? Effect.fail(
        new UserError({
          message: `no Cobro database in ${Path.resolve(database.dataDir)} (DATA_DIR): start the server once there, or set DATABASE_URL`
        })
      )
    : Effect.void

/** Fails with `message`, the user's to act on, unless the database holds the table `table` (one of Cobro's). */
export const requireTable = (table: string, message: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ present: boolean }>(`SELECT to_regclass('${table}') IS NOT NULL AS present`)
  ).pipe(
    Effect.flatMap((rows) =>
      rows[0]?.present === true ? Effect.void : Effect.fail(new UserError({ message }))
    )
  )

/** Fails with a clear message when the database holds no Cobro event log. */
const requireLog = (database: Config.Database) =>
  requireTable("cobro_events", `no Cobro event log in ${Store.describe(database)}`)

/** The log, read directly: the database (it must hold a Cobro log) and the event store over it. */
export const layerLog: Layer.Layer<
  SqlClient.SqlClient | EventStore.EventStore,
  UserError | SqlError | import("effect/ConfigError").ConfigError
> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const db = yield* database
    yield* requireExisting(db)
    const checked = Layer.effectDiscard(requireLog(db))
    return Layer.merge(PgEventStore.layer, checked).pipe(
      Layer.provideMerge(Server.layerDatabase(db, poolSize))
    )
  })
)

/**
 * The admin use cases' services: the server's store (migrated, its tables set up, the sealing key
 * checked against the database's, the sandbox clock when `COBRO_CLOCK=virtual`), its key vault, its
 * id generator, its webhook rules (`COBRO_DEV_WEBHOOKS`), and the panel's password hasher and
 * sessions (a new password ends them).
 */
export const layerAdmin = Layer.unwrapEffect(
  Effect.map(Server.settings, (settings) =>
    Layer.mergeAll(
      NodeKeyVault.layer(settings.sealingKey.key),
      PasswordHashing.layer(settings.sealingKey.key),
      PgPanelSessions.layer,
      Ids.layerRandom,
      Server.layerDevWebhooks(settings)
    ).pipe(Layer.provideMerge(Server.layerStore(settings, { poolSize })))
  )
)
