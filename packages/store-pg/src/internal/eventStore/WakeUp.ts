/**
 * The event store's wake-up path: the NOTIFY on `LogNotifications.channel` that tells the log's
 * consumers that an autocommit append has committed. An append in a caller's transaction NOTIFYs in
 * its own statement instead (`cobro_append`'s `p_notify`), delivered by that transaction's commit.
 * @internal
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as LogNotifications from "../../LogNotifications.js"
import type * as PgPool from "../../PgPool.js"

/** The shortest time between two wake-up NOTIFYs sent after autocommit appends. */
export const notifyInterval: Duration.DurationInput = "5 millis"

// Wall-clock time, not the Clock in context: a test's virtual clock must not stall wake-ups.
const throttle = Effect.withClock(Effect.sleep(notifyInterval), Clock.make())

/** Tells the NOTIFY fiber that an append to the stream has committed: synchronous, it never waits. */
export type Signal = (streamId: string) => void

/**
 * Starts the NOTIFY fiber in the scope and returns its {@link Signal}. Wake-ups are sent once the
 * appends have committed, at most one per {@link notifyInterval} (`LogNotifications` may merge
 * signals): appends never wait for the NOTIFY lock, and a burst of appends costs a few NOTIFYs, not
 * one each. The first one goes at once. A failed NOTIFY is logged; consumers poll meanwhile.
 */
export const make = (autocommit: PgPool.Statement): Effect.Effect<Signal, never, Scope.Scope> =>
  Effect.gen(function* () {
    // A sliding queue of one: the signals of a burst merge into the latest.
    const committed = yield* Queue.sliding<string>(1)
    yield* Queue.take(committed).pipe(
      Effect.flatMap((streamId) =>
        autocommit("SELECT pg_notify($1, $2)", [LogNotifications.channel, streamId])
      ),
      Effect.catchAllCause((cause) =>
        Effect.logDebug("PgEventStore: NOTIFY failed; consumers poll meanwhile", cause)
      ),
      Effect.zipRight(throttle),
      Effect.forever,
      Effect.forkScoped
    )
    return (streamId) => {
      committed.unsafeOffer(streamId)
    }
  })
