/**
 * The domain's `IdempotencyStore` over PostgreSQL or PGlite: the `Idempotency-Key`s of POST requests
 * (beyond the spec, as Stripe has them) in table `cobro_idempotency` (migrations
 * `3_idempotency_and_key_lookup` and `7_idempotency_leases`), shared by every node.
 */
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A row of `cobro_idempotency`, as `reserve` reads it when the key is taken. */
interface Row {
  readonly fingerprint: string
  readonly state: "in_progress" | "completed"
  readonly status: number | null
  readonly content_type: string | null
  readonly body: string | null
  readonly expired: boolean
}

/** How many times `reserve` looks again when the row it conflicted with was released meanwhile. */
const maxAttempts = 8

/**
 * Builds the store over the `SqlClient` in context. Time is the caller's `now` (the server may run a
 * virtual clock), never the database's. `reserve` is an `INSERT … ON CONFLICT DO UPDATE … WHERE
 * free` (expired, or running with its lease lapsed): of concurrent reservations of a free key
 * exactly one inserts (or takes over the row), the others wait for its row lock and then read the
 * row it left. `renew`, `complete` and `release` act only on the row their owner still holds, so a
 * renewal racing a takeover is decided by the same row lock: one of the two wins.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const leaseEnd = (now: DateTime.Utc) =>
    DateTime.formatIso(DateTime.add(now, { millis: IdempotencyStore.LEASE_MS }))

  const reserveOnce = (
    scope: IdempotencyStore.Scope,
    fingerprint: string,
    now: DateTime.Utc,
    owner: string
  ) => {
    const createdAt = DateTime.formatIso(now)
    const expiresAt = DateTime.formatIso(DateTime.add(now, { millis: IdempotencyStore.RETENTION_MS }))
    return Effect.gen(function* () {
      const taken = yield* sql<{ reserved: boolean }>`
        INSERT INTO cobro_idempotency AS i
          (merchant_id, mode, key, fingerprint, state, status, content_type, body, created_at, expires_at,
           owner, lease_expires_at)
        VALUES (${scope.merchantId}, ${scope.mode}, ${scope.key}, ${fingerprint}, 'in_progress', NULL, NULL, NULL,
          ${createdAt}::timestamptz, ${expiresAt}::timestamptz, ${owner}, ${leaseEnd(now)}::timestamptz)
        ON CONFLICT (merchant_id, mode, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
          state = 'in_progress', status = NULL, content_type = NULL, body = NULL,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
          owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at
        WHERE i.expires_at <= EXCLUDED.created_at
          OR (i.state = 'in_progress' AND i.lease_expires_at <= EXCLUDED.created_at)
        RETURNING true AS reserved`
      if (taken.length > 0) return IdempotencyStore.Reservation.Reserved()
      // The key is held as of the upsert; read what holds it.
      const rows = yield* sql<Row>`
        SELECT fingerprint, state, status, content_type, body,
          expires_at <= ${createdAt}::timestamptz
            OR (state = 'in_progress' AND lease_expires_at <= ${createdAt}::timestamptz) AS expired
        FROM cobro_idempotency
        WHERE merchant_id = ${scope.merchantId} AND mode = ${scope.mode} AND key = ${scope.key}`
      const row = rows[0]
      // Released (or freed) between the two statements: try again.
      if (row === undefined || row.expired) return undefined
      if (row.fingerprint !== fingerprint) return IdempotencyStore.Reservation.Mismatch()
      if (row.state === "in_progress" || row.status === null || row.body === null) {
        return IdempotencyStore.Reservation.InProgress()
      }
      return IdempotencyStore.Reservation.Replay({
        response: { status: row.status, contentType: row.content_type ?? undefined, body: row.body }
      })
    })
  }

  const reserve = Effect.fnUntraced(function* (
    scope: IdempotencyStore.Scope,
    fingerprint: string,
    now: DateTime.Utc,
    owner: string
  ) {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const found = yield* reserveOnce(scope, fingerprint, now, owner)
      if (found !== undefined) {
        yield* Effect.annotateCurrentSpan({ outcome: found._tag, attempt })
        return found
      }
    }
    return yield* Effect.dieMessage(
      `PgIdempotencyStore.reserve: the key was released ${maxAttempts} times while being reserved`
    )
  }, Effect.orDie)

  /** The row of `scope` while `owner` still holds it: in progress, not taken over. */
  const heldBy = (scope: IdempotencyStore.Scope, owner: string) =>
    sql`merchant_id = ${scope.merchantId} AND mode = ${scope.mode} AND key = ${scope.key}
      AND owner = ${owner} AND state = 'in_progress'`

  /** Updates the row of `scope` if `owner` still holds it; whether it did. */
  const updateHeld = (scope: IdempotencyStore.Scope, owner: string, set: Statement.Fragment) =>
    Effect.map(
      sql`UPDATE cobro_idempotency SET ${set} WHERE ${heldBy(scope, owner)} RETURNING 1`,
      (updated) => updated.length > 0
    ).pipe(Effect.orDie)

  const renew = (scope: IdempotencyStore.Scope, owner: string, now: DateTime.Utc) =>
    updateHeld(scope, owner, sql`lease_expires_at = ${leaseEnd(now)}::timestamptz`)

  const complete = (
    scope: IdempotencyStore.Scope,
    owner: string,
    response: IdempotencyStore.StoredResponse
  ) =>
    updateHeld(
      scope,
      owner,
      sql`state = 'completed', status = ${response.status}, content_type = ${response.contentType ?? null},
        body = ${response.body}`
    )

  const release = (scope: IdempotencyStore.Scope, owner: string) =>
    sql`DELETE FROM cobro_idempotency WHERE ${heldBy(scope, owner)}`.pipe(Effect.asVoid, Effect.orDie)

  return IdempotencyStore.IdempotencyStore.of({ reserve, renew, complete, release })
})

/**
 * Deletes the keys expired at `now` (they already behave as absent; this only reclaims space).
 * Returns how many. The server may run it periodically.
 */
export const purgeExpired = (now: DateTime.Utc): Effect.Effect<number, never, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ purged: number }>`
        WITH purged AS (
          DELETE FROM cobro_idempotency WHERE expires_at <= ${DateTime.formatIso(now)}::timestamptz RETURNING 1
        )
        SELECT count(*)::int AS purged FROM purged`
  ).pipe(
    Effect.map((rows) => rows[0]?.purged ?? 0),
    Effect.orDie,
    Effect.withSpan("PgIdempotencyStore.purgeExpired")
  )

/** `IdempotencyStore` over the `SqlClient` in context. Needs the store's migrations. */
export const layer: Layer.Layer<IdempotencyStore.IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(
  IdempotencyStore.IdempotencyStore,
  make
)
