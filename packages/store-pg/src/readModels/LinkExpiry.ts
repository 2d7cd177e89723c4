/**
 * B, the link expiry sweeper: every link with an `expiration_date` that may still expire, by its
 * expiry instant in exact nanoseconds. A link is `ACTIVE` (it can expire now) or `PROCESSING` (a
 * payment is under way: it expires only if that payment fails first, as `LinkRejected`, or goes
 * back to ACTIVE); it leaves the table once PAID, REJECTED, CANCELLED or EXPIRED. Links without an
 * expiration date never appear. Table `cobro_rm_link_expiry`; the sweeper reads it through {@link dueLinks}.
 */
import { PaymentLinkId } from "@cobro/domain/Ids"
import * as Nanos from "@cobro/domain/Nanos"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as AggregateEvents from "../internal/AggregateEvents.js"
import * as Ddl from "../internal/Ddl.js"
import * as Projection from "../Projection.js"

const linkEvent = AggregateEvents.decoder(PaymentLink.PaymentLink)

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

/** The read model as a projection, which a runner keeps current (`Projection.run`). */
export const projection: Projection.Projection<SqlError, SqlClient.SqlClient> = Projection.make({
  name: "link_expiry",
  tables: ["cobro_rm_link_expiry"],
  setup: Ddl.run([
    `CREATE TABLE IF NOT EXISTS cobro_rm_link_expiry (
      stream_id text PRIMARY KEY,
      link_id text NOT NULL,
      merchant_id text NOT NULL,
      sandbox boolean NOT NULL,
      status text NOT NULL,
      expires_at numeric(30, 0) NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS cobro_rm_link_expiry_due
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
