/**
 * The terminal checkout (spec A3, rules R1–R5, and the webhook types of D): a charge pushed to a bound
 * terminal, held while the terminal is locked, approved or rejected there, and voided the same day.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import * as Bogota from "../shared/Bogota.js"
import { IntegrationId, MerchantId, TerminalSerial, TransactionId } from "../shared/Ids.js"
import { Amount, CurrencyCode, TaxLine } from "../shared/Money.js"
import {
  CaptureMode,
  CardBrand,
  CardPaymentMethod,
  CardType,
  MaskedPan,
  OtherPaymentMethod,
  TerminalMethod
} from "../shared/Cards.js"
import { DocumentNumber, DocumentType } from "../shared/Documents.js"
import * as Transitions from "../kernel/Transitions.js"
import { unchecked } from "../kernel/Unchecked.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * Terminal payment methods of both API variants: the methods a merchant enables, declared in `Cards`.
 * @category models
 */
export const TerminalPaymentMethod = TerminalMethod
export type TerminalPaymentMethod = TerminalMethod

/**
 * `payment_method` of a checkout: a method, or `""` for the terminal's own selection screen.
 * @category models
 */
export const CheckoutPaymentMethod = Schema.Literal(...TerminalPaymentMethod.literals, "")
export type CheckoutPaymentMethod = typeof CheckoutPaymentMethod.Type

/**
 * The checkout statuses. The spec shows none ("Transitions of a terminal checkout: not shown"):
 * PENDING (created, not yet pushed), SENDING (a push is under way), SENT (on the terminal), HELD (on a
 * terminal locked for more than 2 minutes, R1), UNREACHABLE (the push failed, R5; it is retried),
 * CANCELLED, APPROVED, REJECTED, VOIDED.
 * @category models
 */
export const Status = Schema.Literal(
  "PENDING",
  "SENDING",
  "SENT",
  "HELD",
  "UNREACHABLE",
  "CANCELLED",
  "APPROVED",
  "REJECTED",
  "VOIDED"
)
export type Status = typeof Status.Type

/**
 * R1: a terminal locked for more than this holds the payment until it is unlocked.
 * @category models
 */
export const HOLD_AFTER_LOCKED_MS = 2 * 60 * 1000

/**
 * How long a claimed push may go unanswered: its pusher cuts the terminal call at the claim plus
 * this, and from then on the claim has lapsed and another pusher may claim the checkout again
 * (spec-decisions A-23). The spec gives no limit for a push; this one keeps a checkout whose pusher
 * died (a cut request, a crashed node) SENDING for this plus one sweep of the pusher.
 * @category models
 */
export const PUSH_TIMEOUT_MS = 10 * 1000

/**
 * The failure earlier versions recorded for a terminal too busy to answer (its stream kept
 * conflicting), reading it as unreachable: no terminal return was coming to push such a checkout
 * again. The pusher treats it as a lapsed claim (spec-decisions A-23).
 * @category models
 */
export const BUSY_READ_AS_UNREACHABLE = "the terminal is busy with other requests"

/**
 * The `amount` of a checkout as recorded: the tax lines are already computed from the tax form.
 * @category models
 */
export class CheckoutAmount extends Schema.Class<CheckoutAmount>("CheckoutAmount")({
  currency: CurrencyCode,
  /** Total to process, including tip and taxes. */
  total: Amount,
  tip: Amount,
  taxes: Schema.Array(TaxLine)
}) {}

/**
 * `payer.document`.
 * @category models
 */
export class PayerDocument extends Schema.Class<PayerDocument>("PayerDocument")({
  documentType: Schema.OptionFromUndefinedOr(DocumentType),
  documentNumber: Schema.OptionFromUndefinedOr(DocumentNumber)
}) {}

/**
 * `payer`: every member optional; an empty payer is allowed.
 * @category models
 */
export class Payer extends Schema.Class<Payer>("Payer")({
  email: Schema.OptionFromUndefinedOr(Schema.String),
  phoneNumber: Schema.OptionFromUndefinedOr(Schema.String),
  document: Schema.OptionFromUndefinedOr(PayerDocument)
}) {}

