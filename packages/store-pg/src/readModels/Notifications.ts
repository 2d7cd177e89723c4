/**
 * The list of a merchant's notifications (`Listings.notifications`): one row per `WebhookDelivery`
 * stream, with its state, whether an attempt ever got a 200, and where its delivery stands as the
 * port says it (`pending` while PENDING, `delivered` once a 200 came, `failed` when EXHAUSTED or
 * CANCELLED without one), its attempts and the last status code. Table `cobro_rm_notifications`,
 * written by the store with the delivery's events (`InlineReadModels`, migration 10, reinstalled
 * by 14); a row keeps the stream version it last applied, so a replay applies nothing twice.
 *
 * Indexes: the two keysets the list reads, `(merchant_id, created_xid, created_position)` (the log
 * position of the row's first event, `Keyset`) and with `sandbox` after the merchant for a mode;
 * `(merchant_id, delivery, …)` for "the deliveries that failed" without reading the rest;
 * `(merchant_id, subject)` for one payment's notifications.
 */
import type * as Listings from "@cobro/domain/Listings"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Keyset from "../internal/Keyset.js"
import * as Projection from "../Projection.js"
import * as WebhookDeliveries from "./WebhookDeliveries.js"

/** The read model as migration 14 installs it (`InlineReadModels.reinstall`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "notifications",
  types: WebhookDeliveries.deliveryEvents,
  createTable: [
    `CREATE TABLE cobro_rm_notifications (
    notification_id text COLLATE "C" PRIMARY KEY,
    merchant_id text COLLATE "C" NOT NULL,
    sandbox boolean NOT NULL,
    subject text NOT NULL,
    type text NOT NULL,
    status text NOT NULL,
    succeeded boolean NOT NULL,
    delivery text NOT NULL,
    attempts integer NOT NULL,
    last_status_code integer,
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_notifications_newest
    ON cobro_rm_notifications (merchant_id, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_notifications_mode_newest
    ON cobro_rm_notifications (merchant_id, sandbox, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_notifications_delivery_newest
    ON cobro_rm_notifications (merchant_id, delivery, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_notifications_subject ON cobro_rm_notifications (merchant_id, subject)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_notifications(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_row cobro_rm_notifications;
  BEGIN
    IF NOT starts_with(e.stream_id, 'WebhookDelivery-') THEN RETURN; END IF;
    IF e.type = 'DeliveryScheduled' THEN
      INSERT INTO cobro_rm_notifications (notification_id, merchant_id, sandbox, subject, type, status,
        succeeded, delivery, attempts, last_status_code, created_at, updated_at, version, created_xid, created_position)
      VALUES (e.data->>'notificationId', e.data->>'merchantId', (e.data->>'sandbox')::boolean,
        e.data->>'subject', e.data->>'type', 'PENDING', false, 'pending', 0, NULL,
        (e.data->>'createdAt')::timestamptz, (e.data->>'createdAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
      ON CONFLICT (notification_id) DO NOTHING;
      RETURN;
    END IF;
    SELECT * INTO v_row FROM cobro_rm_notifications
    WHERE notification_id = substr(e.stream_id, length('WebhookDelivery-') + 1) FOR UPDATE;
    IF NOT FOUND OR v_row.version >= e.stream_version THEN RETURN; END IF;
    CASE e.type
      WHEN 'AttemptSucceeded' THEN
        v_row.succeeded := true;
        v_row.attempts := v_row.attempts + 1;
        v_row.last_status_code := 200;
        -- An attempt in flight when the webhook was deleted is recorded; it does not reopen.
        IF v_row.status <> 'CANCELLED' THEN v_row.status := 'DELIVERED'; END IF;
      WHEN 'AttemptFailed' THEN
        v_row.attempts := v_row.attempts + 1;
        v_row.last_status_code := CASE WHEN e.data->'outcome'->>'_tag' = 'Answered'
          THEN (e.data->'outcome'->>'statusCode')::integer END;
      WHEN 'DeliveryExhausted' THEN v_row.status := 'EXHAUSTED';
      WHEN 'ResendRequested' THEN v_row.status := 'PENDING';
      WHEN 'DeliveryCancelled' THEN v_row.status := 'CANCELLED';
      ELSE RETURN;
    END CASE;
    UPDATE cobro_rm_notifications
    SET status = v_row.status, succeeded = v_row.succeeded, attempts = v_row.attempts,
      last_status_code = v_row.last_status_code,
      delivery = CASE v_row.status WHEN 'PENDING' THEN 'pending' WHEN 'DELIVERED' THEN 'delivered'
        WHEN 'EXHAUSTED' THEN 'failed' ELSE CASE WHEN v_row.succeeded THEN 'delivered' ELSE 'failed' END END,
      updated_at = (e.data->>'at')::timestamptz, version = e.stream_version
    WHERE notification_id = v_row.notification_id;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.MerchantPlaced {
  readonly notification_id: string
  readonly subject: string
  readonly type: string
  readonly delivery: Listings.DeliveryStanding
  readonly attempts: number
  readonly last_status_code: number | null
}

const toRow = (row: Row): Listings.NotificationRow => ({
  ...Keyset.merchantFields(row),
  notificationId: row.notification_id,
  subject: row.subject,
  type: row.type,
  delivery: row.delivery,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code
})

const listing = Keyset.listing({
  table: "cobro_rm_notifications",
  id: "notification_id",
  scope: Keyset.byMerchant,
  filters: (sql, filter: Listings.NotificationFilter) =>
    Keyset.equalWhereGiven(sql, {
      sandbox: Keyset.sandboxOf(filter.mode),
      delivery: filter.delivery,
      subject: filter.subject
    }),
  toRow
})

/** A page of one merchant's notifications (`Listings.notifications`). */
export const list = listing.list

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = listing.statement
