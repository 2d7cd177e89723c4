/**
 * The domain's `IdempotencyStore` over PostgreSQL or PGlite: the `Idempotency-Key`s of POST requests
 * (beyond the spec, as Stripe has them) in table `cobro_idempotency` (migrations
 * `3_idempotency_and_key_lookup` and `7_idempotency_leases`), shared by every node.
 */
import * as AppendFence from "@cobro/domain/AppendFence"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { SqlError } from "@effect/sql/SqlError"
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
  readonly owner: string | null
  readonly resource: string | null
  /** Past its retention: as absent. */
  readonly expired: boolean
  /** Running, and its lease lapsed. */
  readonly lapsed: boolean
}

/** How many times `reserve` looks again when the row it conflicted with changed meanwhile. */
const maxAttempts = 8

/**
 * Builds the store over the `SqlClient` in context. Time is the caller's `now` (the server may run a
 * virtual clock), never the database's. `reserve` is an `INSERT … ON CONFLICT DO UPDATE … WHERE
 * free` (expired, or running with its lease lapsed and nothing committed): of concurrent
 * reservations of a free key exactly one inserts (or takes over the row), the others wait for its
 * row lock and then read the row it left. A key whose request committed an effect and whose lease
 * lapsed is taken over for recovery by an `UPDATE` conditioned on the owner read, so one retry at a
 * time recovers it. The fence's `UPDATE` runs in the append's transaction and holds the row's lock
 * until that commits: a takeover racing it waits, then finds the effect recorded.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const leaseEnd = (now: DateTime.Utc) =>
    DateTime.formatIso(DateTime.add(now, { millis: IdempotencyStore.LEASE_MS }))

  const ofScope = (scope: IdempotencyStore.Scope) =>
    sql`merchant_id = ${scope.merchantId} AND mode = ${scope.mode} AND key = ${scope.key}`

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
           owner, lease_expires_at, recovery_point, resource)
        VALUES (${scope.merchantId}, ${scope.mode}, ${scope.key}, ${fingerprint}, 'in_progress', NULL, NULL, NULL,
          ${createdAt}::timestamptz, ${expiresAt}::timestamptz, ${owner}, ${leaseEnd(now)}::timestamptz,
          'started', NULL)
        ON CONFLICT (merchant_id, mode, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
          state = 'in_progress', status = NULL, content_type = NULL, body = NULL,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
          owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at,
          recovery_point = 'started', resource = NULL
        WHERE i.expires_at <= EXCLUDED.created_at
          OR (i.state = 'in_progress' AND i.recovery_point = 'started' AND i.lease_expires_at <= EXCLUDED.created_at)
        RETURNING true AS reserved`
      if (taken.length > 0) return IdempotencyStore.Reservation.Reserved()
      // The key is held as of the upsert; read what holds it.
      const rows = yield* sql<Row>`
        SELECT fingerprint, state, status, content_type, body, owner, resource,
          expires_at <= ${createdAt}::timestamptz AS expired,
          (state = 'in_progress' AND lease_expires_at <= ${createdAt}::timestamptz) AS lapsed
        FROM cobro_idempotency WHERE ${ofScope(scope)}`
      const row = rows[0]
      // Released (or freed) between the two statements: try again.
      if (row === undefined || row.expired || (row.lapsed && row.resource === null)) return undefined
      if (row.fingerprint !== fingerprint) return IdempotencyStore.Reservation.Mismatch()
      if (row.state === "completed" && row.status !== null && row.body !== null) {
        return IdempotencyStore.Reservation.Replay({
          response: { status: row.status, contentType: row.content_type ?? undefined, body: row.body }
        })
      }
      if (!row.lapsed || row.resource === null) return IdempotencyStore.Reservation.InProgress()
      // Its request committed an effect, then went silent: hold the key to answer from the resource.
      const recovered = yield* sql<{ resource: string }>`
        UPDATE cobro_idempotency SET owner = ${owner}, lease_expires_at = ${leaseEnd(now)}::timestamptz
        WHERE ${ofScope(scope)} AND owner IS NOT DISTINCT FROM ${row.owner} AND state = 'in_progress'
          AND lease_expires_at <= ${createdAt}::timestamptz
        RETURNING resource`
      const resource = recovered[0]?.resource
      return resource === undefined ? undefined : IdempotencyStore.Reservation.Recover({ resource })
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
      `PgIdempotencyStore.reserve: the key changed hands ${maxAttempts} times while being reserved`
    )
  }, Effect.orDie)

  /** The row of `scope` while `owner` still holds it: in progress, not taken over. */
  const heldBy = (scope: IdempotencyStore.Scope, owner: string) =>
    sql`${ofScope(scope)} AND owner = ${owner} AND state = 'in_progress'`

  /** Updates the row of `scope` if `owner` still holds it; whether it did. */
  const updateHeld = (scope: IdempotencyStore.Scope, owner: string, set: Statement.Fragment) =>
    Effect.map(
      sql`UPDATE cobro_idempotency SET ${set} WHERE ${heldBy(scope, owner)} RETURNING 1`,
      (updated) => updated.length > 0
    ).pipe(Effect.orDie)

  const renew = (scope: IdempotencyStore.Scope, owner: string, now: DateTime.Utc) =>
    updateHeld(scope, owner, sql`lease_expires_at = ${leaseEnd(now)}::timestamptz`)

  /**
   * Marks the owner's key committed, with the first stream written, in the caller's transaction; a
   * key another request holds now fails the transaction. Not `state = 'in_progress'`: an append of
   * this request after its answer was recorded (a fiber it forked) is still its own.
   */
  const mark = (scope: IdempotencyStore.Scope, owner: string, streamId: string) =>
    sql`UPDATE cobro_idempotency SET recovery_point = 'committed', resource = coalesce(resource, ${streamId})
      WHERE ${ofScope(scope)} AND owner = ${owner} RETURNING 1`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) =>
        rows.length > 0 ? Effect.void : Effect.die(new AppendFence.KeyLost({ key: scope.key }))
      )
    )

  const fence = (scope: IdempotencyStore.Scope, owner: string): AppendFence.Fence => ({
    around: (streamId, append) =>
      // BEGIN or COMMIT failing leaves the append's outcome unknown: a defect, as the store's own are.
      Effect.catchIf(
        sql.withTransaction(Effect.zipRight(mark(scope, owner, streamId), append)),
        (error): error is SqlError => error instanceof SqlError,
        Effect.die
      )
  })

  const complete = (
    scope: IdempotencyStore.Scope,
    owner: string,
    response: IdempotencyStore.StoredResponse
  ): Effect.Effect<IdempotencyStore.Completion> =>
    Effect.gen(function* () {
      // A 5xx is kept once an effect committed; before, the key is released for a retry to run anew.
      const recorded =
        yield* sql`UPDATE cobro_idempotency SET state = 'completed', status = ${response.status},
          content_type = ${response.contentType ?? null}, body = ${response.body}
        WHERE ${heldBy(scope, owner)} AND ${response.status < 500 ? sql`true` : sql`recovery_point = 'committed'`}
        RETURNING 1`.pipe(Effect.orDie)
      if (recorded.length > 0) return "Recorded"
      return (yield* releaseStarted(scope, owner)) ? "Released" : "Lost"
    })

  /** Deletes the owner's key if nothing of its request committed; whether it did. */
  const releaseStarted = (scope: IdempotencyStore.Scope, owner: string) =>
    sql`DELETE FROM cobro_idempotency WHERE ${heldBy(scope, owner)} AND recovery_point = 'started' RETURNING 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  /**
   * Deletes the owner's key if nothing of its request committed; else ends its lease now, so that
   * the next reservation recovers it. '-infinity', not the database's now: a reservation compares
   * the lease with its caller's clock (`reserveOnce`), which may be behind the database's.
   */
  const release = (scope: IdempotencyStore.Scope, owner: string) =>
    Effect.flatMap(releaseStarted(scope, owner), (deleted) =>
      deleted ? Effect.void : Effect.asVoid(updateHeld(scope, owner, sql`lease_expires_at = '-infinity'`))
    )

  return IdempotencyStore.IdempotencyStore.of({ reserve, renew, fence, complete, release })
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
