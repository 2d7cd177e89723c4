/**
 * The idempotency port: `Idempotency-Key` on requests with an effect (beyond the spec, as Stripe and
 * Square have it). A key is a record, not a lease (brief, "Exactly once at the edge"):
 *
 * - `started`: the key is reserved and nothing of its request has committed. A running request
 *   holds it by a lease that it renews; if its process dies the lease lapses and a retry runs the
 *   request anew, which is safe, since nothing committed. A request that fails with nothing
 *   committed releases the key.
 * - `committed`: an effect of the request committed, and the key says so in the same transaction
 *   (its {@link AppendFence.Fence}): from then on the key is never released nor run again. If its
 *   request never answers (its process died), a retry after the lease holds the key to answer from
 *   the resource it wrote (`Recover`), never to execute it again.
 * - `completed`: the answer is kept, 5xx included once an effect committed, and replayed byte for
 *   byte for the retention.
 *
 * The same key with another request is refused; a request still running under the key is a conflict.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AppendFence from "./AppendFence.js"

/** How long a key is remembered: 24 hours. */
export const RETENTION_MS = 24 * 60 * 60 * 1000

/** How long a running request holds its key without renewing it: 30 seconds. */
export const LEASE_MS = 30 * 1000

/** How often a running request renews its lease: three times per lease, so one late renewal is harmless. */
export const RENEW_EVERY_MS = LEASE_MS / 3

/** A key is scoped to one merchant credential: two merchants may use the same key. */
export interface Scope {
  readonly merchantId: string
  readonly mode: string
  readonly key: string
}

/** The response recorded for a key, replayed byte for byte. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: string
}

/** What `reserve` found. */
export type Reservation = Data.TaggedEnum<{
  /** The key is new (or expired, or its request died with nothing committed): run the request. */
  Reserved: {}
  /** The same request was answered before: replay this response. */
  Replay: { readonly response: StoredResponse }
  /** The key was used with another method, path or body. */
  Mismatch: {}
  /** A request with this key is still running. */
  InProgress: {}
  /**
   * The request under this key committed an effect on `resource` (the first stream it wrote), then
   * stopped without an answer and its lease lapsed. The caller now holds the key: it answers from
   * the resource as it stands and `complete`s the key with that answer; it never runs the request.
   */
  Recover: { readonly resource: string }
}>
/** The constructors and matchers of {@link Reservation}. */
export const Reservation = Data.taggedEnum<Reservation>()

/** What `complete` did. */
export type Completion =
  /** The answer is kept for the retention. */
  | "Recorded"
  /** A 5xx of a request that committed nothing: the key is free again. */
  | "Released"
  /** The key is no longer the owner's: nothing recorded. */
  | "Lost"

/**
 * The idempotency port. `owner` names one reservation (one request: the caller mints it); `now` is
 * the caller's clock. A key held by a running request whose lease lapsed is free if nothing of the
 * request committed, recoverable (`Recover`) if something did.
 *
 * @category services
 */
export class IdempotencyStore extends Context.Tag("@cobro/domain/IdempotencyStore")<
  IdempotencyStore,
  {
    /**
     * `fingerprint` identifies the request (method, path and body digest). `Reserved` and
     * `Recover`: `owner` holds the key for {@link LEASE_MS} from `now`.
     */
    readonly reserve: (
      scope: Scope,
      fingerprint: string,
      now: DateTime.Utc,
      owner: string
    ) => Effect.Effect<Reservation>
    /** Extends the owner's lease to {@link LEASE_MS} from `now`; false when the key is no longer its own. */
    readonly renew: (scope: Scope, owner: string, now: DateTime.Utc) => Effect.Effect<boolean>
    /**
     * The fence the owner's appends run under: each records in its own transaction that an effect
     * committed (and the first stream written), and commits nothing, dying with
     * {@link AppendFence.KeyLost}, when another request holds the key.
     */
    readonly fence: (scope: Scope, owner: string) => AppendFence.Fence
    /**
     * Records the answer of the owner's request, whatever its status once an effect committed; a
     * 5xx of a request that committed nothing releases the key instead.
     */
    readonly complete: (scope: Scope, owner: string, response: StoredResponse) => Effect.Effect<Completion>
    /**
     * Forgets the owner's key whose request ended without an answer, if nothing of it committed; a
     * key whose request committed an effect stays, and its lease ends now: the next reservation, at
     * any `now`, recovers it (`Recover`) rather than waiting out the lease.
     */
    readonly release: (scope: Scope, owner: string) => Effect.Effect<void>
  }