/**
 * The card read by the terminal (the webhook's `data.card`).
 * @category models
 */
export class Card extends Schema.Class<Card>("Card")({
  /** First 6 and last 4 digits visible. */
  maskedPan: MaskedPan,
  brand: CardBrand,
  captureMode: CaptureMode,
  cardType: CardType,
  cardholderName: Schema.String,
  installments: Schema.Int.pipe(Schema.positive()),
  /** The terminal that captured the card. */
  terminalId: Schema.String
}) {}

/**
 * How the sale was paid, as the webhook's `data.payment_method` carries it.
 * @category models
 */
export const SalePaymentMethod = Schema.Literal(...CardPaymentMethod.literals, ...OtherPaymentMethod.literals)
export type SalePaymentMethod = typeof SalePaymentMethod.Type

/**
 * What the terminal reports of an approved sale.
 * @category models
 */
export class Sale extends Schema.Class<Sale>("Sale")({
  paymentMethod: SalePaymentMethod,
  /** The code that identifies the transaction on the terminal. */
  serviceCode: Schema.String,
  /** From the card network; required for card sales. */
  approvalNumber: Schema.OptionFromUndefinedOr(Schema.String),
  payerEmail: Schema.OptionFromUndefinedOr(Schema.String),
  /** Present exactly for card sales (CARD, SERVICE_TAP). */
  card: Schema.OptionFromUndefinedOr(Card)
}) {}

const isCardMethod = (method: SalePaymentMethod): boolean => Schema.is(CardPaymentMethod)(method)

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** The checkout: what {@link CreateCheckout} gives and {@link CheckoutCreated} records. */
const checkoutFields = {
  integrationId: IntegrationId,
  /** The sale's id (`payment_id` of its notifications), minted now so the terminal reports against it. */
  transactionId: TransactionId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  terminalSerial: TerminalSerial,
  terminalModel: Schema.String,
  reference: Schema.String,
  amount: CheckoutAmount,
  /** `""`: the terminal shows its own method-selection screen. */
  paymentMethod: CheckoutPaymentMethod,
  userEmail: Schema.String,
  description: Schema.OptionFromUndefinedOr(Schema.String),
  payer: Schema.OptionFromUndefinedOr(Payer)
}

/**
 * A3: create a checkout. The handler checked the method is active (AP003) and the terminal bound
 * (AP004), computed the tax lines from the tax form (AP002), minted the ids and read the clock.
 * @category commands
 */
