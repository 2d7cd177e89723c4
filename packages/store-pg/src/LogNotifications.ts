/**
 * Wake-ups for consumers of the log: a signal after appends commit, so that subscriptions need not
 * poll hard. PostgreSQL delivers it by LISTEN/NOTIFY; polling stays the fallback.
 */
import { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Pg from "pg"
import * as PgPool from "./PgPool.js"

/**
 * The notification channel that appends signal after they commit (`pg_notify`): the append
 * functions of the migrations name it, and the store's wake-up path and PGlite's listener use it.
 */
export const channel = "cobro_events"

/** A stream that emits (the stream id, when known) after appends commit. May drop or merge signals. */
export class LogNotifications extends Context.Tag("@cobro/store-pg/LogNotifications")<
  LogNotifications,
  { readonly appended: Stream.Stream<string> }
>() {}

/** No wake-ups: consumers poll. */
export const layerNone: Layer.Layer<LogNotifications> = Layer.succeed(LogNotifications, {
  appended: Stream.never
})

/** How often the listening connection is checked (a connection that died without a word, half open). */
export const PING_INTERVAL: Duration.Duration = Duration.seconds(5)

/**
 * The channel of the listening connection's own check: a NOTIFY sent through the pool must come back
 * to it. A LISTEN through a transaction-mode pooler (pgbouncer) succeeds and then receives nothing,
 * while its connection still answers a `SELECT 1`: only a notification that arrives proves it works.
 */
export const probeChannel = "cobro_listen_probe"

/** How long a check of the listening connection (its own NOTIFY back) may take before it counts as lost. */
export const PING_TIMEOUT: Duration.Duration = Duration.seconds(5)

/** The pauses between attempts to listen again after the connection is lost: 100 ms doubling, at most 5 s. */
export const reconnect = Schedule.exponential(Duration.millis(100)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(5)))
)

// With the driver's own words in the message: a log shows the message of a `SqlError`, not its cause.
const lost = (cause: unknown) =>
  new SqlError({
    cause,
    message: `LISTEN cobro_events: connection lost (${cause instanceof Error ? cause.message : String(cause)})`
  })

/**
 * LISTEN on a connection of its own (`pg`'s client with the pool's settings): emits the payload of
 * each NOTIFY, and once at once after the LISTEN, since appends made while nobody listened were not
 * announced. Fails as soon as the connection errors, ends, or does not answer a periodic check;
 * `@effect/sql-pg`'s `listen` instead swallows the error of its connection, and its stream then
 * waits for ever on a dead connection, which left consumers on their slow poll until a restart
 * (issue 17).
 */
const listenOnce = (config: Pg.ClientConfig, pool: Pg.Pool): Stream.Stream<string, SqlError> =>
  Stream.asyncScoped<string, SqlError>((emit) =>
    Effect.gen(function* () {
      const onError = (error: Error) => void emit.fail(lost(error))
      const onEnd = () => void emit.fail(lost(new Error("the connection ended")))
      // This process's checks: each sends a fresh token and waits for it on the listening connection.
      const probes = new Map<string, () => void>()
      const onNotification = (message: Pg.Notification) => {
        if (message.channel === channel) void emit.single(message.payload ?? "")
        else if (message.channel === probeChannel) probes.get(message.payload ?? "")?.()
      }
      const probe = Effect.async<void, SqlError>((resume) => {
        const token = globalThis.crypto.randomUUID()
        probes.set(token, () => resume(Effect.void))
        pool
          .query("SELECT pg_notify($1, $2)", [probeChannel, token])
          .catch((cause: unknown) => resume(Effect.fail(lost(cause))))
        return Effect.sync(() => probes.delete(token))
      }).pipe(
        Effect.timeoutFail({
          duration: PING_TIMEOUT,
          onTimeout: () =>
            lost(
              new Error(
                "its own NOTIFY did not come back: LISTEN receives nothing (behind a transaction-mode pooler, set DATABASE_LISTEN_URL to a direct connection)"
              )
            )
        })
      )
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new Pg.Client(config)
            client.on("error", onError)
            await client.connect()
            return client
          },
          catch: lost
        }),
        (client) =>
          Effect.sync(() => {
            client.off("notification", onNotification)
            client.off("end", onEnd)
          }).pipe(
            Effect.zipRight(Effect.promise(() => client.end().catch(() => undefined))),
            Effect.timeoutOption(1000),
            Effect.ensuring(Effect.sync(() => client.off("error", onError)))
          )
      )
      client.on("end", onEnd)
      client.on("notification", onNotification)
      yield* Effect.tryPromise({
        try: () =>
          client.query(`LISTEN ${Pg.escapeIdentifier(channel)}; LISTEN ${Pg.escapeIdentifier(probeChannel)}`),
        catch: lost
      })
      // Listening for real before consumers are told to catch up.
      yield* probe
      yield* Effect.promise(() => emit.single(""))
      yield* probe.pipe(
        Effect.zipRight(Effect.sleep(PING_INTERVAL)),
        Effect.forever,
        Effect.catchAll((error) => Effect.promise(() => emit.fail(error))),
        Effect.delay(PING_INTERVAL),
        Effect.forkScoped
      )
    })
  )

/**
 * Wake-ups by `LISTEN cobro_events` on a dedicated PostgreSQL connection, shared by every consumer
 * of the process: one LISTEN while any consumer runs, fanned out. (One LISTEN per consumer on the
 * shared listening connection overlapped their queries, and a consumer that stopped ran an UNLISTEN
 * that silenced all the others.) A lost connection is logged with its cause and listened on again
 * after {@link reconnect}'s pause, with a wake-up once it is back; consumers poll meanwhile.
 */
export const layerListen: Layer.Layer<LogNotifications, never, PgPool.PgPool> = Layer.scoped(
  LogNotifications,
  Effect.gen(function* () {
    const pool = yield* PgPool.PgPool
    // Shared: the LISTEN starts with the first consumer and ends with the last one.
    const appended = yield* listenOnce(PgPool.listenConfig(pool), pool).pipe(
      Stream.tapErrorCause((cause) =>
        Effect.logWarning("LISTEN cobro_events lost; polling until it listens again", cause)
      ),
      Stream.retry(reconnect),
      Stream.orDie,
      Stream.share({ capacity: 64, strategy: "sliding" })
    )
    return { appended }
  })
)
