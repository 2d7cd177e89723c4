/**
 * The online payments use cases (spec C1–C9): intents, attempts with the 3DS challenge, the payment
 * read, PSE banks, void, refund and its review, over the event store, the id generator, the clock
 * and the acquirer. Every call is scoped to one merchant and one mode (production or sandbox).
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Acquirer from "./Acquirer.js"
import * as CommandHandler from "./CommandHandler.js"
import * as EventStore from "./EventStore.js"
import { IdGenerator } from "./IdGenerator.js"
import { IntentReference, MerchantId, RefundId, TransactionId } from "./Ids.js"
import * as Merchant from "./Merchant.js"
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

/** An attempt the use case refuses before anything is recorded (a card method without a card). */
export class InvalidAttempt extends Schema.TaggedError<InvalidAttempt>()("InvalidAttempt", {
  /** The dotted wire path of the field at fault. */
  field: Schema.String,
  message: Schema.String
}) {}

/** The challenge page was opened with a token that is not the payment's. */
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

const intentHandler = CommandHandler.make(PaymentIntent.PaymentIntent)
const paymentHandler = CommandHandler.make(Payment.Payment)
const refundHandler = CommandHandler.make(Refund.Refund)
const handleIntent = (id: string, command: PaymentIntent.Command) => dieOnConflict(intentHandler(id, command))
const handlePayment = (id: string, command: Payment.Command) => dieOnConflict(paymentHandler(id, command))
const handleRefund = (id: string, command: Refund.Command) => dieOnConflict(refundHandler(id, command))
const loadMerchant = CommandHandler.load(Merchant.Merchant)
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
 */
export const createIntent = Effect.fn("OnlinePayments.createIntent")(function* (
  scope: Scope,
  input: {
    readonly referenceId: IntentReference
    readonly details: PaymentIntent.IntentDetails
    readonly deviceFingerprint: Option.Option<PaymentIntent.DeviceFingerprint>
  }
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
    })
  )
  return yield* existingIntent(state).pipe(Effect.orDie)
})

/** C2: reads an intent of the scope. */
export const readIntent = Effect.fn("OnlinePayments.readIntent")(function* (
  scope: Scope,
  referenceId: IntentReference
) {
  return yield* findIntent(scope, referenceId)
})

/**
 * C3: replaces the intent's body. A paid intent answers `IntentAlreadyPaid`, and an amount change
 * while an attempt is under way `IntentAmountLocked` (both 409); other fields change freely.
 */
