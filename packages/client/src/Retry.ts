/**
 * When a call is retried and how long it waits (issue "client", retries made safe): network errors,
 * 5xx, 429 and the server's 409 `IdempotencyKeyInUse` are retried with exponential backoff and
 * jitter, at least as late as `Retry-After` asks, at most `maxRetries` times; any other 4xx never.
 * Pure functions: the transport (`internal/transport.ts`) applies them, the tests check them.
 */
import * as Duration from "effect/Duration"

/**
 * How a client retries.
 *
 * @category models
 */
export interface Policy {
  /** Retries after the first attempt (0: never retry). */
  readonly maxRetries: number
  /** The backoff of the first retry; each retry doubles it. */
  readonly initialDelay: Duration.DurationInput
  /** The longest backoff (before `Retry-After`). */
  readonly maxDelay: Duration.DurationInput
  /** A `Retry-After` longer than this is not waited for: the answer is returned as it is. */
  readonly maxRetryAfter: Duration.DurationInput
}

/**
 * The defaults: 3 retries, 500 ms doubling up to 10 s, `Retry-After` honoured up to 60 s.
 *
 * @category constants
 */
export const defaults: Policy = {
  maxRetries: 3,
  initialDelay: "500 millis",
  maxDelay: "10 seconds",
  maxRetryAfter: "60 seconds"
}

/**
 * The code of the server's 409 while a request with the same `Idempotency-Key` still runs
 * (`@cobro/api/Errors` `Codes.IdempotencyKeyInUse`): safe to retry, it answers `Retry-After`.
 *
 * @category constants
 */
export const IDEMPOTENCY_KEY_IN_USE = "IdempotencyKeyInUse"

/**
 * The methods whose calls may have an effect: each carries an `Idempotency-Key` (the server's
 * `Idempotency.METHODS`).
 *
 * @category constants
 */
export const METHODS_WITH_EFFECT: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * What an attempt ended with, as far as retrying is concerned.
 *
 * @category models
 */
export type Outcome =
  | { readonly _tag: "Network" }
  | {
      readonly _tag: "Response"
      readonly status: number
      /** The first error item's `code`, when the body is the error envelope. */
      readonly code: string | undefined
    }

/**
 * Whether an attempt that ended so may be retried: a network error, a 5xx, a 429, or the 409 of a
 * key in use. Every other answer is final (a 4xx says the request itself is wrong).
 *
 * @category predicates
 */
export const isRetryable = (outcome: Outcome): boolean =>
  outcome._tag === "Network" ||
  outcome.status >= 500 ||
  outcome.status === 429 ||
  (outcome.status === 409 && outcome.code === IDEMPOTENCY_KEY_IN_USE)

/**
 * The wait a `Retry-After` header asks for, in milliseconds: delay-seconds or an HTTP date
 * (RFC 9110 10.2.3); `undefined` when absent or unreadable.
 *
 * @category parsing
 */
export const parseRetryAfter = (header: string | undefined, nowMillis: number): number | undefined => {
  if (header === undefined) return undefined
  const text = header.trim()
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMillis)
}

/**
 * The wait before retry number `retry` (0 for the first retry): the exponential backoff
 * `initialDelay * 2^retry`, capped at `maxDelay`, with "equal jitter" (between half of it and all of
 * it, by `random` in [0, 1)), and never shorter than `retryAfterMillis`.
 *
 * @category scheduling
 */
export const delayMillis = (
  policy: Policy,
  retry: number,
  retryAfterMillis: number | undefined,
  random: number
): number => {
  const initial = Duration.toMillis(policy.initialDelay)
  const cap = Duration.toMillis(policy.maxDelay)
  const backoff = Math.min(cap, initial * 2 ** Math.min(retry, 52))
  const jittered = backoff / 2 + (random * backoff) / 2
  return Math.round(retryAfterMillis === undefined ? jittered : Math.max(retryAfterMillis, jittered))
}

/**
 * The decision after an attempt: retry after `delayMillis`, or stop (the attempt's result stands).
 *
 * @category models
 */
export type Decision = { readonly _tag: "Retry"; readonly delayMillis: number } | { readonly _tag: "Stop" }

/**
 * What to do after attempt number `retry` (0: the first attempt) ended with `outcome`.
 *
 * @category scheduling
 */
export const decide = (
  policy: Policy,
  retry: number,
  outcome: Outcome,
  retryAfterMillis: number | undefined,
  random: number
): Decision => {
  if (retry >= policy.maxRetries || !isRetryable(outcome)) return { _tag: "Stop" }
  if (retryAfterMillis !== undefined && retryAfterMillis > Duration.toMillis(policy.maxRetryAfter)) {
    return { _tag: "Stop" }
  }
  return { _tag: "Retry", delayMillis: delayMillis(policy, retry, retryAfterMillis, random) }
}
