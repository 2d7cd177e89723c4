/**
 * The read models that requests read right after a write, written with their events ("inline
 * projections"): each is a PL/pgSQL function `cobro_rm_<name>(cobro_events)` that applies one event
 * to its table, called by an `AFTER INSERT` trigger on `cobro_events` in the transaction that
 * appends the event (no extra round trip: the append stays one statement), and by
 * `Projection.rebuildAll` when the read model is rebuilt from the log. One function, so the live
 * table and a rebuild cannot disagree.
 *
 * Migration `8_inline_read_models` installs them. It takes the place of the projection runners
 * that earlier versions ran for these tables: it recreates the tables and replays the whole log
 * into them in its own transaction, after the triggers exist (creating a trigger waits for the
 * appends under way and holds later ones until the migration commits, so every event is applied
 * exactly once), and deletes the runners' checkpoints. The nodes of an earlier version must be
 * stopped before: one still running would replay these tables again from the start of the log.
 *
 * Each function is idempotent where the log's order matters: `cobro_rm_webhook_deliveries` keeps
 * the stream version it last applied, and the two last-notification tables the log position
 * (`transaction_id`, `global_position`) of the notification they hold, so that a replay applies
 * nothing twice and the later event of the log wins whatever order two transactions commit in.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Ddl from "./internal/Ddl.js"

/**
 * A read model written with its events: one table, `cobro_rm_<name>`, and the PL/pgSQL function of
 * the same name that applies one event of the log to it. Each has a module of its own under
 * `readModels/`, with the queries that read it.
 */
export interface InlineReadModel {
  /** Its checkpoint name as a runner was `projection:<name>`; its table and function are `cobro_rm_<name>`. */
  readonly name: string
  readonly tables: ReadonlyArray<string>
  /** The event types its function reads: its trigger runs for these alone. */
  readonly types: ReadonlyArray<string>
  /**
   * The `CREATE TABLE` and `CREATE INDEX` statements of its table. A later change is a migration of
   * its own that reinstalls the model ({@link reinstall}): the migration that first installed it
   * then installs the current statements, which the reinstall replaces, so that every database ends
   * with the same table, whichever migrations it ran when.
   */
  readonly createTable: ReadonlyArray<string>
  /**
   * Its `CREATE FUNCTION cobro_rm_<name>(e cobro_events)`. It reads the event as the
   * domain's Schema encodes it (camelCase members, instants as ISO strings, an absent Option as an
   * absent member) and skips another aggregate's event of the same type, as the stream prefix tells.
   */
  readonly createFunction: string
}

/** Builds an {@link InlineReadModel}; its one table is `cobro_rm_<name>`. */
export const make = (model: Omit<InlineReadModel, "tables">): InlineReadModel => ({
  ...model,
  tables: [`cobro_rm_${model.name}`]
})

/** The SQL function that applies one event of the log to the read model. */
export const functionName = (model: InlineReadModel): string => `cobro_rm_${model.name}`

/**
 * `cobro_rm_replay(name, positions)`: applies the events at `positions` to the read model `name`, in
 * the log's order; returns how many. The rebuild's path: it runs with the shadow schema first on
 * the `search_path`, so the function's unqualified tables are the shadow ones.
 */
export const replayStatement = "SELECT cobro_rm_replay($1, $2::bigint[]) AS applied"

// Frozen with migration 8, as the read models' own statements.
const createReplayFunction = `CREATE FUNCTION cobro_rm_replay(p_name text, p_positions bigint[]) RETURNS integer LANGUAGE plpgsql AS $$
  DECLARE
    v_event cobro_events;
    v_applied integer := 0;
  BEGIN
    FOR v_event IN SELECT * FROM cobro_events WHERE global_position = ANY(p_positions)
      ORDER BY transaction_id, global_position LOOP
      EXECUTE format('SELECT %I($1)', 'cobro_rm_' || p_name) USING v_event;
      v_applied := v_applied + 1;
    END LOOP;
    RETURN v_applied;
  END $$`

const quoted = (types: ReadonlyArray<string>) => types.map((type) => `'${type}'`).join(", ")

/** The trigger of one read model: its function, for the event types it reads, as each event is appended. */
const triggers = (model: InlineReadModel) => [
  `CREATE FUNCTION ${functionName(model)}_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ${functionName(model)}(NEW);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER ${functionName(model)} AFTER INSERT ON cobro_events FOR EACH ROW
    WHEN (NEW.type IN (${quoted(model.types)})) EXECUTE FUNCTION ${functionName(model)}_trigger()`
]

/**
 * Migration `8_inline_read_models` of `models`, installed in their order: see the module's comment.
 * A later migration that adds read models installs them the same way, without `cobro_rm_replay`,
 * which migration 8 created (`replayFunction: false`).
 */
export const migration = (
  models: ReadonlyArray<InlineReadModel>,
  options: { readonly replayFunction?: boolean } = {}
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const model of models) {
      for (const table of model.tables) yield* sql`DROP TABLE IF EXISTS ${sql(table)} CASCADE`
    }
    const statements = [
      ...models.flatMap((model) => model.createTable),
      ...models.map((model) => model.createFunction),
      ...(options.replayFunction === false ? [] : [createReplayFunction]),
      ...models.flatMap(triggers)
    ]
    yield* Ddl.run(statements)
    // Every event committed before the triggers, replayed in the log's order.
    for (const model of models) {
      yield* sql.unsafe(
        `SELECT ${functionName(model)}(e) FROM (SELECT e FROM cobro_events e
        WHERE type IN (${quoted(model.types)}) ORDER BY transaction_id, global_position OFFSET 0) AS log(e)`
      )
      yield* sql`DELETE FROM cobro_checkpoints WHERE name = ${`projection:${model.name}`}`
    }
  })

/**
 * A migration that installs `models` again, as they are now (a new column, another index, a
 * function that writes more): drops their triggers, functions and tables, then installs them as
 * {@link migration} does and replays the log into them, in the migration's transaction (the appends
 * under way are waited for, later ones wait for it). The nodes of an earlier version must be
 * stopped before, as for {@link migration}.
 */
export const reinstall = (
  models: ReadonlyArray<InlineReadModel>
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.zipRight(
    Ddl.run(
      models.flatMap((model) => [
        `DROP TRIGGER IF EXISTS ${functionName(model)} ON cobro_events`,
        `DROP FUNCTION IF EXISTS ${functionName(model)}_trigger()`,
        `DROP FUNCTION IF EXISTS ${functionName(model)}(cobro_events)`
      ])
    ),
    migration(models, { replayFunction: false })
  )
