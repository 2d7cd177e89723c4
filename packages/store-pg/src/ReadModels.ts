/**
 * The spec's lookups that no stream id answers, as projections of the log: refunds by transaction
 * id (C9), terminal checkouts by merchant reference (A3), the last notification per payment (D,
 * A4) and per external reference (A4), webhook deliveries due by time (the dispatcher's queue),
 * API keys by identity-key hash (Authentication), the links that can expire by their expiry
 * instant (the link expiry sweeper), and the payments in flight by their start (the payment timeout
 * sweeper).
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import type * as EventStore from "@cobro/domain/EventStore"
import { PaymentLinkId, TransactionId } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as Nanos from "@cobro/domain/Nanos"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as Refund from "@cobro/domain/Refund"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Projection from "./Projection.js"

/**
 * Decodes the events of one aggregate's streams; other streams' events, and events this build
 * cannot decode (a newer schema), are skipped.
 */
const eventsOf = <E, I>(aggregate: { readonly name: string; readonly Event: Schema.Schema<E, I> }) => {
  const prefix = Aggregate.streamId(aggregate, "")
  const decode = Schema.decodeUnknownOption(aggregate.Event)
  return (event: EventStore.LoggedEvent): Option.Option<E> =>
    event.streamId.startsWith(prefix) ? decode(event.data) : Option.none()
}

/**
 * The `apply` (and `types`) of a projection that writes on one event type of one aggregate. Other types are
 * skipped before any decoding (most of the log is not what a read model wants), as are other
 * aggregates' events and events this build cannot decode.
 */
const onEvent = <E extends { readonly _tag: string }, I, const Tag extends E["_tag"]>(
  aggregate: { readonly name: string; readonly Event: Schema.Schema<E, I> },
  tag: Tag,
  write: (
    decoded: Extract<E, { readonly _tag: Tag }>,
    event: EventStore.LoggedEvent,
    sql: SqlClient.SqlClient
  ) => Effect.Effect<unknown, SqlError> | undefined
) => {
  const decode = eventsOf(aggregate)
  const apply = (event: EventStore.LoggedEvent): Effect.Effect<void, SqlError, SqlClient.SqlClient> => {
    if (event.type !== tag) return Effect.void
    const decoded = decode(event)
    if (Option.isNone(decoded) || decoded.value._tag !== tag) return Effect.void
    return Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.asVoid(write(decoded.value as Extract<E, { readonly _tag: Tag }>, event, sql) ?? Effect.void)
    )
  }
  return { apply, types: new Set<string>([tag]) }
}

const iso = (instant: DateTime.Utc) => DateTime.formatIso(instant)

const ddl = (statements: (sql: SqlClient.SqlClient) => ReadonlyArray<Effect.Effect<unknown, SqlError>>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.all(statements(sql), { discard: true }))

/** C9: the refunds of a transaction, newest last. Table `cobro_rm_refunds_by_transaction`. */
export const refundsByTransaction = Projection.make({
  name: "refunds_by_transaction",
  tables: ["cobro_rm_refunds_by_transaction"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_refunds_by_transaction (
      refund_id text PRIMARY KEY,
      transaction_id text NOT NULL,
      merchant_id text NOT NULL,
      sandbox boolean NOT NULL,
      stream_id text NOT NULL,
      requested_at timestamptz NOT NULL)`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_refunds_by_transaction_tx
      ON cobro_rm_refunds_by_transaction (transaction_id, requested_at)`
  ]),
  ...onEvent(
    Refund.Refund,
    "RefundRequested",
    (decoded, event, sql) =>
      sql`INSERT INTO cobro_rm_refunds_by_transaction
                    (refund_id, transaction_id, merchant_id, sandbox, stream_id, requested_at)
                  VALUES (${decoded.refundId}, ${decoded.transactionId}, ${decoded.merchantId}, ${decoded.sandbox},
                    ${event.streamId}, ${iso(decoded.requestedAt)})
                  ON CONFLICT (refund_id) DO NOTHING`
  )
})