export const updateIntent = Effect.fn("OnlinePayments.updateIntent")(function* (
  scope: Scope,
  input: { readonly referenceId: IntentReference; readonly details: PaymentIntent.IntentDetails }
) {
  const now = yield* DateTime.now
  yield* findIntent(scope, input.referenceId)
  const { state } = yield* handleIntent(
    PaymentIntent.streamKey(scope.merchantId, scope.sandbox, input.referenceId),
    new PaymentIntent.UpdateIntent({ details: input.details, now })
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
 */
export const attempt = Effect.fn("OnlinePayments.attempt")(function* (scope: Scope, input: AttemptInput) {
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
  const intent = yield* findIntent(scope, input.referenceId)
  const intentKey = PaymentIntent.streamKey(scope.merchantId, scope.sandbox, input.referenceId)
  const transactionId = TransactionId.make(yield* ids.next("TRX_"))
  const now = yield* DateTime.now
  const startOnIntent = new PaymentIntent.StartPayment({ transactionId, paymentMethod, now })
  // Refuse before recording anything when the intent cannot take an attempt (paid, one running,
  // no callback_url for PSE).
  const refused = PaymentIntent.decide(startOnIntent, intent)
  if (Either.isLeft(refused)) return yield* refused.left

  yield* handlePayment(
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
    })
  ).pipe(Effect.catchTag("PaymentAlreadyExists", Effect.die))
  // Another attempt may have started on the intent since it was read: the payment just started
  // is then rejected, so that no RUNNING payment is left without an intent pointing at it.
  yield* handleIntent(intentKey, startOnIntent).pipe(
    Effect.tapError(() =>
      handlePayment(
        transactionId,
        new Payment.RejectPayment({ reason: "The intent took another attempt", now })
      ).pipe(Effect.orDie)
    )
  )

  const result: Acquirer.AuthorizationResult = isCard
    ? yield* acquirer.authorize(
        new Acquirer.AuthorizationRequest({
          transactionId,
          currency: intent.details.amount.currency,
          total: intent.details.amount.total,
          cardNumber: Option.getOrElse(input.cardNumber, () => ""),
          sandbox: scope.sandbox
        })
      )
    : { _tag: "ChallengeRequired" }
  const decidedAt = yield* DateTime.now

  switch (result._tag) {
    case "Approved": {
      const { state } = yield* handlePayment(
        transactionId,
        new Payment.ApprovePayment({
          approvalNumber: result.approvalNumber,
          threeDs: result.threeDs,
          now: decidedAt
        })
      ).pipe(Effect.orDie)
      yield* handleIntent(
        intentKey,
        new PaymentIntent.CompletePayment({ transactionId, now: decidedAt })
      ).pipe(Effect.orDie)
      return {
        transactionId,
        redirect: Option.none(),
        payment: state as Payment.Existing
      } satisfies AttemptResult
    }
    case "Rejected": {
      const { state } = yield* handlePayment(
        transactionId,
        new Payment.RejectPayment({ reason: result.reason, now: decidedAt })
      ).pipe(Effect.orDie)
      yield* handleIntent(intentKey, new PaymentIntent.FailPayment({ transactionId, now: decidedAt })).pipe(
        Effect.orDie
      )
      return {
        transactionId,
        redirect: Option.none(),
        payment: state as Payment.Existing
      } satisfies AttemptResult
    }
    case "ChallengeRequired": {
      const token = yield* ids.uuid
      const nextAction: Payment.NextAction = {
        redirectUrl: input.challengeUrl(transactionId, token),
        redirectMethod: CHALLENGE_REDIRECT_METHOD
      }
      const { state } = yield* handlePayment(
        transactionId,
        new Payment.RequireChallenge({ nextAction, now: decidedAt })
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `token` is the one-time token of the payment's challenge page. */
const tokenMatches = (payment: Payment.Existing, token: string): boolean =>
  UUID.test(token) && Option.exists(payment.nextAction, (next) => next.redirectUrl.includes(token))

/**
 * The challenge page (GET): the payment and its intent, when the token is the payment's. The page
 * is opened by the cardholder's browser with no key: the token is the authorization.
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
 */
export const completeChallenge = Effect.fn("OnlinePayments.completeChallenge")(function* (input: {
  readonly transactionId: string
  readonly token: string
  readonly approve: boolean
}) {
  const { payment } = yield* readChallenge(input)
  const transactionId = payment.payment.transactionId
  const now = yield* DateTime.now
  const result: Payment.ChallengeResult = input.approve
    ? { _tag: "Approved", approvalNumber: Acquirer.approvalNumberOf(transactionId) }
    : { _tag: "Declined", reason: "The cardholder declined the challenge" }
  // A reloaded approval of a payment approved and since voided or refunded is a re-delivery too:
  // the decider no longer takes `CompleteChallenge` there, so it is answered here.
  const reloadedApproval = input.approve && Option.isSome(payment.approval)
  const { state } = reloadedApproval
    ? { state: payment }
    : yield* handlePayment(transactionId, new Payment.CompleteChallenge({ result, now })).pipe(
        Effect.catchTags({
          PaymentNotFound: Effect.die,
          PaymentAlreadyExists: Effect.die,
          PaymentNotOverdue: Effect.die,
          PaymentCannotBeVoided: Effect.die,
          RefundCannotBeRequested: Effect.die,
          UnknownRefund: Effect.die,
          RefundReviewConflict: Effect.die
        })
      )
  const paid = state as Payment.Existing
  const intentKey = PaymentIntent.streamKey(
    paid.payment.merchantId,
    paid.payment.sandbox,
    paid.payment.referenceId
  )
  // A reloaded decision after the intent took another attempt (a decline, then a new attempt): the
  // intent is no longer this payment's, and the outcome is recorded on it already: leave it as it is.
  const current = yield* loadIntent(intentKey).pipe(
    Effect.flatMap(({ state }) => existingIntent(state)),
    Effect.orDie
  )
  const intent = Option.contains(current.transactionId, transactionId)
    ? yield* handleIntent(
        intentKey,
        input.approve
          ? new PaymentIntent.CompletePayment({ transactionId, now })
          : new PaymentIntent.FailPayment({ transactionId, now })
      ).pipe(
        Effect.flatMap(({ state }) => existingIntent(state)),
        Effect.orDie
      )
    : current
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
 */
export const expirePayment = Effect.fn("OnlinePayments.expirePayment")(function* (
  rawTransactionId: string,
  timeout: Duration.Duration = Payment.ABANDONED_PAYMENT_TIMEOUT
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  const load = loadPayment(transactionId).pipe(
    Effect.flatMap(({ state }) => paymentInScope(undefined, state))
  )
  const before = yield* load
  const now = yield* DateTime.now
  const payment = Payment.isAbandoned(before, timeout, now)
    ? yield* handlePayment(transactionId, new Payment.ExpirePayment({ timeout, now })).pipe(
        Effect.map(({ state }) => state as Payment.Existing),
        // The cardholder decided between the read and the append: the decision stands.
        Effect.catchTags({
          PaymentNotInState: () => load,
          PaymentNotOverdue: () => load,
          PaymentExpired: () => load
        }),
        Effect.catchTags({
          PaymentNotFound: Effect.die,
          PaymentAlreadyExists: Effect.die,
          PaymentCannotBeVoided: Effect.die,
          RefundCannotBeRequested: Effect.die,
          UnknownRefund: Effect.die,
          RefundReviewConflict: Effect.die
        })
      )
    : before
  const intent = yield* settleIntent(payment, now)
  return { payment, intent } satisfies Expiry
})

/**
 * Records a decided payment's outcome on its intent when the intent still waits for it (PROCESSING
 * with this transaction): approved → PAID, rejected (or expired) → ACTIVE. Otherwise nothing.
 */
const settleIntent = (payment: Payment.Existing, now: DateTime.Utc) =>
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
    const settled = yield* handleIntent(key, outcome).pipe(
      Effect.flatMap(({ state }) => existingIntent(state)),
      Effect.orDie
    )
    return Option.some(settled)
  })

// ---------------------------------------------------------------------------------------------
// C5, C6: reads
// ---------------------------------------------------------------------------------------------

/** The payment of a transaction in the scope, with its sandbox refund review brought up to date. */
const findPayment = (scope: Scope | undefined, transactionId: TransactionId) =>
  loadPayment(transactionId).pipe(
    Effect.flatMap(({ state }) => paymentInScope(scope, state)),
    Effect.flatMap(syncRefund)
  )

/**
 * C5: the payment of an intent: its last (or current) transaction. `PaymentNotFound` when the
 * intent does not exist in the scope or has no attempt yet.
 */
export const readPayment = Effect.fn("OnlinePayments.readPayment")(function* (
  scope: Scope,
  referenceId: IntentReference
) {
  const intent = yield* findIntent(scope, referenceId).pipe(
    Effect.mapError(() => new Payment.PaymentNotFound())
  )
  if (Option.isNone(intent.transactionId)) return yield* new Payment.PaymentNotFound()
  return yield* findPayment(scope, intent.transactionId.value)
})

/** C6: the PSE banks. */
export const banks = Effect.fn("OnlinePayments.banks")(function* () {
  return PSE_BANKS
})

// ---------------------------------------------------------------------------------------------
// C7: void
// ---------------------------------------------------------------------------------------------

/**
 * C7: voids an approved card payment of the scope, the same Bogotá day before 21:00.
 * `PaymentNotFound` (404) or `PaymentCannotBeVoided` (409) otherwise.
 */
export const voidPayment = Effect.fn("OnlinePayments.voidPayment")(function* (
  scope: Scope,
  rawTransactionId: string
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  yield* findPayment(scope, transactionId)
  const now = yield* DateTime.now
  const { state } = yield* handlePayment(transactionId, new Payment.VoidPayment({ now })).pipe(
    Effect.catchTags({
      PaymentAlreadyExists: Effect.die,
      PaymentNotInState: Effect.die,
      PaymentNotOverdue: Effect.die,
      PaymentExpired: Effect.die,
      RefundCannotBeRequested: Effect.die,
      UnknownRefund: Effect.die,
      RefundReviewConflict: Effect.die
    })
  )
  return state as Payment.Existing
})

// ---------------------------------------------------------------------------------------------
// C8, C9: refunds and their review
// ---------------------------------------------------------------------------------------------

/**
 * C8: requests the refund of the whole captured amount. The transaction must be the payment of
 * `reference_id` in the scope (`PaymentNotFound` otherwise); `RefundCannotBeRequested` (409) when
 * the payment is not an approved card payment, is voided, or has a refund under review or applied.
 * Recorded on the payment (which guards it) and then on a new Refund stream.
 */
export const requestRefund = Effect.fn("OnlinePayments.requestRefund")(function* (
  scope: Scope,
  input: { readonly referenceId: IntentReference; readonly transactionId: string; readonly reason: string }
) {
  const ids = yield* IdGenerator
  const transactionId = yield* transactionIdOf(input.transactionId)
  const payment = yield* findPayment(scope, transactionId)
  if (payment.payment.referenceId !== input.referenceId) return yield* new Payment.PaymentNotFound()
  const refundId = RefundId.make(yield* ids.next("RFD_"))
  const now = yield* DateTime.now
  const { state } = yield* handlePayment(
    transactionId,
    new Payment.RequestRefund({ refundId, reason: input.reason, now })
  ).pipe(
    Effect.catchTags({
      PaymentNotFound: Effect.die,
      PaymentAlreadyExists: Effect.die,
      PaymentNotInState: Effect.die,
      PaymentNotOverdue: Effect.die,
      PaymentExpired: Effect.die,
      PaymentCannotBeVoided: Effect.die,
      UnknownRefund: Effect.die,
      RefundReviewConflict: Effect.die
    })
  )
  const requested = state as Payment.Existing
  const { state: refund } = yield* handleRefund(
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
    })
  ).pipe(Effect.orDie)
  return refund as Refund.Existing
})

/**
 * Brings a payment's latest refund up to date: its Refund stream exists (a crash between the two
 * appends of a request is repaired), a due sandbox review is recorded, and a review recorded on
 * the Refund is mirrored on the payment. Idempotent; returns the payment as it now stands.
 */
const syncRefund = (payment: Payment.Existing) =>
  Effect.gen(function* () {
    if (Option.isNone(payment.refund)) return payment
    const onPayment = payment.refund.value
    const transactionId = payment.payment.transactionId
    let refund = (yield* loadRefund(onPayment.refundId)).state
    if (refund._tag === "Initial") {
      refund = (yield* handleRefund(
        onPayment.refundId,
        new Refund.RequestRefund({
          refundId: onPayment.refundId,
          merchantId: payment.payment.merchantId,
          sandbox: payment.payment.sandbox,
          transactionId,
          referenceId: payment.payment.referenceId,
          amount: onPayment.amount,
          reason: "",
          now: onPayment.requestedAt
        })
      ).pipe(Effect.orDie)).state
    }
    if (refund._tag === "PROCESSING" && payment.payment.sandbox) {
      const dueAt = DateTime.add(refund.refund.requestedAt, { seconds: SANDBOX_REFUND_REVIEW_SECONDS })
      const now = yield* DateTime.now
      if (DateTime.greaterThanOrEqualTo(now, dueAt)) {
        refund = (yield* handleRefund(
          onPayment.refundId,
          new Refund.ReviewRefund({ outcome: "APPROVED", now: dueAt })
        ).pipe(Effect.orDie)).state
      }
    }
    if (refund._tag === "APPROVED" || refund._tag === "REJECTED") {
      if (onPayment.status === "PROCESSING") {
        const { state } = yield* handlePayment(
          transactionId,
          new Payment.RecordRefundReview({
            refundId: onPayment.refundId,
            outcome: refund._tag,
            now: Option.getOrElse(refund.dateApplied, () => onPayment.requestedAt)
          })
        ).pipe(Effect.orDie)
        return state as Payment.Existing
      }
    }
    return payment
  })

/**
 * C9: the latest refund of a transaction of the scope. `PaymentNotFound` when the payment is not
 * in the scope, `RefundNotFound` when it has no refund (both 404 PaymentNotFound on the wire).
 */
export const refundStatus = Effect.fn("OnlinePayments.refundStatus")(function* (
  scope: Scope,
  rawTransactionId: string
) {
  const transactionId = yield* transactionIdOf(rawTransactionId)
  const payment = yield* findPayment(scope, transactionId)
  if (Option.isNone(payment.refund)) return yield* new Refund.RefundNotFound()
  const { state } = yield* loadRefund(payment.refund.value.refundId)
  if (state._tag === "Initial") return yield* Effect.die("syncRefund left a refund without its stream")
  return state
})

/**
 * The service's review of a refund (an administrator's call; the sandbox also reviews on its own
 * after `SANDBOX_REFUND_REVIEW_SECONDS`): APPROVED returns the money and makes the payment
 * REFUNDED, REJECTED leaves it APPROVED. The same outcome again changes nothing; the other one is
 * `RefundAlreadyReviewed`. Without a scope it reaches every merchant's refunds.
 */
export const reviewRefund = Effect.fn("OnlinePayments.reviewRefund")(function* (input: {
  readonly transactionId: string
  readonly outcome: Refund.Outcome
  readonly scope?: Scope
}) {
  const transactionId = yield* transactionIdOf(input.transactionId)
  const before = yield* loadPayment(transactionId).pipe(
    Effect.flatMap(({ state }) => paymentInScope(input.scope, state))
  )
  if (Option.isNone(before.refund)) return yield* new Refund.RefundNotFound()
  const refundId = before.refund.value.refundId
  // Repairs a missing stream first; a sandbox review that fell due stays what it was.
  const payment = yield* syncRefund(before)
  const now = yield* DateTime.now
  const { state } = yield* handleRefund(
    refundId,
    new Refund.ReviewRefund({ outcome: input.outcome, now })
  ).pipe(Effect.catchTags({ RefundNotFound: Effect.die, RefundAlreadyExists: Effect.die }))
  yield* syncRefund(payment)
  return state as Refund.Existing
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
