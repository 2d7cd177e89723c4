/**
 * Instants as statement parameters: a `Date` as a `timestamptz`, exact to the millisecond for every
 * instant a `Date` holds that PostgreSQL holds too (4713 BC to 275760 AD). `toISOString` writes the
 * years before 1 and after 9999 in forms PostgreSQL refuses (`0000-…`, `+010000-…`): a filter's
 * bound there answered 500 (issue 31, item 6).
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"

/** `date` as a `timestamptz`: whole seconds since the epoch (exact in a double), then the milliseconds. */
export const timestamptz = (sql: SqlClient.SqlClient, date: Date): Statement.Fragment => {
  const ms = date.getTime()
  const seconds = Math.floor(ms / 1000)
  return sql`(to_timestamp(${seconds}::bigint) + ${ms - seconds * 1000}::integer * interval '1 millisecond')`
}
