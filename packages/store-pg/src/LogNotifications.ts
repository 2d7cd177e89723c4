/**
 * Wake-ups for consumers of the log: a signal after appends commit, so that subscriptions need not
 * poll hard. PostgreSQL delivers it by LISTEN/NOTIFY; polling stays the fallback.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Migrations from "./Migrations.js"

/** A stream that emits (the stream id, when known) after appends commit. May drop or merge signals. */
export class LogNotifications extends Context.Tag("@cobro/store-pg/LogNotifications")<
  LogNotifications,
  { readonly appended: Stream.Stream<string> }
>() {}

/** No wake-ups: consumers poll. */
export const layerNone: Layer.Layer<LogNotifications> = Layer.succeed(LogNotifications, {
  appended: Stream.never
})

/**
 * Wake-ups by `LISTEN cobro_events` on a dedicated PostgreSQL connection, shared by every consumer
 * of the process: one LISTEN while any consumer runs, fanned out. (One LISTEN per consumer on the
 * shared listening connection overlapped their queries, and a consumer that stopped ran an UNLISTEN
 * that silenced all the others.) A failing listener is logged and retried: consumers keep polling
 * meanwhile.
 */
export const layerListen: Layer.Layer<LogNotifications, never, PgClient.PgClient> = Layer.scoped(
  LogNotifications,
  Effect.gen(function* () {
    const client = yield* PgClient.PgClient
    // Shared: the LISTEN starts with the first consumer and ends (UNLISTEN) with the last one.
    const appended = yield* client.listen(Migrations.channel).pipe(
      Stream.tapError((error) => Effect.logWarning("LISTEN cobro_events failed; polling meanwhile", error)),
      Stream.retry(Schedule.spaced("1 second")),
      Stream.orDie,
      Stream.share({ capacity: 64, strategy: "sliding" })
    )
    return { appended }
  })
)
