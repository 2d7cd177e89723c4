/**
 * The failed sign-ins in a row of every email tried on the panel, known to Cobro or not, shared by
 * every node (issue 31, item 8). A known email's failures are also events of its stream, and the
 * account throttle reads them there (`PanelUser.retryAfterMillis`); an unknown email has no stream.
 * Were its failures counted anywhere else, for instance per node, an attacker spreading attempts
 * over the nodes would see a known email slow down and an unknown one not, and learn which emails
 * are users'. Counted here for both, with the account throttle's rule, they answer alike.
 *
 * The store keys a count by a hash of the lower-cased email ({@link keyOf}), so that its table
 * lists no address; a success deletes the count.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { sha256 } from "../kernel/DerivedId.js"
import { normalizeEmail, type Throttle } from "./PanelUser.js"

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/**
 * The key of an email's count: hex SHA-256 of `SignInFailures:<lower-cased email>`.
 *
 * @category constructors
 */
export const keyOf = (email: string): string => hex(sha256(`SignInFailures:${normalizeEmail(email)}`))

/**
 * The counts.
 *
 * @category services
 */
export class SignInFailures extends Context.Tag("@cobro/domain/SignInFailures")<
  SignInFailures,
  {
    /** The email's failures since its last success, and when the last was. */
    readonly throttle: (email: string) => Effect.Effect<Throttle>
    /** One more failure of the email, at `now`. */
    readonly failed: (email: string, now: DateTime.Utc) => Effect.Effect<void>
    /** The email signed in: its count starts again from none. */
    readonly succeeded: (email: string) => Effect.Effect<void>
  }
>() {}

/** No failures. */
export const none: Throttle = { failures: 0, lastFailureAt: Option.none() }

/**
 * The counts in this process's memory, for tests and a single node.
 *
 * @category layers
 */
export const layerMemory: Layer.Layer<SignInFailures> = Layer.sync(SignInFailures, () => {
  const counts = new Map<string, Throttle>()
  return SignInFailures.of({
    throttle: (email) => Effect.sync(() => counts.get(keyOf(email)) ?? none),
    failed: (email, now) =>
      Effect.sync(() => {
        const before = counts.get(keyOf(email)) ?? none
        const last = Option.match(before.lastFailureAt, {
          onNone: () => now,
          onSome: (at) => DateTime.max(at, now)
        })
        counts.set(keyOf(email), { failures: before.failures + 1, lastFailureAt: Option.some(last) })
      }),
    succeeded: (email) =>
      Effect.sync(() => {
        counts.delete(keyOf(email))
      })
  })
})
