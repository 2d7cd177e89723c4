/**
 * The online payment (spec C4, C5, C7, C8): one per transaction, RUNNING from the attempt until the
 * acquirer decides (possibly after a 3DS challenge); an approved card payment can be voided the same
 * Bogotá day before 21:00, or refunded in full at any time after. A payment left waiting for the
 * cardholder (3DS challenge, bank redirect) past {@link ABANDONED_PAYMENT_TIMEOUT} is expired by the
 * timeout sweeper: it reads REJECTED, and a late decision is refused with `PaymentExpired`.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import * as Bogota from "../shared/Bogota.js"
import { IntentReference, MerchantId, RefundId, TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"
import { DeviceFingerprint, IntentAmount, Metadata } from "./PaymentIntent.js"
import * as Transitions from "../kernel/Transitions.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * The statuses a payment read (C5) shows. RUNNING and APPROVED are the spec's; REJECTED, VOIDED and
 * REFUNDED are Cobro's names for the outcomes the text speaks of.
 * @category models
 */
export const Status = Schema.Literal("RUNNING", "APPROVED", "REJECTED", "VOIDED", "REFUNDED")
export type Status = typeof Status.Type

/**
 * How long a payment may wait for the payer (a 3DS challenge, the bank of a PSE or bank-button
 * payment, a wallet, or a card authorization a crash left unanswered) before the timeout sweeper
 * fails it: 15 minutes. It is EMV 3-D Secure 2's usual default for the whole authentication (the
 * protocol's own minimum is 5 minutes; gateways default to 15), long enough for a bank login with a
 * one-time code, short enough that an abandoned payment link is payable again soon. Online payments
 * and payment links share it; the sweeper takes another value as an option.
 * @category models
 */
export const ABANDONED_PAYMENT_TIMEOUT: Duration.Duration = Duration.minutes(15)

/**
 * The payment method names that are cards (void and refund preconditions), compared in upper case.
 * @category models
 */
export const CARD_METHODS: ReadonlyArray<string> = ["CREDIT_CARD", "DEBIT_CARD", "CARD"]

/**
 * Whether a `payment_method.name` is a credit or debit card.
 * @category predicates
 */
export const isCardMethod = (paymentMethod: string): boolean =>
  CARD_METHODS.includes(paymentMethod.toUpperCase())

/**
 * The `next_actions` of an attempt response: where to send the cardholder (3DS or a bank).
 * @category models
 */
export const NextAction = Schema.Struct({
  redirectUrl: Schema.String,
  redirectMethod: Schema.Literal("GET", "POST")
})
export type NextAction = typeof NextAction.Type

/**
 * What Cobro keeps of a card: never the full number nor the CVC (see `maskPan`).
 * @category models
 */
export const CardSummary = Schema.Struct({
  maskedPan: Schema.String,
  cardholderName: Schema.optional(Schema.String),
  installments: Schema.optional(Schema.Int)
})
export type CardSummary = typeof CardSummary.Type

/**
 * The first 6 and last 4 digits visible, the rest as `*`, as notifications show `masked_pan`.
 * @category getters
 */
export const maskPan = (cardNumber: string): string => {
  const digits = cardNumber.replace(/\D/g, "")
  if (digits.length <= 10) return "*".repeat(digits.length)
  return `${digits.slice(0, 6)}${"*".repeat(digits.length - 10)}${digits.slice(-4)}`
}

/**
 * The payer's billing address as the attempt names its fields.
 * @category models
 */
export const PayerAddress = Schema.Struct({
  street1: Schema.optional(Schema.String),
  street2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  zipCode: Schema.optional(Schema.String),
  province: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String)
})
export type PayerAddress = typeof PayerAddress.Type

/**
 * The attempt's `payer`, carried verbatim (C5 returns it).
 * @category models
 */
