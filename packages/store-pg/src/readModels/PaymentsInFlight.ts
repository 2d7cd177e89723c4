/**
 * The payment timeout sweeper: every payment under way, by the instant it started. A payment link's
 * payment from `LinkPaymentStarted` (PROCESSING: a 3DS challenge, the bank, a wallet, or a card
 * being authorized) until its outcome; an online payment (C4) while its Payment is undecided
 * (RUNNING, or waiting for the cardholder's 3DS challenge or bank redirect) or its intent still
 * PROCESSING for it: `payment_open` and `intent_open` say which, and the row goes when both are
 * closed, so an intent that a crash left PROCESSING after its payment was decided stays in sight
 * (spec-decisions O9). Keyed by `(kind, transaction_id)`. Table `cobro_rm_payments_in_flight`;
 * the sweeper reads it through {@link duePayments}.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import type * as EventStore from "@cobro/domain/EventStore"
import { PaymentLinkId, TransactionId } from "@cobro/domain/Ids"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as AggregateEvents from "../internal/AggregateEvents.js"
import * as Ddl from "../internal/Ddl.js"
import * as Projection from "../Projection.js"

const linkEvent = AggregateEvents.decoder(PaymentLink.PaymentLink)
const paymentEvent = AggregateEvents.decoder(Payment.Payment)
const intentEvent = AggregateEvents.decoder(PaymentIntent.PaymentIntent)
const linkStreamPrefix = Aggregate.streamId(PaymentLink.PaymentLink, "")

const iso = (instant: DateTime.Utc) => DateTime.formatIso(instant)

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

/** The table, keyed by `(kind, transaction_id)`, and the sweeper's index: the payments by start. */
const setup = Ddl.run([
  `CREATE TABLE IF NOT EXISTS cobro_rm_payments_in_flight (
    kind text NOT NULL,
    transaction_id text NOT NULL,
    link_id text,
    stream_id text NOT NULL,
    payment_method text NOT NULL,
    started_at timestamptz NOT NULL,
    payment_open boolean NOT NULL,
    intent_open boolean NOT NULL,
    PRIMARY KEY (kind, transaction_id))`,
  `CREATE INDEX IF NOT EXISTS cobro_rm_payments_in_flight_started
    ON cobro_rm_payments_in_flight (started_at)`
])

/** One side of an online payment's row: its Payment's or its intent's. */
type Side = "payment_open" | "intent_open"

/** Opens one side of an online payment's row (the Payment or the intent, whichever comes first). */
const openOnline = (
  sql: SqlClient.SqlClient,
  transactionId: string,
  streamId: string,
  paymentMethod: string,
  startedAt: DateTime.Utc,
  side: Side
) =>
  sql`INSERT INTO cobro_rm_payments_in_flight
        (kind, transaction_id, link_id, stream_id, payment_method, started_at, payment_open, intent_open)
      VALUES ('online', ${transactionId}, NULL, ${streamId}, ${paymentMethod}, ${iso(startedAt)},
        ${side === "payment_open"}, ${side === "intent_open"})
      ON CONFLICT (kind, transaction_id) DO UPDATE SET ${sql(side)} = true,
        started_at = least(cobro_rm_payments_in_flight.started_at, EXCLUDED.started_at)`

/** Closes one side of an online payment's row, and drops the row once both are closed. */
const closeOnline = (sql: SqlClient.SqlClient, transactionId: string, side: Side) =>
  sql`UPDATE cobro_rm_payments_in_flight SET ${sql(side)} = false
      WHERE kind = 'online' AND transaction_id = ${transactionId}`.pipe(
    Effect.zipRight(
      sql`DELETE FROM cobro_rm_payments_in_flight
          WHERE kind = 'online' AND transaction_id = ${transactionId}
            AND NOT payment_open AND NOT intent_open`
    )
  )

/** Applies one event of the log to the read model; events of other types are ignored. */
const apply = (event: EventStore.LoggedEvent): Effect.Effect<void, SqlError, SqlClient.SqlClient> => {
  if (!IN_FLIGHT_EVENTS.has(event.type)) return Effect.void
  return Effect.flatMap(SqlClient.SqlClient, (sql) => {
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
            sql,
            decoded.transactionId,
            event.streamId,
            decoded.paymentMethod,
            decoded.attemptedAt,
            "payment_open"
          )
        case "PaymentApproved":
        case "PaymentRejected":
          return closeOnline(sql, transactionId, "payment_open")
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
              sql,
              decoded.transactionId,
              Aggregate.streamId(Payment.Payment, decoded.transactionId),
              decoded.paymentMethod,
              decoded.at,
              "intent_open"
            )
          case "IntentPaid":
          case "IntentPaymentFailed":
            return closeOnline(sql, decoded.transactionId, "intent_open")
          default:
            return Effect.void
        }
      }
    })
  }).pipe(Effect.asVoid)
}

/** The read model as a projection, which a runner keeps current (`Projection.run`). */
export const projection: Projection.Projection<SqlError, SqlClient.SqlClient> = Projection.make({
  name: "payments_in_flight",
  tables: ["cobro_rm_payments_in_flight"],
  setup,
  types: IN_FLIGHT_EVENTS,
  apply
})

/** What kind of payment a row of the read model is. */
export type InFlightKind = "link" | "online"

/** A payment of the read model that has been under way for the timeout. */
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