/** A3: terminal checkouts by integration id and by merchant reference. Table `cobro_rm_terminal_checkouts`. */
export const terminalCheckouts = Projection.make({
  name: "terminal_checkouts",
  tables: ["cobro_rm_terminal_checkouts"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_terminal_checkouts (
      integration_id text PRIMARY KEY,
      transaction_id text NOT NULL,
      merchant_id text NOT NULL,
      sandbox boolean NOT NULL,
      reference text NOT NULL,
      stream_id text NOT NULL,
      created_at timestamptz NOT NULL)`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_terminal_checkouts_reference
      ON cobro_rm_terminal_checkouts (merchant_id, sandbox, reference, created_at)`
  ]),
  ...onEvent(
    TerminalCheckout.TerminalCheckout,
    "CheckoutCreated",
    (decoded, event, sql) =>
      sql`INSERT INTO cobro_rm_terminal_checkouts
                    (integration_id, transaction_id, merchant_id, sandbox, reference, stream_id, created_at)
                  VALUES (${decoded.integrationId}, ${decoded.transactionId}, ${decoded.merchantId},
                    ${decoded.sandbox}, ${decoded.reference}, ${event.streamId}, ${iso(decoded.createdAt)})
                  ON CONFLICT (integration_id) DO NOTHING`
  )
})

const deliveryEvent = eventsOf(WebhookDelivery.WebhookDelivery)

/**
 * D: per payment (the notification's subject), the last notification scheduled. Table
 * `cobro_rm_last_notification`.
 */
