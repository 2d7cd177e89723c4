/**
 * The online payments use cases (spec C1–C9): intents, attempts with the 3DS challenge, the payment
 * read, PSE banks, void, refund and its review, over the event store, the id generator, the clock
 * and the acquirer. Every call is scoped to one merchant and one mode (production or sandbox).
 *
 * Every command takes the metadata of its events, `actor` saying who caused them: by default the
 * scope's merchant for the API's commands, `payer` for the challenge page, `sweeper` for the timeout
 * sweeper and `admin` for the refund review; the caller passes its own.
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Acquirer from "./Acquirer.js"
import * as CommandHandler from "../kernel/CommandHandler.js"
import * as EventStore from "../kernel/EventStore.js"
import { IdGenerator, nextId } from "../kernel/IdGenerator.js"
import { IntentReference, MerchantId, RefundId, TransactionId } from "../shared/Ids.js"
import * as Merchant from "../merchants/Merchant.js"
import * as Payment from "./Payment.js"
import * as PaymentIntent from "./PaymentIntent.js"
import * as Refund from "./Refund.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** Whose data a call sees: one merchant, and sandbox (test key) or production data. */
export interface Scope {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
}

/**
 * How long the sandbox takes to review a refund: a sandbox refund is APPROVED automatically once
 * this many seconds of the clock have passed since its request, on the next read or command that
 * touches it, with `date_applied` at the due instant. Production refunds wait for `reviewRefund`.
 */
export const SANDBOX_REFUND_REVIEW_SECONDS = 60

/**
 * The actor of what the sandbox decides on its own: its automatic review of a refund (on the Refund
 * and on the payment), whichever command's commit writes it.
 */
export const SANDBOX_REVIEWER = "sandbox"

/** How the cardholder is sent to Cobro's challenge page: a plain link, so GET. */
export const CHALLENGE_REDIRECT_METHOD = "GET" as const

/** A bank of the PSE list (C6). */
export interface Bank {
  readonly code: string
  readonly name: string
}

/**
 * The PSE banks (C6): a fixed list of Colombian banks with their ACH Colombia codes. The same list
 * serves sandbox and production, since Cobro has no bank network behind PSE.
 */
export const PSE_BANKS: ReadonlyArray<Bank> = [
  { code: "1059", name: "BANCAMIA S.A." },
  { code: "1040", name: "BANCO AGRARIO" },
  { code: "1052", name: "BANCO AV VILLAS" },
  { code: "1032", name: "BANCO CAJA SOCIAL BCSC SA" },
  { code: "1066", name: "BANCO COOPERATIVO COOPCENTRAL" },
  { code: "1051", name: "BANCO DAVIVIENDA SA" },
  { code: "1001", name: "BANCO DE BOGOTA" },
  { code: "1023", name: "BANCO DE OCCIDENTE" },
  { code: "1062", name: "BANCO FALABELLA S.A." },
  { code: "1012", name: "BANCO GNB SUDAMERIS" },
  { code: "1006", name: "BANCO ITAU" },
  { code: "1060", name: "BANCO PICHINCHA" },
  { code: "1002", name: "BANCO POPULAR" },
  { code: "1065", name: "BANCO SANTANDER DE NEGOCIOS COLOMBIA S.A" },
  { code: "1013", name: "BANCO BBVA COLOMBIA S.A." },
  { code: "1007", name: "BANCOLOMBIA" },
  { code: "1009", name: "CITIBANK" },
  { code: "1551", name: "DAVIPLATA" },
  { code: "1507", name: "NEQUI" },
  { code: "1019", name: "SCOTIABANK COLPATRIA S.A" }
]

/** C4's input, in domain terms: the card in clear only here, never in the log (P7). */
export interface AttemptInput {
  readonly referenceId: IntentReference
  /** `payment_method.name`: CREDIT_CARD, DEBIT_CARD, CARD, PSE, BOTON_BANK, … */
  readonly paymentMethod: string
  readonly cardNumber: Option.Option<string>
  readonly cardholderName: Option.Option<string>
  readonly installments: Option.Option<number>
  readonly payer: Option.Option<Payment.Payer>
  readonly metadata: Option.Option<PaymentIntent.Metadata>
  readonly deviceFingerprint: Option.Option<PaymentIntent.DeviceFingerprint>
  /**
   * The address of Cobro's challenge page for a transaction and its one-time token (the HTTP layer
   * knows the public base URL). It must contain the token, which authorizes the page.
   */
  readonly challengeUrl: (transactionId: TransactionId, token: string) => string
}

/** Why the attempt needs the cardholder elsewhere before it is decided. */
export type Redirect =
  /** A card 3DS challenge (the acquirer asked for it): the enveloped 3DS response. */
  | "ThreeDsChallenge"
  /** A bank redirect (PSE, bank button and other non-card methods): the bare response. */
  | "BankRedirect"

/** C4's result: the transaction minted and, when the cardholder must act, where to send them. */
export interface AttemptResult {
  readonly transactionId: TransactionId
  readonly redirect: Option.Option<{
    readonly kind: Redirect
    readonly nextAction: Payment.NextAction
    /** The one-time token of the challenge page (the 3DS response's `uuid_token`). */
    readonly token: string
  }>
  /** The payment after the attempt (APPROVED, REJECTED, or RUNNING while a redirect is pending). */
  readonly payment: Payment.Existing
}

