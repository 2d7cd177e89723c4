/**
 * Read models as projections of the log: a name, its tables (DDL), and `apply(event)` in SQL. It
 * can be dropped and rebuilt from the log alone (brief, "The event log"). An asynchronous projection
 * follows the log with a checkpoint of its own, its rows and checkpoint committed together; an
 * inline one ({@link inline}) is written by the transaction that appends its events
 * (`InlineReadModels`), and has no checkpoint.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as InlineReadModels from "./InlineReadModels.js"
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
  /**
   * The event types `apply` writes on; it must ignore every other. The runner then hands it only
   * those, and moves past a batch of others with one statement instead of a transaction. Optional.
   */
  readonly types?: ReadonlySet<string>
  /**
   * Applies a batch of events (in commit order) at once, leaving the tables exactly as `apply` on
   * each event in turn would: for read models written by many events in a row, where one statement
   * per batch costs far less than one per event. Optional; without it, `apply` runs per event.
   */
  readonly applyBatch?: (
    events: ReadonlyArray<EventStore.LoggedEvent>
  ) => Effect.Effect<void, E | SqlError, SqlClient.SqlClient | R>
  /**
   * Set for a read model written with its events by the store's trigger (`InlineReadModels`): no
   * runner follows the log for it, and `apply` is the trigger's own function, for rebuilds.
   */
  readonly inline?: InlineReadModels.InlineReadModel
}

/** Applies a batch of events: `applyBatch` when the projection has one, else `apply` per event. */
export const applyAll = <E, R>(
  projection: Projection<E, R>,
  events: ReadonlyArray<EventStore.LoggedEvent>
): Effect.Effect<void, E | SqlError, SqlClient.SqlClient | R> =>
  projection.applyBatch === undefined
    ? Effect.forEach(events, projection.apply, { discard: true })
    : events.length === 0
      ? Effect.void
      : projection.applyBatch(events)

/** Builds a {@link Projection}. */
export const make = <E = never, R = never>(projection: Projection<E, R>): Projection<E, R> => projection

/**
 * The projection of a read model written with its events: its tables come from the store's
 * migrations, and `apply` runs the function that the trigger runs (`cobro_rm_replay`), so that a
 * rebuild writes what the appends wrote.
 */
export const inline = (model: InlineReadModels.InlineReadModel): Projection => {
  const types: ReadonlySet<string> = new Set(model.types)
  const applyBatch = (events: ReadonlyArray<EventStore.LoggedEvent>) => {
    const positions = events.filter((event) => types.has(event.type)).map((e) => e.globalPosition.toString())
    return positions.length === 0
      ? Effect.void
      : Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.asVoid(sql.unsafe(InlineReadModels.replayStatement, [model.name, positions]))
        )
  }
  return {
    name: model.name,
    tables: model.tables,
    setup: Effect.void,
    types,
    inline: model,
    apply: (event) => applyBatch([event]),
    applyBatch
  }
}

/** Whether the store writes the projection with its events (no runner, no checkpoint). */
export const isInline = (projection: Projection<any, any>): boolean => projection.inline !== undefined

const refuseInline = (projection: Projection<any, any>, what: string) =>
  isInline(projection)
    ? Effect.dieMessage(
        `Projection.${what}: ${projection.name} is written with its events; rebuild it with rebuildAll`
      )
    : Effect.void

/** The name under which a projection's checkpoint is saved. */
export const checkpointName = (projection: Projection<any, any>): string => `projection:${projection.name}`

/** The projection as a log consumer. An inline projection is not one: it would apply its events twice. */
export const consumer = <E, R>(
  projection: Projection<E, R>
): Subscription.Consumer<E | SqlError, SqlClient.SqlClient | R> => {
  if (isInline(projection)) {
    throw new Error(`Projection.consumer: ${projection.name} is written with its events, not by a runner`)
  }
  const consumer =
    projection.applyBatch === undefined
      ? Subscription.make(checkpointName(projection), projection.apply)
      : Subscription.makeBatch(checkpointName(projection), projection.applyBatch)
  const types = projection.types
  return types === undefined ? consumer : { ...consumer, concerns: (event) => types.has(event.type) }
}

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
  refuseInline(projection, "catchUp").pipe(
    Effect.zipRight(setup(projection)),
    Effect.zipRight(Effect.suspend(() => orDieSql(Subscription.catchUp(consumer(projection), options))))
  )

/** Sets the projection up and keeps it current for ever (LISTEN/NOTIFY wake-ups, polling fallback). */
export const run = <E, R>(
  projection: Projection<E, R>,
  options?: Subscription.Options
): Effect.Effect<
  never,
  Exclude<E, SqlError>,
  SqlClient.SqlClient | EventStore.EventStore | LogNotifications.LogNotifications | R
