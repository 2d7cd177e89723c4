/**
 * The `DeliveryQueue` port over PostgreSQL (spec D, Retries; issue 5, several dispatchers): due
 * deliveries come from the `WebhookDeliveries` read model (`readModels/WebhookDeliveries`), and a
 * claim leases them in `cobro_webhook_leases` in one statement. `FOR UPDATE SKIP LOCKED` keeps
 * concurrent claims off each other's rows, and the lease's conflict guard keeps a live lease from
 * being taken: one dispatcher at a time attempts a notification, and a dead dispatcher's lease expires.
 * Each claim carries the traceparent stored with the delivery's schedule (issue 34), and `backlog`
 * measures the queue for the gauges of `/metrics`.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import type { NotificationId } from "@cobro/domain/Ids"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The lease table: who holds which delivery stream until when, at which version of the stream. A
 * lease is live while it has not expired and the stream is still at that version (the read model,
 * written with the stream's events, tells): recording the attempt moves the stream on and so ends
 * the lease in the same commit, with no release.
 */
export const LEASE_TABLE = "cobro_webhook_leases"

/** Creates the lease table if missing (the store's migrations create the read model it reads). */
export const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS cobro_webhook_leases (
    stream_id text PRIMARY KEY,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL,
    claimed_version integer NOT NULL DEFAULT 0)`.pipe(Effect.orDie)
  // A table of an earlier version (its leases, at claimed_version 0, are no longer live). Checked
  // first: an ALTER TABLE locks the table even when it has nothing to do.
  const columns = yield* sql<{ name: string }>`
    SELECT column_name AS name FROM information_schema.columns
    WHERE table_name = 'cobro_webhook_leases' AND table_schema = current_schema()`.pipe(Effect.orDie)
  const has = (name: string) => columns.some((c) => c.name === name)
  if (!has("claimed_version")) {
    yield* sql`ALTER TABLE cobro_webhook_leases
      ADD COLUMN IF NOT EXISTS claimed_version integer NOT NULL DEFAULT 0`.pipe(Effect.orDie)
  }
  if (has("recorded_attempts")) {
    yield* sql`ALTER TABLE cobro_webhook_leases DROP COLUMN IF EXISTS recorded_attempts`.pipe(Effect.orDie)
  }
})

/**
 * How often a claim also deletes the leases that are no longer live (by the claim's `now`). They only
 * take space meanwhile: a claim takes such a lease over. Deleting them is a join of the lease table
 * with the read model, which on every claim cost about 40 ms per round at 100,000 deliveries
 * (`docs/benchmarks.md`, Webhooks).
 */
export const PURGE_INTERVAL = Duration.seconds(30)

const decodeDelivery = CommandHandler.fromStored(WebhookDelivery.WebhookDelivery)

/** Makes the queue; its tables must exist (see `setup`). */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  /** When this queue last purged (epoch ms of a claim's `now`). */
  let purgedAt: number | undefined
  const purgeInterval = Duration.toMillis(PURGE_INTERVAL)
  const claim = (options: DeliveryQueue.ClaimOptions) => {
    const now = DateTime.formatIso(options.now)
    const until = DateTime.formatIso(DateTime.addDuration(options.now, options.lease))
    const nowMillis = DateTime.toEpochMillis(options.now)
    // A clock set back (a test's virtual clock) purges again at once.
    const purging = purgedAt === undefined || nowMillis - purgedAt >= purgeInterval || nowMillis < purgedAt
    const purge = Effect.zipRight(
      sql`
        DELETE FROM cobro_webhook_leases l USING cobro_rm_webhook_deliveries d
        WHERE l.stream_id = d.stream_id
          AND (l.expires_at <= ${now}::timestamptz OR l.claimed_version <> d.version)`,
      Effect.sync(() => {
        purgedAt = nowMillis
      })
    )
    // One statement: the due rows not under a live lease, leased, with each stream's events read by
    // its index: the state the dispatcher decides on, and the version its record is appended at. The
    // version is the events' own, as this statement's snapshot shows them: a row locked after a
    // concurrent commit may be newer, and then the record conflicts and is decided again on a re-read.
    const take = sql<{
      notification_id: string
      version: number
      events: ReadonlyArray<unknown>
      traceparent: string | null
    }>`
      WITH due AS (
        SELECT d.stream_id, d.notification_id, d.due_at, d.version, d.traceparent
        FROM cobro_rm_webhook_deliveries d
        WHERE d.due_at IS NOT NULL AND d.due_at <= ${now}::timestamptz
          AND NOT EXISTS (
            SELECT 1 FROM cobro_webhook_leases l
            WHERE l.stream_id = d.stream_id
              AND l.expires_at > ${now}::timestamptz AND l.claimed_version = d.version)
        ORDER BY d.due_at
        LIMIT ${options.limit}
        FOR UPDATE OF d SKIP LOCKED
      ), claimed AS (
        INSERT INTO cobro_webhook_leases (stream_id, owner, expires_at, claimed_version)
        SELECT stream_id, ${options.owner}, ${until}::timestamptz, version FROM due
        ON CONFLICT (stream_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
            claimed_version = EXCLUDED.claimed_version
          WHERE cobro_webhook_leases.expires_at <= ${now}::timestamptz
            OR cobro_webhook_leases.claimed_version <> EXCLUDED.claimed_version
        RETURNING stream_id
      )
      SELECT due.notification_id::text AS notification_id, s.version, s.events, due.traceparent
      FROM due JOIN claimed ON claimed.stream_id = due.stream_id
      CROSS JOIN LATERAL (
        SELECT max(e.stream_version) AS version, json_agg(e.data ORDER BY e.stream_version) AS events
        FROM cobro_events e WHERE e.stream_id = due.stream_id) s
      ORDER BY due.due_at`
    return Effect.zipRight(purging ? purge : Effect.void, take).pipe(
      Effect.map((rows) =>
        rows.map((r): DeliveryQueue.Claim => ({
          notificationId: r.notification_id as NotificationId,
          known: decodeDelivery(r.events, r.version),
          traceparent: r.traceparent ?? undefined
        }))
      ),
      Effect.orDie,
      Effect.withSpan("PgDeliveryQueue.claim")
    )
  }
  const releaseAll = (notificationIds: ReadonlyArray<NotificationId>, owner: string) =>
    notificationIds.length === 0
      ? Effect.void
      : sql`DELETE FROM cobro_webhook_leases
          WHERE owner = ${owner} AND stream_id = ANY(${notificationIds.map(Notifications.deliveryStreamOf)}::text[])`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.withSpan("PgDeliveryQueue.releaseAll", { attributes: { releases: notificationIds.length } })
        )
  return { claim, releaseAll } satisfies DeliveryQueue.DeliveryQueue["Type"]
})

/** The queue as the domain's `DeliveryQueue` port; creates its tables. */
export const layer: Layer.Layer<DeliveryQueue.DeliveryQueue, never, SqlClient.SqlClient> = Layer.effect(
  DeliveryQueue.DeliveryQueue,
  Effect.zipRight(setup, make)
)

/** The lease length a dispatcher should use by default: far longer than an attempt (2 s). */
export const defaultLease = Duration.seconds(30)

/** How the queue stands, for the gauges of `/metrics`. */
export interface Backlog {
  /** Deliveries neither delivered nor abandoned (nor cancelled): due, scheduled for a retry, or leased. */
  readonly depth: number
  /** How long the oldest delivery due now has been due, in seconds (by the clock); 0 when none is. */
  readonly oldestDueAgeSeconds: number
}

/**
 * The queue's {@link Backlog}, test and production alike, in one statement over the due-time index
 * (`cobro_rm_webhook_deliveries_due`, partial on `due_at IS NOT NULL`: exactly the deliveries still
 * to attempt). A retry scheduled later counts in the depth; its due time does not count in the age
 * until it comes. The clock is the clock in context (a virtual one moves the age).
 */
export const backlog: Effect.Effect<Backlog, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.zipWith(
      sql<{ depth: number | string; oldest: number | string | null }>`
        SELECT count(*)::integer AS depth, (extract(epoch FROM min(due_at)) * 1000)::float8 AS oldest
        FROM cobro_rm_webhook_deliveries WHERE due_at IS NOT NULL`,
      Clock.currentTimeMillis,
      (rows, now): Backlog => {
        const row = rows[0]
        const oldest = row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest)
        return {
          depth: Number(row?.depth ?? 0),
          oldestDueAgeSeconds: oldest !== undefined && oldest <= now ? (now - oldest) / 1000 : 0
        }
      }
    )
)
