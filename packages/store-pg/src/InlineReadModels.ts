/**
 * The read models that requests read right after a write, written with their events ("inline
 * projections"): each is a PL/pgSQL function `cobro_rm_<name>(cobro_events)` that applies one event
 * to its table, called by an `AFTER INSERT` trigger on `cobro_events` in the transaction that
 * appends the event (no extra round trip: the append stays one statement), and by
 * `Projection.rebuildAll` when the read model is rebuilt from the log. One function, so the live
 * table and a rebuild cannot disagree.
 *
 * Migration `8_inline_read_models` installs them. It takes the place of the projection runners
 * that earlier versions ran for these tables: it recreates the tables and replays the whole log
 * into them in its own transaction, after the triggers exist (creating a trigger waits for the
 * appends under way and holds later ones until the migration commits, so every event is applied
 * exactly once), and deletes the runners' checkpoints. The nodes of an earlier version must be
 * stopped before: one still running would replay these tables again from the start of the log.
 *
 * Each function is idempotent where the log's order matters: `cobro_rm_webhook_deliveries` keeps
 * the stream version it last applied, and the two last-notification tables the log position
 * (`transaction_id`, `global_position`) of the notification they hold, so that a replay applies
 * nothing twice and the later event of the log wins whatever order two transactions commit in.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** A read model written with its events: its name, tables and the event types its function reads. */
export interface InlineReadModel {
  /** Its checkpoint name as a runner was `projection:<name>`; its function is `cobro_rm_<name>`. */
  readonly name: string
  readonly tables: ReadonlyArray<string>
  readonly types: ReadonlyArray<string>
}

/** The SQL function that applies one event of the log to the read model. */
export const functionName = (model: InlineReadModel): string => `cobro_rm_${model.name}`

/** C9: the refunds of a transaction. Table `cobro_rm_refunds_by_transaction`. */
export const refundsByTransaction: InlineReadModel = {
  name: "refunds_by_transaction",
  tables: ["cobro_rm_refunds_by_transaction"],
  types: ["RefundRequested"]
}

/** A3: terminal checkouts by integration id and by merchant reference. Table `cobro_rm_terminal_checkouts`. */
export const terminalCheckouts: InlineReadModel = {
  name: "terminal_checkouts",
  tables: ["cobro_rm_terminal_checkouts"],
  types: ["CheckoutCreated"]
}

/** D: per payment, the last notification scheduled. Table `cobro_rm_last_notification`. */
export const lastNotification: InlineReadModel = {
  name: "last_notification",
  tables: ["cobro_rm_last_notification"],
  types: ["DeliveryScheduled"]
}

/** A4 by external reference: per payment, its last notification. Table `cobro_rm_last_notification_by_reference`. */
export const lastNotificationByReference: InlineReadModel = {
  name: "last_notification_by_reference",
  tables: ["cobro_rm_last_notification_by_reference"],
  types: ["DeliveryScheduled"]
}

/** The dispatcher's queue: each delivery's status and next due time. Table `cobro_rm_webhook_deliveries`. */
export const webhookDeliveries: InlineReadModel = {
  name: "webhook_deliveries",
  tables: ["cobro_rm_webhook_deliveries"],
  types: [
    "DeliveryScheduled",
    "AttemptSucceeded",
    "AttemptFailed",
    "DeliveryExhausted",
    "ResendRequested",
    "DeliveryCancelled"
  ]
}

/** Authentication: every identity key issued, by its SHA-256. Table `cobro_rm_api_keys`. */
export const apiKeys: InlineReadModel = {
  name: "api_keys",
  tables: ["cobro_rm_api_keys"],
  types: ["IntegrationActivated", "KeyRotated"]
}

/** Every read model written with its events, in the order the migration installs them. */
export const all: ReadonlyArray<InlineReadModel> = [
  refundsByTransaction,
  terminalCheckouts,
  lastNotification,
  lastNotificationByReference,
  webhookDeliveries,
  apiKeys
]

/**
 * `cobro_rm_replay(name, positions)`: applies the events at `positions` to the read model `name`, in
 * the log's order; returns how many. The rebuild's path: it runs with the shadow schema first on
 * the `search_path`, so the function's unqualified tables are the shadow ones.
 */
