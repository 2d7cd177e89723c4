/**
 * The loop of the server's sweepers (`LinkExpiry`, `PaymentTimeouts`): background workers that, round
 * after round, read what is due from a read model and decide each item on its streams, a few at once.
 * An item that could not be decided is logged and left for the next round; it never stops the
 * sweeper. Several server processes may sweep at once: they find the same items, one append wins, the
 * other's conflict is retried by the command handler and decides nothing.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** How a sweeper runs. */
export interface Options {
  /** The pause between rounds when nothing more is due; default 1 second (real time). */
  readonly pollInterval?: Duration.DurationInput
  /** Items decided per round; default 100. */
  readonly batchSize?: number
  /** Items decided at once within a round; default 4. */
  readonly concurrency?: number
}

/** The default pause between rounds. */
export const DEFAULT_POLL_INTERVAL: Duration.DurationInput = "1 second"

/** The default number of items per round. */
export const DEFAULT_BATCH_SIZE = 100

/** The default number of items decided at once. */
export const DEFAULT_CONCURRENCY = 4

/**
 * The pause after a full round before the next one: short, so that a backlog drains quickly, yet
 * long enough for the read model to apply the decisions just recorded (it lags the log).
 */
export const BACKLOG_PAUSE: Duration.DurationInput = "50 millis"

/** What a round did. */
export interface Round {
  /** Items the read model listed as due. */
  readonly due: number
  /** Of those, items that the round left expired (by this node or another). */
  readonly expired: number
}

/** The items a round reads at most. */
export const batchSizeOf = (options: Options): number => options.batchSize ?? DEFAULT_BATCH_SIZE

/**
 * A round over the items found due: each decided by `expire` (whether it is expired afterwards),
 * `concurrency` of them at once.
 */
export const round = <A, R>(
  due: ReadonlyArray<A>,
  expire: (item: A) => Effect.Effect<boolean, never, R>,
  options: Options
): Effect.Effect<Round, never, R> =>
  Effect.map(
    Effect.forEach(due, expire, { concurrency: options.concurrency ?? DEFAULT_CONCURRENCY }),
    (outcomes) => ({ due: due.length, expired: outcomes.filter(Boolean).length })
  )

/**
 * What a round does with an item it could not decide (a conflict that outlasted the retries, a stream
 * that no longer decides): logs `message` and why, annotated with the item, and counts it as not
 * expired, for the next round.
 */
export const leftForNextRound =
  (message: string, item: Record<string, unknown>) =>
  (reason: unknown): Effect.Effect<boolean> =>
    Effect.logWarning(message, reason).pipe(Effect.annotateLogs(item), Effect.as(false))

/**
 * A sweeper for ever: a round, then a pause of `pollInterval`, or of {@link BACKLOG_PAUSE} when the
 * round was full (more may be due). Meant to run supervised among the server's workers.
 */
export const forever = <O extends Options, R>(
  sweepOnce: (options: O) => Effect.Effect<Round, never, R>,
  options: O
): Effect.Effect<never, never, R> =>
  Effect.gen(function* () {
    const batchSize = batchSizeOf(options)
    const poll = Duration.decode(options.pollInterval ?? DEFAULT_POLL_INTERVAL)
    while (true) {
      const round = yield* sweepOnce(options)
      yield* Effect.sleep(round.due >= batchSize ? BACKLOG_PAUSE : poll)
    }
  })