export const lastNotification = Projection.make({
  name: "last_notification",
  tables: ["cobro_rm_last_notification"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_last_notification (
      subject text PRIMARY KEY,
      notification_id uuid NOT NULL,
      type text NOT NULL,
      merchant_id text NOT NULL,
      stream_id text NOT NULL,
      created_at timestamptz NOT NULL)`
  ]),
  ...onEvent(
    WebhookDelivery.WebhookDelivery,
    "DeliveryScheduled",
    (decoded, event, sql) =>
      // Commit order is the order of the log: the later event wins.
      sql`INSERT INTO cobro_rm_last_notification
                    (subject, notification_id, type, merchant_id, stream_id, created_at)
                  VALUES (${decoded.subject}, ${decoded.notificationId}, ${decoded.type}, ${decoded.merchantId},
                    ${event.streamId}, ${iso(decoded.createdAt)})
                  ON CONFLICT (subject) DO UPDATE SET notification_id = EXCLUDED.notification_id,
                    type = EXCLUDED.type, merchant_id = EXCLUDED.merchant_id, stream_id = EXCLUDED.stream_id,
                    created_at = EXCLUDED.created_at`
  ),
  // A batch's notifications in one statement: per subject the last one of the batch, which the
  // per-event upserts would have left.
  applyBatch: (events) => {
    const rows = lastPerSubject(scheduledIn(events))
    if (rows.length === 0) return Effect.void
    return Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`INSERT INTO cobro_rm_last_notification
            (subject, notification_id, type, merchant_id, stream_id, created_at)
          SELECT * FROM unnest(${rows.map((r) => r.decoded.subject)}::text[],
            ${rows.map((r) => r.decoded.notificationId)}::uuid[], ${rows.map((r) => r.decoded.type)}::text[],
            ${rows.map((r) => r.decoded.merchantId)}::text[], ${rows.map((r) => r.event.streamId)}::text[],
            ${rows.map((r) => iso(r.decoded.createdAt))}::timestamptz[])
          ON CONFLICT (subject) DO UPDATE SET notification_id = EXCLUDED.notification_id,
            type = EXCLUDED.type, merchant_id = EXCLUDED.merchant_id, stream_id = EXCLUDED.stream_id,
            created_at = EXCLUDED.created_at`
    ).pipe(Effect.asVoid)
  }
})

/** A batch's `DeliveryScheduled` events, decoded, in log order. */
const scheduledIn = (events: ReadonlyArray<EventStore.LoggedEvent>) => {
  const found: Array<{
    readonly decoded: WebhookDelivery.DeliveryScheduled
    readonly event: EventStore.LoggedEvent
  }> = []
  for (const event of events) {
    if (event.type !== "DeliveryScheduled") continue
    const decoded = deliveryEvent(event)
    if (Option.isSome(decoded) && decoded.value._tag === "DeliveryScheduled") {
      found.push({ decoded: decoded.value, event })
    }
  }
  return found
}

/** Of several rows per subject, the last (an upsert statement may touch each row once). */
const lastPerSubject = <A extends { readonly decoded: { readonly subject: string } }>(
  rows: ReadonlyArray<A>
): ReadonlyArray<A> => [...new Map(rows.map((row) => [row.decoded.subject, row])).values()]

/** `data.metadata.reference` of a notification body (the merchant's external reference), if any. */
const externalReference = (body: string): string | undefined => {
  try {
    // Only a string member is read: the body's nanosecond `time` losing precision here is harmless.
    const reference = JSON.parse(body)?.data?.metadata?.reference
    return typeof reference === "string" ? reference : undefined
  } catch {
    return undefined
  }
}

/**
 * A4 with `is_external_reference=true`: per payment, the last notification scheduled, found by the
 * merchant's external reference (`data.metadata.reference` of the notification, the terminal
 * checkout's `reference`). One row per payment, so that a reference shared by several payments
 * gives one notification each, newest first. Table `cobro_rm_last_notification_by_reference`.
 */
export const lastNotificationByReference = Projection.make({
  name: "last_notification_by_reference",
  tables: ["cobro_rm_last_notification_by_reference"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_last_notification_by_reference (
      subject text PRIMARY KEY,
      merchant_id text NOT NULL,
      sandbox boolean NOT NULL,
      reference text NOT NULL,
      notification_id uuid NOT NULL,
      type text NOT NULL,
      stream_id text NOT NULL,
      created_at timestamptz NOT NULL)`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_last_notification_by_reference_reference
      ON cobro_rm_last_notification_by_reference (merchant_id, sandbox, reference, created_at)`
  ]),
  ...onEvent(WebhookDelivery.WebhookDelivery, "DeliveryScheduled", (decoded, event, sql) => {
    const reference = externalReference(decoded.body)
    return reference === undefined
      ? undefined
      : // Commit order is the order of the log: the later event wins.
        sql`INSERT INTO cobro_rm_last_notification_by_reference
                (subject, merchant_id, sandbox, reference, notification_id, type, stream_id, created_at)
              VALUES (${decoded.subject}, ${decoded.merchantId}, ${decoded.sandbox}, ${reference},
                ${decoded.notificationId}, ${decoded.type}, ${event.streamId}, ${iso(decoded.createdAt)})
              ON CONFLICT (subject) DO UPDATE SET merchant_id = EXCLUDED.merchant_id,
                sandbox = EXCLUDED.sandbox, reference = EXCLUDED.reference,
                notification_id = EXCLUDED.notification_id, type = EXCLUDED.type,
                stream_id = EXCLUDED.stream_id, created_at = EXCLUDED.created_at`
  }),
  // As `lastNotification`'s: the last notification per subject of the batch, in one statement.
  applyBatch: (events) => {
    const rows = lastPerSubject(
      scheduledIn(events).flatMap((row) => {
        const reference = externalReference(row.decoded.body)
        return reference === undefined ? [] : [{ ...row, reference }]
      })
    )
    if (rows.length === 0) return Effect.void
    return Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`INSERT INTO cobro_rm_last_notification_by_reference
            (subject, merchant_id, sandbox, reference, notification_id, type, stream_id, created_at)
          SELECT * FROM unnest(${rows.map((r) => r.decoded.subject)}::text[],
            ${rows.map((r) => r.decoded.merchantId)}::text[], ${rows.map((r) => r.decoded.sandbox)}::boolean[],
            ${rows.map((r) => r.reference)}::text[], ${rows.map((r) => r.decoded.notificationId)}::uuid[],
            ${rows.map((r) => r.decoded.type)}::text[], ${rows.map((r) => r.event.streamId)}::text[],
            ${rows.map((r) => iso(r.decoded.createdAt))}::timestamptz[])
          ON CONFLICT (subject) DO UPDATE SET merchant_id = EXCLUDED.merchant_id,
            sandbox = EXCLUDED.sandbox, reference = EXCLUDED.reference,
            notification_id = EXCLUDED.notification_id, type = EXCLUDED.type,
            stream_id = EXCLUDED.stream_id, created_at = EXCLUDED.created_at`
    ).pipe(Effect.asVoid)
  }
})

/** Every WebhookDelivery event type: each changes its delivery's row. */
export const DELIVERY_EVENTS: ReadonlySet<string> = new Set<WebhookDelivery.Event["_tag"]>([
  "DeliveryScheduled",
  "AttemptSucceeded",
  "AttemptFailed",
  "DeliveryExhausted",
  "ResendRequested",
  "DeliveryCancelled"
])

/**
 * The webhook dispatcher's queue: each delivery's status and when its next attempt is due (none
 * once delivered, exhausted or cancelled). Table `cobro_rm_webhook_deliveries`.
 */
export const webhookDeliveries = Projection.make({
  name: "webhook_deliveries",
  tables: ["cobro_rm_webhook_deliveries"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_webhook_deliveries (
      stream_id text PRIMARY KEY,
      notification_id uuid NOT NULL,
      merchant_id text NOT NULL,
      subject text NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL,
      due_at timestamptz)`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_webhook_deliveries_due
      ON cobro_rm_webhook_deliveries (due_at) WHERE due_at IS NOT NULL`
  ]),
  types: DELIVERY_EVENTS,
  apply: (event) =>
    Option.match(deliveryChange(event), {
      onNone: () => Effect.void,
      onSome: (change) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          change._tag === "Insert"
            ? sql`INSERT INTO cobro_rm_webhook_deliveries
                    (stream_id, notification_id, merchant_id, subject, status, attempts, due_at)
                  VALUES (${event.streamId}, ${change.scheduled.notificationId}, ${change.scheduled.merchantId},
                    ${change.scheduled.subject}, 'PENDING', 0, ${iso(change.scheduled.dueAt)})
                  ON CONFLICT (stream_id) DO NOTHING`
            : sql`UPDATE cobro_rm_webhook_deliveries
                SET status = ${change.status}, due_at = ${change.dueAt}::timestamptz,
                    attempts = attempts + ${change.attempted}
                WHERE stream_id = ${event.streamId}`
        ).pipe(Effect.asVoid)
    }),
  // A batch in two statements that leave what the per-event statements would: first the inserts
  // (a stream's `DeliveryScheduled` is its first event, so it precedes the stream's updates), then
  // per stream one update that sums the attempts and keeps the last status and due time.
  applyBatch: (events) => {
    const inserts = new Map<string, WebhookDelivery.DeliveryScheduled>()
    const updates = new Map<string, { status: string; dueAt: string | null; attempted: number }>()
    for (const event of events) {
      const change = deliveryChange(event)
      if (Option.isNone(change)) continue
      const value = change.value
      if (value._tag === "Insert") {
        // ON CONFLICT DO NOTHING: the first one stands.
        if (!inserts.has(event.streamId)) inserts.set(event.streamId, value.scheduled)
        continue
      }
      const before = updates.get(event.streamId)
      updates.set(event.streamId, {
        status: value.status,
        dueAt: value.dueAt,
        attempted: (before?.attempted ?? 0) + value.attempted
      })
    }
    return Effect.flatMap(SqlClient.SqlClient, (sql) => {
      const insert = [...inserts]
      const update = [...updates]
      return Effect.zipRight(
        insert.length === 0
          ? Effect.void
          : sql`INSERT INTO cobro_rm_webhook_deliveries
                (stream_id, notification_id, merchant_id, subject, status, attempts, due_at)
              SELECT stream_id, notification_id, merchant_id, subject, 'PENDING', 0, due_at
              FROM unnest(${insert.map(([id]) => id)}::text[], ${insert.map(([, d]) => d.notificationId)}::uuid[],
                ${insert.map(([, d]) => d.merchantId)}::text[], ${insert.map(([, d]) => d.subject)}::text[],
                ${insert.map(([, d]) => iso(d.dueAt))}::timestamptz[])
                AS i(stream_id, notification_id, merchant_id, subject, due_at)
              ON CONFLICT (stream_id) DO NOTHING`,
        update.length === 0
          ? Effect.void
          : sql`UPDATE cobro_rm_webhook_deliveries d
              SET status = u.status, due_at = u.due_at, attempts = d.attempts + u.attempted
              FROM unnest(${update.map(([id]) => id)}::text[], ${update.map(([, u]) => u.status)}::text[],
                ${update.map(([, u]) => u.dueAt)}::timestamptz[], ${update.map(([, u]) => u.attempted)}::integer[])
                AS u(stream_id, status, due_at, attempted)
              WHERE d.stream_id = u.stream_id`
      )
    }).pipe(Effect.asVoid)
  }
})

/** What one WebhookDelivery event does to its row of `cobro_rm_webhook_deliveries`. */
type DeliveryChange =
  | { readonly _tag: "Insert"; readonly scheduled: WebhookDelivery.DeliveryScheduled }
  | {
      readonly _tag: "Update"
      readonly status: WebhookDelivery.Status
      /** ISO instant, or null: not due. */
      readonly dueAt: string | null
      /** Attempts it adds: 1 for an attempt, else 0. */
      readonly attempted: number
    }

const deliveryChange = (event: EventStore.LoggedEvent): Option.Option<DeliveryChange> =>
  !DELIVERY_EVENTS.has(event.type)
    ? Option.none()
    : Option.map(deliveryEvent(event), (decoded): DeliveryChange => {
        const update = (
          status: WebhookDelivery.Status,
          dueAt: Option.Option<DateTime.Utc>,
          attempted: boolean
        ) =>
          ({
            _tag: "Update",
            status,
            dueAt: Option.getOrNull(Option.map(dueAt, iso)),
            attempted: attempted ? 1 : 0
          }) as const
        switch (decoded._tag) {
          case "DeliveryScheduled":
            return { _tag: "Insert", scheduled: decoded }
          case "AttemptSucceeded":
            return update("DELIVERED", Option.none(), true)
          case "AttemptFailed":
            return update("PENDING", decoded.nextDueAt, true)
          case "DeliveryExhausted":
            return update("EXHAUSTED", Option.none(), false)
          case "ResendRequested":
            return update("PENDING", Option.some(decoded.at), false)
          case "DeliveryCancelled":
            return update("CANCELLED", Option.none(), false)
        }
      })

const merchantStreamPrefix = Aggregate.streamId(Merchant.Merchant, "")
const merchantEvent = eventsOf(Merchant.Merchant)

/** The Merchant events that issue or revoke identity keys. */
const API_KEY_EVENTS: ReadonlySet<string> = new Set<Merchant.Event["_tag"]>([
  "IntegrationActivated",
  "KeyRotated"
])

/**
 * Authentication: every identity key ever issued, by its SHA-256, with the merchant, integration
 * and mode it grants; `revoked_at` is set when `KeyRotated` revokes it. A hash issued a second time
 * (two merchants, or a revoked key issued again) is marked revoked too: such a key authenticates no
 * one. Table `cobro_rm_api_keys`. `PgMerchantDirectory` reads it, and the log where it lags.
 */
export const apiKeys = Projection.make({
  name: "api_keys",
  tables: ["cobro_rm_api_keys"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_api_keys (
      identity_key_hash text PRIMARY KEY,
      merchant_id text NOT NULL,
      integration text NOT NULL,
      mode text NOT NULL,
      stream_id text NOT NULL,
      issued_at timestamptz NOT NULL,
      revoked_at timestamptz)`
  ]),
  types: API_KEY_EVENTS,
  apply: (event) => {
    if (!API_KEY_EVENTS.has(event.type)) return Effect.void
    return Option.match(merchantEvent(event), {
      onNone: () => Effect.void,
      onSome: (decoded) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => {
          const merchantId = event.streamId.slice(merchantStreamPrefix.length)
          const issue = (pair: Merchant.KeyPair, integration: string, mode: string, at: DateTime.Utc) =>
            sql`INSERT INTO cobro_rm_api_keys
                  (identity_key_hash, merchant_id, integration, mode, stream_id, issued_at, revoked_at)
                VALUES (${pair.identityKeyHash}, ${merchantId}, ${integration}, ${mode}, ${event.streamId},
                  ${iso(at)}, NULL)
                ON CONFLICT (identity_key_hash) DO UPDATE
                  SET revoked_at = coalesce(cobro_rm_api_keys.revoked_at, EXCLUDED.issued_at)`
          switch (decoded._tag) {
            case "IntegrationActivated":
              return Effect.zipRight(
                issue(decoded.production, decoded.integration, "production", decoded.at),
                issue(decoded.test, decoded.integration, "test", decoded.at)
              )
            case "KeyRotated":
              return Effect.zipRight(
                sql`UPDATE cobro_rm_api_keys SET revoked_at = coalesce(revoked_at, ${iso(decoded.at)}::timestamptz)
                    WHERE identity_key_hash = ${decoded.revokedIdentityKeyHash}`,
                issue(decoded.keyPair, decoded.integration, decoded.mode, decoded.at)
              )
            default:
              return Effect.void
          }
        }).pipe(Effect.asVoid)
    })
  }
})

