/**
 * The idempotency port: `Idempotency-Key` on POST requests (beyond the spec, as Stripe and Square
 * have it). The same key and body within the retention returns the first response; the same key
 * with another body is a conflict; a request still running under the key is a conflict too.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** How long a key is remembered: 24 hours. */
export const RETENTION_MS = 24 * 60 * 60 * 1000

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
export const Reservation = Data.taggedEnum<Reservation>()

/** The idempotency port. */
export class IdempotencyStore extends Context.Tag("@cobro/domain/IdempotencyStore")<
  IdempotencyStore,
  {
    /** `fingerprint` identifies the request (method, path and body digest). */
    readonly reserve: (scope: Scope, fingerprint: string, now: DateTime.Utc) => Effect.Effect<Reservation>
    /** Records the response of a reserved key. */
    readonly complete: (scope: Scope, response: StoredResponse) => Effect.Effect<void>
    /** Forgets a reserved key whose request failed without a response worth replaying (a 5xx). */
    readonly release: (scope: Scope) => Effect.Effect<void>
  }
>() {}

interface Entry {
  readonly fingerprint: string
  readonly reservedAt: number
  readonly response: StoredResponse | undefined
}

const scopeKey = (scope: Scope): string => `${scope.merchantId}\u0000${scope.mode}\u0000${scope.key}`

/** How many reservations pass between two sweeps of expired keys. */
const SWEEP_EVERY = 1024

/**
 * An in-memory store for tests and the in-memory setup. A key is remembered for {@link RETENTION_MS}
 * from its first reservation; after that it is new again.
 */
export const layerMemory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, () => {
  const entries = new Map<string, Entry>()
  let reservations = 0
  const sweep = (now: number) => {
    for (const [key, entry] of entries) {
      if (now - entry.reservedAt >= RETENTION_MS) entries.delete(key)
    }
  }
  return {
    reserve: (scope, fingerprint, now) =>
      Effect.sync((): Reservation => {
        const at = DateTime.toEpochMillis(now)
        if (++reservations % SWEEP_EVERY === 0) sweep(at)
        const key = scopeKey(scope)
        const entry = entries.get(key)
        if (entry !== undefined && at - entry.reservedAt < RETENTION_MS) {
          if (entry.fingerprint !== fingerprint) return Reservation.Mismatch()
          return entry.response === undefined
            ? Reservation.InProgress()
            : Reservation.Replay({ response: entry.response })
        }
        entries.set(key, { fingerprint, reservedAt: at, response: undefined })
        return Reservation.Reserved()
      }),
    complete: (scope, response) =>
      Effect.sync(() => {
        const key = scopeKey(scope)
        const entry = entries.get(key)
        if (entry !== undefined) entries.set(key, { ...entry, response })
      }),
    release: (scope) =>
      Effect.sync(() => {
        const key = scopeKey(scope)
        if (entries.get(key)?.response === undefined) entries.delete(key)
      })
  }
})