export const Payer = Schema.Struct({
  personType: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  documentType: Schema.optional(Schema.String),
  documentNumber: Schema.optional(Schema.String),
  billingAddress: Schema.optional(PayerAddress)
})
export type Payer = typeof Payer.Type

/**
 * How the cardholder's 3DS challenge ended, with the acquirer's answer when authenticated.
 * @category models
 */
export const ChallengeResult = Schema.Union(
  Schema.TaggedStruct("Approved", { approvalNumber: Schema.String }),
  Schema.TaggedStruct("Declined", { reason: Schema.String })
)
export type ChallengeResult = typeof ChallengeResult.Type

/**
 * A refund as the payment tracks it: the latest one requested, and where its review stands.
 * @category models
 */
export const RefundStatus = Schema.Literal("PROCESSING", "APPROVED", "REJECTED")
export type RefundStatus = typeof RefundStatus.Type

/**
 * The outcome of a refund review.
 * @category models
 */
export const ReviewOutcome = Schema.Literal("APPROVED", "REJECTED")
export type ReviewOutcome = typeof ReviewOutcome.Type

// ---------------------------------------------------------------------------------------------
// Sandbox
// ---------------------------------------------------------------------------------------------

/**
 * What the sandbox acquirer answers for an amount (the spec's sandbox amounts table).
 * @category models
 */
export type SandboxOutcome =
  | { readonly _tag: "Approved"; readonly threeDs: boolean }
  | { readonly _tag: "Rejected"; readonly by: "3DS" | "FRAUD_ENGINE" }
  | { readonly _tag: "ChallengeRequired" }

/**
 * The simulated result of a sandbox attempt of `totalAmount`: 555001 approved by 3DS (frictionless),
 * 555002 rejected by 3DS, 555020 a 3DS challenge, 555040 approved by the fraud engine with no 3DS,
 * 555042 rejected by the fraud engine. Any other amount is approved with no 3DS, so that ordinary
 * test purchases succeed.
 * @category getters
 */