const linkEvent = eventsOf(PaymentLink.PaymentLink)

/** The events that move a link with an expiration date in or out of the sweeper's sight. */
const LINK_EXPIRY_EVENTS: ReadonlySet<string> = new Set<PaymentLink.Event["_tag"]>([
  "LinkCreated",
  "LinkPaymentStarted",
  "LinkPaymentFailed",
  "LinkPaid",
  "LinkRejected",
  "LinkCancelled",
  "LinkExpired"
])

/**
 * B, the link expiry sweeper: every link with an `expiration_date` that may still expire, by its
 * expiry instant in exact nanoseconds. A link is `ACTIVE` (it can expire now) or `PROCESSING` (a
 * payment is under way: it expires only if that payment fails first, as `LinkRejected`, or goes
 * back to ACTIVE); it leaves the table once PAID, REJECTED, CANCELLED or EXPIRED. Links without an
 * expiration date never appear. Table `cobro_rm_link_expiry`; {@link dueLinks} reads it.
 */
export const linkExpiry = Projection.make({
  name: "link_expiry",
  tables: ["cobro_rm_link_expiry"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_link_expiry (
      stream_id text PRIMARY KEY,
      link_id text NOT NULL,
      merchant_id text NOT NULL,
      sandbox boolean NOT NULL,
      status text NOT NULL,
      expires_at numeric(30, 0) NOT NULL)`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_link_expiry_due
      ON cobro_rm_link_expiry (expires_at) WHERE status = 'ACTIVE'`
  ]),
  types: LINK_EXPIRY_EVENTS,
  apply: (event) => {
    if (!LINK_EXPIRY_EVENTS.has(event.type)) return Effect.void
    return Option.match(linkEvent(event), {
      onNone: () => Effect.void,
      onSome: (decoded) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => {
          const setStatus = (status: "ACTIVE" | "PROCESSING") =>
            sql`UPDATE cobro_rm_link_expiry SET status = ${status} WHERE stream_id = ${event.streamId}`
          switch (decoded._tag) {
            case "LinkCreated":
              return Option.match(decoded.expiresAt, {
                onNone: () => Effect.void,
                onSome: (expiresAt) =>
                  sql`INSERT INTO cobro_rm_link_expiry
                        (stream_id, link_id, merchant_id, sandbox, status, expires_at)
                      VALUES (${event.streamId}, ${decoded.linkId}, ${decoded.merchantId}, ${decoded.sandbox},
                        'ACTIVE', ${expiresAt.toString()}::numeric)
                      ON CONFLICT (stream_id) DO NOTHING`
              })
            case "LinkPaymentStarted":
              return setStatus("PROCESSING")
            case "LinkPaymentFailed":
              return setStatus("ACTIVE")
            case "LinkPaid":
            case "LinkRejected":
            case "LinkCancelled":
            case "LinkExpired":
              return sql`DELETE FROM cobro_rm_link_expiry WHERE stream_id = ${event.streamId}`
          }
        }).pipe(Effect.asVoid)
    })
  }
})

