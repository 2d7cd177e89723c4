/**
 * The idempotency port: `Idempotency-Key` on POST requests (beyond the spec, as Stripe and Square
 * have it). The same key and body within the retention returns the first response; the same key
 * with another body is a conflict; a request still running under the key is a conflict too.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"

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
