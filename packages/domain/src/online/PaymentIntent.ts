/**
 * The payment intent (spec C1–C3): created ACTIVE, PROCESSING while a payment attempt (C4) is under
 * way, PAID once it is approved, back to ACTIVE when the attempt is rejected. Updatable until paid.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { IntentReference, MerchantId, TransactionId } from "../shared/Ids.js"
import { Amount, Currency, TaxLine } from "../shared/Money.js"
import * as Transitions from "../kernel/Transitions.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * The intent statuses. The spec shows only ACTIVE; PROCESSING and PAID are Cobro's, spelled as the
 * payment link's statuses so that one vocabulary serves both (decision: docs/decisions/OnlinePayments.md).
 * @category models
 */
export const Status = Schema.Literal("ACTIVE", "PROCESSING", "PAID")
export type Status = typeof Status.Type

/**
 * The intent's `amount`: total including tip and taxes, in the currency's major unit.
 * @category models
 */
export class IntentAmount extends Schema.Class<IntentAmount>("IntentAmount")({
  currency: Currency,
  total: Amount,
  tip: Amount,
  taxes: Schema.Array(TaxLine)
}) {}

/**
 * The intent's `metadata`. The spec lists `key` and `value` strings; a string → string record holds
 * both readings (`{key, value}` literally, or a map of keys to values) unchanged.
 * @category models
 */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.String })
export type Metadata = typeof Metadata.Type

// The nested spec objects below are carried verbatim: the decider never branches on them, so their
// fields stay plain optional properties rather than Options.

/**
 * A customer's billing or shipping address.
 * @category models
 */
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

/**
 * The intent's `customer`.
 * @category models
 */
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
 * @category models
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

/**
 * What a PUT (C3) replaces as a whole: every field of the intent body but its key.
 * @category models
 */
export class IntentDetails extends Schema.Class<IntentDetails>("IntentDetails")({
  amount: IntentAmount,
  description: Schema.OptionFromUndefinedOr(Schema.String),
  /** Required at attempt time for PSE and the bank button (see `requiresCallbackUrl`). */
  callbackUrl: Schema.OptionFromUndefinedOr(Schema.String),
  metadata: Schema.OptionFromUndefinedOr(Metadata),
  customer: Schema.OptionFromUndefinedOr(Customer)
}) {}

/**
 * The payment methods whose attempt redirects to the bank and needs the intent's `callback_url`.
 * @category models
 */
export const REDIRECT_METHODS: ReadonlyArray<string> = ["PSE", "BOTON_BANK"]

/**
 * Whether an attempt with `paymentMethod` needs the intent to carry a `callback_url` (spec, C intent).
 * @category predicates
 */
export const requiresCallbackUrl = (paymentMethod: string): boolean =>
  REDIRECT_METHODS.includes(paymentMethod.toUpperCase())

/**
 * The id of an intent's stream: `reference_id` is unique per merchant and per mode (sandbox or
 * production), so the same reference may exist for two merchants, or in both modes of one.
 * `MerchantId` holds no `:`, so the key splits unambiguously at its first two colons.
 * @category getters
 */
export const streamKey = (merchantId: MerchantId, sandbox: boolean, referenceId: IntentReference): string =>
  `${merchantId}:${sandbox ? "test" : "live"}:${referenceId}`

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * C1: create an intent. The handler read the clock; the stream is `streamKey` of the three keys.
 * @category commands
 */
export class CreateIntent extends Schema.TaggedClass<CreateIntent>()("CreateIntent", {
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  referenceId: IntentReference,
  details: IntentDetails,
  deviceFingerprint: Schema.OptionFromUndefinedOr(DeviceFingerprint),
  now: Schema.DateTimeUtc
}) {}

/**
 * C3: replace the intent's body as a whole (absent optional fields become absent).
 * @category commands
 */
export class UpdateIntent extends Schema.TaggedClass<UpdateIntent>()("UpdateIntent", {
  details: IntentDetails,
  now: Schema.DateTimeUtc
}) {}

