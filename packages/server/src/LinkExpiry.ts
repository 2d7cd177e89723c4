/**
 * The link expiry sweeper (spec-decisions L10, "When a link expires"): a background worker that
 * records `LinkExpired` for every ACTIVE link whose `expiration_date` has passed, without a request
 * touching it, so that the log (B3, the audit, projections, webhooks consumers) holds the expiry.
 *
 * It reads the due links from the `ReadModels.linkExpiry` read model and decides each one on its
 * stream through `LinkPayments.expire`, which leaves a link paid, being paid, cancelled or already
 * expired as it is. Several server processes may sweep at once: they find the same links, one
 * append wins, the other's conflict is retried by the command handler and decides nothing. The
 * clock is the clock in context, so with `COBRO_CLOCK=virtual` an advance makes links due at the
 * next round.
 */
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Sweeper from "./Sweeper.js"

export { BACKLOG_PAUSE, DEFAULT_BATCH_SIZE, DEFAULT_POLL_INTERVAL, type Round } from "./Sweeper.js"

/** How the sweeper runs: its pause between rounds, links per round (100) and at once (4). */
export type Options = Sweeper.Options

/** Who the sweeper's events name. */
const SWEEPER = { actor: "sweeper" }

/**
 * One round: the links due at the clock's `now`, each expired on its stream (`expired` counts the
 * links EXPIRED in the log after the round, by this node or another). A link whose expiry could not
 * be recorded (a conflict that outlasted the retries, a stream that no longer decides) is logged and
 * left for the next round; it never stops the sweeper.
 */
export const sweepOnce = Effect.fn("LinkExpiry.sweepOnce")(function* (options: Options = {}) {
  const now = yield* DateTime.now
  const due = yield* ReadModels.dueLinks({ now, limit: Sweeper.batchSizeOf(options) }).pipe(Effect.orDie)
  return yield* Sweeper.round(
    due,
    (linkId) =>
      LinkPayments.expire(linkId, SWEEPER).pipe(
        Effect.map((state) => state._tag === "EXPIRED"),
        Effect.catchAll(
          Sweeper.leftForNextRound("link expiry: the link could not be expired; next round", { linkId })
        )
      ),
    options
  )
})

/**
 * The sweeper for ever ({@link Sweeper.forever}): a round, then a pause of `pollInterval`, or of
 * `BACKLOG_PAUSE` when the round was full (more may be due). Meant to run supervised among the
 * server's workers.
 */
export const run = (options: Options = {}) => Sweeper.forever(sweepOnce, options)
