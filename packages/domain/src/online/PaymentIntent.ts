/**
 * The payment intent (spec C1–C3): created ACTIVE, PROCESSING while a payment attempt (C4) is under
 * way, PAID once it is approved, back to ACTIVE when the attempt is rejected. Updatable until paid.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Aggregate } from "../kernel/Aggregate.js"
import { IntentReference, MerchantId, TransactionId } from "../shared/Ids.js"
import { Amount, Currency, TaxLine } from "../shared/Money.js"
import * as Transitions from "../kernel/Transitions.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * The intent statuses. The spec shows only ACTIVE; PROCESSING and PAID are Cobro's, spelled as the
 * payment link's statuses so that one vocabulary serves both (decision: docs/decisions/OnlinePayments.md).
 */
export const Status = Schema.Literal("ACTIVE", "PROCESSING", "PAID")
export type Status = typeof Status.Type

/** The intent's `amount`: total including tip and taxes, in the currency's major unit. */
export class IntentAmount extends Schema.Class<IntentAmount>("IntentAmount")({
  currency: Currency,
  total: Amount,
  tip: Amount,
  taxes: Schema.Array(TaxLine)
}) {}

/**
 * The intent's `metadata`. The spec lists `key` and `value` strings; a string → string record holds
 * both readings (`{key, value}` literally, or a map of keys to values) unchanged.
 */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.String })
export type Metadata = typeof Metadata.Type

// The nested spec objects below are carried verbatim: the decider never branches on them, so their
// fields stay plain optional properties rather than Options.

/** A customer's billing or shipping address. */
export const Address = Schema.Struct({
  street1: Schema.optional(Schema.String),
  street2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  postalCode: Schema.optional(Schema.String),
  province: Schema.optional(Schema.String),
  countryCode: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String)
})
export type Address = typeof Address.Type

/** The intent's `customer`. */
export const Customer = Schema.Struct({
  name: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  billingAddress: Schema.optional(Address),
  shippingAddress: Schema.optional(Address)
})
export type Customer = typeof Customer.Type

/**
 * The device fingerprint of a create (C1) or an attempt (C4). The spec gives no type for the screen
 * sizes, so both strings and numbers are kept as sent.
 */
export const DeviceFingerprint = Schema.Struct({
  ip: Schema.optional(Schema.String),
  deviceType: Schema.optional(Schema.String),
  os: Schema.optional(Schema.String),
  browser: Schema.optional(Schema.String),
  acceptHeader: Schema.optional(Schema.String),
  userAgent: Schema.optional(Schema.String),
  javaEnabled: Schema.optional(Schema.Boolean),
  language: Schema.optional(Schema.String),
  colorDepth: Schema.optional(Schema.Int),
  screenHeight: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  screenWidth: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  timeZoneOffset: Schema.optional(Schema.Int),
  latitude: Schema.optional(Schema.String),
  longitude: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  platform: Schema.optional(Schema.String)
})
export type DeviceFingerprint = typeof DeviceFingerprint.Type

/** What a PUT (C3) replaces as a whole: every field of the intent body but its key. */
export class IntentDetails extends Schema.Class<IntentDetails>("IntentDetails")({
  amount: IntentAmount,
  description: Schema.OptionFromUndefinedOr(Schema.String),
  /** Required at attempt time for PSE and the bank button (see `requiresCallbackUrl`). */
  callbackUrl: Schema.OptionFromUndefinedOr(Schema.String),
  metadata: Schema.OptionFromUndefinedOr(Metadata),
  customer: Schema.OptionFromUndefinedOr(Customer)
}) {}

/** The payment methods whose attempt redirects to the bank and needs the intent's `callback_url`. */
export const REDIRECT_METHODS: ReadonlyArray<string> = ["PSE", "BOTON_BANK"]

/** Whether an attempt with `paymentMethod` needs the intent to carry a `callback_url` (spec, C intent). */
export const requiresCallbackUrl = (paymentMethod: string): boolean =>
  REDIRECT_METHODS.includes(paymentMethod.toUpperCase())

/**
 * The id of an intent's stream: `reference_id` is unique per merchant and per mode (sandbox or
 * production), so the same reference may exist for two merchants, or in both modes of one.
 * `MerchantId` holds no `:`, so the key splits unambiguously at its first two colons.
 */
export const streamKey = (merchantId: MerchantId, sandbox: boolean, referenceId: IntentReference): string =>
  `${merchantId}:${sandbox ? "test" : "live"}:${referenceId}`

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** C1: create an intent. The handler read the clock; the stream is `streamKey` of the three keys. */
export class CreateIntent extends Schema.TaggedClass<CreateIntent>()("CreateIntent", {
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  referenceId: IntentReference,
  details: IntentDetails,
  deviceFingerprint: Schema.OptionFromUndefinedOr(DeviceFingerprint),
  now: Schema.DateTimeUtc
}) {}

/** C3: replace the intent's body as a whole (absent optional fields become absent). */
export class UpdateIntent extends Schema.TaggedClass<UpdateIntent>()("UpdateIntent", {
  details: IntentDetails,
  now: Schema.DateTimeUtc
}) {}

