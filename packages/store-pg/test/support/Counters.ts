/**
 * A test projection whose rows show at once an event applied twice or missed: per stream of its own
 * prefix, how many events and the sum of their amounts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Projection from "../../src/Projection.js"

/**
 * The counter of the streams `<prefix>-…`, in table `table` (its name too), with an index on the
 * totals, which a rebuild must move with the table.
 */
export const counter = (prefix: string, table: string) =>
  Projection.make({
    name: table,
    tables: [table],
    setup: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(
        sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (stream_id text PRIMARY KEY, events integer NOT NULL, total integer NOT NULL)`,
        sql`CREATE INDEX IF NOT EXISTS ${sql(`${table}_total`)} ON ${sql(table)} (total)`
      )
    ).pipe(Effect.asVoid),
    apply: (e) =>
      e.streamId.startsWith(`${prefix}-`)
        ? Effect.flatMap(SqlClient.SqlClient, (sql) => {
            const amount = Number((e.data as { amount?: number }).amount ?? 0)
            return sql`INSERT INTO ${sql(table)} (stream_id, events, total) VALUES (${e.streamId}, 1, ${amount})
              ON CONFLICT (stream_id) DO UPDATE SET events = ${sql(table)}.events + 1, total = ${sql(table)}.total + ${amount}`
          }).pipe(Effect.asVoid)
        : Effect.void
  })

/** A counter, as the tests hold it. */
export type Counter = ReturnType<typeof counter>

/** Every row of `table`, by stream id. */
export const rowsOf = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<Record<string, unknown>>`SELECT * FROM ${sql(table)} ORDER BY stream_id`
  ).pipe(Effect.orDie)
