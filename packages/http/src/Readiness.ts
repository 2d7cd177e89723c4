/**
 * Whether the service can answer (`GET /ready`, issue 4 "Running it"): the server provides the check,
 * typically that the event store answers a read.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The readiness check: succeeds when the service can serve requests. */
export class Readiness extends Context.Tag("@cobro/http/Readiness")<
  Readiness,
  { readonly check: Effect.Effect<void, unknown> }
>() {}

/** How long `/ready` waits for the check before answering that the service is not ready. */
export const TIMEOUT = Duration.seconds(2)

/**
 * Ready when the event store answers a one-event read of the log. A read that dies counts as not
 * ready, not as a defect: `PgEventStore` dies on a connection error, which is exactly a database
 * that is down (`/ready` answers 503, never 500).
 */
export const layerFromEventStore: Layer.Layer<Readiness, never, EventStore.EventStore> = Layer.effect(
  Readiness,
  Effect.map(EventStore.EventStore, (store) => ({
    check: store.readAll({ limit: 1 }).pipe(Effect.asVoid, Effect.sandbox)
  }))
)

/** Always ready (tests of other things). */
export const layerAlways: Layer.Layer<Readiness> = Layer.succeed(Readiness, { check: Effect.void })
