/**
 * The idempotency port: `Idempotency-Key` on POST requests (beyond the spec, as Stripe and Square
 * have it). The same key and body within the retention returns the first response; the same key
 * with another body is a conflict; a request still running under the key is a conflict too.
 *
 * A running request holds its key by a lease (S-8): its owner renews it while the request
 * runs, so a key whose process died (`kill -9`) is free again once the lease lapses, not after 24
 * hours; and only the owner's answer is recorded, so an owner that lost its key changes nothing.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

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
  /** The key is new (or expired): the caller runs the request, then `complete`s or `release`s. */
  Reserved: {}
  /** The same request was answered before: replay this response. */
  Replay: { readonly response: StoredResponse }
  /** The key was used with another method, path or body. */
  Mismatch: {}
  /** A request with this key is still running. */
  InProgress: {}
}>
/** The constructors and matchers of {@link Reservation}. */
export const Reservation = Data.taggedEnum<Reservation>()

/**
 * The idempotency port. `owner` names one reservation (one request: the caller mints it); `now` is
 * the caller's clock. A key held by a running request whose lease lapsed is as absent.
 *
 * @category services
 */
export class IdempotencyStore extends Context.Tag("@cobro/domain/IdempotencyStore")<
  IdempotencyStore,
  {
    /**
     * `fingerprint` identifies the request (method, path and body digest). `Reserved`: `owner` holds
     * the key for {@link LEASE_MS} from `now`.
     */
    readonly reserve: (
      scope: Scope,
      fingerprint: string,
      now: DateTime.Utc,
      owner: string
    ) => Effect.Effect<Reservation>
    /** Extends the owner's lease to {@link LEASE_MS} from `now`; false when the key is no longer its own. */
    readonly renew: (scope: Scope, owner: string, now: DateTime.Utc) => Effect.Effect<boolean>
    /** Records the response of the owner's running request; false (nothing recorded) when the key is not its own. */
    readonly complete: (scope: Scope, owner: string, response: StoredResponse) => Effect.Effect<boolean>
    /** Forgets the owner's key whose request failed without a response worth replaying (a 5xx). */
    readonly release: (scope: Scope, owner: string) => Effect.Effect<void>
  }
>() {}

interface Entry {
  readonly fingerprint: string
  readonly owner: string
  readonly reservedAt: number
  readonly leaseUntil: number
  readonly response: StoredResponse | undefined
}

/** Whether an entry still holds its key at `now`: within the retention and, while running, its lease. */
const holds = (entry: Entry, now: number): boolean =>
  now - entry.reservedAt < RETENTION_MS && (entry.response !== undefined || now < entry.leaseUntil)

const scopeKey = (scope: Scope): string => `${scope.merchantId}\u0000${scope.mode}\u0000${scope.key}`

/** How many reservations pass between two sweeps of expired keys. */
const SWEEP_EVERY = 1024

/**
 * An in-memory store for tests and the in-memory setup. A key is remembered for {@link RETENTION_MS}
 * from its first reservation; after that, or when its running request's lease lapsed, it is new again.
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
  return {
    reserve: (scope, fingerprint, now, owner) =>
      Effect.sync((): Reservation => {
        const at = DateTime.toEpochMillis(now)
        if (++reservations % SWEEP_EVERY === 0) sweep(at)
        const key = scopeKey(scope)
        const entry = entries.get(key)
        if (entry !== undefined && holds(entry, at)) {
          if (entry.fingerprint !== fingerprint) return Reservation.Mismatch()
          return entry.response === undefined
            ? Reservation.InProgress()
            : Reservation.Replay({ response: entry.response })
        }
        entries.set(key, {
          fingerprint,
          owner,
          reservedAt: at,
          leaseUntil: at + LEASE_MS,
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
    complete: (scope, owner, response) =>
      Effect.sync(() => {
        const entry = running(scope, owner)
        if (entry === undefined) return false
        entries.set(scopeKey(scope), { ...entry, response })
        return true
      }),
    release: (scope, owner) =>
      Effect.sync(() => {
        if (running(scope, owner) !== undefined) entries.delete(scopeKey(scope))
      })
  }
})