/** C4: a payment attempt is tied to the intent; the handler minted its transaction id. */
export class StartPayment extends Schema.TaggedClass<StartPayment>()("StartPayment", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/** The attempt under way was approved. */
export class CompletePayment extends Schema.TaggedClass<CompletePayment>()("CompletePayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/** The attempt under way was rejected: the intent can be attempted again. */
export class FailPayment extends Schema.TaggedClass<FailPayment>()("FailPayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

export const Command = Schema.Union(CreateIntent, UpdateIntent, StartPayment, CompletePayment, FailPayment)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

export class IntentCreated extends Schema.TaggedClass<IntentCreated>()("IntentCreated", {
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  referenceId: IntentReference,
  details: IntentDetails,
  deviceFingerprint: Schema.OptionFromUndefinedOr(DeviceFingerprint),
  createdAt: Schema.DateTimeUtc
}) {}

export class IntentUpdated extends Schema.TaggedClass<IntentUpdated>()("IntentUpdated", {
  details: IntentDetails,
  at: Schema.DateTimeUtc
}) {}

export class IntentPaymentStarted extends Schema.TaggedClass<IntentPaymentStarted>()("IntentPaymentStarted", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  at: Schema.DateTimeUtc
}) {}

export class IntentPaid extends Schema.TaggedClass<IntentPaid>()("IntentPaid", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

/** The attempt was rejected: back to ACTIVE, keeping the transaction id as the last one. */
export class IntentPaymentFailed extends Schema.TaggedClass<IntentPaymentFailed>()("IntentPaymentFailed", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

export const Event = Schema.Union(
  IntentCreated,
  IntentUpdated,
  IntentPaymentStarted,
  IntentPaid,
  IntentPaymentFailed
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** No intent with that reference (for this merchant and mode). */
export class IntentNotFound extends Schema.TaggedError<IntentNotFound>()("IntentNotFound", {}) {}

/** An intent with that `reference_id` exists already for this merchant and mode. */
export class IntentAlreadyExists extends Schema.TaggedError<IntentAlreadyExists>()("IntentAlreadyExists", {
  referenceId: IntentReference
}) {}

/** The intent is not in a state that accepts the command (a second attempt while one is under way). */
export class IntentNotInState extends Schema.TaggedError<IntentNotInState>()("IntentNotInState", {
  referenceId: IntentReference,
  status: Status,
  command: Schema.String
}) {}

/** "An intent can be updated only while it has not been paid." */
export class IntentAlreadyPaid extends Schema.TaggedError<IntentAlreadyPaid>()("IntentAlreadyPaid", {
  referenceId: IntentReference,
  transactionId: TransactionId
}) {}

/** An update that changes the amount while an attempt is under way: the acquirer holds the old one. */
export class IntentAmountLocked extends Schema.TaggedError<IntentAmountLocked>()("IntentAmountLocked", {
  referenceId: IntentReference,
  transactionId: TransactionId
}) {}

/** The transaction named is not the intent's current (or last) one. */
export class UnknownIntentTransaction extends Schema.TaggedError<UnknownIntentTransaction>()(
  "UnknownIntentTransaction",
  { referenceId: IntentReference, transactionId: TransactionId }
) {}

/** A PSE or bank-button attempt on an intent without `callback_url`. */
export class CallbackUrlRequired extends Schema.TaggedError<CallbackUrlRequired>()("CallbackUrlRequired", {
  referenceId: IntentReference,
  paymentMethod: Schema.String
}) {}

export type Error =
  | IntentNotFound
  | IntentAlreadyExists
  | IntentNotInState
  | IntentAlreadyPaid
  | IntentAmountLocked
  | UnknownIntentTransaction
  | CallbackUrlRequired

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/** What an intent is, fixed at creation: its key and its creation. */
export interface Intent {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly referenceId: IntentReference
  readonly deviceFingerprint: Option.Option<DeviceFingerprint>
  readonly createdAt: DateTime.Utc
}

/** No intent yet. */
export interface Initial {
  readonly _tag: "Initial"
}

/** An intent in one of its statuses, with its current body and its last (or current) attempt. */
export interface Existing {
  readonly _tag: Status
  readonly intent: Intent
  readonly details: IntentDetails
  /** `service_transaction_id`: the transaction of the last attempt, once one was made. */
  readonly transactionId: Option.Option<TransactionId>
  readonly updatedAt: DateTime.Utc
}

export type State = Initial | Existing

export const initialState: State = { _tag: "Initial" }

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → states it may lead to. An update keeps the status; a re-delivered outcome of
 * the last attempt is a no-op; PAID accepts nothing but a re-delivered approval.
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreateIntent: ["ACTIVE"] },
  ACTIVE: { UpdateIntent: ["ACTIVE"], StartPayment: ["PROCESSING"], FailPayment: ["ACTIVE"] },
  PROCESSING: { UpdateIntent: ["PROCESSING"], CompletePayment: ["PAID"], FailPayment: ["ACTIVE"] },
  PAID: { CompletePayment: ["PAID"] }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const sameAmount = Schema.equivalence(IntentAmount)
const sameDetails = Schema.equivalence(IntentDetails)

const ok = (...events: ReadonlyArray<Event>): Either.Either<ReadonlyArray<Event>, Error> =>
  Either.right(events)
const none = ok()

export const decide = (command: Command, state: State): Either.Either<ReadonlyArray<Event>, Error> => {
  if (state._tag === "Initial") {
    return command._tag === "CreateIntent"
      ? ok(
          new IntentCreated({
            merchantId: command.merchantId,
            sandbox: command.sandbox,
            referenceId: command.referenceId,
            details: command.details,
            deviceFingerprint: command.deviceFingerprint,
            createdAt: command.now
          })
        )
      : Either.left(new IntentNotFound())
  }
  const referenceId = state.intent.referenceId
  if (!Transitions.allows(transitions, state._tag, command._tag)) {
    return Either.left(
      command._tag === "CreateIntent"
        ? new IntentAlreadyExists({ referenceId })
        : command._tag === "UpdateIntent" && state._tag === "PAID" && Option.isSome(state.transactionId)
          ? new IntentAlreadyPaid({ referenceId, transactionId: state.transactionId.value })
          : new IntentNotInState({ referenceId, status: state._tag, command: command._tag })
    )
  }
  return Match.valueTags(command, {
    CreateIntent: () => Either.left(new IntentAlreadyExists({ referenceId })),
    UpdateIntent: (c) => update(c, state),
    StartPayment: (c) =>
      requiresCallbackUrl(c.paymentMethod) && Option.isNone(state.details.callbackUrl)
        ? Either.left(new CallbackUrlRequired({ referenceId, paymentMethod: c.paymentMethod }))
        : ok(
            new IntentPaymentStarted({
              transactionId: c.transactionId,
              paymentMethod: c.paymentMethod,
              at: c.now
            })
          ),
    CompletePayment: (c) =>
      !isCurrent(state, c.transactionId)
        ? Either.left(new UnknownIntentTransaction({ referenceId, transactionId: c.transactionId }))
        : state._tag === "PAID"
          ? none
          : ok(new IntentPaid({ transactionId: c.transactionId, at: c.now })),
    FailPayment: (c) =>
      !isCurrent(state, c.transactionId)
        ? Either.left(new UnknownIntentTransaction({ referenceId, transactionId: c.transactionId }))
        : state._tag === "ACTIVE"
          ? none // the rejection of the last attempt, re-delivered
          : ok(new IntentPaymentFailed({ transactionId: c.transactionId, at: c.now }))
  })
}

const isCurrent = (state: Existing, transactionId: TransactionId): boolean =>
  Option.contains(state.transactionId, transactionId)

const update = (c: UpdateIntent, state: Existing): Either.Either<ReadonlyArray<Event>, Error> => {
  // The acquirer was asked to authorize the current amount: changing it under a running attempt
  // would make the intent and the payment disagree on what was paid.
  if (state._tag === "PROCESSING" && !sameAmount(state.details.amount, c.details.amount)) {
    return Either.left(
      new IntentAmountLocked({
        referenceId: state.intent.referenceId,
        transactionId: Option.getOrThrow(state.transactionId)
      })
    )
  }
  // An identical PUT (a client retry) appends nothing.
  return sameDetails(state.details, c.details)
    ? none
    : ok(new IntentUpdated({ details: c.details, at: c.now }))
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

export const evolve = (state: State, event: Event): State => {
  if (event._tag === "IntentCreated") {
    return {
      _tag: "ACTIVE",
      intent: {
        merchantId: event.merchantId,
        sandbox: event.sandbox,
        referenceId: event.referenceId,
        deviceFingerprint: event.deviceFingerprint,
        createdAt: event.createdAt
      },
      details: event.details,
      transactionId: Option.none(),
      updatedAt: event.createdAt
    }
  }
  // Events of an intent that does not exist cannot be in a well-formed stream: ignore them.
  if (state._tag === "Initial") return state
  return Match.valueTags(event, {
    IntentUpdated: (e): State => ({ ...state, details: e.details, updatedAt: e.at }),
    IntentPaymentStarted: (e): State => ({
      ...state,
      _tag: "PROCESSING",
      transactionId: Option.some(e.transactionId),
      updatedAt: e.at
    }),
    IntentPaid: (e): State => ({ ...state, _tag: "PAID", updatedAt: e.at }),
    IntentPaymentFailed: (e): State => ({ ...state, _tag: "ACTIVE", updatedAt: e.at })
  })
}

/** The PaymentIntent aggregate; its stream id is `streamKey(merchantId, sandbox, referenceId)`. */
export const PaymentIntent: Aggregate<Command, Event, State, Error> = {
  name: "PaymentIntent",
  initialState,
  decide,
  evolve,
  transitions,
  Event,
  schemaVersion: 1
}