>() {}

interface Entry {
  readonly fingerprint: string
  readonly owner: string
  readonly reservedAt: number
  readonly leaseUntil: number
  /** The first stream an effect of the request wrote, once one committed. */
  readonly resource: string | undefined
  readonly response: StoredResponse | undefined
}

/** Whether an entry is still remembered at `now`: within the retention and, while started, its lease. */
const holds = (entry: Entry, now: number): boolean =>
  now - entry.reservedAt < RETENTION_MS &&
  (entry.response !== undefined || entry.resource !== undefined || now < entry.leaseUntil)

const scopeKey = (scope: Scope): string => `${scope.merchantId}\u0000${scope.mode}\u0000${scope.key}`

/** How many reservations pass between two sweeps of expired keys. */
const SWEEP_EVERY = 1024

/**
 * An in-memory store for tests and the in-memory setup. A key is remembered for {@link RETENTION_MS}
 * from its first reservation. Its fence checks the owner before the append and records the effect
 * after it: atomic only because the in-memory event store appends without yielding.
 *
 * @category layers
 */
export const layerMemory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, () => {
  const entries = new Map<string, Entry>()
  let reservations = 0
  const sweep = (now: number) => {
    for (const [key, entry] of entries) {
      if (!holds(entry, now)) entries.delete(key)
    }
  }
  /** The owner's running entry, if the key is still its own. */
  const running = (scope: Scope, owner: string) => {
    const entry = entries.get(scopeKey(scope))
    return entry !== undefined && entry.owner === owner && entry.response === undefined ? entry : undefined
  }
  const fence = (scope: Scope, owner: string): AppendFence.Fence => ({
    around: (streamId, append) =>
      Effect.suspend(() => {
        if (entries.get(scopeKey(scope))?.owner !== owner) {
          return Effect.die(new AppendFence.KeyLost({ key: scope.key }))
        }
        return Effect.tap(append, () =>
          Effect.sync(() => {
            const entry = entries.get(scopeKey(scope))
            if (entry !== undefined && entry.owner === owner && entry.resource === undefined) {
              entries.set(scopeKey(scope), { ...entry, resource: streamId })
            }
          })
        )
      })
  })
  return {
    reserve: (scope, fingerprint, now, owner) =>
      Effect.sync((): Reservation => {
        const at = DateTime.toEpochMillis(now)
        if (++reservations % SWEEP_EVERY === 0) sweep(at)
        const key = scopeKey(scope)
        const entry = entries.get(key)
        if (entry !== undefined && holds(entry, at)) {
          if (entry.fingerprint !== fingerprint) return Reservation.Mismatch()
          if (entry.response !== undefined) return Reservation.Replay({ response: entry.response })
          if (entry.resource === undefined || at < entry.leaseUntil) return Reservation.InProgress()
          entries.set(key, { ...entry, owner, leaseUntil: at + LEASE_MS })
          return Reservation.Recover({ resource: entry.resource })
        }
        entries.set(key, {
          fingerprint,
          owner,
          reservedAt: at,
          leaseUntil: at + LEASE_MS,
          resource: undefined,
          response: undefined
        })
        return Reservation.Reserved()
      }),
    renew: (scope, owner, now) =>
      Effect.sync(() => {
        const entry = running(scope, owner)
        if (entry === undefined) return false
        entries.set(scopeKey(scope), { ...entry, leaseUntil: DateTime.toEpochMillis(now) + LEASE_MS })
        return true
      }),
    fence,
    complete: (scope, owner, response) =>
      Effect.sync((): Completion => {
        const entry = running(scope, owner)
        if (entry === undefined) return "Lost"
        if (response.status >= 500 && entry.resource === undefined) {
          entries.delete(scopeKey(scope))
          return "Released"
        }
        entries.set(scopeKey(scope), { ...entry, response })
        return "Recorded"
      }),
    release: (scope, owner) =>
      Effect.sync(() => {
        const entry = running(scope, owner)
        if (entry === undefined) return
        if (entry.resource === undefined) entries.delete(scopeKey(scope))
        else entries.set(scopeKey(scope), { ...entry, leaseUntil: Number.NEGATIVE_INFINITY })
      })
  }
})
