/**
 * Keyset pagination over a listing read model (`Listings`' Stripe-style pages): rows newest first
 * by `(created_at, <id>)`, both descending, ids in collation "C", each query one index range scan of
 * `limit + 1` rows (the extra one tells `hasMore`).
 *
 * A cursor is a row of the list's scope (one merchant's rows, whatever the filters): the page is the
 * rows past its `(created_at, id)` that pass the filters. Its lookup and the page are one statement,
 * `LATERAL` on the cursor's row, so the page's bound is an index condition and no round trip is
 * added; no row at all means an unknown cursor. `ending_before` reads ascending from the cursor and
 * reverses. An insert never moves a row's key, so a walk shows no row twice and misses none that
 * existed when it began.
 * @internal
 */
import type * as Pagination from "@cobro/domain/Pagination"
import { UnknownCursor } from "@cobro/domain/Pagination"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

/**
 * One page of one list: the table and the column that identifies a row (the cursor), the rows of
 * `scope` (conditions on the table's unqualified columns: the merchant's), the `filters` the page's
 * rows pass, and which page.
 */
export interface Query {
  readonly table: string
  readonly id: string
  readonly scope: ReadonlyArray<Statement.Fragment>
  readonly filters: ReadonlyArray<Statement.Fragment>
  readonly request: Pagination.PageRequest
}

/** The one statement of a page: its rows (`limit + 1`), with the cursor's row alone when none follow. */
export const statement = <Row extends object>(
  sql: SqlClient.SqlClient,
  query: Query
): Statement.Statement<Row> => {
  const { request, scope } = query
  const table = sql(query.table)
  const id = sql(query.id)
  const take = request.limit + 1
  const where = (extra: ReadonlyArray<Statement.Fragment>) => {
    const all = [...scope, ...query.filters, ...extra]
    return all.length === 0 ? sql`TRUE` : sql.and(all)
  }
  const cursor = request.startingAfter ?? request.endingBefore
  if (cursor === undefined) {
    return sql<Row>`SELECT * FROM ${table} WHERE ${where([])} ORDER BY created_at DESC, ${id} DESC LIMIT ${take}`
  }
  const after = request.startingAfter !== undefined
  const bound = after
    ? sql`(created_at, ${id}) < (pivot.cursor_created_at, pivot.cursor_id)`
    : sql`(created_at, ${id}) > (pivot.cursor_created_at, pivot.cursor_id)`
  const order = after ? sql`ORDER BY created_at DESC, ${id} DESC` : sql`ORDER BY created_at ASC, ${id} ASC`
  const lookup = sql.and([sql`${id} = ${cursor}`, ...scope])
  return sql<Row>`SELECT listed.*
    FROM (SELECT created_at AS cursor_created_at, ${id} AS cursor_id FROM ${table} WHERE ${lookup}) pivot
    LEFT JOIN LATERAL (SELECT * FROM ${table} WHERE ${where([bound])} ${order} LIMIT ${take}) listed ON TRUE`
}

/** The page `query` asks for, newest first. Dies on a database error, as the store's reads do. */
export const page = <Row extends object>(
  query: Query
): Effect.Effect<Pagination.Page<Row>, Pagination.UnknownCursor, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { request } = query
    const rows = yield* statement<Row>(sql, query).pipe(Effect.orDie)
    const cursor = request.startingAfter ?? request.endingBefore
    if (cursor === undefined)
      return { data: rows.slice(0, request.limit), hasMore: rows.length > request.limit }
    const after = request.startingAfter !== undefined
    if (rows.length === 0) {
      return yield* new UnknownCursor({ parameter: after ? "starting_after" : "ending_before", id: cursor })
    }
    // An empty page is the cursor's row alone, joined to nothing.
    const found = rows.filter((row) => (row as Record<string, unknown>)[query.id] != null)
    const data = found.slice(0, request.limit)
    return { data: after ? data : data.reverse(), hasMore: found.length > request.limit }
  })
