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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** How the sweeper runs. */
export interface Options {
  /** The pause between rounds when nothing more is due; default 1 second (real time). */
  readonly pollInterval?: Duration.DurationInput
  /** Links decided per round; default 100. */
  readonly batchSize?: number
  /** Links decided at once within a round; default 4. */
  readonly concurrency?: number
}

/** The default pause between rounds. */
export const DEFAULT_POLL_INTERVAL: Duration.DurationInput = "1 second"

/** The default number of links per round. */
export const DEFAULT_BATCH_SIZE = 100

/**
 * The pause after a full round before the next one: short, so that a backlog drains quickly, yet
 * long enough for the read model to apply the expiries just recorded (it lags the log).
 */
export const BACKLOG_PAUSE: Duration.DurationInput = "50 millis"

/** What a round did. */
export interface Round {
  /** Links the read model listed as due. */
  readonly due: number
  /** Of those, links that are EXPIRED in the log after the round (by this node or another). */
  readonly expired: number
}

/**
 * One round: the links due at the clock's `now`, each expired on its stream. A link whose expiry
 * could not be recorded (a conflict that outlasted the retries, a stream that no longer decides) is
 * logged and left for the next round; it never stops the sweeper.
 */
export const sweepOnce = Effect.fn("LinkExpiry.sweepOnce")(function* (options: Options = {}) {
  const now = yield* DateTime.now
  const due = yield* ReadModels.dueLinks({ now, limit: options.batchSize ?? DEFAULT_BATCH_SIZE }).pipe(
    Effect.orDie
  )
  const outcomes = yield* Effect.forEach(
    due,
    (linkId) =>
      LinkPayments.expire(linkId).pipe(
        Effect.map((state) => state._tag === "EXPIRED"),
        Effect.catchAll((error) =>
          Effect.logWarning("link expiry: the link could not be expired; next round", error).pipe(
            Effect.annotateLogs({ linkId }),
            Effect.as(false)
          )
        )
      ),
    { concurrency: options.concurrency ?? 4 }
  )
  return { due: due.length, expired: outcomes.filter(Boolean).length } satisfies Round
})

/**
 * The sweeper for ever: a round, then a pause of `pollInterval`, or of {@link BACKLOG_PAUSE} when
 * the round was full (more may be due). Meant to run supervised among the server's workers.
 */
export const run = (options: Options = {}) =>
  Effect.gen(function* () {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
    const poll = Duration.decode(options.pollInterval ?? DEFAULT_POLL_INTERVAL)
    while (true) {
      const round = yield* sweepOnce(options)
      yield* Effect.sleep(round.due >= batchSize ? BACKLOG_PAUSE : poll)
    }
  })
