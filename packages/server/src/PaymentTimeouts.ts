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
import * as Sweeper from "./Sweeper.js"

export { BACKLOG_PAUSE, DEFAULT_BATCH_SIZE, DEFAULT_POLL_INTERVAL, type Round } from "./Sweeper.js"

/** How the sweeper runs: its pause between rounds, payments per round (100) and at once (4). */
export interface Options extends Sweeper.Options {
  /**
   * How long a payment may stay under way before it is failed; default
   * {@link Payment.ABANDONED_PAYMENT_TIMEOUT} (15 minutes). Give every node the same value.
   */
  readonly timeout?: Duration.DurationInput
}

/** The default timeout: `Payment.ABANDONED_PAYMENT_TIMEOUT`. */
export const DEFAULT_TIMEOUT: Duration.Duration = Payment.ABANDONED_PAYMENT_TIMEOUT

/** Who the sweeper's events name. */
const SWEEPER = { actor: "sweeper" }

/** Expires one due payment; whether it is failed or expired afterwards (by this node or another). */
const expireOne = (due: ReadModels.DuePayment, timeout: Duration.Duration) =>
  Effect.gen(function* () {
    if (due.kind === "online") {
      const { payment } = yield* OnlinePayments.expirePayment(due.transactionId, timeout, SWEEPER)
      return payment._tag === "EXPIRED"
    }
    if (Option.isNone(due.linkId)) return false
    const state = yield* LinkPayments.expirePayment(due.linkId.value, due.transactionId, timeout, SWEEPER)
    return (
      Option.contains(state.transactionId, due.transactionId) &&
      (state._tag === "ACTIVE" || state._tag === "REJECTED")
    )
  })

/**
 * One round: the payments under way since `now − timeout` or earlier, each failed on its streams
 * (`expired` counts those the round left failed or expired, by this node or another). A payment
 * whose failure could not be recorded (a conflict that outlasted the retries, a stream that no
 * longer decides) is logged and left for the next round; it never stops the sweeper.
 */
export const sweepOnce = Effect.fn("PaymentTimeouts.sweepOnce")(function* (options: Options = {}) {
  const timeout = Duration.decode(options.timeout ?? DEFAULT_TIMEOUT)
  const now = yield* DateTime.now
  const due = yield* ReadModels.duePayments({
    startedBefore: DateTime.subtractDuration(now, timeout),
    limit: Sweeper.batchSizeOf(options)
  }).pipe(Effect.orDie)
  return yield* Sweeper.round(
    due,
    (payment) =>
      Effect.catchAllCause(
        expireOne(payment, timeout),
        Sweeper.leftForNextRound("payment timeout: the payment could not be expired; next round", {
          kind: payment.kind,
          transactionId: payment.transactionId
        })
      ),
    options
  )
})

/**
 * The sweeper for ever ({@link Sweeper.forever}): a round, then a pause of `pollInterval`, or of
 * `BACKLOG_PAUSE` when the round was full (more may be due). Meant to run supervised among the
 * server's workers: `supervised("Payment timeouts", PaymentTimeouts.run())`.
 */
export const run = (options: Options = {}) => Sweeper.forever(sweepOnce, options)