export const sandboxOutcome = (totalAmount: number): SandboxOutcome => {
  switch (totalAmount) {
    case 555001:
      return { _tag: "Approved", threeDs: true }
    case 555002:
      return { _tag: "Rejected", by: "3DS" }
    case 555020:
      return { _tag: "ChallengeRequired" }
    case 555040:
      return { _tag: "Approved", threeDs: false }
    case 555042:
      return { _tag: "Rejected", by: "FRAUD_ENGINE" }
    default:
      return { _tag: "Approved", threeDs: false }
  }
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** The attempt: what {@link StartPayment} gives and {@link PaymentStarted} records. */
const attemptFields = {
  transactionId: TransactionId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  referenceId: IntentReference,
  /** The intent's amount at the attempt: what the acquirer authorizes. */
  amount: IntentAmount,
  /** `payment_method.name`, e.g. CREDIT_CARD, PSE. */
  paymentMethod: Schema.NonEmptyTrimmedString,
  card: Schema.OptionFromUndefinedOr(CardSummary),
  payer: Schema.OptionFromUndefinedOr(Payer),
  metadata: Schema.OptionFromUndefinedOr(Metadata),
  deviceFingerprint: Schema.OptionFromUndefinedOr(DeviceFingerprint)
}

/**
 * C4: an attempt on an intent. The handler minted the transaction id and read the intent and clock.
 * @category commands
 */
export class StartPayment extends Schema.TaggedClass<StartPayment>()("StartPayment", {
  ...attemptFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * The acquirer asks for a 3DS challenge (or the method for a redirect): the attempt gets `next_actions`.
 * @category commands
 */
export class RequireChallenge extends Schema.TaggedClass<RequireChallenge>()("RequireChallenge", {
  nextAction: NextAction,
  now: Schema.DateTimeUtc
}) {}

/**
 * The cardholder came back from the challenge: authenticated and authorized, or declined.
 * @category commands
 */
export class CompleteChallenge extends Schema.TaggedClass<CompleteChallenge>()("CompleteChallenge", {
  result: ChallengeResult,
  now: Schema.DateTimeUtc
}) {}

/**
 * The acquirer approved the payment (frictionless 3DS or the fraud engine alone).
 * @category commands
 */
export class ApprovePayment extends Schema.TaggedClass<ApprovePayment>()("ApprovePayment", {
  approvalNumber: Schema.String,
  threeDs: Schema.Boolean,
  now: Schema.DateTimeUtc
}) {}

/**
 * The timeout sweeper expires a payment the cardholder left waiting (a 3DS challenge, a bank
 * redirect) or that was never decided, `timeout` after its attempt: it reads REJECTED (SALE_REJECTED
 * is notified) and a late decision is refused with `PaymentExpired`.
 * @category commands
 */
export class ExpirePayment extends Schema.TaggedClass<ExpirePayment>()("ExpirePayment", {
  /** How long a payment may wait, from its attempt ({@link ABANDONED_PAYMENT_TIMEOUT}). */
  timeout: Schema.DurationFromSelf,
  now: Schema.DateTimeUtc
}) {}

/**
 * The acquirer, 3DS or the fraud engine rejected the payment, or the challenge was abandoned.
 * @category commands
 */
export class RejectPayment extends Schema.TaggedClass<RejectPayment>()("RejectPayment", {
  reason: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/**
 * C7: void an approved card payment the same Bogotá day before 21:00.
 * @category commands
 */
export class VoidPayment extends Schema.TaggedClass<VoidPayment>()("VoidPayment", {
  now: Schema.DateTimeUtc
}) {}

/**
 * C8: request the refund of the whole captured amount; the handler minted the refund id.
 * @category commands
 */
export class RequestRefund extends Schema.TaggedClass<RequestRefund>()("RequestRefund", {
  refundId: RefundId,
  reason: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/**
 * The review of the refund ended (mirrors the Refund aggregate's outcome onto the payment).
 * @category commands
 */
export class RecordRefundReview extends Schema.TaggedClass<RecordRefundReview>()("RecordRefundReview", {
  refundId: RefundId,
  outcome: ReviewOutcome,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the online payment.
 * @category commands
 */
export const Command = Schema.Union(
  StartPayment,
  RequireChallenge,
  CompleteChallenge,
  ApprovePayment,
  RejectPayment,
  ExpirePayment,
  VoidPayment,
  RequestRefund,
  RecordRefundReview
)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * An attempt (C4) on an intent was made: the payment is RUNNING, with what the acquirer authorizes.
 * @category events
 */
export class PaymentStarted extends Schema.TaggedClass<PaymentStarted>()("PaymentStarted", {
  ...attemptFields,
  attemptedAt: Schema.DateTimeUtc
}) {}

/**
 * The acquirer asked for a 3DS challenge (or the method for a redirect): the attempt's `next_actions`; RUNNING (CHALLENGE) until the cardholder comes back.
 * @category events
 */
export class PaymentChallengeRequired extends Schema.TaggedClass<PaymentChallengeRequired>()(
  "PaymentChallengeRequired",
  { nextAction: NextAction, at: Schema.DateTimeUtc }
) {}

/**
 * The acquirer approved the payment (frictionless 3DS, the fraud engine, or after the challenge): APPROVED.
 * @category events
 */
export class PaymentApproved extends Schema.TaggedClass<PaymentApproved>()("PaymentApproved", {
  approvalNumber: Schema.String,
  threeDs: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}

/**
 * The payment was rejected. `expired` is present (`true`) when the timeout sweeper recorded it
 * (`ExpirePayment`): the payment is then EXPIRED, which reads as REJECTED. One event for both, so
 * that the webhook (SALE_REJECTED) is the same as for any other rejection.
 * @category events
 */
export class PaymentRejected extends Schema.TaggedClass<PaymentRejected>()("PaymentRejected", {
  reason: Schema.String,
  at: Schema.DateTimeUtc,
  expired: Schema.optionalWith(Schema.Literal(true), { exact: true })
}) {}

/**
 * The approved card payment was voided (C7) within the Bogotá void window: VOIDED, final.
 * @category events
 */
export class PaymentVoided extends Schema.TaggedClass<PaymentVoided>()("PaymentVoided", {
  at: Schema.DateTimeUtc
}) {}

/**
 * A refund of `amount` (the whole captured amount) is under review.
 * @category events
 */
export class PaymentRefundRequested extends Schema.TaggedClass<PaymentRefundRequested>()(
  "PaymentRefundRequested",
  { refundId: RefundId, amount: Amount, reason: Schema.String, at: Schema.DateTimeUtc }
) {}

/**
 * The refund was rejected: the payment stays APPROVED and may be refunded again.
 * @category events
 */
export class PaymentRefundRejected extends Schema.TaggedClass<PaymentRefundRejected>()(
  "PaymentRefundRejected",
  {
    refundId: RefundId,
    at: Schema.DateTimeUtc
  }
) {}

/**
 * The refund was approved: `amount` went back to the cardholder.
 * @category events
 */
export class PaymentRefunded extends Schema.TaggedClass<PaymentRefunded>()("PaymentRefunded", {
  refundId: RefundId,
  amount: Amount,
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the online payment, as stored.
 * @category events
 */
export const Event = Schema.Union(
  PaymentStarted,
  PaymentChallengeRequired,
  PaymentApproved,
  PaymentRejected,
  PaymentVoided,
  PaymentRefundRequested,
  PaymentRefundRejected,
  PaymentRefunded
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ transactionId: TransactionId }, { state: Schema.String })

/**
 * No payment with that transaction id.
 * @category errors
 */
export class PaymentNotFound extends Refusal.NotFound<PaymentNotFound>()("PaymentNotFound") {}

/**
 * A payment with that transaction id exists already.
 * @category errors
 */
export class PaymentAlreadyExists extends Refusal.AlreadyExists<PaymentAlreadyExists>()(
  "PaymentAlreadyExists"
) {}

/**
 * The payment is not in a state that accepts the command (an approval of a rejected payment).
 * @category errors
 */
export class PaymentNotInState extends Refusal.NotInState<PaymentNotInState>()("PaymentNotInState") {}

/**
 * `ExpirePayment` before the payment has waited for the timeout.
 * @category errors
 */
export class PaymentNotOverdue extends Schema.TaggedError<PaymentNotOverdue>()("PaymentNotOverdue", {
  transactionId: TransactionId,
  /** When it times out. */
  deadline: Schema.DateTimeUtc
}) {}

/**
 * A decision (the challenge's, the acquirer's) on a payment the timeout sweeper expired.
 * @category errors
 */
export class PaymentExpired extends Schema.TaggedError<PaymentExpired>()("PaymentExpired", {
  transactionId: TransactionId,
  expiredAt: Schema.DateTimeUtc
}) {}

/**
 * Why a void (C7) is refused.
 * @category errors
 */
export const VoidRefusal = Schema.Literal(
  "NotCard",
  "NotApproved",
  "WindowClosed",
  "AlreadyVoided",
  "Refunded"
)
export type VoidRefusal = typeof VoidRefusal.Type

/**
 * C7's "payment cannot be voided".
 * @category errors
 */
export class PaymentCannotBeVoided extends Schema.TaggedError<PaymentCannotBeVoided>()(
  "PaymentCannotBeVoided",
  {
    transactionId: TransactionId,
    reason: VoidRefusal
  }
) {}

/**
 * Why a refund request (C8) is refused.
 * @category errors
 */
export const RefundRefusal = Schema.Literal(
  "NotCard",
  "NotApproved",
  "Voided",
  "RefundInProgress",
  "AlreadyRefunded"
)
export type RefundRefusal = typeof RefundRefusal.Type

/**
 * C8's "refund cannot be requested".
 * @category errors
 */
export class RefundCannotBeRequested extends Schema.TaggedError<RefundCannotBeRequested>()(
  "RefundCannotBeRequested",
  { transactionId: TransactionId, reason: RefundRefusal }
) {}

/**
 * A review names a refund that is not the payment's latest one.
 * @category errors
 */
export class UnknownRefund extends Schema.TaggedError<UnknownRefund>()("UnknownRefund", {
  transactionId: TransactionId,
  refundId: RefundId
}) {}

/**
 * A review contradicts the outcome already recorded for the refund.
 * @category errors
 */
export class RefundReviewConflict extends Schema.TaggedError<RefundReviewConflict>()("RefundReviewConflict", {
  transactionId: TransactionId,
  refundId: RefundId,
  status: RefundStatus
}) {}

/**
 * Every refusal of the online payment.
 * @category errors
 */
export type Error =
  | PaymentNotFound
  | PaymentAlreadyExists
  | PaymentNotInState
  | PaymentNotOverdue
  | PaymentExpired
  | PaymentCannotBeVoided
  | RefundCannotBeRequested
  | UnknownRefund
  | RefundReviewConflict

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * What a payment is, fixed at the attempt.
 * @category models
 */
export interface Attempt {
  readonly transactionId: TransactionId
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly referenceId: IntentReference
  readonly amount: IntentAmount
  readonly paymentMethod: string
  readonly card: Option.Option<CardSummary>
  readonly payer: Option.Option<Payer>
  readonly metadata: Option.Option<Metadata>
  readonly deviceFingerprint: Option.Option<DeviceFingerprint>
  readonly attemptedAt: DateTime.Utc
}

/**
 * The acquirer's approval.
 * @category models
 */
export interface Approval {
  readonly approvalNumber: string
  readonly threeDs: boolean
  readonly approvedAt: DateTime.Utc
}

/**
 * The latest refund requested on the payment.
 * @category models
 */
export interface RefundOnPayment {
  readonly refundId: RefundId
  readonly amount: Amount
  readonly status: RefundStatus
  readonly requestedAt: DateTime.Utc
}

/**
 * A payment. `CHALLENGE` is RUNNING with a 3DS challenge pending: its own tag so that the table says
 * which commands a pending challenge accepts; reads show it as RUNNING (see `status`). `EXPIRED` is
 * REJECTED by the timeout sweeper: its own tag so that the table refuses a late decision; reads
 * show it as REJECTED.
 * @category models
 */
export interface Existing {
  readonly _tag: Status | "CHALLENGE" | "EXPIRED"
  readonly payment: Attempt
  readonly nextAction: Option.Option<NextAction>
  readonly approval: Option.Option<Approval>
  readonly rejectionReason: Option.Option<string>
  readonly voidedAt: Option.Option<DateTime.Utc>
  readonly refund: Option.Option<RefundOnPayment>
  readonly updatedAt: DateTime.Utc
}

/**
 * No payment yet (`Initial`), or a payment.
 * @category models
 */
export type State = Initial | Existing

/**
 * The status a payment read (C5) shows: a pending challenge is still RUNNING, an expired payment REJECTED.
 * @category getters
 */
export const status = (state: Existing): Status =>
  state._tag === "CHALLENGE" ? "RUNNING" : state._tag === "EXPIRED" ? "REJECTED" : state._tag

/**
 * When a payment still waiting (RUNNING or CHALLENGE) times out: its attempt plus `timeout`.
 * @category getters
 */
export const expiryDeadline = (state: Existing, timeout: Duration.DurationInput): DateTime.Utc =>
  DateTime.addDuration(state.payment.attemptedAt, timeout)

/**
 * Whether the payment is still waiting for a decision (RUNNING, or CHALLENGE: the cardholder's 3DS
 * challenge or bank) and has been for `timeout` since its attempt at `now` (the deadline included).
 * @category predicates
 */
export const isAbandoned = (state: State, timeout: Duration.DurationInput, now: DateTime.DateTime): boolean =>
  (state._tag === "RUNNING" || state._tag === "CHALLENGE") &&
  DateTime.greaterThanOrEqualTo(now, expiryDeadline(state, timeout))

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. A re-delivered outcome
 * is a no-op in the state it led to; a refund request, and a rejected review, are recorded and keep
 * the payment APPROVED (a review re-delivered records nothing); VOIDED, REJECTED and REFUNDED are
 * final ("void and refund are irreversible").
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { StartPayment: "RUNNING" },
  RUNNING: {
    RequireChallenge: "CHALLENGE",
    ApprovePayment: "APPROVED",
    RejectPayment: "REJECTED",
    ExpirePayment: "EXPIRED"
  },
  CHALLENGE: {
    RequireChallenge: "noop",
    CompleteChallenge: ["APPROVED", "REJECTED"],
    RejectPayment: "REJECTED",
    // A challenge (or bank redirect) the cardholder abandons expires after the timeout.
    ExpirePayment: "EXPIRED"
  },
  APPROVED: {
    ApprovePayment: "noop",
    CompleteChallenge: "noop",
    VoidPayment: "VOIDED",
    RequestRefund: "APPROVED",
    RecordRefundReview: ["APPROVED", "REFUNDED", "noop"]
  },
  REJECTED: { RejectPayment: "noop", CompleteChallenge: "noop" },
  // Final: the sweeper's expiry again is a no-op; a late decision is refused (`PaymentExpired`).
  EXPIRED: { ExpirePayment: "noop" },
  VOIDED: {},
  REFUNDED: { RecordRefundReview: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

/**
 * Why `VoidPayment` at `now` is refused, or `undefined` when the payment can be voided.
 * @category getters
 */
export const voidRefusal = (state: Existing, now: DateTime.DateTime): VoidRefusal | undefined => {
  if (!isCardMethod(state.payment.paymentMethod)) return "NotCard"
  switch (state._tag) {
    case "VOIDED":
      return "AlreadyVoided"
    case "REFUNDED":
      return "Refunded"
    case "APPROVED":
      break
    default:
      return "NotApproved"
  }
  // A refund under review or applied already returns the money: a void would return it twice.
  if (Option.exists(state.refund, (r) => r.status !== "REJECTED")) return "Refunded"
  const approvedAt = Option.getOrThrow(state.approval).approvedAt
  return Bogota.isWithinVoidWindow(approvedAt, now) ? undefined : "WindowClosed"
}

/**
 * Why `RequestRefund` is refused, or `undefined` when a refund can be requested.
 * @category getters
 */
export const refundRefusal = (state: Existing): RefundRefusal | undefined => {
  if (!isCardMethod(state.payment.paymentMethod)) return "NotCard"
  switch (state._tag) {
    case "VOIDED":
      return "Voided"
    case "REFUNDED":
      return "AlreadyRefunded"
    case "APPROVED":
      // Refunds never exceed what was captured: one whole refund at a time, a new one only after a rejection.
      return Option.exists(state.refund, (r) => r.status !== "REJECTED") ? "RefundInProgress" : undefined
    default:
      return "NotApproved"
  }
}

/** Decides a command the table lets act on an existing payment. */
const decideExisting = (command: Exclude<Command, StartPayment>, state: Existing): Decision<Event, Error> => {
  const transactionId = state.payment.transactionId
  const notInState = (c: Command) =>
    Either.left(new PaymentNotInState({ transactionId, state: state._tag, command: c._tag }))
  return Match.valueTags(command, {
    RequireChallenge: (c) =>
      state._tag === "CHALLENGE"
        ? none
        : ok(new PaymentChallengeRequired({ nextAction: c.nextAction, at: c.now })),
    CompleteChallenge: (c) => {
      // In an outcome state only the same outcome, re-delivered (the cardholder reloads the callback), is accepted.
      if (state._tag === "APPROVED") return c.result._tag === "Approved" ? none : notInState(c)
      if (state._tag === "REJECTED") return c.result._tag === "Declined" ? none : notInState(c)
      return c.result._tag === "Approved"
        ? ok(new PaymentApproved({ approvalNumber: c.result.approvalNumber, threeDs: true, at: c.now }))
        : ok(new PaymentRejected({ reason: c.result.reason, at: c.now }))
    },
    ApprovePayment: (c) =>
      state._tag === "APPROVED"
        ? none
        : ok(new PaymentApproved({ approvalNumber: c.approvalNumber, threeDs: c.threeDs, at: c.now })),
    RejectPayment: (c) =>
      state._tag === "REJECTED" ? none : ok(new PaymentRejected({ reason: c.reason, at: c.now })),
    ExpirePayment: (c) =>
      state._tag === "EXPIRED"
        ? none
        : !isAbandoned(state, c.timeout, c.now)
          ? Either.left(new PaymentNotOverdue({ transactionId, deadline: expiryDeadline(state, c.timeout) }))
          : ok(
              new PaymentRejected({
                reason: expiryReason(state, c.timeout),
                at: c.now,
                expired: true
              })
            ),
    VoidPayment: (c) => {
      const reason = voidRefusal(state, c.now)
      return reason === undefined
        ? ok(new PaymentVoided({ at: c.now }))
        : Either.left(new PaymentCannotBeVoided({ transactionId, reason }))
    },
    RequestRefund: (c) => {
      const reason = refundRefusal(state)
      return reason === undefined
        ? ok(
            new PaymentRefundRequested({
              refundId: c.refundId,
              // The spec's request has no amount: a refund returns the whole captured amount.
              amount: state.payment.amount.total,
              reason: c.reason,
              at: c.now
            })
          )
        : Either.left(new RefundCannotBeRequested({ transactionId, reason }))
    },
    RecordRefundReview: (c) => review(c, state)
  })
}

/**
 * The `reason` recorded when a payment expires: what the cardholder did not finish, and the timeout.
 * @category getters
 */
export const expiryReason = (state: Existing, timeout: Duration.DurationInput): string => {
  const minutes = Math.round(Duration.toMinutes(timeout))
  const what = isCardMethod(state.payment.paymentMethod) ? "the 3DS challenge" : "the payment at the bank"
  return state._tag === "CHALLENGE"
    ? `Expired: the cardholder did not complete ${what} within ${minutes} minutes`
    : `Expired: the payment was not decided within ${minutes} minutes`
}

/** The error for a command other than the attempt that the table forbids in the payment's state. */
const refused = (command: Command, state: Existing): Error => {
  const transactionId = state.payment.transactionId
  // A decision that comes after the timeout sweeper expired the payment: too late, say so.
  if (
    state._tag === "EXPIRED" &&
    (command._tag === "CompleteChallenge" ||
      command._tag === "ApprovePayment" ||
      command._tag === "RejectPayment" ||
      command._tag === "RequireChallenge")
  ) {
    return new PaymentExpired({ transactionId, expiredAt: state.updatedAt })
  }
  switch (command._tag) {
    case "VoidPayment":
      return new PaymentCannotBeVoided({
        transactionId,
        reason: voidRefusal(state, command.now) ?? "NotApproved"
      })
    case "RequestRefund":
      return new RefundCannotBeRequested({ transactionId, reason: refundRefusal(state) ?? "NotApproved" })
    default:
      return new PaymentNotInState({ transactionId, state: state._tag, command: command._tag })
  }
}

const start = (c: StartPayment): Decision<Event, Error> =>
  ok(
    new PaymentStarted({
      transactionId: c.transactionId,
      merchantId: c.merchantId,
      sandbox: c.sandbox,
      referenceId: c.referenceId,
      amount: c.amount,
      paymentMethod: c.paymentMethod,
      card: c.card,
      payer: c.payer,
      metadata: c.metadata,
      deviceFingerprint: c.deviceFingerprint,
      attemptedAt: c.now
    })
  )

const review = (c: RecordRefundReview, state: Existing): Decision<Event, Error> => {
  const transactionId = state.payment.transactionId
  const refund = Option.filter(state.refund, (r) => r.refundId === c.refundId)
  if (Option.isNone(refund)) return Either.left(new UnknownRefund({ transactionId, refundId: c.refundId }))
  const current = refund.value
  if (current.status === "PROCESSING") {
    return c.outcome === "APPROVED"
      ? ok(new PaymentRefunded({ refundId: c.refundId, amount: current.amount, at: c.now }))
      : ok(new PaymentRefundRejected({ refundId: c.refundId, at: c.now }))
  }
  // A review already recorded: the same outcome again is a re-delivery, another one a contradiction.
  return current.status === c.outcome
    ? none
    : Either.left(new RefundReviewConflict({ transactionId, refundId: c.refundId, status: current.status }))
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const created = (event: PaymentStarted): Existing => ({
  _tag: "RUNNING",
  payment: {
    transactionId: event.transactionId,
    merchantId: event.merchantId,
    sandbox: event.sandbox,
    referenceId: event.referenceId,
    amount: event.amount,
    paymentMethod: event.paymentMethod,
    card: event.card,
    payer: event.payer,
    metadata: event.metadata,
    deviceFingerprint: event.deviceFingerprint,
    attemptedAt: event.attemptedAt
  },
  nextAction: Option.none(),
  approval: Option.none(),
  rejectionReason: Option.none(),
  voidedAt: Option.none(),
  refund: Option.none(),
  updatedAt: event.attemptedAt
})

/** What an event after the creation changes besides `updatedAt`, which every one moves to its `at`. */
type Change = Partial<Existing>

const evolveExisting = (state: Existing, event: Exclude<Event, PaymentStarted>): Existing => {
  const withRefund = (status: RefundStatus) =>
    Option.map(state.refund, (r): RefundOnPayment => ({ ...r, status }))
  return {
    ...state,
    ...Match.valueTags(event, {
      PaymentChallengeRequired: (e): Change => ({ _tag: "CHALLENGE", nextAction: Option.some(e.nextAction) }),
      PaymentApproved: (e): Change => ({
        _tag: "APPROVED",
        approval: Option.some({ approvalNumber: e.approvalNumber, threeDs: e.threeDs, approvedAt: e.at })
      }),
      PaymentRejected: (e): Change => ({
        _tag: e.expired === true ? "EXPIRED" : "REJECTED",
        rejectionReason: Option.some(e.reason)
      }),
      PaymentVoided: (e): Change => ({ _tag: "VOIDED", voidedAt: Option.some(e.at) }),
      PaymentRefundRequested: (e): Change => ({
        refund: Option.some({
          refundId: e.refundId,
          amount: e.amount,
          status: "PROCESSING",
          requestedAt: e.at
        })
      }),
      PaymentRefundRejected: (): Change => ({ refund: withRefund("REJECTED") }),
      PaymentRefunded: (): Change => ({ _tag: "REFUNDED", refund: withRefund("APPROVED") })
    }),
    updatedAt: event.at
  }
}

/**
 * The Payment aggregate; its stream id is the transaction id (`TRX_…`).
 * @category aggregates
 */
export const Payment: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "Payment",
  Event,
  transitions,
  refuse: {
    notFound: () => new PaymentNotFound(),
    alreadyExists: (state) => new PaymentAlreadyExists({ transactionId: state.payment.transactionId }),
    notInState: refused
  },
  create: { StartPayment: start },
  decide: decideExisting,
  created: { PaymentStarted: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = Payment
