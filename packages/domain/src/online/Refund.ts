/**
 * The refund (spec C8, C9): requested PROCESSING for the whole captured amount of an approved card
 * payment, then APPROVED or REJECTED by the service's review. Both outcomes are final.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { IntentReference, MerchantId, RefundId, TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"
import * as Transitions from "../kernel/Transitions.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * The refund statuses, as the refund status read (C9) spells them.
 * @category models
 */
export const Status = Schema.Literal("PROCESSING", "APPROVED", "REJECTED")
export type Status = typeof Status.Type

/**
 * The outcome of the service's review.
 * @category models
 */
export const Outcome = Schema.Literal("APPROVED", "REJECTED")
export type Outcome = typeof Outcome.Type

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** What a refund request carries, and its {@link RefundRequested} records. */
const requestFields = {
  refundId: RefundId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  transactionId: TransactionId,
  referenceId: IntentReference,
  amount: Amount,
  reason: Schema.String
}

/**
 * C8: a refund request the Payment accepted (`Payment.RequestRefund`); the handler minted the id and
 * copied the amount the payment recorded, the whole captured amount.
 * @category commands
 */
export class RequestRefund extends Schema.TaggedClass<RequestRefund>()("RequestRefund", {
  ...requestFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * The review ended: the refund is applied (`date_applied`) or refused.
 * @category commands
 */
export class ReviewRefund extends Schema.TaggedClass<ReviewRefund>()("ReviewRefund", {
  outcome: Outcome,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the refund.
 * @category commands
 */
export const Command = Schema.Union(RequestRefund, ReviewRefund)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * A refund of the whole captured amount was requested (C8): PROCESSING, under the service's review.
 * @category events
 */
export class RefundRequested extends Schema.TaggedClass<RefundRequested>()("RefundRequested", {
  ...requestFields,
  requestedAt: Schema.DateTimeUtc
}) {}

/**
 * The review approved the refund: APPROVED, applied on `date_applied`; final.
 * @category events
 */
export class RefundApproved extends Schema.TaggedClass<RefundApproved>()("RefundApproved", {
  dateApplied: Schema.DateTimeUtc
}) {}

/**
 * The review rejected the refund: REJECTED; final (the payment may be refunded again).
 * @category events
 */
export class RefundRejected extends Schema.TaggedClass<RefundRejected>()("RefundRejected", {
  dateApplied: Schema.DateTimeUtc
}) {}

/**
 * Every event of the refund, as stored.
 * @category events
 */
export const Event = Schema.Union(RefundRequested, RefundApproved, RefundRejected)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ refundId: RefundId }, { status: Status })

/**
 * No refund with that id.
 * @category errors
 */
export class RefundNotFound extends Refusal.NotFound<RefundNotFound>()("RefundNotFound") {}

/**
 * A refund with that id exists already.
 * @category errors
 */
export class RefundAlreadyExists extends Refusal.AlreadyExists<RefundAlreadyExists>()(
  "RefundAlreadyExists"
) {}

/**
 * A review that contradicts the outcome already recorded: the refund is irreversible.
 * @category errors
 */
export class RefundAlreadyReviewed extends Schema.TaggedError<RefundAlreadyReviewed>()(
  "RefundAlreadyReviewed",
  {
    refundId: RefundId,
    status: Outcome
  }
) {}

/**
 * Every refusal of the refund.
 * @category errors
 */
export type Error = RefundNotFound | RefundAlreadyExists | RefundAlreadyReviewed

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * What a refund is, fixed at the request.
 * @category models
 */
export interface Request {
  readonly refundId: RefundId
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly transactionId: TransactionId
  readonly referenceId: IntentReference
  readonly amount: Amount
  readonly reason: string
  readonly requestedAt: DateTime.Utc
}

/**
 * A refund in one of the spec's statuses.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly refund: Request
  /** `date_applied`: when the review ended; none while PROCESSING. */
  readonly dateApplied: Option.Option<DateTime.Utc>
}

/**
 * No refund yet (`Initial`), or a refund.
 * @category models
 */
export type State = Initial | Existing

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. A repeated review
 * outcome is a no-op (the other outcome is refused: `RefundAlreadyReviewed`).
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { RequestRefund: "PROCESSING" },
  PROCESSING: { ReviewRefund: ["APPROVED", "REJECTED"] },
  APPROVED: { ReviewRefund: "noop" },
  REJECTED: { ReviewRefund: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const request = (command: RequestRefund): Decision<Event, Error> =>
  ok(
    new RefundRequested({
      refundId: command.refundId,
      merchantId: command.merchantId,
      sandbox: command.sandbox,
      transactionId: command.transactionId,
      referenceId: command.referenceId,
      amount: command.amount,
      reason: command.reason,
      requestedAt: command.now
    })
  )

const review = (c: ReviewRefund, state: Existing): Decision<Event, Error> => {
  if (state._tag === "PROCESSING") {
    return ok(
      c.outcome === "APPROVED"
        ? new RefundApproved({ dateApplied: c.now })
        : new RefundRejected({ dateApplied: c.now })
    )
  }
  // Final: the same outcome again is a re-delivery; the other one would reverse it.
  return state._tag === c.outcome
    ? none
    : Either.left(new RefundAlreadyReviewed({ refundId: state.refund.refundId, status: state._tag }))
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const requested = (event: RefundRequested): Existing => ({
  _tag: "PROCESSING",
  refund: {
    refundId: event.refundId,
    merchantId: event.merchantId,
    sandbox: event.sandbox,
    transactionId: event.transactionId,
    referenceId: event.referenceId,
    amount: event.amount,
    reason: event.reason,
    requestedAt: event.requestedAt
  },
  dateApplied: Option.none()
})

const evolveExisting = (state: Existing, event: Exclude<Event, RefundRequested>): Existing =>
  Match.valueTags(event, {
    RefundApproved: (e): Existing => ({
      ...state,
      _tag: "APPROVED",
      dateApplied: Option.some(e.dateApplied)
    }),
    RefundRejected: (e): Existing => ({ ...state, _tag: "REJECTED", dateApplied: Option.some(e.dateApplied) })
  })

/**
 * The Refund aggregate; its stream id is the refund id (`RFD_…`). C9 reads by transaction id: the
 * Payment records its latest refund id, which leads to this stream.
 * @category aggregates
 */
export const Refund: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "Refund",
  Event,
  transitions,
  refuse: {
    notFound: () => new RefundNotFound(),
    alreadyExists: (state) => new RefundAlreadyExists({ refundId: state.refund.refundId }),
    // Every existing state takes a review: only a second request can be refused, as a duplicate.
    notInState: (_, state) => new RefundAlreadyExists({ refundId: state.refund.refundId })
  },
  create: { RequestRefund: request },
  decide: review,
  created: { RefundRequested: requested },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = Refund
