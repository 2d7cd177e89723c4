/**
 * Keyset pagination over a listing read model (`Listings`' Stripe-style pages): rows newest first
 * by their log position, `(created_xid, created_position)` descending, the transaction id and global
 * position of the event that created the row (each event creates at most one row of a list, so the
 * position is the row's key); each query one index range scan of `limit + 1` rows (the extra one
 * tells `hasMore`).
 *
 * The order is one a later commit cannot land behind (brief, "Exactly once at the edge" 4): a page
 * holds only rows below the snapshot's xmin ({@link visible}, the log's own rule in
 * `Read.committedInOrder`), and every transaction below it has ended, so no row can still appear
 * among the positions a page has passed. A walk with `starting_after` misses no row between the
 * first and the last it returned, whenever that row committed; a reader polling with
 * `ending_before` receives every row, once. (`created_at`, the command's instant, is not such an
 * order: a command decided earlier may commit later.)
 *
 * A cursor is a row of the list's scope (one merchant's rows, whatever the filters): the page is the
 * rows past its position that pass the filters. Its lookup and the page are one statement,
 * `LATERAL` on the cursor's row, so the page's bound is an index condition and no round trip is
 * added; no row at all means an unknown cursor. `ending_before` reads ascending from the cursor and
 * reverses.
 * @internal
 */
import type * as EventStore from "@cobro/domain/EventStore"
import type * as Pagination from "@cobro/domain/Pagination"
import { UnknownCursor } from "@cobro/domain/Pagination"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

/** The index columns of a keyset, after the scope's: newest first. */
export const newest = "created_xid DESC, created_position DESC"

/** The rows a reader may see: those of transactions below the snapshot's xmin, which have all ended. */
export const visible = "created_xid < pg_snapshot_xmin(pg_current_snapshot())"

/**
 * A listing row's place, as its read model's function writes it from the event that created the row
 * (`e.transaction_id`, `e.global_position`) and as the driver returns it (text or number).
 */
export interface Placed {
  readonly created_xid: string | number | bigint
  readonly created_position: string | number | bigint
}

/** A row's position in the log, from its columns. */
export const positionOf = (row: Placed): EventStore.Checkpoint => ({
  transactionId: BigInt(row.created_xid),
  globalPosition: BigInt(row.created_position)
})

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
  const where = (extra: ReadonlyArray<Statement.Fragment>) =>
    sql.and([...scope, ...query.filters, sql.literal(visible), ...extra])
  const cursor = request.startingAfter ?? request.endingBefore
  if (cursor === undefined) {
    return sql<Row>`SELECT * FROM ${table} WHERE ${where([])} ORDER BY ${sql.literal(newest)} LIMIT ${take}`
  }
  const after = request.startingAfter !== undefined
  const bound = after
    ? sql`(created_xid, created_position) < (pivot.cursor_xid, pivot.cursor_position)`
    : sql`(created_xid, created_position) > (pivot.cursor_xid, pivot.cursor_position)`
  const order = after
    ? sql`ORDER BY ${sql.literal(newest)}`
    : sql`ORDER BY created_xid ASC, created_position ASC`
  // The cursor's row need not be visible yet: it only places the page, whose rows are.
  const lookup = sql.and([sql`${id} = ${cursor}`, ...scope])
  return sql<Row>`SELECT listed.*
    FROM (SELECT created_xid AS cursor_xid, created_position AS cursor_position FROM ${table} WHERE ${lookup}) pivot
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
