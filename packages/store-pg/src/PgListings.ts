/**
 * The `Listings` port over PostgreSQL: the operator's and the merchant panel's lists, read from the
 * listing read models that the store writes with their events (`Merchants`, `Transactions`,
 * `Links`, `Notifications`, `MerchantRefunds`, `PanelUsers` under `readModels/`, migrations
 * `10_listings` and `14_listing_positions`), each page one statement over a keyset index of the log
 * position that created each row, under the log's visibility rule (`internal/Keyset`), and the log
 * itself in commit order. `ListingsFromLog` is the oracle its rows are held to.
 *
 * The log's page reads `cobro_events` as the event store's `readAll` does (the same visibility rule:
 * nothing of a transaction that could still commit before what it returns, `Read.committedInOrder`),
 * with the stream or type filter in the statement: a stream's events through the
 * `(stream_id, stream_version)` index, a type's along the commit-order index (no index on `type`:
 * every append would pay for it).
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Listings from "@cobro/domain/Listings"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { committedInOrder } from "./internal/eventStore/Read.js"
import * as Rows from "./internal/Rows.js"
import * as Links from "./readModels/Links.js"
import * as MerchantRefunds from "./readModels/MerchantRefunds.js"
import * as Merchants from "./readModels/Merchants.js"
import * as Notifications from "./readModels/Notifications.js"
import * as PanelUsers from "./readModels/PanelUsers.js"
import * as Transactions from "./readModels/Transactions.js"

/** The statement of `Listings.events`: `limit + 1` events, the extra one telling `hasMore`. */
export const eventsStatement = (sql: SqlClient.SqlClient, query: Listings.EventsQuery) => {
  const after = query.after ?? EventStore.Start
  const filters = [
    sql`(transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition.toString()}::bigint)`,
    sql.literal(committedInOrder),
    ...(query.stream === undefined ? [] : [sql`stream_id = ${query.stream}`]),
    ...(query.type === undefined ? [] : [sql`type = ${query.type}`])
  ]
  return sql<Rows.EventRow>`SELECT ${sql.literal(Rows.columns)} FROM cobro_events WHERE ${sql.and(filters)}
    ORDER BY transaction_id, global_position LIMIT ${query.limit + 1}`
}

/** Makes the listings over the read models of the database in context. */
export const make: Effect.Effect<Listings.Listings["Type"], never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const run = <A, E>(name: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.withSpan(`PgListings.${name}`))

    const events = (query: Listings.EventsQuery) => {
      const after = query.after ?? EventStore.Start
      return eventsStatement(sql, query).pipe(
        Effect.orDie,
        Effect.map((rows): Listings.EventsPage => {
          const data = rows.slice(0, query.limit).map(Rows.toLogged)
          return {
            data,
            hasMore: rows.length > query.limit,
            next: data[data.length - 1]?.checkpoint ?? after
          }
        }),
        Effect.withSpan("PgListings.events")
      )
    }

    return Listings.Listings.of({
      merchants: (filter, page) => run("merchants", Merchants.list(filter, page)),
      transactions: (merchantId, filter, page) =>
        run("transactions", Transactions.list(merchantId, filter, page)),
      links: (merchantId, filter, page) => run("links", Links.list(merchantId, filter, page)),
      notifications: (merchantId, filter, page) =>
        run("notifications", Notifications.list(merchantId, filter, page)),
      refunds: (merchantId, filter, page) => run("refunds", MerchantRefunds.list(merchantId, filter, page)),
      users: (merchantId, filter, page) => run("users", PanelUsers.list(merchantId, filter, page)),
      events
    })
  }
)

/**
 * The listings as the domain's `Listings` port, over the migrated database in context.
 *
 * @category layers
 */
export const layer: Layer.Layer<Listings.Listings, never, SqlClient.SqlClient> = Layer.effect(
  Listings.Listings,
  make
)