export class CreateCheckout extends Schema.TaggedClass<CreateCheckout>()("CreateCheckout", {
  ...checkoutFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * A pusher claims the checkout before it calls the terminal gateway, so that a concurrent cancel
 * either wins (no push) or loses (R3: the instruction may already be on its way). A SENDING
 * checkout is claimed again only once its claim has lapsed ({@link PUSH_TIMEOUT_MS}): its pusher
 * was cut or died.
 * @category commands
 */
export class AttemptPush extends Schema.TaggedClass<AttemptPush>()("AttemptPush", {
  now: Schema.DateTimeUtc
}) {}

/**
 * The gateway delivered the instruction. `lockedSince` is the terminal's condition at push time:
 * absent when unlocked, else when it was locked (R1).
 * @category commands
 */
export class RecordDelivery extends Schema.TaggedClass<RecordDelivery>()("RecordDelivery", {
  lockedSince: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc),
  now: Schema.DateTimeUtc
}) {}

/**
 * The gateway could not reach the terminal (off, app closed, session token expired: R5).
 * @category commands
 */
export class RecordUnreachable extends Schema.TaggedClass<RecordUnreachable>()("RecordUnreachable", {
  reason: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/**
 * The terminal was unlocked: a held payment is processed automatically (R1).
 * @category commands
 */
export class UnlockTerminal extends Schema.TaggedClass<UnlockTerminal>()("UnlockTerminal", {
  now: Schema.DateTimeUtc
}) {}

/**
 * The merchant withdraws a checkout that has not been sent (R3).
 * @category commands
 */
export class CancelCheckout extends Schema.TaggedClass<CancelCheckout>()("CancelCheckout", {
  now: Schema.DateTimeUtc
}) {}

/**
 * The terminal reports the sale approved.
 * @category commands
 */
export class ApproveSale extends Schema.TaggedClass<ApproveSale>()("ApproveSale", {
  transactionId: TransactionId,
  sale: Sale,
  now: Schema.DateTimeUtc
}) {}

/**
 * The terminal reports the sale rejected.
 * @category commands
 */
export class RejectSale extends Schema.TaggedClass<RejectSale>()("RejectSale", {
  transactionId: TransactionId,
  reason: Schema.String,
  card: Schema.OptionFromUndefinedOr(Card),
  now: Schema.DateTimeUtc
}) {}

/**
 * The sale was voided (on the terminal) and the void approved.
 * @category commands
 */
export class ApproveVoid extends Schema.TaggedClass<ApproveVoid>()("ApproveVoid", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/**
 * The sale's void was rejected: the sale stays APPROVED.
 * @category commands
 */
export class RejectVoid extends Schema.TaggedClass<RejectVoid>()("RejectVoid", {
  transactionId: TransactionId,
  reason: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the terminal checkout.
 * @category commands
 */
export const Command = Schema.Union(
  CreateCheckout,
  AttemptPush,
  RecordDelivery,
  RecordUnreachable,
  UnlockTerminal,
  CancelCheckout,
  ApproveSale,
  RejectSale,
  ApproveVoid,
  RejectVoid
)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * A checkout was created (A3): PENDING, waiting for its push to the terminal.
 * @category events
 */
export class CheckoutCreated extends Schema.TaggedClass<CheckoutCreated>()("CheckoutCreated", {
  ...checkoutFields,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * A push was claimed; `attempt` counts from 1.
 * @category events
 */
export class PushAttempted extends Schema.TaggedClass<PushAttempted>()("PushAttempted", {
  attempt: Schema.Int.pipe(Schema.positive()),
  at: Schema.DateTimeUtc
}) {}

/**
 * The instruction is on the terminal. `lockedSince`: it was locked for at most 2 minutes.
 * @category events
 */
export class CheckoutSent extends Schema.TaggedClass<CheckoutSent>()("CheckoutSent", {
  lockedSince: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc),
  at: Schema.DateTimeUtc
}) {}

/**
 * R1: the instruction is on a terminal locked for more than 2 minutes; it waits for the unlock.
 * @category events
 */
export class CheckoutHeld extends Schema.TaggedClass<CheckoutHeld>()("CheckoutHeld", {
  lockedSince: Schema.DateTimeUtc,
  at: Schema.DateTimeUtc
}) {}

/**
 * The terminal was unlocked and processes the held payment.
 * @category events
 */
export class CheckoutReleased extends Schema.TaggedClass<CheckoutReleased>()("CheckoutReleased", {
  at: Schema.DateTimeUtc
}) {}

/**
 * R5: the push did not reach the terminal; the checkout waits for another attempt.
 * @category events
 */
export class DeliveryFailed extends Schema.TaggedClass<DeliveryFailed>()("DeliveryFailed", {
  reason: Schema.String,
  at: Schema.DateTimeUtc
}) {}

/**
 * The merchant withdrew the checkout before it was sent (R3): CANCELLED, final.
 * @category events
 */
export class CheckoutCancelled extends Schema.TaggedClass<CheckoutCancelled>()("CheckoutCancelled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * The terminal reported the sale approved: APPROVED, notified as SALE_APPROVED.
 * @category events
 */
export class SaleApproved extends Schema.TaggedClass<SaleApproved>()("SaleApproved", {
  transactionId: TransactionId,
  sale: Sale,
  at: Schema.DateTimeUtc
}) {}

/**
 * The terminal reported the sale rejected: REJECTED, notified as SALE_REJECTED.
 * @category events
 */
export class SaleRejected extends Schema.TaggedClass<SaleRejected>()("SaleRejected", {
  transactionId: TransactionId,
  reason: Schema.String,
  card: Schema.OptionFromUndefinedOr(Card),
  at: Schema.DateTimeUtc
}) {}

/**
 * The sale was voided on the terminal and the void approved: VOIDED, notified as VOID_APPROVED.
 * @category events
 */
export class SaleVoided extends Schema.TaggedClass<SaleVoided>()("SaleVoided", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

/**
 * The sale's void was rejected: recorded and notified as VOID_REJECTED; the sale stays APPROVED.
 * @category events
 */
export class VoidRejected extends Schema.TaggedClass<VoidRejected>()("VoidRejected", {
  transactionId: TransactionId,
  reason: Schema.String,
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the terminal checkout, as stored.
 * @category events
 */
export const Event = Schema.Union(
  CheckoutCreated,
  PushAttempted,
  CheckoutSent,
  CheckoutHeld,
  CheckoutReleased,
  DeliveryFailed,
  CheckoutCancelled,
  SaleApproved,
  SaleRejected,
  SaleVoided,
  VoidRejected
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ integrationId: IntegrationId }, { status: Status })

/**
 * No checkout with that integration id.
 * @category errors
 */
export class CheckoutNotFound extends Refusal.NotFound<CheckoutNotFound>()("CheckoutNotFound") {}

/**
 * A checkout with that integration id exists already.
 * @category errors
 */
export class CheckoutAlreadyExists extends Refusal.AlreadyExists<CheckoutAlreadyExists>()(
  "CheckoutAlreadyExists"
) {}

/**
 * The checkout is not in a state that accepts the command (voiding a REJECTED sale, unlocking a PENDING one).
 * @category errors
 */
export class CheckoutNotInState extends Refusal.NotInState<CheckoutNotInState>()("CheckoutNotInState") {}

/**
 * R3: the payment request was already sent to the terminal and cannot be cancelled remotely.
 * @category errors
 */
export class CheckoutAlreadySent extends Schema.TaggedError<CheckoutAlreadySent>()("CheckoutAlreadySent", {
  integrationId: IntegrationId,
  status: Status
}) {}

/**
 * The outcome names a transaction other than the checkout's.
 * @category errors
 */
export class UnknownCheckoutTransaction extends Schema.TaggedError<UnknownCheckoutTransaction>()(
  "UnknownCheckoutTransaction",
  { integrationId: IntegrationId, transactionId: TransactionId }
) {}

/**
 * A card sale without card data or approval number, or card data on a sale by another method.
 * @category errors
 */
export class InvalidSaleDetails extends Schema.TaggedError<InvalidSaleDetails>()("InvalidSaleDetails", {
  integrationId: IntegrationId,
  reason: Schema.String
}) {}

/**
 * Only credit or debit card sales can be voided.
 * @category errors
 */
export class NotACardSale extends Schema.TaggedError<NotACardSale>()("NotACardSale", {
  integrationId: IntegrationId,
  paymentMethod: SalePaymentMethod
}) {}

/**
 * The void window closed: same Bogotá day, before 21:00. A refund is the remedy.
 * @category errors
 */
export class VoidWindowClosed extends Schema.TaggedError<VoidWindowClosed>()("VoidWindowClosed", {
  integrationId: IntegrationId,
  approvedAt: Schema.DateTimeUtc,
  closesAt: Schema.DateTimeUtc
}) {}

/**
 * Every refusal of the terminal checkout.
 * @category errors
 */
export type Error =
  | CheckoutNotFound
  | CheckoutAlreadyExists
  | CheckoutNotInState
  | CheckoutAlreadySent
  | UnknownCheckoutTransaction
  | InvalidSaleDetails
  | NotACardSale
  | VoidWindowClosed

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * What a checkout is, fixed at creation.
 * @category models
 */
export interface Checkout {
  readonly integrationId: IntegrationId
  readonly transactionId: TransactionId
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly terminalSerial: TerminalSerial
  readonly terminalModel: string
  readonly reference: string
  readonly amount: CheckoutAmount
  readonly paymentMethod: CheckoutPaymentMethod
  readonly userEmail: string
  readonly description: Option.Option<string>
  readonly payer: Option.Option<Payer>
  readonly createdAt: DateTime.Utc
}

/**
 * An approved sale and when it was approved (the void window counts from then).
 * @category models
 */
export interface Approval {
  readonly sale: Sale
  readonly approvedAt: DateTime.Utc
}

/**
 * A checkout in one of its statuses.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly checkout: Checkout
  /** Push attempts claimed so far. */
  readonly pushAttempts: number
  /** When the last push was claimed (none before the first). */
  readonly claimedAt: Option.Option<DateTime.Utc>
  /** Why the last push failed (UNREACHABLE). */
  readonly lastFailure: Option.Option<string>
  /** When the terminal was locked, as observed at delivery. */
  readonly lockedSince: Option.Option<DateTime.Utc>
  readonly approval: Option.Option<Approval>
  readonly rejectionReason: Option.Option<string>
  readonly updatedAt: DateTime.Utc
}

/**
 * No checkout yet (`Initial`), or a checkout.
 * @category models
 */
export type State = Initial | Existing

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. Outcomes are taken from
 * SENDING too (they may overtake the delivery report) and from HELD (they prove the unlock). Late or
 * repeated reports (delivery, unreachable, unlock, outcome) after the outcome are no-ops. APPROVED ×
 * RejectVoid records the rejection (VOID_REJECTED) and stays APPROVED.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreateCheckout: "PENDING" },
  PENDING: { AttemptPush: "SENDING", CancelCheckout: "CANCELLED" },
  SENDING: {
    // A live claim is its pusher's: nothing to record. A lapsed one (the pusher was cut or died) is
    // claimed again, with the attempt counted.
    AttemptPush: ["SENDING", "noop"],
    RecordDelivery: ["SENT", "HELD"],
    RecordUnreachable: "UNREACHABLE",
    ApproveSale: "APPROVED",
    RejectSale: "REJECTED"
  },
  UNREACHABLE: { AttemptPush: "SENDING", CancelCheckout: "CANCELLED" },
  SENT: {
    RecordDelivery: "noop",
    UnlockTerminal: "noop",
    ApproveSale: "APPROVED",
    RejectSale: "REJECTED"
  },
  HELD: {
    RecordDelivery: "noop",
    UnlockTerminal: "SENT",
    ApproveSale: "APPROVED",
    RejectSale: "REJECTED"
  },
  CANCELLED: { CancelCheckout: "noop" },
  APPROVED: {
    RecordDelivery: "noop",
    RecordUnreachable: "noop",
    UnlockTerminal: "noop",
    ApproveSale: "noop",
    ApproveVoid: "VOIDED",
    RejectVoid: "APPROVED"
  },
  REJECTED: {
    RecordDelivery: "noop",
    RecordUnreachable: "noop",
    UnlockTerminal: "noop",
    RejectSale: "noop"
  },
  VOIDED: {
    RecordDelivery: "noop",
    RecordUnreachable: "noop",
    UnlockTerminal: "noop",
    ApproveSale: "noop",
    ApproveVoid: "noop"
  }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

/**
 * Whether the instruction has (or may have) left Cobro: from then on it cannot be cancelled (R3).
 * @category predicates
 */
export const wasSent = (status: Status): boolean =>
  status !== "PENDING" && status !== "UNREACHABLE" && status !== "CANCELLED"

/**
 * R1: whether a terminal locked since `lockedSince` holds a payment delivered at `now`: locked for
 * more than 2 minutes. A lock of exactly 2 minutes or less does not hold it.
 * @category predicates
 */
export const holdsPayment = (
  lockedSince: Option.Option<DateTime.DateTime>,
  now: DateTime.DateTime
): boolean =>
  Option.match(lockedSince, {
    onNone: () => false,
    onSome: (since) => DateTime.toEpochMillis(now) - DateTime.toEpochMillis(since) > HOLD_AFTER_LOCKED_MS
  })

/**
 * Whether the push of a SENDING checkout was claimed at least {@link PUSH_TIMEOUT_MS} before `now`:
 * its pusher has cut the terminal call by then, so another may claim it again.
 * @category predicates
 */
export const claimLapsed = (state: Existing, now: DateTime.DateTime): boolean =>
  Option.match(state.claimedAt, {
    onNone: () => true,
    onSome: (at) => DateTime.toEpochMillis(now) - DateTime.toEpochMillis(at) >= PUSH_TIMEOUT_MS
  })

/** R3: the refusal of a cancellation once the payment request was sent to the terminal. */
const alreadySent = (command: Command, state: Existing): CheckoutAlreadySent | undefined =>
  command._tag === "CancelCheckout" && wasSent(state._tag)
    ? new CheckoutAlreadySent({ integrationId: state.checkout.integrationId, status: state._tag })
    : undefined

/** Decides a command the table lets act on an existing checkout. */
const decideExisting = (
  command: Exclude<Command, CreateCheckout>,
  state: Existing
): Decision<Event, Error> => {
  const integrationId = state.checkout.integrationId
  // Outcomes must name the checkout's own transaction, whatever the state.
  const unknown = (transactionId: TransactionId) =>
    Either.left(new UnknownCheckoutTransaction({ integrationId, transactionId }))
  const isOwn = (transactionId: TransactionId) => transactionId === state.checkout.transactionId
  return Match.valueTags(command, {
    AttemptPush: (c) =>
      // A live claim belongs to its pusher: a second pusher records nothing and does not push.
      state._tag === "SENDING" && !claimLapsed(state, c.now)
        ? none
        : ok(new PushAttempted({ attempt: state.pushAttempts + 1, at: c.now }, unchecked)),
    RecordDelivery: (c) =>
      state._tag !== "SENDING"
        ? none
        : holdsPayment(c.lockedSince, c.now)
          ? ok(new CheckoutHeld({ lockedSince: Option.getOrThrow(c.lockedSince), at: c.now }, unchecked))
          : ok(new CheckoutSent({ lockedSince: c.lockedSince, at: c.now }, unchecked)),
    RecordUnreachable: (c) =>
      // After an outcome the terminal evidently got the instruction: the report is stale.
      state._tag !== "SENDING" ? none : ok(new DeliveryFailed({ reason: c.reason, at: c.now }, unchecked)),
    UnlockTerminal: (c) =>
      state._tag === "HELD" ? ok(new CheckoutReleased({ at: c.now }, unchecked)) : none,
    CancelCheckout: (c) =>
      state._tag === "CANCELLED" ? none : ok(new CheckoutCancelled({ at: c.now }, unchecked)),
    ApproveSale: (c) =>
      !isOwn(c.transactionId)
        ? unknown(c.transactionId)
        : state._tag === "APPROVED" || state._tag === "VOIDED"
          ? none
          : approve(c, integrationId),
    RejectSale: (c) =>
      !isOwn(c.transactionId)
        ? unknown(c.transactionId)
        : state._tag === "REJECTED"
          ? none
          : ok(
              new SaleRejected(
                { transactionId: c.transactionId, reason: c.reason, card: c.card, at: c.now },
                unchecked
              )
            ),
    ApproveVoid: (c) =>
      !isOwn(c.transactionId)
        ? unknown(c.transactionId)
        : state._tag === "VOIDED"
          ? none
          : Either.map(voidable(state, c.now), () => [
              new SaleVoided({ transactionId: c.transactionId, at: c.now }, unchecked)
            ]),
    RejectVoid: (c) =>
      !isOwn(c.transactionId)
        ? unknown(c.transactionId)
        : Either.map(voidable(state, c.now), () => [
            new VoidRejected({ transactionId: c.transactionId, reason: c.reason, at: c.now }, unchecked)
          ])
  })
}

const create = (c: CreateCheckout): Decision<Event, Error> =>
  ok(
    new CheckoutCreated(
      {
        integrationId: c.integrationId,
        transactionId: c.transactionId,
        merchantId: c.merchantId,
        sandbox: c.sandbox,
        terminalSerial: c.terminalSerial,
        terminalModel: c.terminalModel,
        reference: c.reference,
        amount: c.amount,
        paymentMethod: c.paymentMethod,
        userEmail: c.userEmail,
        description: c.description,
        payer: c.payer,
        createdAt: c.now
      },
      unchecked
    )
  )

const approve = (c: ApproveSale, integrationId: IntegrationId): Decision<Event, Error> => {
  // The webhook's card `data` needs the card and the approval number; other methods carry no card.
  if (isCardMethod(c.sale.paymentMethod)) {
    if (Option.isNone(c.sale.card) || Option.isNone(c.sale.approvalNumber)) {
      return Either.left(
        new InvalidSaleDetails({
          integrationId,
          reason: "a card sale carries the card and the approval number"
        })
      )
    }
  } else if (Option.isSome(c.sale.card)) {
    return Either.left(new InvalidSaleDetails({ integrationId, reason: "only card sales carry card data" }))
  }
  return ok(new SaleApproved({ transactionId: c.transactionId, sale: c.sale, at: c.now }, unchecked))
}

/** The void preconditions: an APPROVED card sale, within its Bogotá void window at `now`. */
const voidable = (state: Existing, now: DateTime.Utc): Either.Either<void, Error> => {
  const integrationId = state.checkout.integrationId
  // The table lets void commands reach only APPROVED (and VOIDED, handled before), so approval is set.
  const approval = Option.getOrThrow(state.approval)
  if (Option.isNone(approval.sale.card)) {
    return Either.left(new NotACardSale({ integrationId, paymentMethod: approval.sale.paymentMethod }))
  }
  if (!Bogota.isWithinVoidWindow(approval.approvedAt, now)) {
    return Either.left(
      new VoidWindowClosed({
        integrationId,
        approvedAt: approval.approvedAt,
        closesAt: Bogota.voidWindowClosesAt(approval.approvedAt)
      })
    )
  }
  return Either.void
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const created = (event: CheckoutCreated): Existing => ({
  _tag: "PENDING",
  checkout: {
    integrationId: event.integrationId,
    transactionId: event.transactionId,
    merchantId: event.merchantId,
    sandbox: event.sandbox,
    terminalSerial: event.terminalSerial,
    terminalModel: event.terminalModel,
    reference: event.reference,
    amount: event.amount,
    paymentMethod: event.paymentMethod,
    userEmail: event.userEmail,
    description: event.description,
    payer: event.payer,
    createdAt: event.createdAt
  },
  pushAttempts: 0,
  claimedAt: Option.none(),
  lastFailure: Option.none(),
  lockedSince: Option.none(),
  approval: Option.none(),
  rejectionReason: Option.none(),
  updatedAt: event.createdAt
})

/** What an event after the creation changes besides `updatedAt`, which every one moves to its `at`. */
type Change = Partial<Existing>

const evolveExisting = (state: Existing, event: Exclude<Event, CheckoutCreated>): Existing => ({
  ...state,
  ...Match.valueTags(event, {
    PushAttempted: (e): Change => ({
      _tag: "SENDING",
      pushAttempts: e.attempt,
      claimedAt: Option.some(e.at)
    }),
    CheckoutSent: (e): Change => ({ _tag: "SENT", lockedSince: e.lockedSince }),
    CheckoutHeld: (e): Change => ({ _tag: "HELD", lockedSince: Option.some(e.lockedSince) }),
    CheckoutReleased: (): Change => ({ _tag: "SENT", lockedSince: Option.none() }),
    DeliveryFailed: (e): Change => ({ _tag: "UNREACHABLE", lastFailure: Option.some(e.reason) }),
    CheckoutCancelled: (): Change => ({ _tag: "CANCELLED" }),
    SaleApproved: (e): Change => ({
      _tag: "APPROVED",
      approval: Option.some({ sale: e.sale, approvedAt: e.at })
    }),
    SaleRejected: (e): Change => ({ _tag: "REJECTED", rejectionReason: Option.some(e.reason) }),
    SaleVoided: (): Change => ({ _tag: "VOIDED" }),
    VoidRejected: (): Change => ({})
  }),
  updatedAt: event.at
})

/**
 * The TerminalCheckout aggregate; its streams are keyed by integration id.
 * @category aggregates
 */
export const TerminalCheckout: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "TerminalCheckout",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: CheckoutNotFound, AlreadyExists: CheckoutAlreadyExists, NotInState: CheckoutNotInState },
    (state) => ({ integrationId: state.checkout.integrationId }),
    alreadySent
  ),
  create: { CreateCheckout: create },
  decide: decideExisting,
  created: { CheckoutCreated: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = TerminalCheckout
