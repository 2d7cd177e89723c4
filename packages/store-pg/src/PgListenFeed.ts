/**
 * The `ListenFeed` port over PostgreSQL and PGlite (`cobro listen`): a merchant's sandbox rows of
 * `cobro_rm_notifications` (the read model written with each `DeliveryScheduled`), past a position,
 * in the log's commit order `(created_xid, created_position)`, and only below the snapshot's xmin
 * (`Keyset.visible`, the log's own rule): every transaction below it has ended, so no notification
 * can still commit behind a position the feed has passed, whichever node wrote it. The exact body is
 * the `DeliveryScheduled` event's, the row's first event (`created_position`). The headers are the
 * caller's (`Config.headers`): signing belongs to the webhooks adapter, composed by the server.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import type { NotificationId } from "@cobro/domain/Ids"
import * as ListenFeed from "@cobro/domain/ListenFeed"
import type { NotificationType } from "@cobro/domain/WebhookDelivery"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Keyset from "./internal/Keyset.js"
import * as PgPool from "./PgPool.js"

/** What the adapter is given: how to compute a delivery's headers from its body. */
export interface Config {
  readonly headers: (notification: {
    readonly notificationId: NotificationId
    readonly type: NotificationType
    readonly body: string
  }) => Effect.Effect<Readonly<Record<string, string>>>
}

interface Row {
  /** The snapshot's xmin, on every row (alone, with the rest null, when no row is past the position). */
  readonly xmin: string
  readonly notification_id: string | null
  readonly type: string
  readonly body: string
  readonly created_xid: string
  readonly created_position: string | number | bigint
}

/**
 * The rows past a position, below the statement's own snapshot's xmin (the log's rule,
 * `Keyset.visible`), with that xmin: one index range scan of the merchant's sandbox rows
 * (`cobro_rm_notifications_mode_newest`).
 */
const sinceStatement = (typed: boolean) =>
  `SELECT s.xmin::text AS xmin, r.*
  FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) s
  LEFT JOIN LATERAL (
    SELECT n.notification_id, n.type, n.created_xid::text AS created_xid, n.created_position,
      e.data->>'body' AS body
    FROM cobro_rm_notifications n
    JOIN cobro_events e ON e.global_position = n.created_position
    WHERE n.merchant_id = $1 AND n.sandbox
      AND (n.created_xid, n.created_position) > ($2::xid8, $3::bigint)
      AND n.created_xid < s.xmin
      ${typed ? "AND n.type = ANY($5::text[])" : ""}
    ORDER BY n.created_xid, n.created_position
    LIMIT $4
  ) r ON true
  ORDER BY r.created_xid::xid8, r.created_position`

/** The xmin of the current snapshot: every transaction below it has ended. */
const xminStatement = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin"

/**
 * The position of a snapshot's xmin: every row of a transaction below it was visible to the read
 * that took the snapshot, and every later row has an xid of at least it (and a position above 0).
 */
const fromXmin = (xmin: string): EventStore.Checkpoint => ({
  transactionId: BigInt(xmin),
  globalPosition: 0n
})

/** Makes the feed over the store's connections. */
export const make = (config: Config) =>
  Effect.gen(function* () {
    const statement = yield* PgPool.statement
    const now = statement<{ readonly xmin: string }>(xminStatement, []).pipe(
      Effect.map((rows) => fromXmin(rows[0]!.xmin)),
      Effect.orDie
    )
    const since = (query: ListenFeed.Query) =>
      Effect.gen(function* () {
        const typed = query.types !== undefined
        const found = yield* statement<Row>(sinceStatement(typed), [
          query.merchantId,
          query.after.transactionId.toString(),
          query.after.globalPosition.toString(),
          query.limit,
          ...(typed ? [query.types] : [])
        ]).pipe(Effect.orDie)
        const rows = found.filter((row) => row.notification_id !== null)
        const items = yield* Effect.forEach(rows, (row) => {
          const notification = {
            notificationId: row.notification_id as NotificationId,
            type: row.type as NotificationType,
            body: row.body
          }
          return Effect.map(config.headers(notification), (headers) => ({
            ...notification,
            headers,
            position: Keyset.positionOf(row)
          }))
        })
        const last = items.at(-1)?.position ?? query.after
        // A full page may have more right after its last row; otherwise nothing below the xmin is
        // left past the position, whatever the type filter skipped.
        const cursor = rows.length >= query.limit ? last : ListenFeed.later(last, fromXmin(found[0]!.xmin))
        return { items, cursor } satisfies ListenFeed.Batch
      }).pipe(Effect.withSpan("PgListenFeed.since"))
    return { now, since } satisfies ListenFeed.ListenFeed["Type"]
  })

/** The feed as a layer. */
export const layer = (config: Config): Layer.Layer<ListenFeed.ListenFeed, never, SqlClient.SqlClient> =>
  Layer.effect(ListenFeed.ListenFeed, make(config))