/**
 * The ACTIVE links whose expiry instant is at or before `now` (expiry is inclusive, spec-decisions
 * "When a link expires"), the longest overdue first, at most `limit`. The read model lags the log:
 * a link listed here may have been paid or expired meanwhile, so the caller decides on the link's
 * stream (`LinkPayments.expire` leaves such a link as it is).
 */
export const dueLinks = (options: {
  readonly now: DateTime.DateTime
  readonly limit: number
}): Effect.Effect<ReadonlyArray<PaymentLinkId>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ link_id: string }>`
      SELECT link_id FROM cobro_rm_link_expiry
      WHERE status = 'ACTIVE' AND expires_at <= ${Nanos.fromDateTime(options.now).toString()}::numeric
      ORDER BY expires_at, link_id
      LIMIT ${options.limit}`.pipe(Effect.map((rows) => rows.map((row) => PaymentLinkId.make(row.link_id))))
  )

const paymentEvent = eventsOf(Payment.Payment)
const intentEvent = eventsOf(PaymentIntent.PaymentIntent)
const linkStreamPrefix = Aggregate.streamId(PaymentLink.PaymentLink, "")

/** The events that move a payment in or out of the timeout sweeper's sight. */
const IN_FLIGHT_EVENTS: ReadonlySet<string> = new Set<string>([
  "LinkPaymentStarted",
  "LinkPaid",
  "LinkPaymentFailed",
  "LinkRejected",
  "PaymentStarted",
  "PaymentApproved",
  "PaymentRejected",
  "IntentPaymentStarted",
  "IntentPaid",
  "IntentPaymentFailed"
] satisfies ReadonlyArray<PaymentLink.Event["_tag"] | Payment.Event["_tag"] | PaymentIntent.Event["_tag"]>)

