/**
 * Supervision of the server's background workers:
 * each named worker runs for ever in a fiber of the layer's scope; a failure, or an end it was not
 * meant to reach, is logged with its cause and the worker starts again after an exponential backoff.
 * The registry keeps each worker's health (up, or down since when), which `/ready` reads: a worker
 * down longer than a bound makes the service not ready, by name.
 */
import * as Readiness from "@cobro/http/Readiness"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/** How workers are restarted and when a down worker makes the service not ready. */
export interface Options {
  /** The first restart delay; it doubles with each failure in a row. Default 200 ms. */
  readonly minBackoff?: Duration.DurationInput
  /**
   * The longest restart delay. Default 1 second: a worker that failed because the database was away
   * runs again within a second of its return, and `/ready`, which counts a worker that is not
   * running, turns with it (issue 33).
   */
  readonly maxBackoff?: Duration.DurationInput
  /**
   * How long a restarted worker must run without failing to count as up again (and a later failure
   * to start a new streak, backing off from `minBackoff`). Default 5 seconds.
   */
  readonly stableAfter?: Duration.DurationInput
  /** How long a worker may be down before `/ready` answers 503 naming it. Default {@link DEFAULT_DOWN_BOUND}. */
  readonly downBound?: Duration.DurationInput
  /**
   * The clock of the supervision's own timestamps and pauses; default the wall clock, not the clock
   * in context: an advance of the sandbox's virtual clock must not make a worker look down for a day.
   */
  readonly clock?: Clock.Clock
}

/** The default bound on how long a worker may be down while `/ready` still answers 200. */
export const DEFAULT_DOWN_BOUND: Duration.Duration = Duration.seconds(30)

/** One worker's health. */
export interface WorkerHealth {
  readonly name: string
  /** When the worker went down (its first failure in a row), while it is down. */
  readonly downSince: Option.Option<DateTime.Utc>
  /** Its failures in a row (0 once it has run `stableAfter` since its last restart). */
  readonly failures: number
}

/** The registry of supervised workers. */
export class Supervisor extends Context.Tag("@cobro/server/Supervisor")<
  Supervisor,
  {
    /** Forks `worker` in the current scope, restarted for ever; ends with the scope. */
    readonly supervise: <E, R>(
      name: string,
      worker: Effect.Effect<unknown, E, R>
    ) => Effect.Effect<void, never, R | Scope.Scope>
    /** Every worker's health, in the order they were supervised. */
    readonly health: Effect.Effect<ReadonlyArray<WorkerHealth>>
    /** Fails with a reason per worker down longer than `downBound`. */
    readonly readiness: Effect.Effect<void, Readiness.NotReady>
  }
>() {}

/** What the registry keeps of a worker (epoch ms of the supervision's clock). */
interface State {
  readonly name: string
  failures: number
  /** Its first failure in a row, while it is down. */
  downSince: number | undefined
  /** When it was last (re)started. */
  startedAt: number
  running: boolean
}

/**
 * A failure in a line: the error's message, and a database error's own words (the `cause` of a
 * `SqlError`, which `Cause.pretty` omits). The full cause follows in the log entry.
 */
const summary = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const own = error instanceof Error ? error.message : String(error)
  const inner = (error as { cause?: { message?: unknown } } | undefined)?.cause?.message
  return typeof inner === "string" && inner !== own ? `${own} (${inner})` : own
}

/** Builds a registry. */
export const make = (options: Options = {}) =>
  Effect.sync(() => {
    const clock = options.clock ?? Clock.make()
    const stableAfter = Duration.toMillis(options.stableAfter ?? Duration.seconds(5))
    const downBound = Duration.toMillis(options.downBound ?? DEFAULT_DOWN_BOUND)
    const backoff = Schedule.exponential(options.minBackoff ?? Duration.millis(200)).pipe(
      Schedule.union(Schedule.spaced(options.maxBackoff ?? Duration.seconds(1)))
    )
    const states: Array<State> = []

    // A worker that has run `stableAfter` since its restart is up, whatever it failed before.
    const downSince = (state: State, now: number): number | undefined =>
      state.running && now - state.startedAt >= stableAfter ? undefined : state.downSince

    const supervise = <E, R>(name: string, worker: Effect.Effect<unknown, E, R>) =>
      Effect.gen(function* () {
        const state: State = { name, failures: 0, downSince: undefined, startedAt: 0, running: false }
        states.push(state)
        const driver = yield* Schedule.driver(backoff)
        const loop = Effect.gen(function* () {
          while (true) {
            state.startedAt = clock.unsafeCurrentTimeMillis()
            state.running = true
            // Interruption (the scope closing) is not caught: it ends the loop.
            const exit = yield* Effect.exit(worker)
            const now = clock.unsafeCurrentTimeMillis()
            state.running = false
            if (now - state.startedAt >= stableAfter) {
              state.failures = 0
              state.downSince = undefined
              yield* driver.reset
            }
            state.failures += 1
            state.downSince ??= now
            const annotations = { worker: name, failuresInARow: state.failures }
            yield* (
              Exit.isFailure(exit)
                ? Effect.logError(
                    `worker "${name}" failed: ${summary(exit.cause)}; restarting with backoff`,
                    exit.cause
                  )
                : Effect.logWarning(`worker "${name}" ended, which it never should; restarting with backoff`)
            ).pipe(Effect.annotateLogs(annotations))
            yield* driver.next(undefined).pipe(Effect.ignore, Effect.withClock(clock))
          }
        })
        yield* Effect.forkScoped(loop)
      })

    const health = Effect.sync(() => {
      const now = clock.unsafeCurrentTimeMillis()
      return states.map((state): WorkerHealth => {
        const since = downSince(state, now)
        return {
          name: state.name,
          downSince: since === undefined ? Option.none() : Option.some(DateTime.unsafeMake(since)),
          failures: since === undefined ? 0 : state.failures
        }
      })
    })

    // Ready as soon as a worker runs again: its stability shows in `health`, not in `/ready`, which
    // must turn within a second of the database's return (issue 33).
    const readiness = Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const reasons = states.flatMap((state) => {
        const since = state.running ? undefined : state.downSince
        return since === undefined || now - since <= downBound
          ? []
          : [
              `background worker "${state.name}" has been down for ${Math.round((now - since) / 1000)} s ` +
                `(since ${new Date(since).toISOString()}, ${state.failures} failures in a row)`
            ]
      })
      return reasons.length === 0 ? Effect.void : Effect.fail(new Readiness.NotReady({ reasons }))
    })

    return Supervisor.of({ supervise, health, readiness })
  })

/** The registry as a service. */
export const layer = (options: Options = {}): Layer.Layer<Supervisor> =>
  Layer.effect(Supervisor, make(options))

/**
 * {@link layer} with the bound read from `COBRO_WORKER_DOWN_BOUND` (a duration, e.g. `30 seconds`),
 * {@link DEFAULT_DOWN_BOUND} when unset.
 */
export const layerConfig: Layer.Layer<Supervisor, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(
    Config.duration("COBRO_WORKER_DOWN_BOUND").pipe(Config.withDefault(DEFAULT_DOWN_BOUND)),
    (downBound) => layer({ downBound })
  )
)

/** A layer that runs `worker` under the {@link Supervisor} for the layer's lifetime. */
export const worker = <E, R>(name: string, worker: Effect.Effect<unknown, E, R>) =>
  Layer.scopedDiscard(Effect.flatMap(Supervisor, (supervisor) => supervisor.supervise(name, worker)))
