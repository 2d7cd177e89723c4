/**
 * The payment timeout sweeper: a background worker that fails the payments a payer abandoned at
 * their step — the 3DS challenge, the bank of a PSE or bank-button payment, a wallet — once they have
 * been under way for the timeout (`Payment.ABANDONED_PAYMENT_TIMEOUT`, 15 minutes, or the `timeout`
 * option), so that nothing stays in flight for ever:
 *
 * - a payment link's payment (B, checkout page): the link is ACTIVE again and payable (REJECTED if
 *   it expired meanwhile), notified SALE_REJECTED like any failed payment (`LinkPayments.expirePayment`);
 * - an online payment (C4): the Payment is EXPIRED (C5 reads REJECTED, SALE_REJECTED is notified) and
 *   its intent ACTIVE again, attemptable (`OnlinePayments.expirePayment`, which also brings an intent
 *   that a crash left PROCESSING in line with its decided payment).
 *
 * A payer who comes back later is told the payment expired (the challenge and checkout pages).
 * The worker reads the due payments from the `ReadModels.paymentsInFlight` read model and decides each
 * one on its streams; the deciders check the deadline again, and leave a payment decided meanwhile
 * as it is. Several server processes may sweep at once: they find the same payments, one append
 * wins, the other's conflict is retried by the command handler and decides nothing. The clock is
 * the clock in context, so with `COBRO_CLOCK=virtual` an advance makes payments due at the next round.
 */
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** How the sweeper runs. */
export interface Options {
  /**
   * How long a payment may stay under way before it is failed; default
   * {@link Payment.ABANDONED_PAYMENT_TIMEOUT} (15 minutes). Give every node the same value.
   */
  readonly timeout?: Duration.DurationInput
  /** The pause between rounds when nothing more is due; default 1 second (real time). */
  readonly pollInterval?: Duration.DurationInput
  /** Payments decided per round; default 100. */
  readonly batchSize?: number
  /** Payments decided at once within a round; default 4. */
  readonly concurrency?: number
}

/** The default timeout: `Payment.ABANDONED_PAYMENT_TIMEOUT`. */
export const DEFAULT_TIMEOUT: Duration.Duration = Payment.ABANDONED_PAYMENT_TIMEOUT

/** The default pause between rounds. */
export const DEFAULT_POLL_INTERVAL: Duration.DurationInput = "1 second"

/** The default number of payments per round. */
export const DEFAULT_BATCH_SIZE = 100

/**
 * The pause after a full round before the next one: short, so that a backlog drains quickly, yet
 * long enough for the read model to apply the failures just recorded (it lags the log).
 */
export const BACKLOG_PAUSE: Duration.DurationInput = "50 millis"

/** What a round did. */
export interface Round {
  /** Payments the read model listed as due. */
  readonly due: number
  /** Of those, payments that the round left failed or expired (by this node or another). */
  readonly expired: number
}

/** Expires one due payment; whether it is failed or expired afterwards (by this node or another). */
const expireOne = (due: ReadModels.DuePayment, timeout: Duration.Duration) =>
  Effect.gen(function* () {
    if (due.kind === "online") {
      const { payment } = yield* OnlinePayments.expirePayment(due.transactionId, timeout)
      return payment._tag === "EXPIRED"
    }
    if (Option.isNone(due.linkId)) return false
    const state = yield* LinkPayments.expirePayment(due.linkId.value, due.transactionId, timeout)
    return (
      Option.contains(state.transactionId, due.transactionId) &&
      (state._tag === "ACTIVE" || state._tag === "REJECTED")
    )
  })

/**
 * One round: the payments under way since `now − timeout` or earlier, each failed on its streams.
 * A payment whose failure could not be recorded (a conflict that outlasted the retries, a stream
 * that no longer decides) is logged and left for the next round; it never stops the sweeper.
 */
export const sweepOnce = Effect.fn("PaymentTimeouts.sweepOnce")(function* (options: Options = {}) {
  const timeout = Duration.decode(options.timeout ?? DEFAULT_TIMEOUT)
  const now = yield* DateTime.now
  const due = yield* ReadModels.duePayments({
    startedBefore: DateTime.subtractDuration(now, timeout),
    limit: options.batchSize ?? DEFAULT_BATCH_SIZE
  }).pipe(Effect.orDie)
  const outcomes = yield* Effect.forEach(
    due,
    (payment) =>
      Effect.catchAllCause(expireOne(payment, timeout), (cause) =>
        Effect.logWarning("payment timeout: the payment could not be expired; next round", cause).pipe(
          Effect.annotateLogs({ kind: payment.kind, transactionId: payment.transactionId }),
          Effect.as(false)
        )
      ),
    { concurrency: options.concurrency ?? 4 }
  )
  return { due: due.length, expired: outcomes.filter(Boolean).length } satisfies Round
})

/**
 * The sweeper for ever: a round, then a pause of `pollInterval`, or of {@link BACKLOG_PAUSE} when
 * the round was full (more may be due). Meant to run supervised among the server's workers:
 * `supervised("Payment timeouts", PaymentTimeouts.run())`.
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
