/**
 * The server's store: the event log on PGlite in `DATA_DIR` or on PostgreSQL at `DATABASE_URL`,
 * migrated at start, with the read models kept current by background projection runners.
 */
import * as EventStore from "@cobro/domain/EventStore"
import type * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgliteClient from "@cobro/store-pg/PgliteClient"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Projection from "@cobro/store-pg/Projection"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as Subscription from "@cobro/store-pg/Subscription"
import type * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import type * as Config from "./Config.js"
import * as Supervisor from "./Supervisor.js"
import * as VirtualClock from "./VirtualClock.js"

/** The database connection and its wake-ups, whichever database it is. */
export type Database = PgClient.PgClient | SqlClient.SqlClient | LogNotifications.LogNotifications

/** Everything the store layer provides. */
export type Services = Database | EventStore.EventStore

/**
 * The connection the configuration chooses: PostgreSQL when `DATABASE_URL` is set, else PGlite
 * persisted in `DATA_DIR` (created if missing).
 */
export const layerDatabase = (database: Config.Database): Layer.Layer<Database, SqlError> =>
  database._tag === "Postgres"
    ? PostgresClient.layer({ url: database.url, applicationName: "cobro" })
    : PgliteClient.layer({ dataDir: Path.resolve(database.dataDir) })

/** `EventStore` on the database in context, after the store's migrations (safe to run on several nodes at once). */
export const layerEventStore: Layer.Layer<
  EventStore.EventStore,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = PgEventStore.layerMigrated

/**
 * The server's read models, each a `Projection`. A helper that adds a read model appends it here (or
 * to `ReadModels.all`); nothing else needs to change.
 *
 * - `ReadModels.all`: refunds by transaction (C9), terminal checkouts by reference (A3), the last
 *   notification per payment and per external reference (D, A4), webhook deliveries due (the
 *   dispatcher's queue), API keys by identity-key hash (authentication), and the operator's and the
 *   panel's lists (merchants; a merchant's transactions, links, notifications, refunds and panel
 *   users), all written with their events by the store; the link expiry and payment timeout
 *   sweepers' read models, which runners keep current ({@link layerConsumers}).
 */
export const projections: ReadonlyArray<Projection.Projection<SqlError, SqlClient.SqlClient>> = [
  ...ReadModels.all
]

/**
 * Other tables the server's adapters create if missing (`CREATE … IF NOT EXISTS`), run in the
 * locked start-up step with the projections' tables. An adapter with a `setup` of its own adds it here.
 */
export const setups: ReadonlyArray<Effect.Effect<void, SqlError, SqlClient.SqlClient>> = [
  VirtualClock.setup,
  PgDeliveryQueue.setup
]

/** The advisory lock that serialises the start-up DDL of nodes starting together ("cobro" in ASCII). */
export const setupLock = 0x636f62726fn

/** The table of server-wide settings that every node must agree on. */
export const settingsTable = "cobro_server_settings"

/** This database's secrets are sealed with another key than the one this node has. */
export class SealingKeyMismatch extends Schema.TaggedError<SealingKeyMismatch>()("SealingKeyMismatch", {
  message: Schema.String
}) {}

/** This node would sign the log's checkpoints with another key (or origin) than the log's. */
export class CheckpointKeyMismatch extends Schema.TaggedError<CheckpointKeyMismatch>()(
  "CheckpointKeyMismatch",
  {
    message: Schema.String
  }
) {}

/**
 * The start-up DDL in one transaction under {@link setupLock}: PostgreSQL's `CREATE TABLE IF NOT
 * EXISTS` is not safe when two nodes run it at once (a unique violation on `pg_type`). Then checks
 * that this node seals with the key the database was first used with (its id is recorded once), and,
 * given `checkpointKey` (a verifier key), that it signs checkpoints with the log's key.
 */
