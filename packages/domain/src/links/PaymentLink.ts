/**
 * The payment link (spec B): created ACTIVE, PROCESSING while a payment is under way, then PAID, or
 * back to ACTIVE when the payment fails (declined, or abandoned by the payer past the timeout:
 * `ExpirePayment`) and the link is still usable. Expiry, cancellation and a
 * rejection of an unusable link are final.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { MerchantId, PaymentLinkId, TransactionId } from "../shared/Ids.js"
import { Amount, Currency, TaxLine } from "../shared/Money.js"
import * as Transitions from "../kernel/Transitions.js"
import { unchecked } from "../kernel/Unchecked.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * The link statuses, spelled as the spec's link record carries them.
 * @category models
 */
export const Status = Schema.Literal("ACTIVE", "PROCESSING", "PAID", "REJECTED", "CANCELLED", "EXPIRED")
export type Status = typeof Status.Type

/**
 * OPEN: the payer chooses the amount; CLOSE: the merchant set it.
 * @category models
 */
export const AmountType = Schema.Literal("OPEN", "CLOSE")
export type AmountType = typeof AmountType.Type

/** Nanoseconds since the Unix epoch, kept exact (they exceed 2^53). */
const Nanoseconds = Schema.BigInt

/**
 * The merchant-set amount of a CLOSE link.
 * @category models
 */
export class LinkAmount extends Schema.Class<LinkAmount>("LinkAmount")({
  currency: Currency,
  total: Amount,
  tip: Amount,
  taxes: Schema.Array(TaxLine)
}) {}

/** The link: what {@link CreateLink} gives and {@link LinkCreated} records. */
const linkFields = {
  linkId: PaymentLinkId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  amountType: AmountType,
  /** Required for CLOSE, absent for OPEN. */
  amount: Schema.OptionFromUndefinedOr(LinkAmount),
  /** The merchant's reference, or the link id when none was given. */
  reference: Schema.String,
  description: Schema.OptionFromUndefinedOr(Schema.String),
  expiresAt: Schema.OptionFromUndefinedOr(Nanoseconds),
  callbackUrl: Schema.OptionFromUndefinedOr(Schema.String),
  /** The methods the link offers: all the merchant's when the request named none. */
  paymentMethods: Schema.NonEmptyArray(Schema.String),
  payerEmail: Schema.OptionFromUndefinedOr(Schema.String),
  imageUrl: Schema.OptionFromUndefinedOr(Schema.String)
}

/**
 * A payment method's bounds for the amount of one link payment (B1).
 * @category models
 */
export const AmountBounds = Schema.Struct({ min: Amount, max: Amount })
export type AmountBounds = typeof AmountBounds.Type

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * B2: create a link. The handler minted the id and read the clock.
 * @category commands
 */
