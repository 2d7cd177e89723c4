/**
 * The refund (spec C8, C9): requested PROCESSING for the whole captured amount of an approved card
 * payment, then APPROVED or REJECTED by the service's review. Both outcomes are final.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Aggregate } from "../kernel/Aggregate.js"
import { IntentReference, MerchantId, RefundId, TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"
import * as Transitions from "../kernel/Transitions.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** The refund statuses, as the refund status read (C9) spells them. */
export const Status = Schema.Literal("PROCESSING", "APPROVED", "REJECTED")
export type Status = typeof Status.Type

/** The outcome of the service's review. */
export const Outcome = Schema.Literal("APPROVED", "REJECTED")
export type Outcome = typeof Outcome.Type

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * C8: a refund request the Payment accepted (`Payment.RequestRefund`); the handler minted the id and
 * copied the amount the payment recorded, the whole captured amount.
 */
export class RequestRefund extends Schema.TaggedClass<RequestRefund>()("RequestRefund", {
  refundId: RefundId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  transactionId: TransactionId,
  referenceId: IntentReference,
  amount: Amount,
  reason: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/** The review ended: the refund is applied (`date_applied`) or refused. */
export class ReviewRefund extends Schema.TaggedClass<ReviewRefund>()("ReviewRefund", {
  outcome: Outcome,
  now: Schema.DateTimeUtc
}) {}

export const Command = Schema.Union(RequestRefund, ReviewRefund)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

export class RefundRequested extends Schema.TaggedClass<RefundRequested>()("RefundRequested", {
  refundId: RefundId,
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  transactionId: TransactionId,
  referenceId: IntentReference,
  amount: Amount,
  reason: Schema.String,
  requestedAt: Schema.DateTimeUtc
}) {}

export class RefundApproved extends Schema.TaggedClass<RefundApproved>()("RefundApproved", {
  dateApplied: Schema.DateTimeUtc
}) {}

export class RefundRejected extends Schema.TaggedClass<RefundRejected>()("RefundRejected", {
  dateApplied: Schema.DateTimeUtc
}) {}

export const Event = Schema.Union(RefundRequested, RefundApproved, RefundRejected)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** No refund with that id. */
export class RefundNotFound extends Schema.TaggedError<RefundNotFound>()("RefundNotFound", {}) {}

/** A refund with that id exists already. */
export class RefundAlreadyExists extends Schema.TaggedError<RefundAlreadyExists>()("RefundAlreadyExists", {
  refundId: RefundId
}) {}

/** A review that contradicts the outcome already recorded: the refund is irreversible. */
export class RefundAlreadyReviewed extends Schema.TaggedError<RefundAlreadyReviewed>()(
  "RefundAlreadyReviewed",
  {
    refundId: RefundId,
    status: Outcome
  }
) {}

export type Error = RefundNotFound | RefundAlreadyExists | RefundAlreadyReviewed

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/** What a refund is, fixed at the request. */
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

/** No refund yet. */
export interface Initial {
  readonly _tag: "Initial"
}

/** A refund in one of the spec's statuses. */
export interface Existing {
  readonly _tag: Status
  readonly refund: Request
  /** `date_applied`: when the review ended; none while PROCESSING. */
  readonly dateApplied: Option.Option<DateTime.Utc>
}

export type State = Initial | Existing

export const initialState: State = { _tag: "Initial" }

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/** State × command → states it may lead to. A repeated review outcome is a no-op. */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { RequestRefund: ["PROCESSING"] },
  PROCESSING: { ReviewRefund: ["APPROVED", "REJECTED"] },
  APPROVED: { ReviewRefund: ["APPROVED"] },
  REJECTED: { ReviewRefund: ["REJECTED"] }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const ok = (...events: ReadonlyArray<Event>): Either.Either<ReadonlyArray<Event>, Error> =>
  Either.right(events)

export const decide = (command: Command, state: State): Either.Either<ReadonlyArray<Event>, Error> => {
  if (state._tag === "Initial") {
    return command._tag === "RequestRefund"
      ? ok(
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
      : Either.left(new RefundNotFound())
  }
  const refundId = state.refund.refundId
  if (!Transitions.allows(transitions, state._tag, command._tag)) {
    return Either.left(new RefundAlreadyExists({ refundId }))
  }
  return Match.valueTags(command, {
    RequestRefund: () => Either.left(new RefundAlreadyExists({ refundId })),
    ReviewRefund: (c) => {
      if (state._tag === "PROCESSING") {
        return ok(
          c.outcome === "APPROVED"
            ? new RefundApproved({ dateApplied: c.now })
            : new RefundRejected({ dateApplied: c.now })
        )
      }
      // Final: the same outcome again is a re-delivery; the other one would reverse it.
      return state._tag === c.outcome
        ? ok()
        : Either.left(new RefundAlreadyReviewed({ refundId, status: state._tag }))
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

export const evolve = (state: State, event: Event): State => {
  if (event._tag === "RefundRequested") {
    return {
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
    }
  }
  // Events of a refund that does not exist cannot be in a well-formed stream: ignore them.
  if (state._tag === "Initial") return state
  return Match.valueTags(event, {
    RefundApproved: (e): State => ({ ...state, _tag: "APPROVED", dateApplied: Option.some(e.dateApplied) }),
    RefundRejected: (e): State => ({ ...state, _tag: "REJECTED", dateApplied: Option.some(e.dateApplied) })
  })
}

/**
 * The Refund aggregate; its stream id is the refund id (`RFD_…`). C9 reads by transaction id: the
 * Payment records its latest refund id, which leads to this stream.
 */
export const Refund: Aggregate<Command, Event, State, Error> = {
  name: "Refund",
  initialState,
  decide,
  evolve,
  transitions,
  Event,
  schemaVersion: 1
}
