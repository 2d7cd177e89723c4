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
 *
 * Each listing read model declares its list once ({@link listing}): its table, scope, filters and
 * how a row reads as the port's; the page and its statement come from here.
 * @internal
 */
import type * as EventStore from "@cobro/domain/EventStore"
import type * as Listings from "@cobro/domain/Listings"
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
 * The columns a merchant's listing row of a payment-side list has besides its own (transactions,
 * links, notifications, refunds): its place, its merchant and mode, and the instants of its first
 * and last events.
 */
export interface MerchantPlaced extends Placed {
  readonly merchant_id: string
  readonly sandbox: boolean
  readonly created_at: Date | string
  readonly updated_at: Date | string
}

/** The fields of a {@link MerchantPlaced} row as the `Listings` port's row has them. */
export const merchantFields = (row: MerchantPlaced) => ({
  position: positionOf(row),
  merchantId: row.merchant_id,
  mode: row.sandbox ? ("test" as const) : ("production" as const),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
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

/**
 * One list over a keyset read model, as `Listings` reads it: {@link page} of its rows, each read
 * as the port's row, and the page's {@link statement} alone (for the query plans' tests and
 * benchmarks), both from the list's scope (one merchant, or all) and its filter.
 */
export interface Listing<Scope, Filter, Row, Out> {
  readonly list: (
    scope: Scope,
    filter: Filter,
    request: Pagination.PageRequest
  ) => Effect.Effect<Pagination.Page<Out>, Pagination.UnknownCursor, SqlClient.SqlClient>
  readonly statement: (
    scope: Scope,
    filter: Filter,
    request: Pagination.PageRequest
  ) => Effect.Effect<Statement.Statement<Row>, never, SqlClient.SqlClient>
}

/**
 * Builds the {@link Listing} of `table`, whose rows `id` identifies: `scope` and `filters` give the
 * page's conditions, `toRow` reads a row as the port's.
 */
export const listing = <Scope, Filter, Row extends Placed, Out>(options: {
  readonly table: string
  readonly id: string
  readonly scope: (sql: SqlClient.SqlClient, scope: Scope) => ReadonlyArray<Statement.Fragment>
  readonly filters: (sql: SqlClient.SqlClient, filter: Filter) => ReadonlyArray<Statement.Fragment>
  readonly toRow: (row: Row) => Out
}): Listing<Scope, Filter, Row, Out> => {
  const query = (
    sql: SqlClient.SqlClient,
    scope: Scope,
    filter: Filter,
    request: Pagination.PageRequest
  ): Query => ({
    table: options.table,
    id: options.id,
    scope: options.scope(sql, scope),
    filters: options.filters(sql, filter),
    request
  })
  return {
    list: (scope, filter, request) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => page<Row>(query(sql, scope, filter, request))).pipe(
        Effect.map((rows) => ({ data: rows.data.map(options.toRow), hasMore: rows.hasMore }))
      ),
    statement: (scope, filter, request) =>
      Effect.map(SqlClient.SqlClient, (sql) => statement<Row>(sql, query(sql, scope, filter, request)))
  }
}

/**
 * A list's filters on equal values: `column = value` for each member the filter gave (an `undefined`
 * one sets no condition), as `ListingsFromLog` keeps its rows (`sameWhereGiven`).
 */
export const equalWhereGiven = (
  sql: SqlClient.SqlClient,
  columns: Readonly<Record<string, string | boolean | undefined>>
): ReadonlyArray<Statement.Fragment> =>
  Object.entries(columns).flatMap(([column, value]) =>
    value === undefined ? [] : [sql`${sql(column)} = ${value}`]
  )

/** The `sandbox` column a list's `mode` filter asks for, if it gives one. */
export const sandboxOf = (mode: Listings.Mode | undefined): boolean | undefined =>
  mode === undefined ? undefined : mode === "test"

/** The scope of a merchant's list: its rows alone (the first column of each of its indexes). */
export const byMerchant = (
  sql: SqlClient.SqlClient,
  merchantId: string
): ReadonlyArray<Statement.Fragment> => [sql`merchant_id = ${merchantId}`]
