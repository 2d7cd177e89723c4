/**
 * Whether the service can answer (`GET /ready`, issue 4 "Running it"): the server provides the check,
 * that the event store answers a read and that no background worker has been down too long.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The readiness check: succeeds when the service can serve requests. A failure that is a
 * {@link NotReady} says why; any other counts as "the event store does not answer".
 */
export class Readiness extends Context.Tag("@cobro/http/Readiness")<
  Readiness,
  { readonly check: Effect.Effect<void, unknown> }
>() {}

/**
 * Why the service is not ready: one sentence per reason, each a `NotReady` item of the 503.
 *
 * @category errors
 */
export class NotReady extends Data.TaggedError("NotReady")<{ readonly reasons: ReadonlyArray<string> }> {}

/** How long `/ready` waits for the event store before answering that the service is not ready. */
export const TIMEOUT = Duration.millis(700)

/** The reason given when the event store does not answer. */
export const STORE_DOWN = "the event store does not answer"

/**
 * The event store's check: a one-event read of the log within {@link TIMEOUT}. A read that dies
 * counts as not ready, not as a defect: `PgEventStore` dies on a connection error, which is exactly
 * a database that is down (`/ready` answers 503, never 500).
 */
export const eventStore: Effect.Effect<
  Effect.Effect<void, NotReady>,
  never,
  EventStore.EventStore
> = Effect.map(EventStore.EventStore, (store) =>
  store.readAll({ limit: 1 }).pipe(
    Effect.asVoid,
    Effect.sandbox,
    Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => undefined }),
    Effect.mapError(() => new NotReady({ reasons: [STORE_DOWN] }))
  )
)

/** Ready when every check is: they run at once, and the reasons of all that are not are given. */
export const all = (checks: ReadonlyArray<Effect.Effect<void, NotReady>>): Effect.Effect<void, NotReady> =>
  Effect.forEach(checks, (check) => Effect.flip(check).pipe(Effect.option), {
    concurrency: "unbounded"
  }).pipe(
    Effect.flatMap((results) => {
      const reasons = results.flatMap((result) => (result._tag === "Some" ? result.value.reasons : []))
      return reasons.length === 0 ? Effect.void : Effect.fail(new NotReady({ reasons }))
    })
  )

/** Ready when the event store answers a one-event read of the log ({@link eventStore}). */
export const layerFromEventStore: Layer.Layer<Readiness, never, EventStore.EventStore> = Layer.effect(
  Readiness,
  Effect.map(eventStore, (check) => ({ check }))
)

/** Always ready (tests of other things). */
export const layerAlways: Layer.Layer<Readiness> = Layer.succeed(Readiness, { check: Effect.void })
