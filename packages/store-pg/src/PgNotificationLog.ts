/**
 * The `NotificationLog` port over PostgreSQL (spec D, fallback query A4): the `last_notification`
 * and `last_notification_by_reference` read models find the delivery streams, whose first event
 * (`DeliveryScheduled`) holds the exact body. Owner checks (merchant, sandbox) come from that event.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const decodeScheduled = Schema.decodeUnknownOption(WebhookDelivery.DeliveryScheduled)

/** Makes the log over the last-notification read models (the store's migrations create and write them). */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = yield* EventStore.EventStore
  /** The body of a delivery stream, if it belongs to `owner`. */
  const bodyOf = (streamId: string, owner: NotificationLog.Owner) =>
    Effect.map(store.readStream(streamId, { toVersion: 1 }), (events) =>
      Option.filterMap(Option.fromNullable(events[0]), (event) =>
        Option.filterMap(decodeScheduled(event.data), (scheduled) =>
          scheduled.merchantId === owner.merchantId && scheduled.sandbox === owner.sandbox
            ? Option.some(scheduled.body)
            : Option.none()
        )
      )
    )
  const lastByPaymentId = (owner: NotificationLog.Owner, paymentId: string) =>
    sql<{ stream_id: string }>`
      SELECT stream_id FROM cobro_rm_last_notification
      WHERE subject = ${paymentId} AND merchant_id = ${owner.merchantId}`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) =>
        rows[0] === undefined ? Effect.succeed(Option.none<string>()) : bodyOf(rows[0].stream_id, owner)
      ),
      Effect.withSpan("PgNotificationLog.lastByPaymentId")
    )
  const lastByExternalReference = (owner: NotificationLog.Owner, reference: string, limit: number) =>
    sql<{ stream_id: string }>`
      SELECT stream_id FROM cobro_rm_last_notification_by_reference
      WHERE merchant_id = ${owner.merchantId} AND sandbox = ${owner.sandbox} AND reference = ${reference}
      ORDER BY created_at DESC, subject DESC
      LIMIT ${Math.max(0, Math.floor(limit))}`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) => Effect.forEach(rows, (row) => bodyOf(row.stream_id, owner))),
      Effect.map((bodies) => bodies.flatMap(Option.toArray)),
      Effect.withSpan("PgNotificationLog.lastByExternalReference")
    )
  return { lastByPaymentId, lastByExternalReference } satisfies NotificationLog.NotificationLog["Type"]
})

/** The log as the domain's `NotificationLog` port; creates the read models' tables. */
export const layer: Layer.Layer<
  NotificationLog.NotificationLog,
  never,
  SqlClient.SqlClient | EventStore.EventStore
> = Layer.effect(NotificationLog.NotificationLog, make)
