/**
 * The sandbox's virtual clock port (brief, Time): an operator advances time so that link expiry,
 * the void window and the webhook retry schedule can be exercised without waiting. Only a server
 * started with `COBRO_CLOCK=virtual` has one; everywhere else `advance` is refused.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The server runs on the real clock: time cannot be advanced.
 *
 * @category errors
 */
export class ClockNotVirtual extends Schema.TaggedError<ClockNotVirtual>()("ClockNotVirtual", {}) {}

/**
 * The sandbox clock port.
 *
 * @category services
 */
export class SandboxClock extends Context.Tag("@cobro/domain/SandboxClock")<
  SandboxClock,
  {
    /** Moves the clock forward by `seconds` (≥ 0) and returns the new now. */
    readonly advance: (seconds: number) => Effect.Effect<DateTime.Utc, ClockNotVirtual>
  }
>() {}
