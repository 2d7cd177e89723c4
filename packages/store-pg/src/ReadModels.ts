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
import * as Nanos from "@cobro/domain/Nanos"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as InlineReadModels from "./InlineReadModels.js"
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

const iso = (instant: DateTime.Utc) => DateTime.formatIso(instant)

const ddl = (statements: (sql: SqlClient.SqlClient) => ReadonlyArray<Effect.Effect<unknown, SqlError>>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.all(statements(sql), { discard: true }))

/**
 * C9: the refunds of a transaction, newest last. Table `cobro_rm_refunds_by_transaction`. Written
 * with its events (`InlineReadModels`), as are the next five.
 */
export const refundsByTransaction = Projection.inline(InlineReadModels.refundsByTransaction)

/** A3: terminal checkouts by integration id and by merchant reference. Table `cobro_rm_terminal_checkouts`. */
export const terminalCheckouts = Projection.inline(InlineReadModels.terminalCheckouts)

/**
 * D: per payment (the notification's subject), the last notification scheduled. Table
 * `cobro_rm_last_notification`.
 */
export const lastNotification = Projection.inline(InlineReadModels.lastNotification)

/**
 * A4 with `is_external_reference=true`: per payment, the last notification scheduled, found by the
 * merchant's external reference (`data.metadata.reference` of the notification, the terminal
 * checkout's `reference`). One row per payment, so that a reference shared by several payments
 * gives one notification each, newest first. Table `cobro_rm_last_notification_by_reference`.
 */
export const lastNotificationByReference = Projection.inline(InlineReadModels.lastNotificationByReference)

/**
 * The webhook dispatcher's queue: each delivery's status and when its next attempt is due (none
 * once delivered, exhausted or cancelled). Table `cobro_rm_webhook_deliveries`.
 */
export const webhookDeliveries = Projection.inline(InlineReadModels.webhookDeliveries)

/**
 * Authentication: every identity key ever issued, by its SHA-256, with the merchant, integration
 * and mode it grants; `revoked_at` is set when `KeyRotated` revokes it. A hash issued a second time
 * (two merchants, or a revoked key issued again) is marked revoked too: such a key authenticates no
 * one. Table `cobro_rm_api_keys`; `PgMerchantDirectory` reads it.
 */
export const apiKeys = Projection.inline(InlineReadModels.apiKeys)

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

/** Every read model of this module, for `Projection.rebuildAll` in the composition root. */
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

/**
 * The read models that follow the log behind a runner: the sweepers' (link expiry, payments in
 * flight), which no request reads right after a write, and which their workers poll anyway.
 */
export const asynchronous = all.filter((projection) => !Projection.isInline(projection))
