/**
 * Read models as projections of the log: a name, its tables (DDL), and `apply(event)` in SQL. A
 * projection's rows and its checkpoint commit in one transaction; it can be dropped and rebuilt
 * from the log alone (brief, "The event log").
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as LogNotifications from "./LogNotifications.js"
import * as Subscription from "./Subscription.js"

/** A read model maintained from the log. */
export interface Projection<E = never, R = never> {
  /** Unique among projections; its checkpoint is saved as `projection:<name>`. */
  readonly name: string
  /** The tables it owns, dropped by `reset` and `rebuild`. */
  readonly tables: ReadonlyArray<string>
  /** Creates its tables if missing (idempotent DDL: `CREATE TABLE IF NOT EXISTS …`). */
  readonly setup: Effect.Effect<void, SqlError, SqlClient.SqlClient>
  /** Applies one event to its tables; events it does not care about are ignored. */
  readonly apply: (
    event: EventStore.LoggedEvent
  ) => Effect.Effect<void, E | SqlError, SqlClient.SqlClient | R>
}

/** Builds a {@link Projection}. */
export const make = <E = never, R = never>(projection: Projection<E, R>): Projection<E, R> => projection

/** The name under which a projection's checkpoint is saved. */
export const checkpointName = (projection: Projection<any, any>): string => `projection:${projection.name}`

/** The projection as a log consumer. */
export const consumer = <E, R>(
  projection: Projection<E, R>
): Subscription.Consumer<E | SqlError, SqlClient.SqlClient | R> =>
  Subscription.make(checkpointName(projection), projection.apply)

const orDieSql = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error): error is Extract<E, SqlError> => error instanceof SqlError, Effect.die)

/** Creates the projection's tables if missing. */
export const setup = <E, R>(projection: Projection<E, R>): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.orDie(projection.setup)

/** Sets the projection up and applies every event it has not seen yet; returns how many. */
export const catchUp = <E, R>(
  projection: Projection<E, R>,
  options?: Subscription.Options
): Effect.Effect<number, Exclude<E, SqlError>, SqlClient.SqlClient | EventStore.EventStore | R> =>
  Effect.zipRight(setup(projection), orDieSql(Subscription.catchUp(consumer(projection), options)))

/** Sets the projection up and keeps it current for ever (LISTEN/NOTIFY wake-ups, polling fallback). */
export const run = <E, R>(
  projection: Projection<E, R>,
  options?: Subscription.Options
): Effect.Effect<
  never,
  Exclude<E, SqlError>,
  SqlClient.SqlClient | EventStore.EventStore | LogNotifications.LogNotifications | R
> => Effect.zipRight(setup(projection), orDieSql(Subscription.run(consumer(projection), options)))

/** Drops the projection's tables and checkpoint, then creates the tables empty. */
export const reset = <E, R>(projection: Projection<E, R>): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.gen(function* () {
        for (const table of projection.tables) yield* sql`DROP TABLE IF EXISTS ${sql(table)} CASCADE`
        yield* sql`DELETE FROM cobro_checkpoints WHERE name = ${checkpointName(projection)}`
        yield* projection.setup
      })
    )
  }).pipe(Effect.orDie, Effect.withSpan("Projection.reset", { attributes: { projection: projection.name } }))

/**
 * Drops the projection and replays the whole log into it, in one transaction: readers see the old
 * read model until the rebuilt one commits. Returns how many events were replayed.
 */
export const rebuild = <E, R>(
  projection: Projection<E, R>,
  options?: Subscription.Options
): Effect.Effect<number, Exclude<E, SqlError>, SqlClient.SqlClient | EventStore.EventStore | R> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* orDieSql(
      sql.withTransaction(
        Effect.zipRight(reset(projection), Subscription.catchUp(consumer(projection), options))
      )
    )
  }).pipe(Effect.withSpan("Projection.rebuild", { attributes: { projection: projection.name } }))

/** What a rebuild has replayed so far, for a progress display. */
export interface RebuildProgress {
  readonly events: number
}

/** How {@link rebuildAll} replays. */
export interface RebuildOptions {
  /** Events read per page; default 1000. */
  readonly batchSize?: number
  /** Called after each page. */
  readonly onProgress?: (progress: RebuildProgress) => Effect.Effect<void>
}

/**
 * Drops the projections and replays the log once into all of them (one read of the log, however
 * many read models), in one transaction: their rows and checkpoints commit together, and a runner
 * of the server resumes from the checkpoints after it. Returns how many events were replayed.
 */
export const rebuildAll = <E, R>(
  projections: ReadonlyArray<Projection<E, R>>,
  options: RebuildOptions = {}
): Effect.Effect<number, Exclude<E, SqlError>, SqlClient.SqlClient | EventStore.EventStore | R> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* EventStore.EventStore
    const limit = options.batchSize ?? 1000
    return yield* orDieSql(
      sql.withTransaction(
        Effect.gen(function* () {
          for (const projection of projections) yield* reset(projection)
          let after = EventStore.Start
          let total = 0
          while (true) {
            const events = yield* store.readAll({ after, limit })
            for (const event of events) {
              for (const projection of projections) yield* projection.apply(event)
            }
            total += events.length
            const last = events[events.length - 1]
            if (last !== undefined) after = last.checkpoint
            if (options.onProgress !== undefined) yield* options.onProgress({ events: total })
            if (events.length < limit) break
          }
          if (after.globalPosition !== 0n) {
            for (const projection of projections) {
              yield* sql`
                INSERT INTO cobro_checkpoints (name, transaction_id, global_position)
                VALUES (${checkpointName(projection)}, ${after.transactionId.toString()}::xid8,
                  ${after.globalPosition.toString()}::bigint)
                ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,
                  global_position = EXCLUDED.global_position, updated_at = now()`
            }
          }
          return total
        })
      )
    )
  }).pipe(
    Effect.withSpan("Projection.rebuildAll", {
      attributes: { projections: projections.map((p) => p.name).join(",") }
    })
  )
