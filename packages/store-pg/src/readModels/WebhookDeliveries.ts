/**
 * The webhook dispatcher's queue: each delivery's status and when its next attempt is due (none once
 * delivered, exhausted or cancelled), with the stream version it last applied. Table
 * `cobro_rm_webhook_deliveries`, written by the store with the delivery streams' events
 * (`InlineReadModels`). `PgDeliveryQueue` reads it: its claim takes the due rows and leases them in
 * one statement, and a lease lives while the stream stays at the version it claimed. `traceparent`
 * is the W3C trace context of the span that scheduled the delivery (or asked for its resend), as the
 * append set it (`cobro.traceparent`, migration 18): trace metadata, not in the events, so a rebuild
 * leaves it NULL.
 */
import type * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Projection from "../Projection.js"
import { currentTraceparentSql as currentTraceparent } from "../TraceContext.js"

/**
 * Every event of a `WebhookDelivery` stream: this queue and the list of notifications
 * (`Notifications`) each apply them all.
 */
export const deliveryEvents: ReadonlyArray<WebhookDelivery.Event["_tag"]> = [
  "DeliveryScheduled",
  "AttemptSucceeded",
  "AttemptFailed",
  "DeliveryExhausted",
  "ResendRequested",
  "DeliveryCancelled"
]

/**
 * The read model as migration 8 installs it (`InlineReadModels`); migration 18 adds `traceparent`
 * to the table of an earlier version and replaces its function.
 */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "webhook_deliveries",
  types: deliveryEvents,
  createTable: [
    `CREATE TABLE cobro_rm_webhook_deliveries (
    stream_id text PRIMARY KEY,
    notification_id uuid NOT NULL,
    merchant_id text NOT NULL,
    subject text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL,
    due_at timestamptz,
    version integer NOT NULL,
    traceparent text)`,
    `CREATE INDEX cobro_rm_webhook_deliveries_due
    ON cobro_rm_webhook_deliveries (due_at) WHERE due_at IS NOT NULL`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_webhook_deliveries(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_status text;
    v_due timestamptz;
    v_attempted integer := 0;
    v_traceparent text;
  BEGIN
    IF NOT starts_with(e.stream_id, 'WebhookDelivery-') THEN RETURN; END IF;
    CASE e.type
      WHEN 'DeliveryScheduled' THEN
        INSERT INTO cobro_rm_webhook_deliveries
          (stream_id, notification_id, merchant_id, subject, status, attempts, due_at, version, traceparent)
        VALUES (e.stream_id, (e.data->>'notificationId')::uuid, e.data->>'merchantId', e.data->>'subject',
          'PENDING', 0, (e.data->>'dueAt')::timestamptz, e.stream_version, ${currentTraceparent})
        ON CONFLICT (stream_id) DO NOTHING;
        RETURN;
      WHEN 'AttemptSucceeded' THEN v_status := 'DELIVERED'; v_attempted := 1;
      WHEN 'AttemptFailed' THEN
        v_status := 'PENDING'; v_due := (e.data->>'nextDueAt')::timestamptz; v_attempted := 1;
      WHEN 'DeliveryExhausted' THEN v_status := 'EXHAUSTED';
      WHEN 'ResendRequested' THEN
        -- The resend's request is what causes the attempts from now on.
        v_status := 'PENDING'; v_due := (e.data->>'at')::timestamptz; v_traceparent := ${currentTraceparent};
      WHEN 'DeliveryCancelled' THEN v_status := 'CANCELLED';
      ELSE RETURN;
    END CASE;
    UPDATE cobro_rm_webhook_deliveries
    SET status = v_status, due_at = v_due, attempts = attempts + v_attempted, version = e.stream_version,
      traceparent = coalesce(v_traceparent, traceparent)
    WHERE stream_id = e.stream_id AND version < e.stream_version;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)
