/**
 * The `INSERT … ON CONFLICT … DO UPDATE` statements of the inline read models' PL/pgSQL functions
 * (`InlineReadModels`) that keep one row per key, built from one list of columns, each beside the
 * expression of its value, so that the column list, its `VALUES` and the `SET` that replaces a row
 * cannot drift apart. Each is idempotent: a replay of the log applies nothing twice.
 * @internal
 */

/** A row's columns, each with the PL/pgSQL expression of its value (of the event `e`). */
export type Values = ReadonlyArray<readonly [column: string, value: string]>

/**
 * The row of the latest event per `key` in the log's order: `values`, then the event's log
 * position (`log_transaction_id`, `log_position`). A row there already is replaced only by an event
 * later in the log, so the later event wins whatever order two transactions commit (or a replay
 * applies them) in.
 */
export const latest = (table: string, key: string, values: Values): string => {
  const all: Values = [
    ...values,
    ["log_transaction_id", "e.transaction_id"],
    ["log_position", "e.global_position"]
  ]
  const set = all.filter(([column]) => column !== key).map(([column]) => `${column} = EXCLUDED.${column}`)
  return `INSERT INTO ${table} AS t (${all.map(([column]) => column).join(", ")})
    VALUES (${all.map(([, value]) => value).join(", ")})
    ON CONFLICT (${key}) DO UPDATE SET ${set.join(", ")}
    WHERE (t.log_transaction_id, t.log_position) < (EXCLUDED.log_transaction_id, EXCLUDED.log_position);`
}
