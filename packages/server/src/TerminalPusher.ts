/**
 * The terminal pusher (spec-decisions A-23): a background worker that pushes again every terminal
 * checkout left SENDING once its claim has lapsed (`TerminalCheckout.PUSH_TIMEOUT_MS` after it): a
 * request cut between the commit of the checkout and its push, a node that died mid-push, a
 * terminal too busy to answer in time. A3 claims the push in the commit that creates the checkout
 * and pushes it inline as a fast path; nothing depends on the request living to the end.
 *
 * It reads the lapsed claims from the `ReadModels.duePushes` read model (written with the checkouts'
 * events) and claims each one again on its stream at the version read (`TerminalPayments.pushAgain`):
 * several server processes may push at once, and for each lapsed claim one append wins and that
 * node alone pushes. A checkout stays SENDING at most the push timeout plus one round of this
 * worker, then the push again (itself cut at the timeout) records the terminal's answer. The clock
 * is the clock in context, so with `COBRO_CLOCK=virtual` an advance makes claims lapse at once.
 * Each push again runs in a span of its own (`TerminalPusher.push`), linked to the span of the
 * request that claimed the push first, whose traceparent the read model keeps (issue 34).
 */
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as TraceContext from "@cobro/store-pg/TraceContext"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import * as Sweeper from "./Sweeper.js"

export { BACKLOG_PAUSE, DEFAULT_BATCH_SIZE, DEFAULT_POLL_INTERVAL, type Round } from "./Sweeper.js"

/** How the pusher runs: its pause between rounds (1 s), checkouts per round (100) and at once (4). */
export type Options = Sweeper.Options

/** The link of a push again's span to the request that claimed the push first, if it was traced. */
const linksOf = (push: ReadModels.DuePush): ReadonlyArray<Tracer.SpanLink> => {
  const span = TraceContext.spanOf(push.traceparent)
  return span === undefined ? [] : [{ _tag: "SpanLink", span, attributes: {} }]
}

/**
 * One round: the checkouts whose claim lapsed by the clock's `now`, each claimed again and pushed
 * (`expired` counts those this node pushed). A push that fails (a database error, a checkout that
 * no longer decides) is logged and left for the next round; it never stops the pusher.
 */
export const pushOnce = Effect.fn("TerminalPusher.pushOnce")(function* (options: Options = {}) {
  const now = yield* DateTime.now
  const due = yield* ReadModels.duePushClaims({
    claimedBefore: DateTime.subtractDuration(now, Duration.millis(TerminalCheckout.PUSH_TIMEOUT_MS)),
    limit: Sweeper.batchSizeOf(options)
  }).pipe(Effect.orDie)
  return yield* Sweeper.round(
    due,
    (push) =>
      Effect.catchAllCause(
        Effect.map(TerminalPayments.pushAgain(push.integrationId), Option.isSome),
        Sweeper.leftForNextRound("terminal pusher: the checkout could not be pushed; next round", {
          integrationId: push.integrationId
        })
      ).pipe(
        Effect.withSpan("TerminalPusher.push", {
          links: linksOf(push),
          attributes: { "cobro.integration_id": push.integrationId }
        })
      ),
    options
  )
})

/**
 * How many terminal checkouts wait for their terminal's answer to a push (test and production
 * alike): the gauge of `/metrics` (`ReadModels.pendingPushes`, one count of the pushes under way).
 */
export const pendingPushes: Effect.Effect<number, SqlError, SqlClient.SqlClient> = ReadModels.pendingPushes

/**
 * The pusher for ever ({@link Sweeper.forever}): a round, then a pause of `pollInterval`, or of
 * `BACKLOG_PAUSE` when the round was full. Meant to run supervised among the server's workers:
 * `Supervisor.worker("Terminal pusher", TerminalPusher.run())`.
 */
export const run = (options: Options = {}) => Sweeper.forever(pushOnce, options)