> =>
  refuseInline(projection, "run").pipe(
    Effect.zipRight(setup(projection)),
    Effect.zipRight(Effect.suspend(() => orDieSql(Subscription.run(consumer(projection), options))))
  )

/** Drops the projection's tables and checkpoint, then creates the tables empty. Not for an inline projection. */
export const reset = <E, R>(projection: Projection<E, R>): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    yield* refuseInline(projection, "reset")
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
 * The schema in which a rebuild builds its read models before it swaps them in. One per database:
 * a rebuild started while another runs takes the schema over, and the first one fails.
 */
export const rebuildSchema = "cobro_rebuild"

/** The name of the checkpoint of a projection's shadow tables while a rebuild replays into them. */
export const rebuildCheckpointName = (projection: Projection<any, any>): string =>
  `rebuild:${checkpointName(projection)}`

/** The shadow schema's one-row table naming the rebuild that owns it. */
const ownerTable = `${rebuildSchema}.cobro_rebuild_owner`

/** What a rebuild has replayed so far, for a progress display. */
export interface RebuildProgress {
  readonly events: number
}

/** How {@link rebuildAll} replays and swaps. */
export interface RebuildOptions {
  /** Events per replay transaction; default 1000. */
  readonly batchSize?: number
  /**
   * Called after each replay transaction, and once more after the swap with the final count. It
   * runs between transactions: nothing is locked and the log's readers are not held back meanwhile.
   */
  readonly onProgress?: (progress: RebuildProgress) => Effect.Effect<void>
  /**
   * How long the swap waits for the live tables' locks (behind a long reader, say) before it gives
   * up, rolls back, and tries again; default 5 seconds. Readers queue behind a waiting swap, so
   * the wait is bounded.
   */
  readonly swapLockTimeout?: Duration.DurationInput
  /** How many times the swap is tried (lock timeout, deadlock) before the rebuild fails; default 10. */
  readonly swapAttempts?: number
}

/** SQLSTATEs of a swap that lost a race for locks and can be tried again: lock_not_available, deadlock, serialization. */
const retryableStates: ReadonlySet<string> = new Set(["55P03", "40P01", "40001"])

const isRetryable = (error: unknown): boolean => {
  if (!(error instanceof SqlError)) return false
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" && retryableStates.has(code)
}

/**
 * Rebuilds the projections from the log beside a running server, reading the log once for all of
 * them. Their tables are built empty in the shadow schema {@link rebuildSchema} and the log is
 * replayed into them in short transactions of `batchSize` events (each with the schema first on its
 * `search_path`, so that the projections' unqualified SQL writes the shadow tables while the log and
 * the checkpoints resolve as always), under the checkpoint {@link rebuildCheckpointName}; the live
 * tables stay readable and the live runners keep them current meanwhile, and no transaction stays
 * open long enough to hold back the log's readers (`pg_snapshot_xmin`). Then one short transaction
 * swaps them: it takes the live checkpoints' rows (as a runner does, so a runner waits for it), locks
 * the live tables, replays the few events that came since into the shadow tables, drops the live
 * tables, moves the shadow ones (with their indexes) into the live schema and sets the live
 * checkpoints to the shadow's; a runner resumes from there, so no event is lost or applied twice.
 * A failure or an interruption leaves the live tables as they were and removes the shadow schema (a
 * crash leaves it; the next rebuild drops it). Returns how many events were replayed.
 */