/** What kind of payment a row of {@link paymentsInFlight} is. */
export type InFlightKind = "link" | "online"

/**
 * The payment timeout sweeper: every payment under way, by the instant it started. A payment link's
 * payment from `LinkPaymentStarted` (PROCESSING: a 3DS challenge, the bank, a wallet, or a card
 * being authorized) until its outcome; an online payment (C4) while its Payment is undecided
 * (RUNNING, or waiting for the cardholder's 3DS challenge or bank redirect) or its intent still
 * PROCESSING for it: `payment_open` and `intent_open` say which, and the row goes when both are
 * closed, so an intent that a crash left PROCESSING after its payment was decided stays in sight
 * (spec-decisions O9). Keyed by `(kind, transaction_id)`. Table `cobro_rm_payments_in_flight`;
 * {@link duePayments} reads it.
 */
export const paymentsInFlight = Projection.make({
  name: "payments_in_flight",
  tables: ["cobro_rm_payments_in_flight"],
  setup: ddl((sql) => [
    sql`CREATE TABLE IF NOT EXISTS cobro_rm_payments_in_flight (
      kind text NOT NULL,
      transaction_id text NOT NULL,
      link_id text,
      stream_id text NOT NULL,
      payment_method text NOT NULL,
      started_at timestamptz NOT NULL,
      payment_open boolean NOT NULL,
      intent_open boolean NOT NULL,
      PRIMARY KEY (kind, transaction_id))`,
    sql`CREATE INDEX IF NOT EXISTS cobro_rm_payments_in_flight_started
      ON cobro_rm_payments_in_flight (started_at)`
  ]),
  types: IN_FLIGHT_EVENTS,
  apply: (event) => {
    if (!IN_FLIGHT_EVENTS.has(event.type)) return Effect.void
    return Effect.flatMap(SqlClient.SqlClient, (sql) => {
      /** Closes one side of an online payment's row, and drops the row once both are closed. */
      const closeOnline = (transactionId: string, side: "payment_open" | "intent_open") =>
        sql`UPDATE cobro_rm_payments_in_flight SET ${sql(side)} = false
            WHERE kind = 'online' AND transaction_id = ${transactionId}`.pipe(
          Effect.zipRight(
            sql`DELETE FROM cobro_rm_payments_in_flight
                WHERE kind = 'online' AND transaction_id = ${transactionId}
                  AND NOT payment_open AND NOT intent_open`
          )
        )
      /** Opens one side of an online payment's row (the Payment or the intent, whichever comes first). */
      const openOnline = (
        transactionId: string,
        streamId: string,
        paymentMethod: string,
        startedAt: DateTime.Utc,
        side: "payment_open" | "intent_open"
      ) =>
        sql`INSERT INTO cobro_rm_payments_in_flight
              (kind, transaction_id, link_id, stream_id, payment_method, started_at, payment_open, intent_open)
            VALUES ('online', ${transactionId}, NULL, ${streamId}, ${paymentMethod}, ${iso(startedAt)},
              ${side === "payment_open"}, ${side === "intent_open"})
            ON CONFLICT (kind, transaction_id) DO UPDATE SET ${sql(side)} = true,
              started_at = least(cobro_rm_payments_in_flight.started_at, EXCLUDED.started_at)`
      if (event.streamId.startsWith(linkStreamPrefix)) {
        return Option.match(linkEvent(event), {
          onNone: () => Effect.void,
          onSome: (decoded) => {
            switch (decoded._tag) {
              case "LinkPaymentStarted":
                return sql`INSERT INTO cobro_rm_payments_in_flight
                      (kind, transaction_id, link_id, stream_id, payment_method, started_at, payment_open, intent_open)
                    VALUES ('link', ${decoded.transactionId}, ${event.streamId.slice(linkStreamPrefix.length)},
                      ${event.streamId}, ${decoded.paymentMethod}, ${iso(decoded.at)}, true, false)
                    ON CONFLICT (kind, transaction_id) DO NOTHING`
              case "LinkPaid":
              case "LinkPaymentFailed":
              case "LinkRejected":
                return sql`DELETE FROM cobro_rm_payments_in_flight
                    WHERE kind = 'link' AND transaction_id = ${decoded.transactionId}`
              default:
                return Effect.void
            }
          }
        })
      }
      const payment = paymentEvent(event)
      if (Option.isSome(payment)) {
        const decoded = payment.value
        const transactionId = event.streamId.slice(Aggregate.streamId(Payment.Payment, "").length)
        switch (decoded._tag) {
          case "PaymentStarted":
            return openOnline(
              decoded.transactionId,
              event.streamId,
              decoded.paymentMethod,
              decoded.attemptedAt,
              "payment_open"
            )
          case "PaymentApproved":
          case "PaymentRejected":
            return closeOnline(transactionId, "payment_open")
          default:
            return Effect.void
        }
      }
      return Option.match(intentEvent(event), {
        onNone: () => Effect.void,
        onSome: (decoded) => {
          switch (decoded._tag) {
            case "IntentPaymentStarted":
              return openOnline(
                decoded.transactionId,
                Aggregate.streamId(Payment.Payment, decoded.transactionId),
                decoded.paymentMethod,
                decoded.at,
                "intent_open"
              )
            case "IntentPaid":
            case "IntentPaymentFailed":
              return closeOnline(decoded.transactionId, "intent_open")
            default:
              return Effect.void
          }
        }
      })
    }).pipe(Effect.asVoid)
  }
})