/**
 * C4: a payment attempt is tied to the intent; the handler minted its transaction id.
 * @category commands
 */
export class StartPayment extends Schema.TaggedClass<StartPayment>()("StartPayment", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  now: Schema.DateTimeUtc
}) {}

/**
 * The attempt under way was approved.
 * @category commands
 */
export class CompletePayment extends Schema.TaggedClass<CompletePayment>()("CompletePayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/**
 * The attempt under way was rejected: the intent can be attempted again.
 * @category commands
 */
export class FailPayment extends Schema.TaggedClass<FailPayment>()("FailPayment", {
  transactionId: TransactionId,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the payment intent.
 * @category commands
 */
export const Command = Schema.Union(CreateIntent, UpdateIntent, StartPayment, CompletePayment, FailPayment)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * An intent was created (C1), ACTIVE, with its body and the device fingerprint of the create.
 * @category events
 */
export class IntentCreated extends Schema.TaggedClass<IntentCreated>()("IntentCreated", {
  merchantId: MerchantId,
  sandbox: Schema.Boolean,
  referenceId: IntentReference,
  details: IntentDetails,
  deviceFingerprint: Schema.OptionFromUndefinedOr(DeviceFingerprint),
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * The intent's body was replaced as a whole (C3); the status stays.
 * @category events
 */
export class IntentUpdated extends Schema.TaggedClass<IntentUpdated>()("IntentUpdated", {
  details: IntentDetails,
  at: Schema.DateTimeUtc
}) {}

/**
 * A payment attempt (C4) was tied to the intent: PROCESSING, with its transaction as the current one.
 * @category events
 */
export class IntentPaymentStarted extends Schema.TaggedClass<IntentPaymentStarted>()("IntentPaymentStarted", {
  transactionId: TransactionId,
  paymentMethod: Schema.String,
  at: Schema.DateTimeUtc
}) {}

/**
 * The attempt under way was approved: the intent is PAID and can no longer be updated.
 * @category events
 */
export class IntentPaid extends Schema.TaggedClass<IntentPaid>()("IntentPaid", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

/**
 * The attempt was rejected: back to ACTIVE, keeping the transaction id as the last one.
 * @category events
 */
export class IntentPaymentFailed extends Schema.TaggedClass<IntentPaymentFailed>()("IntentPaymentFailed", {
  transactionId: TransactionId,
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the payment intent, as stored.
 * @category events
 */
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

const Refusal = Aggregate.refusalErrors({ referenceId: IntentReference }, { status: Status })

/**
 * No intent with that reference (for this merchant and mode).
 * @category errors
 */
export class IntentNotFound extends Refusal.NotFound<IntentNotFound>()("IntentNotFound") {}

/**
 * An intent with that `reference_id` exists already for this merchant and mode.
 * @category errors
 */
export class IntentAlreadyExists extends Refusal.AlreadyExists<IntentAlreadyExists>()(
  "IntentAlreadyExists"
) {}

/**
 * The intent is not in a state that accepts the command (a second attempt while one is under way).
 * @category errors
 */
export class IntentNotInState extends Refusal.NotInState<IntentNotInState>()("IntentNotInState") {}

/**
 * "An intent can be updated only while it has not been paid."
 * @category errors
 */
export class IntentAlreadyPaid extends Schema.TaggedError<IntentAlreadyPaid>()("IntentAlreadyPaid", {
  referenceId: IntentReference,
  transactionId: TransactionId
}) {}

/**
 * An update that changes the amount while an attempt is under way: the acquirer holds the old one.
 * @category errors
 */
export class IntentAmountLocked extends Schema.TaggedError<IntentAmountLocked>()("IntentAmountLocked", {
  referenceId: IntentReference,
  transactionId: TransactionId
}) {}

/**
 * The transaction named is not the intent's current (or last) one.
 * @category errors
 */
export class UnknownIntentTransaction extends Schema.TaggedError<UnknownIntentTransaction>()(
  "UnknownIntentTransaction",
  { referenceId: IntentReference, transactionId: TransactionId }
) {}

/**
 * A PSE or bank-button attempt on an intent without `callback_url`.
 * @category errors
 */
export class CallbackUrlRequired extends Schema.TaggedError<CallbackUrlRequired>()("CallbackUrlRequired", {
  referenceId: IntentReference,
  paymentMethod: Schema.String
}) {}

/**
 * Every refusal of the payment intent.
 * @category errors
 */
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

/**
 * What an intent is, fixed at creation: its key and its creation.
 * @category models
 */
export interface Intent {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  readonly referenceId: IntentReference
  readonly deviceFingerprint: Option.Option<DeviceFingerprint>
  readonly createdAt: DateTime.Utc
}

/**
 * An intent in one of its statuses, with its current body and its last (or current) attempt.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly intent: Intent
  readonly details: IntentDetails
  /** `service_transaction_id`: the transaction of the last attempt, once one was made. */
  readonly transactionId: Option.Option<TransactionId>
  readonly updatedAt: DateTime.Utc
}

/**
 * No intent yet (`Initial`), or an intent.
 * @category models
 */
export type State = Initial | Existing

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. An update records the
 * new body and keeps the status, or records nothing when the body is the same (a client retry); a
 * re-delivered outcome of the last attempt is a no-op; PAID accepts nothing but a re-delivered approval.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreateIntent: "ACTIVE" },
  ACTIVE: { UpdateIntent: ["ACTIVE", "noop"], StartPayment: "PROCESSING", FailPayment: "noop" },
  PROCESSING: { UpdateIntent: ["PROCESSING", "noop"], CompletePayment: "PAID", FailPayment: "ACTIVE" },
  PAID: { CompletePayment: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const sameAmount = Schema.equivalence(IntentAmount)
const sameDetails = Schema.equivalence(IntentDetails)

const create = (command: CreateIntent): Decision<Event, Error> =>
  ok(
    new IntentCreated({
      merchantId: command.merchantId,
      sandbox: command.sandbox,
      referenceId: command.referenceId,
      details: command.details,
      deviceFingerprint: command.deviceFingerprint,
      createdAt: command.now
    })
  )

/** "An intent can be updated only while it has not been paid": the refusal of an update once PAID. */
const alreadyPaid = (command: Command, state: Existing): IntentAlreadyPaid | undefined =>
  command._tag === "UpdateIntent" && state._tag === "PAID" && Option.isSome(state.transactionId)
    ? new IntentAlreadyPaid({
        referenceId: state.intent.referenceId,
        transactionId: state.transactionId.value
      })
    : undefined

/** Decides a command the table lets act on an existing intent. */
const decideExisting = (command: Exclude<Command, CreateIntent>, state: Existing): Decision<Event, Error> => {
  const referenceId = state.intent.referenceId
  return Match.valueTags(command, {
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

const update = (c: UpdateIntent, state: Existing): Decision<Event, Error> => {
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

const created = (event: IntentCreated): Existing => ({
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
})

const evolveExisting = (state: Existing, event: Exclude<Event, IntentCreated>): Existing =>
  Match.valueTags(event, {
    IntentUpdated: (e): Existing => ({ ...state, details: e.details, updatedAt: e.at }),
    IntentPaymentStarted: (e): Existing => ({
      ...state,
      _tag: "PROCESSING",
      transactionId: Option.some(e.transactionId),
      updatedAt: e.at
    }),
    IntentPaid: (e): Existing => ({ ...state, _tag: "PAID", updatedAt: e.at }),
    IntentPaymentFailed: (e): Existing => ({ ...state, _tag: "ACTIVE", updatedAt: e.at })
  })

/**
 * The PaymentIntent aggregate; its stream id is `streamKey(merchantId, sandbox, referenceId)`.
 * @category aggregates
 */
export const PaymentIntent: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "PaymentIntent",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: IntentNotFound, AlreadyExists: IntentAlreadyExists, NotInState: IntentNotInState },
    (state) => ({ referenceId: state.intent.referenceId }),
    alreadyPaid
  ),
  create: { CreateIntent: create },
  decide: decideExisting,
  created: { IntentCreated: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = PaymentIntent