export const replayStatement = "SELECT cobro_rm_replay($1, $2::bigint[]) AS applied"

// Frozen with migration 8: a later change to a function is a migration of its own.
const tables = [
  `CREATE TABLE cobro_rm_refunds_by_transaction (
    refund_id text PRIMARY KEY,
    transaction_id text NOT NULL,
    merchant_id text NOT NULL,
    sandbox boolean NOT NULL,
    stream_id text NOT NULL,
    requested_at timestamptz NOT NULL)`,
  `CREATE INDEX cobro_rm_refunds_by_transaction_tx
    ON cobro_rm_refunds_by_transaction (transaction_id, requested_at)`,
  `CREATE TABLE cobro_rm_terminal_checkouts (
    integration_id text PRIMARY KEY,
    transaction_id text NOT NULL,
    merchant_id text NOT NULL,
    sandbox boolean NOT NULL,
    reference text NOT NULL,
    stream_id text NOT NULL,
    created_at timestamptz NOT NULL)`,
  `CREATE INDEX cobro_rm_terminal_checkouts_reference
    ON cobro_rm_terminal_checkouts (merchant_id, sandbox, reference, created_at)`,
  `CREATE TABLE cobro_rm_last_notification (
    subject text PRIMARY KEY,
    notification_id uuid NOT NULL,
    type text NOT NULL,
    merchant_id text NOT NULL,
    stream_id text NOT NULL,
    created_at timestamptz NOT NULL,
    log_transaction_id xid8 NOT NULL,
    log_position bigint NOT NULL)`,
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
    ON cobro_rm_last_notification_by_reference (merchant_id, sandbox, reference, created_at)`,
  `CREATE TABLE cobro_rm_webhook_deliveries (
    stream_id text PRIMARY KEY,
    notification_id uuid NOT NULL,
    merchant_id text NOT NULL,
    subject text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL,
    due_at timestamptz,
    version integer NOT NULL)`,
  `CREATE INDEX cobro_rm_webhook_deliveries_due
    ON cobro_rm_webhook_deliveries (due_at) WHERE due_at IS NOT NULL`,
  `CREATE TABLE cobro_rm_api_keys (
    identity_key_hash text PRIMARY KEY,
    merchant_id text NOT NULL,
    integration text NOT NULL,
    mode text NOT NULL,
    stream_id text NOT NULL,
    issued_at timestamptz NOT NULL,
    revoked_at timestamptz)`
]

// Each function reads the event as the domain's Schema encodes it (camelCase members, instants as
// ISO strings, an absent Option as an absent member) and skips another aggregate's event of the
// same type, as the stream prefix tells.
const functions = [
  `CREATE FUNCTION cobro_rm_refunds_by_transaction(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'RefundRequested' OR NOT starts_with(e.stream_id, 'Refund-') THEN RETURN; END IF;
    INSERT INTO cobro_rm_refunds_by_transaction
      (refund_id, transaction_id, merchant_id, sandbox, stream_id, requested_at)
    VALUES (e.data->>'refundId', e.data->>'transactionId', e.data->>'merchantId', (e.data->>'sandbox')::boolean,
      e.stream_id, (e.data->>'requestedAt')::timestamptz)
    ON CONFLICT (refund_id) DO NOTHING;
  END $$`,
  `CREATE FUNCTION cobro_rm_terminal_checkouts(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'CheckoutCreated' OR NOT starts_with(e.stream_id, 'TerminalCheckout-') THEN RETURN; END IF;
    INSERT INTO cobro_rm_terminal_checkouts
      (integration_id, transaction_id, merchant_id, sandbox, reference, stream_id, created_at)
    VALUES (e.data->>'integrationId', e.data->>'transactionId', e.data->>'merchantId',
      (e.data->>'sandbox')::boolean, e.data->>'reference', e.stream_id, (e.data->>'createdAt')::timestamptz)
    ON CONFLICT (integration_id) DO NOTHING;
  END $$`,
  `CREATE FUNCTION cobro_rm_last_notification(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'DeliveryScheduled' OR NOT starts_with(e.stream_id, 'WebhookDelivery-') THEN RETURN; END IF;
    INSERT INTO cobro_rm_last_notification AS t
      (subject, notification_id, type, merchant_id, stream_id, created_at, log_transaction_id, log_position)
    VALUES (e.data->>'subject', (e.data->>'notificationId')::uuid, e.data->>'type', e.data->>'merchantId',
      e.stream_id, (e.data->>'createdAt')::timestamptz, e.transaction_id, e.global_position)
    ON CONFLICT (subject) DO UPDATE SET notification_id = EXCLUDED.notification_id, type = EXCLUDED.type,
      merchant_id = EXCLUDED.merchant_id, stream_id = EXCLUDED.stream_id, created_at = EXCLUDED.created_at,
      log_transaction_id = EXCLUDED.log_transaction_id, log_position = EXCLUDED.log_position
    WHERE (t.log_transaction_id, t.log_position) < (EXCLUDED.log_transaction_id, EXCLUDED.log_position);
  END $$`,
  // The body is read as json (not jsonb), which checks its syntax without decoding its strings: only
  // the reference itself is decoded. A body that is not a JSON object names no reference.
  `CREATE FUNCTION cobro_rm_last_notification_by_reference(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_body text := e.data->>'body';
    v_reference json;
  BEGIN
    IF e.type <> 'DeliveryScheduled' OR NOT starts_with(e.stream_id, 'WebhookDelivery-')
      OR v_body IS NULL OR left(ltrim(v_body), 1) <> '{' THEN RETURN; END IF;
    v_reference := v_body::json #> '{data,metadata,reference}';
    IF v_reference IS NULL OR json_typeof(v_reference) <> 'string' THEN RETURN; END IF;
    INSERT INTO cobro_rm_last_notification_by_reference AS t
      (subject, merchant_id, sandbox, reference, notification_id, type, stream_id, created_at,
       log_transaction_id, log_position)
    VALUES (e.data->>'subject', e.data->>'merchantId', (e.data->>'sandbox')::boolean, v_reference #>> '{}',
      (e.data->>'notificationId')::uuid, e.data->>'type', e.stream_id, (e.data->>'createdAt')::timestamptz,
      e.transaction_id, e.global_position)
    ON CONFLICT (subject) DO UPDATE SET merchant_id = EXCLUDED.merchant_id, sandbox = EXCLUDED.sandbox,
      reference = EXCLUDED.reference, notification_id = EXCLUDED.notification_id, type = EXCLUDED.type,
      stream_id = EXCLUDED.stream_id, created_at = EXCLUDED.created_at,
      log_transaction_id = EXCLUDED.log_transaction_id, log_position = EXCLUDED.log_position
    WHERE (t.log_transaction_id, t.log_position) < (EXCLUDED.log_transaction_id, EXCLUDED.log_position);
  END $$`,
  `CREATE FUNCTION cobro_rm_webhook_deliveries(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_status text;
    v_due timestamptz;
    v_attempted integer := 0;
  BEGIN
    IF NOT starts_with(e.stream_id, 'WebhookDelivery-') THEN RETURN; END IF;
    CASE e.type
      WHEN 'DeliveryScheduled' THEN
        INSERT INTO cobro_rm_webhook_deliveries
          (stream_id, notification_id, merchant_id, subject, status, attempts, due_at, version)
        VALUES (e.stream_id, (e.data->>'notificationId')::uuid, e.data->>'merchantId', e.data->>'subject',
          'PENDING', 0, (e.data->>'dueAt')::timestamptz, e.stream_version)
        ON CONFLICT (stream_id) DO NOTHING;
        RETURN;
      WHEN 'AttemptSucceeded' THEN v_status := 'DELIVERED'; v_attempted := 1;
      WHEN 'AttemptFailed' THEN
        v_status := 'PENDING'; v_due := (e.data->>'nextDueAt')::timestamptz; v_attempted := 1;
      WHEN 'DeliveryExhausted' THEN v_status := 'EXHAUSTED';
      WHEN 'ResendRequested' THEN v_status := 'PENDING'; v_due := (e.data->>'at')::timestamptz;
      WHEN 'DeliveryCancelled' THEN v_status := 'CANCELLED';
      ELSE RETURN;
    END CASE;
    UPDATE cobro_rm_webhook_deliveries
    SET status = v_status, due_at = v_due, attempts = attempts + v_attempted, version = e.stream_version
    WHERE stream_id = e.stream_id AND version < e.stream_version;
  END $$`,
  // A hash issued a second time (two merchants, or a revoked key issued again) is marked revoked:
  // such a key authenticates no one.
  `CREATE FUNCTION cobro_rm_api_keys(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_merchant text := substr(e.stream_id, length('Merchant-') + 1);
    v_at timestamptz := (e.data->>'at')::timestamptz;
  BEGIN
    IF NOT starts_with(e.stream_id, 'Merchant-') THEN RETURN; END IF;
    CASE e.type
      WHEN 'IntegrationActivated' THEN
        INSERT INTO cobro_rm_api_keys AS k
          (identity_key_hash, merchant_id, integration, mode, stream_id, issued_at, revoked_at)
        VALUES (e.data->'production'->>'identityKeyHash', v_merchant, e.data->>'integration', 'production',
            e.stream_id, v_at, NULL),
          (e.data->'test'->>'identityKeyHash', v_merchant, e.data->>'integration', 'test', e.stream_id, v_at, NULL)
        ON CONFLICT (identity_key_hash) DO UPDATE SET revoked_at = coalesce(k.revoked_at, EXCLUDED.issued_at);
      WHEN 'KeyRotated' THEN
        UPDATE cobro_rm_api_keys SET revoked_at = coalesce(revoked_at, v_at)
        WHERE identity_key_hash = e.data->>'revokedIdentityKeyHash';
        INSERT INTO cobro_rm_api_keys AS k
          (identity_key_hash, merchant_id, integration, mode, stream_id, issued_at, revoked_at)
        VALUES (e.data->'keyPair'->>'identityKeyHash', v_merchant, e.data->>'integration', e.data->>'mode',
          e.stream_id, v_at, NULL)
        ON CONFLICT (identity_key_hash) DO UPDATE SET revoked_at = coalesce(k.revoked_at, EXCLUDED.issued_at);
      ELSE RETURN;
    END CASE;
  END $$`,
  `CREATE FUNCTION cobro_rm_replay(p_name text, p_positions bigint[]) RETURNS integer LANGUAGE plpgsql AS $$
  DECLARE
    v_event cobro_events;
    v_applied integer := 0;
  BEGIN
    FOR v_event IN SELECT * FROM cobro_events WHERE global_position = ANY(p_positions)
      ORDER BY transaction_id, global_position LOOP
      EXECUTE format('SELECT %I($1)', 'cobro_rm_' || p_name) USING v_event;
      v_applied := v_applied + 1;
    END LOOP;
    RETURN v_applied;
  END $$`
]

const quoted = (types: ReadonlyArray<string>) => types.map((type) => `'${type}'`).join(", ")

/** The trigger of one read model: its function, for the event types it reads, as each event is appended. */
const triggers = (model: InlineReadModel) => [
  `CREATE FUNCTION ${functionName(model)}_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ${functionName(model)}(NEW);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER ${functionName(model)} AFTER INSERT ON cobro_events FOR EACH ROW
    WHEN (NEW.type IN (${quoted(model.types)})) EXECUTE FUNCTION ${functionName(model)}_trigger()`
]

/** Migration `8_inline_read_models`: see the module's comment. */
export const migration: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const model of all) {
    for (const table of model.tables) yield* sql`DROP TABLE IF EXISTS ${sql(table)} CASCADE`
  }
  for (const statement of [...tables, ...functions, ...all.flatMap(triggers)]) yield* sql.unsafe(statement)
  // Every event committed before the triggers, replayed in the log's order.
  for (const model of all) {
    yield* sql.unsafe(
      `SELECT ${functionName(model)}(e) FROM (SELECT e FROM cobro_events e
        WHERE type IN (${quoted(model.types)}) ORDER BY transaction_id, global_position OFFSET 0) AS log(e)`
    )
    yield* sql`DELETE FROM cobro_checkpoints WHERE name = ${`projection:${model.name}`}`
  }
})
