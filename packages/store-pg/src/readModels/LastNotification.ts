/**
 * D and A4: per payment (the notification's subject), the last notification scheduled, with the
 * delivery stream whose first event holds its exact body. Table `cobro_rm_last_notification`, written
 * by the store with each `DeliveryScheduled` (`InlineReadModels`); of two notifications of a payment,
 * the later one in the log wins, whatever order their transactions commit in. `PgNotificationLog`
 * reads it through {@link deliveryStreamOf}.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Upsert from "../internal/Upsert.js"
import * as Projection from "../Projection.js"

/** The payment's row as its notification scheduled last in the log has it. */
const scheduled = Upsert.latest("cobro_rm_last_notification", "subject", [
  ["subject", "e.data->>'subject'"],
  ["notification_id", "(e.data->>'notificationId')::uuid"],
  ["type", "e.data->>'type'"],
  ["merchant_id", "e.data->>'merchantId'"],
  ["stream_id", "e.stream_id"],
  ["created_at", "(e.data->>'createdAt')::timestamptz"]
])

/** The read model as migration 8 installs it (`InlineReadModels`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "last_notification",
  types: ["DeliveryScheduled"],
  createTable: [
    `CREATE TABLE cobro_rm_last_notification (
    subject text PRIMARY KEY,
    notification_id uuid NOT NULL,
    type text NOT NULL,
    merchant_id text NOT NULL,
    stream_id text NOT NULL,
    created_at timestamptz NOT NULL,
    log_transaction_id xid8 NOT NULL,
    log_position bigint NOT NULL)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_last_notification(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'DeliveryScheduled' OR NOT starts_with(e.stream_id, 'WebhookDelivery-') THEN RETURN; END IF;
    ${scheduled}
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

/** The delivery stream of the last notification scheduled about `paymentId` for `merchantId`, if any. */
export const deliveryStreamOf = (
  merchantId: string,
  paymentId: string
): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ stream_id: string }>`
      SELECT stream_id FROM cobro_rm_last_notification
      WHERE subject = ${paymentId} AND merchant_id = ${merchantId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.stream_id))
    )
  )
