/**
 * A virtual clock for HTTP tests: time starts at a fixed instant and moves only when a test (or
 * `POST /admin/v1/clock/advance`) advances it. `sleep` still waits in real time.
 */
import * as SandboxClock from "@cobro/domain/SandboxClock"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** 2026-11-21T15:00:00Z: 10:00 in Bogotá, a weekday. */
export const START = Date.UTC(2026, 10, 21, 15, 0, 0)

/** The test's handle on the clock. */
export class VirtualTime extends Context.Tag("@cobro/http/test/VirtualTime")<
  VirtualTime,
  { readonly advance: (millis: number) => Effect.Effect<DateTime.Utc>; readonly now: () => number }
>() {}

/** A virtual clock starting at `start`: Effect's `Clock`, the `SandboxClock` port and `VirtualTime`. */
export const layer = (start: number = START): Layer.Layer<VirtualTime | SandboxClock.SandboxClock> => {
  let now = start
  const real = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
  const advance = (millis: number) =>
    Effect.sync(() => {
      now += millis
      return DateTime.unsafeMake(now)
    })
  return Layer.mergeAll(
    Layer.succeed(VirtualTime, { advance, now: () => now }),
    Layer.succeed(SandboxClock.SandboxClock, { advance: (seconds) => advance(Math.round(seconds * 1000)) }),
    Layer.setClock(clock)
  )
}

/** A sandbox clock that refuses to move: the server on the real clock. */
export const layerNotVirtual: Layer.Layer<SandboxClock.SandboxClock> = Layer.succeed(
  SandboxClock.SandboxClock,
  {
    advance: () => Effect.fail(new SandboxClock.ClockNotVirtual())
  }
)
