/**
 * The `NotificationLog` port over PostgreSQL (spec D, fallback query A4): the `LastNotification`
 * and `LastNotificationByReference` read models find the delivery streams, whose first event
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
import * as LastNotification from "./readModels/LastNotification.js"
import * as LastNotificationByReference from "./readModels/LastNotificationByReference.js"

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
    LastNotification.deliveryStreamOf(owner.merchantId, paymentId).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.orDie,
      Effect.flatMap(
        Option.match({
          onNone: () => Effect.succeed(Option.none<string>()),
          onSome: (streamId) => bodyOf(streamId, owner)
        })
      ),
      Effect.withSpan("PgNotificationLog.lastByPaymentId")
    )
  const lastByExternalReference = (owner: NotificationLog.Owner, reference: string, limit: number) =>
    LastNotificationByReference.deliveryStreams({
      merchantId: owner.merchantId,
      sandbox: owner.sandbox,
      reference,
      limit
    }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.orDie,
      Effect.flatMap((streamIds) => Effect.forEach(streamIds, (streamId) => bodyOf(streamId, owner))),
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