export const layerSetup = (
  sealingKeyId: string,
  list: ReadonlyArray<Projection.Projection<SqlError, SqlClient.SqlClient>> = projections,
  checkpointKey?: string
): Layer.Layer<never, SqlError | SealingKeyMismatch | CheckpointKeyMismatch, SqlClient.SqlClient> =>
  Layer.effectDiscard(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${setupLock.toString()}::bigint)`
          for (const projection of list) yield* projection.setup
          for (const setup of setups) yield* setup
          yield* sql`CREATE TABLE IF NOT EXISTS ${sql(settingsTable)} (name text PRIMARY KEY, value text NOT NULL)`
          yield* sql`INSERT INTO ${sql(settingsTable)} (name, value) VALUES ('sealing_key_id', ${sealingKeyId})
            ON CONFLICT (name) DO NOTHING`
          const rows = yield* sql<{ value: string }>`
            SELECT value FROM ${sql(settingsTable)} WHERE name = 'sealing_key_id'`
          const recorded = rows[0]?.value
          if (recorded !== sealingKeyId) {
            return yield* new SealingKeyMismatch({
              message:
                `this database's secret keys are sealed with the sealing key of id ${recorded}, and this server ` +
                `has the key of id ${sealingKeyId}. Start it with the same COBRO_SEALING_KEY as the other ` +
                `nodes (or the sealing-key file this DATA_DIR was created with).`
            })
          }
          if (checkpointKey === undefined) return
          yield* sql`INSERT INTO ${sql(settingsTable)} (name, value) VALUES ('checkpoint_key', ${checkpointKey})
            ON CONFLICT (name) DO NOTHING`
          const keys = yield* sql<{ value: string }>`
            SELECT value FROM ${sql(settingsTable)} WHERE name = 'checkpoint_key'`
          if (keys[0]?.value !== checkpointKey) {
            return yield* new CheckpointKeyMismatch({
              message:
                `this log's checkpoints are signed with the key ${keys[0]?.value}, and this server has ` +
                `${checkpointKey}: auditors hold the first and would reject what this one signs. Start it with ` +
                `the same COBRO_CHECKPOINT_KEY and COBRO_LOG_ORIGIN as the other nodes.`
            })
          }
        })
      )
    )
  )

/** How long a log consumer whose batch failed waits before it starts again. */
export const projectionRestartDelay: Duration.DurationInput = "5 seconds"

/**
 * How long a read model may go past appends it does not care about before its checkpoint is saved
 * there: most appends concern few read models, and saving every one's checkpoint after each append
 * cost a statement per read model per append at a low steady rate (`npm run bench -- http`, the
 * fixed-rate phase). A restart reads those events again and skips them again.
 */
export const saveSkippedEvery: Duration.DurationInput = "10 seconds"

/** The name of the log consumers' worker under the `Supervisor`. */
export const CONSUMERS_WORKER = "Log consumers"

/**
 * Runs the asynchronous projections (not those written with their events) and `others` (log consumers whose checkpoint commits with their writes, as
 * the webhook notifier) for the layer's lifetime under the `Supervisor`, with one reader of the log
 * for all of them (`Subscription.runAll`): each page is read and decoded once, not once per consumer.
 * Their tables exist already ({@link layerSetup}). A consumer that fails rests for
 * {@link projectionRestartDelay} and starts again from its checkpoint; the others go on. Should the
 * group itself stop, the supervisor logs why and starts it again. On several nodes each consumer's
 * transaction takes its checkpoint's lock, so every event applies once.
 */
export const layerConsumers = <R>(
  others: Effect.Effect<ReadonlyArray<Subscription.Consumer<unknown, R>>>,
  list: ReadonlyArray<Projection.Projection<SqlError, SqlClient.SqlClient>> = projections
): Layer.Layer<
  never,
  never,
  SqlClient.SqlClient | EventStore.EventStore | LogNotifications.LogNotifications | Supervisor.Supervisor | R
> =>
  Layer.unwrapEffect(
    Effect.map(others, (consumers) =>
      Supervisor.worker(
        CONSUMERS_WORKER,
        Subscription.runAll<R | SqlClient.SqlClient>(
          [...list.filter((p) => !Projection.isInline(p)).map(Projection.consumer), ...consumers],
          {
            retryDelay: projectionRestartDelay,
            saveSkippedEvery: saveSkippedEvery
          }
        )
      )
    )
  )

/**
 * Hands a log consumer's work over to the commits themselves (the outbox schedules what it used to):
 * a consumer with a saved checkpoint (a database written by an earlier version, whose last events it
 * may not have seen) catches up once and its checkpoint is deleted; a database without one has
 * nothing to catch up. Safe on several nodes at once for an idempotent consumer (the notifier's
 * deliveries are derived from their events). The nodes of the earlier version are stopped first: one
 * still running would keep consuming from the start of the log.
 */
export const retire = <E, R>(
  consumer: Subscription.Consumer<E, R>
): Effect.Effect<void, E, R | SqlClient.SqlClient | EventStore.EventStore> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const saved = yield* Effect.orDie(sql`SELECT 1 FROM cobro_checkpoints WHERE name = ${consumer.name}`)
    if (saved.length === 0) return
    const caughtUp = yield* Subscription.catchUp(consumer)
    yield* Subscription.resetCheckpoint(consumer.name)
    yield* Effect.logInfo(`${consumer.name}: caught up ${caughtUp} events of the log, then retired`)
  })

/** A readable description of the database for the start-up banner (the password masked). */
export const describe = (database: Config.Database): string => {
  if (database._tag === "Pglite") return `PGlite in ${Path.resolve(database.dataDir)}`
  try {
    const url = new URL(Redacted.value(database.url))
    if (url.password !== "") url.password = "***"
    return `PostgreSQL at ${url.toString()}`
  } catch {
    return "PostgreSQL (DATABASE_URL)"
  }
}