/** A payment of {@link paymentsInFlight} that has been under way for the timeout. */
export interface DuePayment {
  readonly kind: InFlightKind
  readonly transactionId: TransactionId
  /** The link of a payment link's payment. */
  readonly linkId: Option.Option<PaymentLinkId>
  readonly paymentMethod: string
  readonly startedAt: DateTime.Utc
}

/**
 * The payments under way that started at or before `startedBefore` (the sweeper's `now − timeout`),
 * the oldest first, at most `limit`. The read model lags the log: a payment listed here may have
 * been decided meanwhile, so the caller decides on the payment's streams
 * (`LinkPayments.expirePayment`, `OnlinePayments.expirePayment` leave such a payment as it is).
 */
export const duePayments = (options: {
  readonly startedBefore: DateTime.DateTime
  readonly limit: number
}): Effect.Effect<ReadonlyArray<DuePayment>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      kind: InFlightKind
      transaction_id: string
      link_id: string | null
      payment_method: string
      started_at: Date | string
    }>`
      SELECT kind, transaction_id, link_id, payment_method, started_at FROM cobro_rm_payments_in_flight
      WHERE started_at <= ${DateTime.formatIso(DateTime.toUtc(options.startedBefore))}::timestamptz
      ORDER BY started_at, kind, transaction_id
      LIMIT ${options.limit}`.pipe(
      Effect.map((rows) =>
        rows.map((row): DuePayment => ({
          kind: row.kind,
          transactionId: TransactionId.make(row.transaction_id),
          linkId: Option.map(Option.fromNullable(row.link_id), PaymentLinkId.make),
          paymentMethod: row.payment_method,
          startedAt: DateTime.unsafeMake(row.started_at)
        }))
      )
    )
  )

/** Every read model of this module, for `Projection.run`/`rebuild` in the composition root. */
export const all = [
  refundsByTransaction,
  terminalCheckouts,
  lastNotification,
  lastNotificationByReference,
  webhookDeliveries,
  apiKeys,
  linkExpiry,
  paymentsInFlight
] as const
