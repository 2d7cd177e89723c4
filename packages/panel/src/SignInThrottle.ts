/**
 * Failed panel sign-ins slowed per client address (issue 22: "failed sign-ins slowed per account and
 * per address"): after {@link ADDRESS_FAILURES_BEFORE_WAIT} failures from one address within
 * {@link ADDRESS_WINDOW_MILLIS}, the address waits 1 s after its last failure, doubled by each further
 * failure in the window, up to 15 minutes. This stops one address from guessing the passwords of many
 * accounts, which the per-account throttle (`PanelUser.retryAfterMillis`, from the log) cannot.
 *
 * It also applies, per email, the account throttle's rule to every email tried, known to the log or
 * not, counted in `SignInFailures`, which every node shares (issue 31, item 8): an unknown email
 * answers as a known one would, with a wait after the same failures on whichever nodes they came,
 * and a refusal tells no one whether the address is a user's.
 *
 * The addresses' failures are kept in this process's memory, per node: a restart forgets them, and
 * behind a load balancer each node counts what it sees (an attacker spread over n nodes gets n times
 * the attempts per address; the emails' counts hold across nodes). The map is bounded
 * ({@link MAX_ENTRIES}): past it the addresses touched longest ago are dropped first.
 */
import * as PanelUser from "@cobro/domain/PanelUser"
import { SignInFailures } from "@cobro/domain/SignInFailures"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The failures from one address within the window after which it waits. */
export const ADDRESS_FAILURES_BEFORE_WAIT = 10

/** The sliding window an address's failures are counted in: 15 minutes. */
export const ADDRESS_WINDOW_MILLIS = 15 * 60_000

/** The wait after the failure that reaches the bound: 1 s, doubled by each further failure. */
export const ADDRESS_FIRST_DELAY_MILLIS = 1_000

/** The longest wait of an address: 15 minutes. */
export const ADDRESS_MAX_DELAY_MILLIS = 15 * 60_000

/** The most addresses remembered at once. */
export const MAX_ENTRIES = 10_000

/**
 * How long an address that failed `failures` times within the window waits after its last failure.
 *
 * @category throttling
 */
export const addressDelayMillis = (failures: number): number =>
  failures < ADDRESS_FAILURES_BEFORE_WAIT
    ? 0
    : Math.min(
        ADDRESS_MAX_DELAY_MILLIS,
        ADDRESS_FIRST_DELAY_MILLIS * 2 ** Math.min(failures - ADDRESS_FAILURES_BEFORE_WAIT, 30)
      )

/**
 * The throttle of panel sign-ins: per address on this node, per email on all.
 *
 * @category services
 */
export class SignInThrottle extends Context.Tag("@cobro/panel/SignInThrottle")<
  SignInThrottle,
  {
    /** How many milliseconds an attempt from `address` for `email` at `now` must still wait (0: none). */
    readonly wait: (address: string, email: string, now: DateTime.Utc) => Effect.Effect<number>
    /** A checked attempt failed. */
    readonly failed: (address: string, email: string, now: DateTime.Utc) => Effect.Effect<void>
    /** A sign-in succeeded: the email's failures in a row are forgiven (the address's are not). */
    readonly succeeded: (email: string) => Effect.Effect<void>
  }
>() {}

/** A map that forgets the entries touched longest ago past `MAX_ENTRIES`. */
const touch = <K, V>(map: Map<K, V>, key: K, value: V) => {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as K)
}

/**
 * A throttle with no address's failures yet, over the emails' shared counts.
 *
 * @category constructors
 */
export const make: Effect.Effect<SignInThrottle["Type"], never, SignInFailures> = Effect.map(
  SignInFailures,
  (emails) => {
    /** Per address: the instants of its failures within the window, oldest first. */
    const addresses = new Map<string, Array<number>>()

    const recent = (address: string, now: number): Array<number> => {
      const failures = (addresses.get(address) ?? []).filter((t) => t > now - ADDRESS_WINDOW_MILLIS)
      if (failures.length === 0) addresses.delete(address)
      return failures
    }

    const wait = (address: string, email: string, now: DateTime.Utc) =>
      Effect.map(emails.throttle(email), (throttle) => {
        const millis = DateTime.toEpochMillis(now)
        const failures = recent(address, millis)
        const last = failures[failures.length - 1]
        const byAddress =
          last === undefined ? 0 : Math.max(0, last + addressDelayMillis(failures.length) - millis)
        return Math.max(byAddress, PanelUser.retryAfterMillis(throttle, now))
      })

    const failed = (address: string, email: string, now: DateTime.Utc) =>
      Effect.zipRight(
        Effect.sync(() => {
          const millis = DateTime.toEpochMillis(now)
          const failures = recent(address, millis)
          failures.push(millis)
          // A window holds no more failures than it takes to reach the longest wait.
          touch(addresses, address, failures.slice(-64))
        }),
        emails.failed(email, now)
      )

    const succeeded = (email: string) => emails.succeeded(email)

    return SignInThrottle.of({ wait, failed, succeeded })
  }
)

/**
 * The throttle of this node, over the emails' counts in context (the store's, shared by the nodes).
 *
 * @category layers
 */
export const layer: Layer.Layer<SignInThrottle, never, SignInFailures> = Layer.effect(SignInThrottle, make)