export const rebuildAll = <E, R>(
  projections: ReadonlyArray<Projection<E, R>>,
  options: RebuildOptions = {}
): Effect.Effect<number, Exclude<E, SqlError>, SqlClient.SqlClient | EventStore.EventStore | R> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* EventStore.EventStore
    if (projections.length === 0) return 0
    const limit = options.batchSize ?? 1000
    const onProgress = options.onProgress ?? (() => Effect.void)
    const shadowNames = projections.map(rebuildCheckpointName)
    const inlines = projections.filter(isInline)
    const liveNames = projections
      .filter((p) => !isInline(p))
      .map(checkpointName)
      .sort()
    const tables = [...new Set(projections.flatMap((p) => p.tables))].sort()
    const qualified = (schema: string, table: string) => sql(`${schema}.${table}`)
    const [current] = yield* sql<{ schema: string | null }>`SELECT current_schema() AS schema`
    const live = current?.schema
    if (live === null || live === undefined) {
      return yield* Effect.dieMessage("Projection.rebuildAll: the search_path names no existing schema")
    }
    // Unqualified names resolve in the shadow schema first, then where they always do.
    const inShadow = sql`SELECT set_config('search_path', ${`${rebuildSchema}, `} || current_setting('search_path'), true)`

    const runId = yield* sql.withTransaction(
      Effect.gen(function* () {
        // A crashed rebuild's leftovers go first.
        yield* sql`DROP SCHEMA IF EXISTS ${sql(rebuildSchema)} CASCADE`
        yield* sql`DELETE FROM cobro_checkpoints WHERE name LIKE 'rebuild:projection:%'`
        yield* sql`CREATE SCHEMA ${sql(rebuildSchema)}`
        yield* sql`CREATE TABLE ${sql(ownerTable)} (run_id text NOT NULL)`
        const [owner] = yield* sql<{ run_id: string }>`
          INSERT INTO ${sql(ownerTable)} (run_id) VALUES (gen_random_uuid()::text) RETURNING run_id`
        yield* inShadow
        for (const projection of projections) yield* projection.setup
        // An inline read model's tables are the migrations'; the shadow copies them, indexes and all.
        for (const table of inlines.flatMap((p) => p.tables)) {
          yield* sql`CREATE TABLE ${qualified(rebuildSchema, table)} (LIKE ${qualified(live, table)} INCLUDING ALL)`
        }
        for (const name of shadowNames) {
          yield* sql`INSERT INTO cobro_checkpoints (name, transaction_id, global_position) VALUES (${name}, '0', 0)`
        }
        return owner!.run_id
      })
    )

    /**
     * In a transaction: puts the shadow schema first on the search_path, checks that this rebuild
     * still owns it (its owner row stays read-locked, so no other rebuild drops it before this
     * transaction ends, and no write can fall through to a live table), and locks and returns the
     * shadow checkpoint.
     */
    const claim = Effect.gen(function* () {
      yield* inShadow
      const owners = yield* sql<{ run_id: string }>`SELECT run_id FROM ${sql(ownerTable)} FOR SHARE`
      if (owners[0]?.run_id !== runId) {
        return yield* Effect.dieMessage(
          `Projection.rebuildAll: another rebuild took the schema ${rebuildSchema} over; this one stops`
        )
      }
      const [row] = yield* sql<{ transaction_id: string; global_position: string }>`
        SELECT transaction_id::text AS transaction_id, global_position::text AS global_position
        FROM cobro_checkpoints WHERE name = ${shadowNames[0]!} FOR UPDATE`
      if (row === undefined) {
        return yield* Effect.dieMessage(`Projection.rebuildAll: the checkpoint ${shadowNames[0]} is gone`)
      }
      return { transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) }
    })

    /** Applies the next page of the log after `after` to every projection (in the shadow tables). */
    const applyPage = (after: EventStore.Checkpoint) =>
      Effect.gen(function* () {
        const events = yield* store.readAll({ after, limit })
        // Each projection owns its tables: applying the page projection by projection is the same.
        for (const projection of projections) yield* applyAll(projection, events)
        return events
      })

    const saveShadow = (at: EventStore.Checkpoint) =>
      sql`UPDATE cobro_checkpoints
          SET transaction_id = ${at.transactionId.toString()}::xid8,
              global_position = ${at.globalPosition.toString()}::bigint, updated_at = now()
          WHERE name IN ${sql.in(shadowNames)}`

    /** One replay transaction; returns how many events it applied. */
    const batch = sql.withTransaction(
      Effect.gen(function* () {
        const events = yield* applyPage(yield* claim)
        const last = events[events.length - 1]
        if (last !== undefined) yield* saveShadow(last.checkpoint)
        return events.length
      })
    )

    const swapLockTimeout = Duration.toMillis(Duration.decode(options.swapLockTimeout ?? Duration.seconds(5)))

    /**
     * In the swap, once the live tables are locked: the events after `after` that have committed,
     * applied to the inline read models' shadow tables. An append that has not committed yet has
     * either written its live rows already (its lock held the swap back until it committed, so it is
     * among these) or will write them through its trigger once the swap has committed, into the
     * tables swapped in. A page bounded by the snapshot's xmin, as the runners read, would miss
     * events that an unrelated longer transaction holds back.
     */
    const catchUpInline = (after: EventStore.Checkpoint) =>
      Effect.gen(function* () {
        if (inlines.length === 0) return 0
        const types = [...new Set(inlines.flatMap((p) => p.inline!.types))]
        const rows = yield* sql<{ global_position: string; type: string }>`
          SELECT global_position::text AS global_position, type FROM cobro_events
          WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8,
            ${after.globalPosition.toString()}::bigint)
            AND type IN ${sql.in(types)}`
        for (const projection of inlines) {
          const concerned = new Set(projection.inline!.types)
          const positions = rows.filter((row) => concerned.has(row.type)).map((row) => row.global_position)
          if (positions.length > 0)
            yield* sql.unsafe(InlineReadModels.replayStatement, [projection.name, positions])
        }
        return rows.length
      })

    /** The swap, in one transaction; returns how many events it caught up. */
    const swap = sql
      .withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT set_config('lock_timeout', ${`${Math.max(1, Math.round(swapLockTimeout))}ms`}, true)`
          let after = yield* claim
          // The live checkpoints' rows first, as each runner takes its own before its table: a
          // runner mid-batch finishes, the next one waits for the swap, and no lock order cycles.
          for (const name of liveNames) {
            yield* sql`
            INSERT INTO cobro_checkpoints (name, transaction_id, global_position) VALUES (${name}, '0', 0)
            ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name`
          }
          const existing = yield* sql<{ relname: string }>`
          SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = ${live} AND c.relname IN ${sql.in(tables)} ORDER BY c.relname`
          for (const { relname } of existing) {
            yield* sql`LOCK TABLE ${qualified(live, relname)} IN ACCESS EXCLUSIVE MODE`
          }
          let caughtUp = 0
          while (true) {
            const events = yield* applyPage(after)
            caughtUp += events.length
            const last = events[events.length - 1]
            if (last !== undefined) after = last.checkpoint
            if (events.length < limit) break
          }
          caughtUp += yield* catchUpInline(after)
          for (const table of tables) yield* sql`DROP TABLE IF EXISTS ${qualified(live, table)} CASCADE`
          for (const table of tables) {
            yield* sql`ALTER TABLE IF EXISTS ${qualified(rebuildSchema, table)} SET SCHEMA ${sql(live)}`
          }
          if (inlines.length > 0) {
            yield* sql`DELETE FROM cobro_checkpoints WHERE name IN ${sql.in(inlines.map(checkpointName))}`
          }
          if (liveNames.length > 0 && after.globalPosition === 0n) {
            yield* sql`DELETE FROM cobro_checkpoints WHERE name IN ${sql.in(liveNames)}`
          } else if (liveNames.length > 0) {
            yield* sql`UPDATE cobro_checkpoints
            SET transaction_id = ${after.transactionId.toString()}::xid8,
                global_position = ${after.globalPosition.toString()}::bigint, updated_at = now()
            WHERE name IN ${sql.in(liveNames)}`
          }
          yield* sql`DELETE FROM cobro_checkpoints WHERE name IN ${sql.in(shadowNames)}`
          yield* sql`DROP SCHEMA ${sql(rebuildSchema)} CASCADE`
          return caughtUp
        })
      )
      .pipe(
        Effect.retry({
          times: Math.max(0, (options.swapAttempts ?? 10) - 1),
          schedule: Schedule.spaced("200 millis"),
          while: isRetryable
        })
      )

    /** Removes the shadow schema and checkpoints if this rebuild still owns them. */
    const cleanUp = sql
      .withTransaction(
        Effect.gen(function* () {
          const [present] = yield* sql<{ present: boolean }>`
            SELECT to_regclass(${ownerTable}) IS NOT NULL AS present`
          if (present?.present !== true) return
          const owners = yield* sql<{ run_id: string }>`SELECT run_id FROM ${sql(ownerTable)} FOR UPDATE`
          if (owners[0]?.run_id !== runId) return
          yield* sql`DROP SCHEMA ${sql(rebuildSchema)} CASCADE`
          yield* sql`DELETE FROM cobro_checkpoints WHERE name IN ${sql.in(shadowNames)}`
        })
      )
      .pipe(Effect.catchAllCause(() => Effect.void))

    return yield* Effect.gen(function* () {
      let total = 0
      while (true) {
        const applied = yield* batch
        total += applied
        yield* onProgress({ events: total })
        if (applied < limit) break
      }
      total += yield* swap
      yield* onProgress({ events: total })
      return total
    }).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : cleanUp)))
  }).pipe(
    orDieSql,
    Effect.withSpan("Projection.rebuildAll", {
      attributes: { projections: projections.map((p) => p.name).join(",") }
    })
  )

/**
 * Rebuilds one projection from the log beside a running server: {@link rebuildAll} of it alone.
 * Returns how many events were replayed.
 */
export const rebuild = <E, R>(
  projection: Projection<E, R>,
  options?: Subscription.Options
): Effect.Effect<number, Exclude<E, SqlError>, SqlClient.SqlClient | EventStore.EventStore | R> =>
  rebuildAll([projection], options?.batchSize === undefined ? {} : { batchSize: options.batchSize }).pipe(
    Effect.withSpan("Projection.rebuild", { attributes: { projection: projection.name } })
  )
