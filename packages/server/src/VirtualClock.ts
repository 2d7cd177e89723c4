/**
 * The sandbox clock (brief, Time; `SandboxClock` port): with `COBRO_CLOCK=virtual`, an Effect `Clock`
 * that reads the underlying clock plus an offset that an administrator advances, installed as the
 * clock of the whole server so that every `Clock`/`DateTime.now` reader sees it.
 */
import * as SandboxClock from "@cobro/domain/SandboxClock"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A `Clock` ahead of its underlying clock by an offset that only grows. */
export interface VirtualClock extends Clock.Clock {
  /** How far ahead of the underlying clock, in milliseconds. */
  readonly offsetMillis: () => number
  /** Moves the offset forward to `offsetMillis` if it is ahead of the current one (never back). */
  readonly catchUp: (offsetMillis: number) => void
}

/** A virtual clock over `underlying` (its sleeps are the underlying clock's: real durations). */
export const make = (underlying: Clock.Clock, initialOffsetMillis = 0): VirtualClock => {
  let offset = Math.max(0, initialOffsetMillis)
  const millis = () => underlying.unsafeCurrentTimeMillis() + offset
  const nanos = () => underlying.unsafeCurrentTimeNanos() + BigInt(Math.round(offset * 1_000_000))
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    sleep: (duration: Duration.Duration) => underlying.sleep(duration),
    offsetMillis: () => offset,
    catchUp: (next) => {
      if (next > offset) offset = next
    }
  }
}

const now = (clock: Clock.Clock) => DateTime.unsafeMake(clock.unsafeCurrentTimeMillis())

/** Seconds to milliseconds; a negative or non-finite amount moves nothing. */
const toMillis = (seconds: number) =>
  Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0

/**
 * Builds a virtual clock over the clock in context, installs it as the clock of everything built or
 * run after it in the same scope, and returns it.
 */
export const install = (initialOffsetMillis = 0) =>
  Effect.gen(function* () {
    const clock = make(yield* Effect.clock, initialOffsetMillis)
    yield* Effect.withClockScoped(clock)
    return clock
  })

/**
 * `COBRO_CLOCK=virtual` on one node: the offset lives in memory (lost on restart). Provide it
 * before (below) every other layer so that they all read the virtual clock.
 */
export const layerVirtual: Layer.Layer<SandboxClock.SandboxClock> = Layer.scoped(
  SandboxClock.SandboxClock,
  Effect.map(install(), (clock) =>
    SandboxClock.SandboxClock.of({
      advance: (seconds) =>
        Effect.sync(() => {
          clock.catchUp(clock.offsetMillis() + toMillis(seconds))
          return now(clock)
        })
    })
  )
)

/** The table that keeps the shared offset: one row. */
export const table = "cobro_sandbox_clock"

/** Creates the offset's table if missing (the server runs it in its locked start-up step). */
export const setup: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    offset_ms bigint NOT NULL)`
).pipe(Effect.asVoid)

/** How often a node reads the offset that other nodes may have advanced. */
export const syncInterval: Duration.DurationInput = "1 second"

/**
 * `COBRO_CLOCK=virtual` kept in the database: the offset survives restarts and every node of one
 * database follows it (an advance on one node reaches the others within `syncInterval`; an advance
 * returns on its own node the offset the database holds, so concurrent advances add up).
 */
export const layerVirtualShared: Layer.Layer<SandboxClock.SandboxClock, SqlError, SqlClient.SqlClient> =
  Layer.scoped(
    SandboxClock.SandboxClock,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* setup
      const read = Effect.map(
        sql<{ offset_ms: string }>`SELECT offset_ms::text AS offset_ms FROM ${sql(table)}`,
        (rows) => (rows[0] === undefined ? 0 : Number(rows[0].offset_ms))
      )
      const clock = yield* install(yield* read)
      // Polling keeps real time: the virtual clock's sleeps are the underlying clock's anyway.
      yield* read.pipe(
        Effect.tap((offset) => clock.catchUp(offset)),
        Effect.catchAllCause((cause) =>
          Effect.logWarning("VirtualClock: reading the shared offset failed", cause)
        ),
        Effect.zipRight(Effect.sleep(syncInterval)),
        Effect.forever,
        Effect.forkScoped
      )
      return SandboxClock.SandboxClock.of({
        advance: (seconds) =>
          sql<{ offset_ms: string }>`
            INSERT INTO ${sql(table)} (id, offset_ms) VALUES (true, ${toMillis(seconds)})
            ON CONFLICT (id) DO UPDATE SET offset_ms = ${sql(table)}.offset_ms + EXCLUDED.offset_ms
            RETURNING offset_ms::text AS offset_ms`.pipe(
            Effect.map((rows) => {
              clock.catchUp(Number(rows[0]!.offset_ms))
              return now(clock)
            }),
            Effect.orDie,
            Effect.withSpan("VirtualClock.advance")
          )
      })
    })
  )

/** The real clock: `advance` is refused with `ClockNotVirtual`. */
export const layerReal: Layer.Layer<SandboxClock.SandboxClock> = Layer.succeed(
  SandboxClock.SandboxClock,
  SandboxClock.SandboxClock.of({ advance: () => Effect.fail(new SandboxClock.ClockNotVirtual()) })
)