export class CreateLink extends Schema.TaggedClass<CreateLink>()("CreateLink", {
  ...linkFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * The customer starts paying on the checkout page (B3): the link goes PROCESSING.
 * @category commands
 */
export class StartPayment extends Schema.TaggedClass<StartPayment>()("StartPayment", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  /** The amount paid: the link's total for CLOSE, the payer's choice for OPEN. */
  amount: Amount,
  /** The method's bounds from the merchant's configuration (B1). */
  bounds: AmountBounds,
  now: Schema.DateTimeUtc
}) {}

/**
 * The payment under way was approved: the link is PAID.
 * @category commands
 */
export class CompletePayment extends Schema.TaggedClass<CompletePayment>()("CompletePayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/**
 * The payment under way was declined: the link is ACTIVE again, or REJECTED once expired.
 * @category commands
 */
export class FailPayment extends Schema.TaggedClass<FailPayment>()("FailPayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/**
 * The timeout sweeper fails the payment under way: the payer left it at the 3DS challenge, the bank
 * or the wallet (or a crash left a card authorization unanswered) for `timeout` since it started.
 * @category commands
 */
export class ExpirePayment extends Schema.TaggedClass<ExpirePayment>()("ExpirePayment", {
  transactionId: TransactionId,
  /** How long a payment may stay under way, from its start (`Payment.ABANDONED_PAYMENT_TIMEOUT`). */
  timeout: Schema.DurationFromSelf,
  now: Schema.DateTimeUtc
}) {}

/**
 * The merchant or the customer cancels an unpaid link: CANCELLED, final.
 * @category commands
 */
export class CancelLink extends Schema.TaggedClass<CancelLink>()("CancelLink", {
  now: Schema.DateTimeUtc
}) {}

/**
 * The sweeper marks an overdue link EXPIRED, final.
 * @category commands
 */
export class ExpireLink extends Schema.TaggedClass<ExpireLink>()("ExpireLink", {
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the payment link.
 * @category commands
 */
export const Command = Schema.Union(
  CreateLink,
  StartPayment,
  CompletePayment,
  FailPayment,
  ExpirePayment,
  CancelLink,
  ExpireLink
)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * A link was created (B2), ACTIVE.
 * @category events
 */
export class LinkCreated extends Schema.TaggedClass<LinkCreated>()("LinkCreated", {
  ...linkFields,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * A payment of the link started on the checkout page: PROCESSING.
 * @category events
 */
export class LinkPaymentStarted extends Schema.TaggedClass<LinkPaymentStarted>()("LinkPaymentStarted", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  amount: Amount,
  at: Schema.DateTimeUtc
}) {}

/**
 * The payment under way was approved: the link is PAID (the spec's PAID status).
 * @category events
 */
export class LinkPaid extends Schema.TaggedClass<LinkPaid>()("LinkPaid", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

/**
 * Present (`true`) on a failure the timeout sweeper recorded (`ExpirePayment`): the payer never came
 * back from the 3DS challenge, the bank or the wallet. Absent on a declined payment. The webhook is
 * the same (SALE_REJECTED); a late decision of the payer is answered "expired".
 */
const expiredField = Schema.optionalWith(Schema.Literal(true), { exact: true })

/**
 * The payment failed and the link can be paid again: back to ACTIVE.
 * @category events
 */
export class LinkPaymentFailed extends Schema.TaggedClass<LinkPaymentFailed>()("LinkPaymentFailed", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc,
  expired: expiredField
}) {}

/**
 * The payment failed and the link had expired meanwhile: REJECTED, it cannot be paid again.
 * @category events
 */
export class LinkRejected extends Schema.TaggedClass<LinkRejected>()("LinkRejected", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc,
  expired: expiredField
}) {}

/**
 * The link was cancelled before it was paid: CANCELLED.
 * @category events
 */
export class LinkCancelled extends Schema.TaggedClass<LinkCancelled>()("LinkCancelled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * The link's expiration date passed and the sweeper recorded it: EXPIRED.
 * @category events
 */
export class LinkExpired extends Schema.TaggedClass<LinkExpired>()("LinkExpired", {
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the payment link, as stored.
 * @category events
 */
export const Event = Schema.Union(
  LinkCreated,
  LinkPaymentStarted,
  LinkPaid,
  LinkPaymentFailed,
  LinkRejected,
  LinkCancelled,
  LinkExpired
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ linkId: PaymentLinkId }, { status: Status })

/**
 * No link with that id.
 * @category errors
 */
export class LinkNotFound extends Refusal.NotFound<LinkNotFound>()("LinkNotFound") {}

/**
 * A link with that id exists already.
 * @category errors
 */
export class LinkAlreadyExists extends Refusal.AlreadyExists<LinkAlreadyExists>()("LinkAlreadyExists") {}

/**
 * The link is not in a state that accepts the command (paying a PAID link, cancelling one in flight).
 * @category errors
 */
export class LinkNotInState extends Refusal.NotInState<LinkNotInState>()("LinkNotInState") {}

/**
 * The link's expiration date has passed: it cannot be paid.
 * @category errors
 */
export class LinkOverdue extends Schema.TaggedError<LinkOverdue>()("LinkOverdue", {
  linkId: PaymentLinkId,
  expiresAt: Nanoseconds
}) {}

/**
 * `ExpireLink` before the link's expiration date, or on a link that has none.
 * @category errors
 */
export class LinkNotOverdue extends Schema.TaggedError<LinkNotOverdue>()("LinkNotOverdue", {
  linkId: PaymentLinkId
}) {}

/**
 * `ExpirePayment` before the payment under way has been so for the timeout.
 * @category errors
 */
export class LinkPaymentNotOverdue extends Schema.TaggedError<LinkPaymentNotOverdue>()(
  "LinkPaymentNotOverdue",
  { linkId: PaymentLinkId, transactionId: TransactionId }
) {}

/**
 * The method is not one the link offers.
 * @category errors
 */
export class MethodNotOffered extends Schema.TaggedError<MethodNotOffered>()("MethodNotOffered", {
  linkId: PaymentLinkId,
  paymentMethod: Schema.String
}) {}

/**
 * The amount is outside the method's bounds (OPEN) or differs from the link's total (CLOSE).
 * @category errors
 */
export class InvalidPaymentAmount extends Schema.TaggedError<InvalidPaymentAmount>()("InvalidPaymentAmount", {
  linkId: PaymentLinkId,
  amount: Amount,
  min: Amount,
  max: Amount
}) {}

/**
 * The transaction named is not the one under way on the link.
 * @category errors
 */
export class UnknownLinkTransaction extends Schema.TaggedError<UnknownLinkTransaction>()(
  "UnknownLinkTransaction",
  { linkId: PaymentLinkId, transactionId: TransactionId }
) {}

/**
 * A CLOSE link without an amount, or an OPEN link with one.
 * @category errors
 */
export class InvalidLinkAmount extends Schema.TaggedError<InvalidLinkAmount>()("InvalidLinkAmount", {
  amountType: AmountType
}) {}

/**
 * Every refusal of the payment link.
 * @category errors
 */
export type Error =
  | LinkNotFound
  | LinkAlreadyExists
  | LinkNotInState
  | LinkOverdue
  | LinkNotOverdue
  | LinkPaymentNotOverdue
  | MethodNotOffered
  | InvalidPaymentAmount
  | UnknownLinkTransaction
  | InvalidLinkAmount

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * What a link is, fixed at creation.
 * @category models
 */
export interface Link {
  readonly linkId: PaymentLinkId
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly amountType: AmountType
  readonly amount: Option.Option<LinkAmount>
  readonly reference: string
  readonly description: Option.Option<string>
  readonly expiresAt: Option.Option<bigint>
  readonly callbackUrl: Option.Option<string>
  readonly paymentMethods: ReadonlyArray<string>
  readonly payerEmail: Option.Option<string>
  readonly imageUrl: Option.Option<string>
  readonly createdAt: DateTime.Utc
}

/**
 * A link in one of the spec's statuses, with its last (or current) payment.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly link: Link
  readonly transactionId: Option.Option<TransactionId>
  readonly paymentMethod: Option.Option<string>
  /** The amount of the last payment started: the total of CLOSE links, the payer's choice for OPEN. */
  readonly paidAmount: Option.Option<Amount>
  /** When the last payment started (the payment timeout runs from it). */
  readonly paymentStartedAt: Option.Option<DateTime.Utc>
  readonly updatedAt: DateTime.Utc
}

/**
 * No link yet (`Initial`), or a link.
 * @category models
 */
export type State = Initial | Existing

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded (a repeated expiry, a
 * repeated cancellation, a re-delivered approval or rejection).
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreateLink: "ACTIVE" },
  ACTIVE: { StartPayment: "PROCESSING", CancelLink: "CANCELLED", ExpireLink: "EXPIRED" },
  PROCESSING: {
    CompletePayment: "PAID",
    FailPayment: ["ACTIVE", "REJECTED"],
    ExpirePayment: ["ACTIVE", "REJECTED"]
  },
  PAID: { CompletePayment: "noop" },
  REJECTED: { FailPayment: "noop" },
  CANCELLED: { CancelLink: "noop" },
  EXPIRED: { ExpireLink: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const nanos = (instant: DateTime.DateTime): bigint => BigInt(DateTime.toEpochMillis(instant)) * 1_000_000n

/**
 * Whether the link's expiration date has passed at `now` (expiry is at `expiration_date` itself).
 * @category predicates
 */
export const isOverdue = (link: Link, now: DateTime.DateTime): boolean =>
  Option.match(link.expiresAt, { onNone: () => false, onSome: (at) => nanos(now) >= at })

/**
 * The status a reader sees at `now`: an ACTIVE link whose expiration date has passed reads as
 * EXPIRED even before the sweeper has recorded it.
 * @category getters
 */
export const statusAt = (state: Existing, now: DateTime.DateTime): Status =>
  state._tag === "ACTIVE" && isOverdue(state.link, now) ? "EXPIRED" : state._tag

/**
 * When the payment under way times out: its start plus `timeout`; none when no payment is under way.
 * @category getters
 */
export const paymentDeadline = (
  state: State,
  timeout: Duration.DurationInput
): Option.Option<DateTime.Utc> =>
  state._tag === "PROCESSING"
    ? Option.map(state.paymentStartedAt, (startedAt) => DateTime.addDuration(startedAt, timeout))
    : Option.none()

/**
 * Whether the payment under way has been so for `timeout` at `now` (the deadline itself included):
 * the payer abandoned it, and `ExpirePayment` fails it.
 * @category predicates
 */
export const isPaymentOverdue = (
  state: State,
  timeout: Duration.DurationInput,
  now: DateTime.DateTime
): boolean =>
  Option.exists(paymentDeadline(state, timeout), (deadline) => DateTime.greaterThanOrEqualTo(now, deadline))

/** Decides a command the table lets act on an existing link. */
const decideExisting = (command: Exclude<Command, CreateLink>, state: Existing): Decision<Event, Error> => {
  const linkId = state.link.linkId
  return Match.valueTags(command, {
    StartPayment: (c) => startPayment(c, state),
    CompletePayment: (c) =>
      !sameTransaction(state, c.transactionId)
        ? Either.left(new UnknownLinkTransaction({ linkId, transactionId: c.transactionId }))
        : state._tag === "PAID"
          ? none
          : ok(new LinkPaid({ transactionId: c.transactionId, at: c.now }, unchecked)),
    FailPayment: (c) =>
      !sameTransaction(state, c.transactionId)
        ? Either.left(new UnknownLinkTransaction({ linkId, transactionId: c.transactionId }))
        : state._tag === "REJECTED"
          ? none
          : isOverdue(state.link, c.now)
            ? ok(new LinkRejected({ transactionId: c.transactionId, at: c.now }, unchecked))
            : ok(new LinkPaymentFailed({ transactionId: c.transactionId, at: c.now }, unchecked)),
    ExpirePayment: (c) =>
      !sameTransaction(state, c.transactionId)
        ? Either.left(new UnknownLinkTransaction({ linkId, transactionId: c.transactionId }))
        : !isPaymentOverdue(state, c.timeout, c.now)
          ? Either.left(new LinkPaymentNotOverdue({ linkId, transactionId: c.transactionId }))
          : // As a declined payment: ACTIVE again, or REJECTED when the link expired meanwhile.
            isOverdue(state.link, c.now)
            ? ok(new LinkRejected({ transactionId: c.transactionId, at: c.now, expired: true }, unchecked))
            : ok(
                new LinkPaymentFailed({ transactionId: c.transactionId, at: c.now, expired: true }, unchecked)
              ),
    CancelLink: (c) => (state._tag === "CANCELLED" ? none : ok(new LinkCancelled({ at: c.now }, unchecked))),
    ExpireLink: (c) =>
      state._tag === "EXPIRED"
        ? none
        : isOverdue(state.link, c.now)
          ? ok(new LinkExpired({ at: c.now }, unchecked))
          : Either.left(new LinkNotOverdue({ linkId }))
  })
}

const sameTransaction = (state: Existing, transactionId: TransactionId): boolean =>
  Option.contains(state.transactionId, transactionId)

const create = (c: CreateLink): Decision<Event, Error> =>
  (c.amountType === "CLOSE") !== Option.isSome(c.amount)
    ? Either.left(new InvalidLinkAmount({ amountType: c.amountType }))
    : ok(
        new LinkCreated(
          {
            linkId: c.linkId,
            merchantId: c.merchantId,
            sandbox: c.sandbox,
            amountType: c.amountType,
            amount: c.amount,
            reference: c.reference,
            description: c.description,
            expiresAt: c.expiresAt,
            callbackUrl: c.callbackUrl,
            paymentMethods: c.paymentMethods,
            payerEmail: c.payerEmail,
            imageUrl: c.imageUrl,
            createdAt: c.now
          },
          unchecked
        )
      )

const startPayment = (c: StartPayment, state: Existing): Decision<Event, Error> => {
  const link = state.link
  if (isOverdue(link, c.now)) {
    return Either.left(
      new LinkOverdue({ linkId: link.linkId, expiresAt: Option.getOrElse(link.expiresAt, () => 0n) })
    )
  }
  if (!link.paymentMethods.includes(c.paymentMethod)) {
    return Either.left(new MethodNotOffered({ linkId: link.linkId, paymentMethod: c.paymentMethod }))
  }
  // A CLOSE link is paid for exactly its total; an OPEN one for any amount within the method's bounds.
  const [min, max] = Option.match(link.amount, {
    onNone: () => [c.bounds.min, c.bounds.max] as const,
    onSome: (amount) => [amount.total, amount.total] as const
  })
  if (c.amount < min || c.amount > max) {
    return Either.left(new InvalidPaymentAmount({ linkId: link.linkId, amount: c.amount, min, max }))
  }
  return ok(
    new LinkPaymentStarted(
      {
        transactionId: c.transactionId,
        paymentMethod: c.paymentMethod,
        amount: c.amount,
        at: c.now
      },
      unchecked
    )
  )
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const created = (event: LinkCreated): Existing => ({
  _tag: "ACTIVE",
  link: {
    linkId: event.linkId,
    merchantId: event.merchantId,
    sandbox: event.sandbox,
    amountType: event.amountType,
    amount: event.amount,
    reference: event.reference,
    description: event.description,
    expiresAt: event.expiresAt,
    callbackUrl: event.callbackUrl,
    paymentMethods: event.paymentMethods,
    payerEmail: event.payerEmail,
    imageUrl: event.imageUrl,
    createdAt: event.createdAt
  },
  transactionId: Option.none(),
  paymentMethod: Option.none(),
  paidAmount: Option.none(),
  paymentStartedAt: Option.none(),
  updatedAt: event.createdAt
})

const evolveExisting = (state: Existing, event: Exclude<Event, LinkCreated>): Existing =>
  Match.valueTags(event, {
    LinkPaymentStarted: (e): Existing => ({
      ...state,
      _tag: "PROCESSING",
      transactionId: Option.some(e.transactionId),
      paymentMethod: Option.some(e.paymentMethod),
      paidAmount: Option.some(e.amount),
      paymentStartedAt: Option.some(e.at),
      updatedAt: e.at
    }),
    LinkPaid: (e): Existing => ({ ...state, _tag: "PAID", updatedAt: e.at }),
    LinkPaymentFailed: (e): Existing => ({ ...state, _tag: "ACTIVE", updatedAt: e.at }),
    LinkRejected: (e): Existing => ({ ...state, _tag: "REJECTED", updatedAt: e.at }),
    LinkCancelled: (e): Existing => ({ ...state, _tag: "CANCELLED", updatedAt: e.at }),
    LinkExpired: (e): Existing => ({ ...state, _tag: "EXPIRED", updatedAt: e.at })
  })

/**
 * The PaymentLink aggregate.
 * @category aggregates
 */
export const PaymentLink: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "PaymentLink",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: LinkNotFound, AlreadyExists: LinkAlreadyExists, NotInState: LinkNotInState },
    (s) => ({ linkId: s.link.linkId })
  ),
  create: { CreateLink: create },
  decide: decideExisting,
  created: { LinkCreated: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = PaymentLink
