/**
 * A4 with `is_external_reference=true`: per payment, the last notification scheduled, found by the
 * merchant's external reference (`data.metadata.reference` of the notification, the terminal
 * checkout's `reference`). One row per payment, so that a reference shared by several payments gives
 * one notification each, newest first. Table `cobro_rm_last_notification_by_reference`, written by
 * the store with each `DeliveryScheduled` (`InlineReadModels`). `PgNotificationLog` reads it through
 * {@link deliveryStreams}.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Upsert from "../internal/Upsert.js"
import * as Projection from "../Projection.js"

/** The payment's row as its notification scheduled last in the log has it, under its reference `v_reference`. */
const scheduled = Upsert.latest("cobro_rm_last_notification_by_reference", "subject", [
  ["subject", "e.data->>'subject'"],
  ["merchant_id", "e.data->>'merchantId'"],
  ["sandbox", "(e.data->>'sandbox')::boolean"],
  ["reference", "v_reference #>> '{}'"],
  ["notification_id", "(e.data->>'notificationId')::uuid"],
  ["type", "e.data->>'type'"],
  ["stream_id", "e.stream_id"],
  ["created_at", "(e.data->>'createdAt')::timestamptz"]
])

/** The read model as migration 8 installs it (`InlineReadModels`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "last_notification_by_reference",
  types: ["DeliveryScheduled"],
  createTable: [
    `CREATE TABLE cobro_rm_last_notification_by_reference (
    subject text PRIMARY KEY,
    merchant_id text NOT NULL,
    sandbox boolean NOT NULL,
    reference text NOT NULL,
    notification_id uuid NOT NULL,
    type text NOT NULL,
    stream_id text NOT NULL,
    created_at timestamptz NOT NULL,
    log_transaction_id xid8 NOT NULL,
    log_position bigint NOT NULL)`,
    `CREATE INDEX cobro_rm_last_notification_by_reference_reference
    ON cobro_rm_last_notification_by_reference (merchant_id, sandbox, reference, created_at)`
  ],
  // The body is read as json (not jsonb), which checks its syntax without decoding its strings: only
  // the reference itself is decoded. A body that is not a JSON object names no reference.
  createFunction: `CREATE FUNCTION cobro_rm_last_notification_by_reference(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_body text := e.data->>'body';
    v_reference json;
  BEGIN
    IF e.type <> 'DeliveryScheduled' OR NOT starts_with(e.stream_id, 'WebhookDelivery-')
      OR v_body IS NULL OR left(ltrim(v_body), 1) <> '{' THEN RETURN; END IF;
    v_reference := v_body::json #> '{data,metadata,reference}';
    IF v_reference IS NULL OR json_typeof(v_reference) <> 'string' THEN RETURN; END IF;
    ${scheduled}
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

/**
 * The delivery streams of the last notifications of the payments whose external reference is
 * `reference`, for the merchant in that mode: one per payment, the newest first, at most `limit`.
 */
export const deliveryStreams = (options: {
  readonly merchantId: string
  readonly sandbox: boolean
  readonly reference: string
  readonly limit: number
}): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ stream_id: string }>`
      SELECT stream_id FROM cobro_rm_last_notification_by_reference
      WHERE merchant_id = ${options.merchantId} AND sandbox = ${options.sandbox} AND reference = ${options.reference}
      ORDER BY created_at DESC, subject DESC
      LIMIT ${Math.max(0, Math.floor(options.limit))}`.pipe(
      Effect.map((rows) => rows.map((row) => row.stream_id))
    )
  )
