/**
 * The `DeliveryQueue` port over PostgreSQL (spec D, Retries; issue 5, several dispatchers): due
 * deliveries come from the `webhook_deliveries` read model, and a claim leases them in
 * `cobro_webhook_leases` in one statement. `FOR UPDATE SKIP LOCKED` keeps concurrent claims off each
 * other's rows, and the lease's conflict guard keeps a live lease from being taken: one dispatcher
 * at a time attempts a notification, and a dead dispatcher's lease expires.
 */
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import type { NotificationId } from "@cobro/domain/Ids"
import * as Notifications from "@cobro/domain/Notifications"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The lease table: who holds which delivery stream until when, and how many attempts its stream
 * recorded when it was given back (`recorded_attempts`): while the read model shows fewer, it lags
 * behind the stream and the delivery is not handed out again (it would be found not due).
 */
export const LEASE_TABLE = "cobro_webhook_leases"

/** Creates the lease table if missing (the store's migrations create the read model it reads). */
export const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS cobro_webhook_leases (
    stream_id text PRIMARY KEY,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL,
    recorded_attempts integer NOT NULL DEFAULT 0)`.pipe(Effect.orDie)
  // Tables created before the column existed.
  yield* sql`ALTER TABLE cobro_webhook_leases
    ADD COLUMN IF NOT EXISTS recorded_attempts integer NOT NULL DEFAULT 0`.pipe(Effect.orDie)
})

/**
 * How often a claim also deletes the given-back leases that the read model has caught up with (by
 * the claim's `now`). They only take space meanwhile: a claim takes such a lease over. Deleting
 * them is a join of the lease table with the whole read model, which on every claim cost about
 * 40 ms per round at 100,000 deliveries (`docs/benchmarks.md`, Webhooks).
 */
export const PURGE_INTERVAL = Duration.seconds(30)

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
        WHERE l.stream_id = d.stream_id AND l.expires_at <= ${now}::timestamptz
          AND l.recorded_attempts <= d.attempts`,
      Effect.sync(() => {
        purgedAt = nowMillis
      })
    )
    const take = sql<{ notification_id: string }>`
      WITH due AS (
        SELECT d.stream_id, d.notification_id, d.due_at, d.attempts
        FROM cobro_rm_webhook_deliveries d
        WHERE d.due_at IS NOT NULL AND d.due_at <= ${now}::timestamptz
          AND NOT EXISTS (
            SELECT 1 FROM cobro_webhook_leases l
            WHERE l.stream_id = d.stream_id
              AND (l.expires_at > ${now}::timestamptz OR l.recorded_attempts > d.attempts))
        ORDER BY d.due_at
        LIMIT ${options.limit}
        FOR UPDATE OF d SKIP LOCKED
      ), claimed AS (
        INSERT INTO cobro_webhook_leases (stream_id, owner, expires_at, recorded_attempts)
        SELECT stream_id, ${options.owner}, ${until}::timestamptz, attempts FROM due
        ON CONFLICT (stream_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
            recorded_attempts = EXCLUDED.recorded_attempts
          WHERE cobro_webhook_leases.expires_at <= ${now}::timestamptz
            AND cobro_webhook_leases.recorded_attempts <= EXCLUDED.recorded_attempts
        RETURNING stream_id
      )
      SELECT due.notification_id::text AS notification_id
      FROM due JOIN claimed ON claimed.stream_id = due.stream_id
      ORDER BY due.due_at`
    return Effect.zipRight(purging ? purge : Effect.void, take).pipe(
      Effect.map((rows) => rows.map((r) => r.notification_id as NotificationId)),
      Effect.orDie,
      Effect.withSpan("PgDeliveryQueue.claim")
    )
  }
  const release = (notificationId: NotificationId, owner: string, options?: DeliveryQueue.ReleaseOptions) => {
    const streamId = Notifications.deliveryStreamOf(notificationId)
    return (
      options?.attemptsRecorded === undefined
        ? sql`DELETE FROM cobro_webhook_leases WHERE stream_id = ${streamId} AND owner = ${owner}`
        : // Expired at once, but kept until the read model shows the attempts recorded.
          sql`UPDATE cobro_webhook_leases
              SET expires_at = '-infinity', recorded_attempts = ${options.attemptsRecorded}
              WHERE stream_id = ${streamId} AND owner = ${owner}`
    ).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("PgDeliveryQueue.release"))
  }
  const releaseAll = (releases: ReadonlyArray<DeliveryQueue.Release>, owner: string) => {
    // The last release of a notification counts, as if each were released in turn.
    const byStream = new Map<string, number | undefined>()
    for (const r of releases) {
      const streamId = Notifications.deliveryStreamOf(r.notificationId)
      byStream.delete(streamId)
      byStream.set(streamId, r.attemptsRecorded)
    }
    if (byStream.size === 0) return Effect.void
    const deleted: Array<string> = []
    const kept: Array<string> = []
    const counts: Array<number> = []
    for (const [streamId, attempts] of byStream) {
      if (attempts === undefined) deleted.push(streamId)
      else {
        kept.push(streamId)
        counts.push(attempts)
      }
    }
    // One statement: `release`'s DELETE and UPDATE, on disjoint rows.
    return sql`
      WITH kept AS (
        UPDATE cobro_webhook_leases l
        SET expires_at = '-infinity', recorded_attempts = k.attempts
        FROM unnest(${kept}::text[], ${counts}::integer[]) AS k(stream_id, attempts)
        WHERE l.stream_id = k.stream_id AND l.owner = ${owner}
        RETURNING l.stream_id
      )
      DELETE FROM cobro_webhook_leases
      WHERE owner = ${owner} AND stream_id = ANY(${deleted}::text[])`.pipe(
      Effect.asVoid,
      Effect.orDie,
      Effect.withSpan("PgDeliveryQueue.releaseAll", { attributes: { releases: byStream.size } })
    )
  }
  return { claim, release, releaseAll } satisfies DeliveryQueue.DeliveryQueue["Type"]
})

/** The queue as the domain's `DeliveryQueue` port; creates its tables. */
export const layer: Layer.Layer<DeliveryQueue.DeliveryQueue, never, SqlClient.SqlClient> = Layer.effect(
  DeliveryQueue.DeliveryQueue,
  Effect.zipRight(setup, make)
)

/** The lease length a dispatcher should use by default: far longer than an attempt (2 s). */
export const defaultLease = Duration.seconds(30)