/** What the challenge page shows: the payment waiting for the cardholder, and its intent. */
export interface Challenge {
  readonly payment: Payment.Existing
  readonly intent: PaymentIntent.Existing
}

/** How a challenge ended, and where the cardholder goes next. */
export interface ChallengeCompleted extends Challenge {
  /** The intent's `callback_url`, when it has one. */
  readonly callbackUrl: Option.Option<string>
  readonly redirectMethod: Payment.NextAction["redirectMethod"]
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * An attempt the use case refuses before anything is recorded (a card method without a card).
 *
 * @category errors
 */
export class InvalidAttempt extends Schema.TaggedError<InvalidAttempt>()("InvalidAttempt", {
  /** The dotted wire path of the field at fault. */
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * The challenge page was opened with a token that is not the payment's.
 *
 * @category errors
 */
export class ChallengeNotFound extends Schema.TaggedError<ChallengeNotFound>()("ChallengeNotFound", {}) {}

// ---------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------

/**
 * A conflict that survives the handler's retries is contention between servers, not a client's
 * mistake and not something the client can fix: a defect (500), logged.
 */
const dieOnConflict = <A, E, R>(effect: Effect.Effect<A, E | EventStore.ConcurrencyConflict, R>) =>
  Effect.catchIf(
    effect,
    (e): e is EventStore.ConcurrencyConflict => e instanceof EventStore.ConcurrencyConflict,
    Effect.die
  ) as Effect.Effect<A, Exclude<E, EventStore.ConcurrencyConflict>, R>

/** Every refusal of the Payment decider, by tag. */
const PAYMENT_REFUSALS: { readonly [Tag in Payment.Error["_tag"]]: true } = {
  PaymentNotFound: true,
  PaymentAlreadyExists: true,
  PaymentNotInState: true,
  PaymentNotOverdue: true,
  PaymentExpired: true,
  PaymentCannotBeVoided: true,
  RefundCannotBeRequested: true,
  UnknownRefund: true,
  RefundReviewConflict: true
}

/**
 * Keeps the Payment decider's refusals a command can meet (`expected`) and turns every other one into
 * a defect: the use case's own reads and checks rule them out, so one of them is a bug, not a client's
 * mistake. Errors that are not the payment's pass as they are.
 */
const onlyRefusals =
  <const Expected extends Payment.Error["_tag"] = never>(...expected: ReadonlyArray<Expected>) =>
  <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, Payment.Error> | Extract<E, { readonly _tag: Expected }>, R> =>
    Effect.catchIf(
      effect,
      (error) =>
        Predicate.hasProperty(error, "_tag") &&
        Predicate.isString(error._tag) &&
        Object.hasOwn(PAYMENT_REFUSALS, error._tag) &&
        !(expected as ReadonlyArray<string>).includes(error._tag),
      Effect.die
    ) as Effect.Effect<A, Exclude<E, Payment.Error> | Extract<E, { readonly _tag: Expected }>, R>

const intentHandler = CommandHandler.make(PaymentIntent.PaymentIntent)
const decideIntent = CommandHandler.decider(PaymentIntent.PaymentIntent)
const decidePayment = CommandHandler.decider(Payment.Payment)
const decideRefund = CommandHandler.decider(Refund.Refund)
const paymentHandler = CommandHandler.make(Payment.Payment)
const handleIntent = (id: string, command: PaymentIntent.Command, metadata: EventStore.EventMetadata) =>
  dieOnConflict(intentHandler(id, command, metadata))
// The merchant is read by nearly every request: only the events since the state last read are folded.
const loadMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const loadIntent = CommandHandler.load(PaymentIntent.PaymentIntent)
const loadPayment = CommandHandler.load(Payment.Payment)
const loadRefund = CommandHandler.load(Refund.Refund)

const existingIntent = (
  state: PaymentIntent.State
): Effect.Effect<PaymentIntent.Existing, PaymentIntent.IntentNotFound> =>
  state._tag === "Initial" ? Effect.fail(new PaymentIntent.IntentNotFound()) : Effect.succeed(state)

/**
 * The scope's merchant account must exist and be enabled to ask for a payment (C1 creates what is
 * to be paid, C4 starts the payment): a disabled account is `MerchantNotInState` (403
 * `MerchantDisabled` on the wire, as B2). Reads, updates, voids, refunds and the outcome of a
 * challenge already under way still answer: disabling stops payments, not support (M1, L6).
 */
const requireEnabled = (
  scope: Scope,
  command: string
): Effect.Effect<void, Merchant.MerchantNotFound | Merchant.MerchantNotInState, EventStore.EventStore> =>
  loadMerchant(scope.merchantId).pipe(
    Effect.flatMap(
      ({ state }): Effect.Effect<void, Merchant.MerchantNotFound | Merchant.MerchantNotInState> =>
        state._tag === "Initial"
          ? Effect.fail(new Merchant.MerchantNotFound())
          : state._tag === "ENABLED"
            ? Effect.void
            : Effect.fail(
                new Merchant.MerchantNotInState({ merchantId: state.merchantId, status: state._tag, command })
              )
    )
  )

/** The intent of a reference in the scope, or `IntentNotFound`. */
const findIntent = (scope: Scope, referenceId: IntentReference) =>
  loadIntent(PaymentIntent.streamKey(scope.merchantId, scope.sandbox, referenceId)).pipe(
    Effect.flatMap(({ state }) => existingIntent(state))
  )

/** A payment that exists and belongs to the scope; another merchant's or mode's reads as not found. */
const paymentInScope = (
  scope: Scope | undefined,
  state: Payment.State
): Effect.Effect<Payment.Existing, Payment.PaymentNotFound> =>
  state._tag === "Initial" ||
  (scope !== undefined &&
    (state.payment.merchantId !== scope.merchantId || state.payment.sandbox !== scope.sandbox))
    ? Effect.fail(new Payment.PaymentNotFound())
    : Effect.succeed(state)

/** Any string: a transaction id that is not well formed is simply not found. */
const transactionIdOf = (raw: string): Effect.Effect<TransactionId, Payment.PaymentNotFound> =>
  Schema.decodeUnknownOption(TransactionId)(raw).pipe(
    Option.match({ onNone: () => Effect.fail(new Payment.PaymentNotFound()), onSome: Effect.succeed })
  )

// ---------------------------------------------------------------------------------------------
// C1–C3: intents
// ---------------------------------------------------------------------------------------------

/**
 * C1: creates an intent; `IntentAlreadyExists` (409) when the reference exists in the scope,
 * `MerchantNotInState` (403) when the merchant's account is disabled.
 *
 * @category commands
 */
export const createIntent = Effect.fn("OnlinePayments.createIntent")(function* (
  scope: Scope,
  input: {
    readonly referenceId: IntentReference
    readonly details: PaymentIntent.IntentDetails
    readonly deviceFingerprint: Option.Option<PaymentIntent.DeviceFingerprint>
  },
  /** Who asks: the scope's merchant unless told. */
  metadata: EventStore.EventMetadata = { actor: scope.merchantId }
) {
  yield* requireEnabled(scope, "CreateIntent")
  const now = yield* DateTime.now
  const { state } = yield* handleIntent(
    PaymentIntent.streamKey(scope.merchantId, scope.sandbox, input.referenceId),
    new PaymentIntent.CreateIntent({
      merchantId: scope.merchantId,
      sandbox: scope.sandbox,
      referenceId: input.referenceId,
      details: input.details,
      deviceFingerprint: input.deviceFingerprint,
      now
    }),
    metadata
  )
  return yield* existingIntent(state).pipe(Effect.orDie)
})

/**
 * C2: reads an intent of the scope.
 *
 * @category queries
 */
export const readIntent = Effect.fn("OnlinePayments.readIntent")(function* (
  scope: Scope,
  referenceId: IntentReference
) {
  return yield* findIntent(scope, referenceId)
})

/**
 * C3: replaces the intent's body. A paid intent answers `IntentAlreadyPaid`, and an amount change
 * while an attempt is under way `IntentAmountLocked` (both 409); other fields change freely.
 *
 * @category commands
 */
export const updateIntent = Effect.fn("OnlinePayments.updateIntent")(function* (
  scope: Scope,
  input: { readonly referenceId: IntentReference; readonly details: PaymentIntent.IntentDetails },
  /** Who asks: the scope's merchant unless told. */
  metadata: EventStore.EventMetadata = { actor: scope.merchantId }
) {
  const now = yield* DateTime.now
  yield* findIntent(scope, input.referenceId)
  const { state } = yield* handleIntent(
    PaymentIntent.streamKey(scope.merchantId, scope.sandbox, input.referenceId),
    new PaymentIntent.UpdateIntent({ details: input.details, now }),
    metadata
  )
  return yield* existingIntent(state).pipe(Effect.orDie)
})

// ---------------------------------------------------------------------------------------------
// C4: the attempt, and the challenge page
// ---------------------------------------------------------------------------------------------

/**
 * C4: an attempt on an intent. The transaction id is minted, the payment started on the payment
 * and then on the intent, the acquirer asked (card methods), and its outcome recorded on the
 * payment then the intent. A 3DS challenge (555020 in the sandbox) and every non-card method leave
 * the payment RUNNING with `next_actions` to Cobro's challenge page.
 *
 * @category commands
 */
export const attempt = Effect.fn("OnlinePayments.attempt")(function* (
  scope: Scope,
  input: AttemptInput,
  /** Who asks: the scope's merchant unless told. The acquirer's outcome is recorded as theirs too. */
  metadata: EventStore.EventMetadata = { actor: scope.merchantId }
) {
  const ids = yield* IdGenerator
  const acquirer = yield* Acquirer.Acquirer
  const paymentMethod = input.paymentMethod.trim()
  if (paymentMethod === "") {
    return yield* new InvalidAttempt({
      field: "payment_method.name",
      message: "payment_method.name is empty"
    })
  }
  const isCard = Payment.isCardMethod(paymentMethod)
  if (isCard && Option.isNone(input.cardNumber)) {
    return yield* new InvalidAttempt({
      field: "payment_method.card_number",
      message: `card_number is required for ${paymentMethod}`
    })
  }
  yield* requireEnabled(scope, "StartPayment")
  const intentKey = PaymentIntent.streamKey(scope.merchantId, scope.sandbox, input.referenceId)
  const transactionId = TransactionId.make(yield* ids.next("TRX_"))
  const now = yield* DateTime.now
  const startOnIntent = new PaymentIntent.StartPayment({ transactionId, paymentMethod, now })
  // The payment and the intent's attempt are one decision, written in one commit: the payment
  // carries the amount of the intent version it was decided on. An update (or another attempt)
  // that commits first makes this commit conflict, and the attempt is decided again on the intent
  // as it now stands: refused (409) if it took another attempt, at the new amount if it changed.
  // Once the attempt may be recorded, the request no longer decides whether it ends: a client that
  // hangs up interrupts neither the commit, nor the acquirer's call, nor the record of its outcome.
  return yield* Effect.uninterruptible(
    Effect.gen(function* () {
      const started = yield* CommandHandler.retryOnConflict(
        Effect.gen(function* () {
          const known = yield* loadIntent(intentKey)
          const intent = yield* existingIntent(known.state)
          const onIntent = yield* decideIntent(intentKey, startOnIntent, known, metadata)
          const onPayment = yield* decidePayment(
            transactionId,
            new Payment.StartPayment({
              transactionId,
              merchantId: scope.merchantId,
              sandbox: scope.sandbox,
              referenceId: input.referenceId,
              amount: intent.details.amount,
              paymentMethod,
              card: Option.map(input.cardNumber, (cardNumber) => ({
                maskedPan: Payment.maskPan(cardNumber),
                ...Option.match(input.cardholderName, {
                  onNone: () => ({}),
                  onSome: (cardholderName) => ({ cardholderName })
                }),
                ...Option.match(input.installments, {
                  onNone: () => ({}),
                  onSome: (installments) => ({ installments })
                })
              })),
              payer: input.payer,
              metadata: input.metadata,
              deviceFingerprint: input.deviceFingerprint,
              now
            }),
            CommandHandler.fresh(Payment.Payment),
            metadata
          ).pipe(Effect.orDie)
          yield* CommandHandler.commit([onPayment, onIntent])
          return { intent, payment: onPayment.handled, onIntent: onIntent.handled }
        })
      ).pipe(dieOnConflict)
      const amount = (started.payment.state as Payment.Existing).payment.amount
      const held: Held = { payment: started.payment, intent: started.onIntent }
      const result: Acquirer.AuthorizationResult = isCard
        ? yield* acquirer
            .authorize(
              new Acquirer.AuthorizationRequest({
                transactionId,
                currency: amount.currency,
                total: amount.total,
                cardNumber: Option.getOrElse(input.cardNumber, () => ""),
                sandbox: scope.sandbox
              })
            )
            .pipe(
              // The acquirer failed: the attempt is rejected at once (payment and intent in one commit),
              // so that the intent can be attempted again now rather than after the payment timeout.
              Effect.onError(() =>
                DateTime.now.pipe(
                  Effect.flatMap((at) =>
                    recordOutcome(
                      transactionId,
                      intentKey,
                      new Payment.RejectPayment({ reason: "The acquirer could not be reached", now: at }),
                      new PaymentIntent.FailPayment({ transactionId, now: at }),
                      metadata,
                      held
                    )
                  ),
                  Effect.ignoreLogged
                )
              )
            )
        : { _tag: "ChallengeRequired" }
      const decidedAt = yield* DateTime.now

      switch (result._tag) {
        case "Approved":
        case "Rejected": {
          // The acquirer's decision, on the payment and on the intent that waits for it.
          const [onPayment, onIntent]: [Payment.Command, PaymentIntent.Command] =
            result._tag === "Approved"
              ? [
                  new Payment.ApprovePayment({
                    approvalNumber: result.approvalNumber,
                    threeDs: result.threeDs,
                    now: decidedAt
                  }),
                  new PaymentIntent.CompletePayment({ transactionId, now: decidedAt })
                ]
              : [
                  new Payment.RejectPayment({ reason: result.reason, now: decidedAt }),
                  new PaymentIntent.FailPayment({ transactionId, now: decidedAt })
                ]
          const { payment } = yield* recordOutcome(
            transactionId,
            intentKey,
            onPayment,
            onIntent,
            metadata,
            held
          ).pipe(Effect.orDie)
          return { transactionId, redirect: Option.none(), payment } satisfies AttemptResult
        }
        case "ChallengeRequired": {
          const token = yield* ids.uuid
          const nextAction: Payment.NextAction = {
            redirectUrl: input.challengeUrl(transactionId, token),
            redirectMethod: CHALLENGE_REDIRECT_METHOD
          }
          const { state } = yield* paymentHandler(
            transactionId,
            new Payment.RequireChallenge({ nextAction, now: decidedAt }),
            metadata,
            started.payment
          ).pipe(Effect.orDie)
          return {
            transactionId,
            redirect: Option.some({
              kind: isCard ? ("ThreeDsChallenge" as const) : ("BankRedirect" as const),
              nextAction,
              token
            }),
            payment: state as Payment.Existing
          } satisfies AttemptResult
        }
      }
    })
  )
})

/** Decides `command` on the intent only while it still waits for `transactionId`; its state after. */
const handleIntentIfCurrent = (
  intentKey: string,
  transactionId: TransactionId,
  command: PaymentIntent.Command,
  metadata: EventStore.EventMetadata
) =>
  Effect.gen(function* () {
    const known = yield* loadIntent(intentKey)
    if (known.state._tag !== "PROCESSING" || !Option.contains(known.state.transactionId, transactionId)) {
      return known.state
    }
    return (yield* intentHandler(intentKey, command, metadata, known).pipe(Effect.orDie)).state
  })

/** The payment and the intent as a use case last wrote them: the first decision needs no read. */
interface Held {
  readonly payment: CommandHandler.Known<Payment.State>
  readonly intent: CommandHandler.Known<PaymentIntent.State>
}

/**
 * Records a payment's outcome and, while the intent still waits for this transaction, the intent's,
 * in one commit (decided again from fresh reads after a conflict). The payment's refusal is returned
 * as it is; the intent's decision follows the payment's (an intent that moved on is left alone).
 */
const recordOutcome = (
  transactionId: TransactionId,
  intentKey: string,
  onPayment: Payment.Command,
  onIntent: PaymentIntent.Command,
  metadata: EventStore.EventMetadata,
  held?: Held
) => {
  let seed = held
  return CommandHandler.retryOnConflict(
    Effect.gen(function* () {
      const payment = seed?.payment ?? (yield* loadPayment(transactionId))
      const intent = seed?.intent ?? (yield* loadIntent(intentKey))
      // Only the first try may use what the caller holds: a conflict proves it stale.
      seed = undefined
      const paymentDecided = yield* decidePayment(transactionId, onPayment, payment, metadata)
      const intentDecided =
        intent.state._tag === "PROCESSING" && Option.contains(intent.state.transactionId, transactionId)
          ? yield* decideIntent(intentKey, onIntent, intent, metadata).pipe(Effect.orDie)
          : undefined
      yield* CommandHandler.commit(
        intentDecided === undefined ? [paymentDecided] : [paymentDecided, intentDecided]
      )
      return {
        payment: paymentDecided.handled.state as Payment.Existing,
        intent: (intentDecided?.handled.state ?? intent.state) as PaymentIntent.State
      }
    })
  ).pipe(dieOnConflict)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `token` is the one-time token of the payment's challenge page. */
const tokenMatches = (payment: Payment.Existing, token: string): boolean =>
  UUID.test(token) && Option.exists(payment.nextAction, (next) => next.redirectUrl.includes(token))

/**
 * The challenge page (GET): the payment and its intent, when the token is the payment's. The page
 * is opened by the cardholder's browser with no key: the token is the authorization.
 *
 * @category queries
 */
export const readChallenge = Effect.fn("OnlinePayments.readChallenge")(function* (input: {
  readonly transactionId: string
  readonly token: string
}) {
  const transactionId = yield* transactionIdOf(input.transactionId).pipe(
    Effect.mapError(() => new ChallengeNotFound())
  )
  const payment = yield* loadPayment(transactionId).pipe(
    Effect.flatMap(({ state }) => paymentInScope(undefined, state)),
    Effect.mapError(() => new ChallengeNotFound())
  )
  if (!tokenMatches(payment, input.token)) return yield* new ChallengeNotFound()
  const { state } = yield* loadIntent(
    PaymentIntent.streamKey(payment.payment.merchantId, payment.payment.sandbox, payment.payment.referenceId)
  )
  const intent = yield* existingIntent(state).pipe(Effect.orDie)
  return { payment, intent } satisfies Challenge
})

/**
 * The challenge page (POST): the cardholder approved or declined. The outcome is recorded on the
 * payment then the intent; the same outcome again (a reloaded page) changes nothing, the other one
 * is `PaymentNotInState`. Returns where to send the cardholder: the intent's `callback_url`.
 *
 * @category commands
 */
export const completeChallenge = Effect.fn("OnlinePayments.completeChallenge")(function* (
  input: {
    readonly transactionId: string
    readonly token: string
    readonly approve: boolean
  },
  /** Who decided: the cardholder on the page (`payer`) unless told. */
  metadata: EventStore.EventMetadata = { actor: "payer" }
) {
  const { payment } = yield* readChallenge(input)
  const transactionId = payment.payment.transactionId
  const now = yield* DateTime.now
  const result: Payment.ChallengeResult = input.approve
    ? { _tag: "Approved", approvalNumber: Acquirer.approvalNumberOf(transactionId) }
    : { _tag: "Declined", reason: "The cardholder declined the challenge" }
  // A reloaded approval of a payment approved and since voided or refunded is a re-delivery too:
  // the decider no longer takes `CompleteChallenge` there, so it is answered here.
  const reloadedApproval = input.approve && Option.isSome(payment.approval)
  const intentKey = PaymentIntent.streamKey(
    payment.payment.merchantId,
    payment.payment.sandbox,
    payment.payment.referenceId
  )
  const onIntent = input.approve
    ? new PaymentIntent.CompletePayment({ transactionId, now })
    : new PaymentIntent.FailPayment({ transactionId, now })
  // The outcome on the payment and on the intent that waits for it, in one commit. A reloaded
  // approval records nothing on the payment; an intent that took another attempt since (a decline,
  // then a new attempt) is no longer this payment's and is left as it is.
  const recorded = reloadedApproval
    ? yield* handleIntentIfCurrent(intentKey, transactionId, onIntent, metadata).pipe(
        Effect.map((intent) => ({ payment, intent }))
      )
    : yield* recordOutcome(
        transactionId,
        intentKey,
        new Payment.CompleteChallenge({ result, now }),
        onIntent,
        metadata
      ).pipe(onlyRefusals("PaymentNotInState", "PaymentExpired"))
  const paid = recorded.payment
  const intent = yield* existingIntent(recorded.intent).pipe(Effect.orDie)
  return {
    payment: paid,
    intent,
    callbackUrl: intent.details.callbackUrl,
    redirectMethod: Option.match(payment.nextAction, {
      onNone: () => CHALLENGE_REDIRECT_METHOD,
      onSome: (next) => next.redirectMethod
    })
  } satisfies ChallengeCompleted
})

// ---------------------------------------------------------------------------------------------
// The timeout sweeper's step
// ---------------------------------------------------------------------------------------------

/** What {@link expirePayment} left: the payment, and its intent when the intent still names it. */
export interface Expiry {
  readonly payment: Payment.Existing
  readonly intent: Option.Option<PaymentIntent.Existing>
}

/**
 * Expires a payment the cardholder left waiting (a 3DS challenge, a bank redirect) or that was never
 * decided, once `timeout` has passed since its attempt (the timeout sweeper's step): the payment
 * becomes EXPIRED (C5 reads REJECTED, SALE_REJECTED is notified) and its intent ACTIVE again, so
 * that it can be attempted again. A payment decided meanwhile, or not yet due, is left as it is.
 *
 * Whatever the payment's state, its intent is then brought in line with it when it still names
 * this transaction and is PROCESSING: APPROVED → PAID, rejected or expired → ACTIVE. That repairs an
 * intent a crash left PROCESSING between the payment's decision and the intent's (O9).
 *
 * @category commands
 */
export const expirePayment = Effect.fn("OnlinePayments.expirePayment")(function* (
  rawTransactionId: string,
  timeout: Duration.Duration = Payment.ABANDONED_PAYMENT_TIMEOUT,
  /** Who expires it: the timeout sweeper (`sweeper`) unless told. */
  metadata: EventStore.EventMetadata = { actor: "sweeper" }
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  const load = loadPayment(transactionId).pipe(
    Effect.flatMap(({ state }) => paymentInScope(undefined, state))
  )
  const before = yield* load
  const now = yield* DateTime.now
  if (Payment.isAbandoned(before, timeout, now)) {
    // The expiry on the payment and the intent's release, in one commit.
    const expired = yield* recordOutcome(
      transactionId,
      PaymentIntent.streamKey(before.payment.merchantId, before.payment.sandbox, before.payment.referenceId),
      new Payment.ExpirePayment({ timeout, now }),
      new PaymentIntent.FailPayment({ transactionId, now }),
      metadata
    ).pipe(
      Effect.map(Option.some),
      // The cardholder decided between the read and the commit: the decision stands.
      Effect.catchTags({
        PaymentNotInState: () => Effect.succeedNone,
        PaymentNotOverdue: () => Effect.succeedNone,
        PaymentExpired: () => Effect.succeedNone
      }),
      onlyRefusals()
    )
    if (Option.isSome(expired)) {
      const { intent, payment } = expired.value
      return {
        payment,
        intent:
          intent._tag !== "Initial" && Option.contains(intent.transactionId, transactionId)
            ? Option.some(intent)
            : Option.none()
      } satisfies Expiry
    }
  }
  // Not due, or decided meanwhile: an intent an older version's crash left PROCESSING is settled.
  const payment = Payment.isAbandoned(before, timeout, now) ? yield* load : before
  const intent = yield* settleIntent(payment, now, metadata)
  return { payment, intent } satisfies Expiry
})

/**
 * Records a decided payment's outcome on its intent when the intent still waits for it (PROCESSING
 * with this transaction): approved → PAID, rejected (or expired) → ACTIVE. Otherwise nothing.
 */
const settleIntent = (payment: Payment.Existing, now: DateTime.Utc, metadata: EventStore.EventMetadata) =>
  Effect.gen(function* () {
    const transactionId = payment.payment.transactionId
    const key = PaymentIntent.streamKey(
      payment.payment.merchantId,
      payment.payment.sandbox,
      payment.payment.referenceId
    )
    const { state } = yield* loadIntent(key)
    if (state._tag === "Initial" || !Option.contains(state.transactionId, transactionId)) {
      return Option.none<PaymentIntent.Existing>()
    }
    const outcome: PaymentIntent.Command | undefined =
      state._tag !== "PROCESSING"
        ? undefined
        : Option.isSome(payment.approval)
          ? new PaymentIntent.CompletePayment({ transactionId, now })
          : payment._tag === "REJECTED" || payment._tag === "EXPIRED"
            ? new PaymentIntent.FailPayment({ transactionId, now })
            : undefined
    if (outcome === undefined) return Option.some(state)
    const settled = yield* handleIntent(key, outcome, metadata).pipe(
      Effect.flatMap(({ state }) => existingIntent(state)),
      Effect.orDie
    )
    return Option.some(settled)
  })

// ---------------------------------------------------------------------------------------------
// C5, C6: reads
// ---------------------------------------------------------------------------------------------

/**
 * The payment of a transaction in the scope and its latest refund, brought up to date as decisions
 * not yet written ({@link syncRefund}). A read shows them and writes nothing; a command writes them
 * with its own decision, in one commit, and passes its own `metadata` for them.
 */
const findPayment = (
  scope: Scope | undefined,
  transactionId: TransactionId,
  metadata: EventStore.EventMetadata = {}
) =>
  Effect.gen(function* () {
    const known = yield* loadPayment(transactionId)
    const payment = yield* paymentInScope(scope, known.state)
    return yield* syncRefund({ state: payment, version: known.version }, yield* DateTime.now, metadata)
  })

/**
 * C5: the payment of an intent: its last (or current) transaction. `PaymentNotFound` when the
 * intent does not exist in the scope or has no attempt yet.
 *
 * @category queries
 */
export const readPayment = Effect.fn("OnlinePayments.readPayment")(function* (
  scope: Scope,
  referenceId: IntentReference
) {
  const intent = yield* findIntent(scope, referenceId).pipe(
    Effect.mapError(() => new Payment.PaymentNotFound())
  )
  if (Option.isNone(intent.transactionId)) return yield* new Payment.PaymentNotFound()
  return (yield* findPayment(scope, intent.transactionId.value)).payment.state
})

/**
 * C6: the PSE banks.
 *
 * @category queries
 */
export const banks = Effect.fn("OnlinePayments.banks")(function* () {
  return PSE_BANKS
})

// ---------------------------------------------------------------------------------------------
// C7: void
// ---------------------------------------------------------------------------------------------

/**
 * C7: voids an approved card payment of the scope, the same Bogotá day before 21:00.
 * `PaymentNotFound` (404) or `PaymentCannotBeVoided` (409) otherwise.
 *
 * @category commands
 */
export const voidPayment = Effect.fn("OnlinePayments.voidPayment")(function* (
  scope: Scope,
  rawTransactionId: string,
  /** Who asks: the scope's merchant unless told. */
  metadata: EventStore.EventMetadata = { actor: scope.merchantId }
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  return yield* CommandHandler.retryOnConflict(
    Effect.gen(function* () {
      const synced = yield* findPayment(scope, transactionId, metadata)
      const voided = yield* decidePayment(
        transactionId,
        new Payment.VoidPayment({ now: yield* DateTime.now }),
        synced.payment,
        metadata
      ).pipe(onlyRefusals("PaymentCannotBeVoided"))
      yield* CommandHandler.commit([...synced.decisions, voided])
      return voided.handled.state as Payment.Existing
    })
  ).pipe(dieOnConflict)
})

// ---------------------------------------------------------------------------------------------
// C8, C9: refunds and their review
// ---------------------------------------------------------------------------------------------

/**
 * C8: requests the refund of the whole captured amount. The transaction must be the payment of
 * `reference_id` in the scope (`PaymentNotFound` otherwise); `RefundCannotBeRequested` (409) when
 * the payment is not an approved card payment, is voided, or has a refund under review or applied.
 * The payment (which guards "one refund at a time") and the new Refund stream are written in one
 * commit: of requests racing on one payment, exactly one is recorded, the others decide again on
 * the payment it left and are refused.
 *
 * @category commands
 */
export const requestRefund = Effect.fn("OnlinePayments.requestRefund")(function* (
  scope: Scope,
  input: { readonly referenceId: IntentReference; readonly transactionId: string; readonly reason: string },
  /** Who asks: the scope's merchant unless told. */
  metadata: EventStore.EventMetadata = { actor: scope.merchantId }
) {
  const transactionId = yield* transactionIdOf(input.transactionId)
  const refundId = RefundId.make(yield* nextId("RFD_"))
  return yield* CommandHandler.retryOnConflict(
    Effect.gen(function* () {
      const synced = yield* findPayment(scope, transactionId, metadata)
      if (synced.payment.state.payment.referenceId !== input.referenceId) {
        return yield* new Payment.PaymentNotFound()
      }
      const now = yield* DateTime.now
      const onPayment = yield* decidePayment(
        transactionId,
        new Payment.RequestRefund({ refundId, reason: input.reason, now }),
        synced.payment,
        metadata
      ).pipe(onlyRefusals("RefundCannotBeRequested"))
      const requested = onPayment.handled.state as Payment.Existing
      const onRefund = yield* decideRefund(
        refundId,
        new Refund.RequestRefund({
          refundId,
          merchantId: requested.payment.merchantId,
          sandbox: requested.payment.sandbox,
          transactionId,
          referenceId: requested.payment.referenceId,
          amount: requested.payment.amount.total,
          reason: input.reason,
          now
        }),
        CommandHandler.fresh(Refund.Refund),
        metadata
      ).pipe(Effect.orDie)
      yield* CommandHandler.commit([...synced.decisions, onPayment, onRefund])
      return onRefund.handled.state as Refund.Existing
    })
  ).pipe(dieOnConflict)
})

/** A payment and its latest refund brought up to date, and the decisions that would record it. */
interface Synced {
  readonly payment: CommandHandler.Known<Payment.Existing>
  /** The latest refund; none when the payment has none. */
  readonly refund: Option.Option<CommandHandler.Known<Refund.Existing>>
  /** What is still to be written (empty when the log is up to date). */
  readonly decisions: ReadonlyArray<CommandHandler.Decided<unknown, unknown>>
}

/**
 * Brings a payment's latest refund up to date, without writing: the Refund stream an older version
 * could leave unwritten (a crash between two appends) is decided from the payment, a due sandbox
 * review is decided at its due instant, and a review on the Refund that the payment does not show
 * yet is decided on the payment. Pure decisions on what was read: every reader on every node sees
 * the same result, and the next command on the payment writes them with its own. The sandbox's review
 * (and the payment's record of it) carries the actor {@link SANDBOX_REVIEWER}; a repair carries the
 * writing command's `metadata`.
 */
const syncRefund = (
  payment: CommandHandler.Known<Payment.Existing>,
  now: DateTime.Utc,
  metadata: EventStore.EventMetadata
) =>
  Effect.gen(function* () {
    if (Option.isNone(payment.state.refund)) {
      return { payment, refund: Option.none(), decisions: [] } satisfies Synced
    }
    const onPayment = payment.state.refund.value
    const transactionId = payment.state.payment.transactionId
    const decisions: Array<CommandHandler.Decided<unknown, unknown>> = []
    const step = <E, S>(decided: CommandHandler.Decided<E, S>): CommandHandler.Known<S> => {
      if (decided.append !== undefined) decisions.push(decided)
      return { state: decided.handled.state, version: decided.handled.version }
    }
    let refund: CommandHandler.Known<Refund.State> = yield* loadRefund(onPayment.refundId)
    if (refund.state._tag === "Initial") {
      refund = step(
        yield* decideRefund(
          onPayment.refundId,
          new Refund.RequestRefund({
            refundId: onPayment.refundId,
            merchantId: payment.state.payment.merchantId,
            sandbox: payment.state.payment.sandbox,
            transactionId,
            referenceId: payment.state.payment.referenceId,
            amount: onPayment.amount,
            reason: "",
            now: onPayment.requestedAt
          }),
          refund,
          metadata
        ).pipe(Effect.orDie)
      )
    }
    // The payment's record of a review follows whoever reviewed: the sandbox, when it does so here.
    let reviewedBy = metadata
    if (refund.state._tag === "PROCESSING" && payment.state.payment.sandbox) {
      const dueAt = DateTime.add(refund.state.refund.requestedAt, { seconds: SANDBOX_REFUND_REVIEW_SECONDS })
      if (DateTime.greaterThanOrEqualTo(now, dueAt)) {
        reviewedBy = { ...metadata, actor: SANDBOX_REVIEWER }
        refund = step(
          yield* decideRefund(
            onPayment.refundId,
            new Refund.ReviewRefund({ outcome: "APPROVED", now: dueAt }),
            refund,
            reviewedBy
          ).pipe(Effect.orDie)
        )
      }
    }
    const reviewed = refund.state as Refund.Existing
    let paymentNow = payment
    if ((reviewed._tag === "APPROVED" || reviewed._tag === "REJECTED") && onPayment.status === "PROCESSING") {
      paymentNow = step(
        yield* decidePayment(
          transactionId,
          new Payment.RecordRefundReview({
            refundId: onPayment.refundId,
            outcome: reviewed._tag,
            now: Option.getOrElse(reviewed.dateApplied, () => onPayment.requestedAt)
          }),
          payment,
          reviewedBy
        ).pipe(Effect.orDie)
      ) as CommandHandler.Known<Payment.Existing>
    }
    return {
      payment: paymentNow,
      refund: Option.some({ state: reviewed, version: refund.version }),
      decisions
    } satisfies Synced
  })

/**
 * C9: the latest refund of a transaction of the scope. `PaymentNotFound` when the payment is not
 * in the scope, `RefundNotFound` when it has no refund (both 404 PaymentNotFound on the wire). A
 * read: it writes nothing.
 *
 * @category queries
 */
export const refundStatus = Effect.fn("OnlinePayments.refundStatus")(function* (
  scope: Scope,
  rawTransactionId: string
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  const { refund } = yield* findPayment(scope, transactionId)
  if (Option.isNone(refund)) return yield* new Refund.RefundNotFound()
  return refund.value.state
})

/**
 * The service's review of a refund (an administrator's call; the sandbox also reviews on its own
 * after `SANDBOX_REFUND_REVIEW_SECONDS`): APPROVED returns the money and makes the payment
 * REFUNDED, REJECTED leaves it APPROVED. The same outcome again changes nothing; the other one is
 * `RefundAlreadyReviewed`. Without a scope it reaches every merchant's refunds. The review on the
 * Refund and on the payment are one commit.
 *
 * @category commands
 */
export const reviewRefund = Effect.fn("OnlinePayments.reviewRefund")(function* (
  input: {
    readonly transactionId: string
    readonly outcome: Refund.Outcome
    readonly scope?: Scope
  },
  /** Who reviews: the operator (`admin`) unless told. */
  metadata: EventStore.EventMetadata = { actor: "admin" }
) {
  const transactionId = yield* transactionIdOf(input.transactionId)
  return yield* CommandHandler.retryOnConflict(
    Effect.gen(function* () {
      const now = yield* DateTime.now
      // A missing stream is repaired first; a sandbox review that fell due stays what it was.
      const synced = yield* findPayment(input.scope, transactionId, metadata)
      if (Option.isNone(synced.refund)) return yield* new Refund.RefundNotFound()
      const refundId = synced.refund.value.state.refund.refundId
      const onRefund = yield* decideRefund(
        refundId,
        new Refund.ReviewRefund({ outcome: input.outcome, now }),
        synced.refund.value,
        metadata
      ).pipe(Effect.catchTags({ RefundNotFound: Effect.die, RefundAlreadyExists: Effect.die }))
      const reviewed = onRefund.handled.state as Refund.Existing
      const onPaymentBefore = Option.filter(synced.payment.state.refund, (r) => r.status === "PROCESSING")
      const onPayment = Option.isSome(onPaymentBefore)
        ? yield* decidePayment(
            transactionId,
            new Payment.RecordRefundReview({
              refundId,
              outcome: input.outcome,
              now: Option.getOrElse(reviewed.dateApplied, () => onPaymentBefore.value.requestedAt)
            }),
            synced.payment,
            metadata
          ).pipe(Effect.orDie)
        : undefined
      yield* CommandHandler.commit(
        onPayment === undefined ? [...synced.decisions, onRefund] : [...synced.decisions, onRefund, onPayment]
      )
      return reviewed
    })
  ).pipe(dieOnConflict)
})

/** Every typed error the use cases return. */
export type Error =
  | PaymentIntent.Error
  | Payment.Error
  | Refund.Error
  | InvalidAttempt
  | ChallengeNotFound
  | Merchant.MerchantNotFound
  | Merchant.MerchantNotInState
