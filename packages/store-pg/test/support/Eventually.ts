/**
 * Waiting for visibility in tests. Catch-up reads (`readAll`, subscriptions, projections) stop below the
 * snapshot's xmin, and on a shared server any open transaction of the cluster holds that back: a test
 * that appends and then reads the log waits here first, bounded, instead of assuming it sees its events.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** How long a test waits for something to become visible, and how often it looks. */
export interface Options {
  readonly timeout?: Duration.DurationInput
  readonly interval?: Duration.DurationInput
}

/** A live clock, so that waiting works whatever clock the test provides (`TestClock`, a shifted one). */
const live = Clock.make()

/**
 * Runs `attempt` until `done` holds for its result, sleeping shortly in between; dies with a message
 * naming `what` was not seen (given the last result) if that takes longer than the timeout (default
 * 15 seconds).
 */
export const eventually = <A, E, R>(
  what: string | ((last: A) => string),
  attempt: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  options?: Options
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const timeout = Duration.toMillis(options?.timeout ?? Duration.seconds(15))
    const interval = options?.interval ?? Duration.millis(25)
    const deadline = live.unsafeCurrentTimeMillis() + timeout
    while (true) {
      const result = yield* attempt
      if (done(result)) return result
      if (live.unsafeCurrentTimeMillis() >= deadline) {
        const message = typeof what === "string" ? what : what(result)
        return yield* Effect.dieMessage(`Not visible after ${timeout} ms: ${message}`)
      }
      yield* Effect.sleep(interval).pipe(Effect.withClock(live))
    }
  })

/** Every event `readAll` returns now, paging from the start of the log. */
const readWholeLog = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const events: Array<EventStore.LoggedEvent> = []
  let after = EventStore.Start
  while (true) {
    const page = yield* store.readAll({ after, limit: 1000 })
    if (page.length === 0) return events
    events.push(...page)
    after = page[page.length - 1]!.checkpoint
  }
})

/**
 * Waits until `readAll` (and so every subscription and projection catch-up) sees each event committed
 * so far: as many events as `cobro_events` holds. Call it after appending, before a catch-up or a read
 * that must see those events; the assertions that follow stay as strict as before.
 */
export const logVisible: Effect.Effect<void, never, EventStore.EventStore | SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cobro_events`.pipe(Effect.orDie)
    const committed = row?.n ?? 0
    yield* eventually(
      (seen: number) =>
        `all ${committed} committed events readable by readAll (catch-up reads); it returned ${seen}`,
      Effect.map(readWholeLog, (events) => events.length),
      (seen) => seen >= committed
    )
  }
)

/** Waits until `readAll` returns each of these events (by id), wherever they are in the log. */
export const eventsVisible = (
  eventIds: ReadonlyArray<string>
): Effect.Effect<void, never, EventStore.EventStore> => {
  const wanted = new Set(eventIds.map((id) => id.toLowerCase()))
  const missing = (events: ReadonlyArray<EventStore.LoggedEvent>) => {
    const seen = new Set(events.map((e) => e.eventId.toLowerCase()))
    return [...wanted].filter((id) => !seen.has(id))
  }
  return Effect.asVoid(
    eventually(
      (events) => `events readable by readAll (catch-up reads); missing: ${missing(events).join(", ")}`,
      readWholeLog,
      (events) => missing(events).length === 0
    )
  )
}
