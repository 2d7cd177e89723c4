/**
 * Handlers of the online payments API (spec C1–C9) over `OnlinePayments`: the wire bodies of
 * `OnlineApi` mapped to and from the domain, and the domain's errors to the envelope's statuses
 * (400, 404 PaymentNotFound, 409; never a 500 for a client's mistake).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Bogota from "@cobro/domain/Bogota"
import { IntentReference } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import type * as Merchant from "@cobro/domain/Merchant"
import type * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import type * as Refund from "@cobro/domain/Refund"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CobroApi } from "@cobro/api/Api"
import * as Security from "@cobro/api/Security"
import * as ChallengePage from "@cobro/pages/ChallengePage"
import * as Errors from "@cobro/api/Errors"
import * as OnlineEndpoints from "@cobro/api/OnlineEndpoints"
import * as RequestBody from "./RequestBody.js"

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const notFound = (message: string) => Errors.NotFound.of(Errors.Codes.PaymentNotFound, message)

const VOID_REFUSALS: Record<Payment.VoidRefusal, string> = {
  NotCard: "only a credit or debit card payment can be voided",
  NotApproved: "only an APPROVED payment can be voided",
  WindowClosed: "a payment can be voided only on its day before 21:00 Bogotá time; request a refund instead",
  AlreadyVoided: "the payment is voided already",
  Refunded: "the payment has a refund under review or applied"
}

const REFUND_REFUSALS: Record<Payment.RefundRefusal, string> = {
  NotCard: "only a credit or debit card payment can be refunded",
  NotApproved: "only an APPROVED payment can be refunded",
  Voided: "the payment is voided",
  RefundInProgress: "a refund of this payment is under review",
  AlreadyRefunded: "the payment is refunded already"
}

/** 403 `MerchantDisabled` (C1, C4): the merchant's account is disabled, as B2 answers it. */
export const merchantDisabled = (): Errors.Forbidden =>
  Errors.Forbidden.of(
    "the merchant account is disabled: it cannot take payments",
    Errors.Codes.MerchantDisabled
  )

/** The use cases' errors other than the account's (which only C1 and C4 check). */
type PaymentError = Exclude<OnlinePayments.Error, Merchant.MerchantNotFound | Merchant.MerchantNotInState>

/** The envelope error of a use case's error. */
export const fromOnlineError = (
  error: PaymentError
): Errors.BadRequest | Errors.NotFound | Errors.Conflict => {
  switch (error._tag) {
    case "IntentNotFound":
      return notFound("no payment intent with this reference_id")
    case "PaymentNotFound":
      return notFound("no payment with this id")
    case "RefundNotFound":
      return notFound("no refund for this transaction")
    case "ChallengeNotFound":
    case "UnknownRefund":
      return notFound("not found")
    case "IntentAlreadyExists":
      return Errors.Conflict.of(
        error._tag,
        `a payment intent with reference_id ${error.referenceId} exists already`,
        "reference_id"
      )
    case "IntentNotInState":
      return Errors.Conflict.of(
        error._tag,
        error.status === "PAID"
          ? "the payment intent is paid already"
          : "a payment of this intent is under way",
        "reference_id"
      )
    case "IntentAlreadyPaid":
      return Errors.Conflict.of(error._tag, "a paid payment intent cannot be updated")
    case "IntentAmountLocked":
      return Errors.Conflict.of(error._tag, "the amount cannot change while a payment is under way", "amount")
    case "UnknownIntentTransaction":
    case "PaymentAlreadyExists":
    case "PaymentNotInState":
    case "RefundReviewConflict":
    case "RefundAlreadyExists":
    case "RefundAlreadyReviewed":
      return Errors.Conflict.of(error._tag, "the resource is not in a state that allows this")
    case "CallbackUrlRequired":
      return Errors.BadRequest.of(
        error._tag,
        `the payment intent needs a callback_url for ${error.paymentMethod}`,
        "callback_url"
      )
    case "InvalidAttempt":
      return Errors.BadRequest.of(Errors.Codes.ValidationError, error.message, error.field)
    case "PaymentExpired":
      return Errors.Conflict.of(
        error._tag,
        "the payment expired: the cardholder did not complete it in time; it reads REJECTED",
        "transaction_id"
      )
    case "PaymentNotOverdue":
      return Errors.Conflict.of(error._tag, "the payment has not been waiting long enough to expire")
    case "PaymentCannotBeVoided":
      return Errors.Conflict.of(error._tag, VOID_REFUSALS[error.reason], "transaction_id")
    case "RefundCannotBeRequested":
      return Errors.Conflict.of(error._tag, REFUND_REFUSALS[error.reason], "transaction_id")
  }
}

// ---------------------------------------------------------------------------------------------
// Wire → domain
// ---------------------------------------------------------------------------------------------

/** `A` with its members that may be `undefined` made optional instead. */
type Defined<A> = { [K in keyof A as undefined extends A[K] ? never : K]: A[K] } & {
  [K in keyof A as undefined extends A[K] ? K : never]?: Exclude<A[K], undefined>
}

/** The object without its `undefined` members, so that an absent field stays absent. */
const defined = <A extends Record<string, unknown>>(value: A): Defined<A> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Defined<A>

const address = (a: OnlineApi.CustomerAddress): PaymentIntent.Address =>
  defined({
    street1: a.street1,
    street2: a.street2,
    city: a.city,
    postalCode: a.postal_code,
    province: a.province,
    countryCode: a.country_code,
    phone: a.phone
  })

const customer = (c: OnlineApi.Customer): PaymentIntent.Customer =>
  defined({
    name: c.name,
    phone: c.phone,
    email: c.email,
    billingAddress: c.billing_address === undefined ? undefined : address(c.billing_address),
    shippingAddress: c.shipping_address === undefined ? undefined : address(c.shipping_address)
  })

const fingerprint = (d: OnlineApi.DeviceFingerprint): PaymentIntent.DeviceFingerprint =>
  defined({
    ip: d.ip,
    deviceType: d.device_type,
    os: d.os,
    browser: d.browser,
    acceptHeader: d.accept_header,
    userAgent: d.user_agent,
    javaEnabled: d.java_enabled,
    language: d.language,
    colorDepth: d.color_depth,
    screenHeight: d.screen_height,
    screenWidth: d.screen_width,
    timeZoneOffset: d.time_zone_offset,
    latitude: d.latitude,
    longitude: d.longitude,
    model: d.model,
    platform: d.platform
  })

/** The intent body of C1 and C3 as the domain holds it (`tip_amount` 0 and `taxes` none by default). */
export const detailsOf = (body: OnlineApi.IntentUpdateRequest): PaymentIntent.IntentDetails =>
  new PaymentIntent.IntentDetails({
    amount: new PaymentIntent.IntentAmount({
      currency: body.amount.currency,
      total: body.amount.total_amount,
      tip: body.amount.tip_amount ?? amount(0),
      taxes: body.amount.taxes ?? []
    }),
    description: Option.fromNullable(body.description),
    callbackUrl: Option.fromNullable(body.callback_url),
    metadata: Option.fromNullable(body.metadata),
    customer: Option.map(Option.fromNullable(body.customer), customer)
  })

const payerOf = (p: OnlineApi.AttemptPayer): Payment.Payer =>
  defined({
    personType: p.person_type,
    name: p.name,
    phone: p.phone,
    email: p.email,
    documentType: p.document_type,
    documentNumber: p.document_number,
    billingAddress:
      p.billing_address === undefined
        ? undefined
        : defined({
            street1: p.billing_address.street1,
            street2: p.billing_address.street2,
            city: p.billing_address.city,
            zipCode: p.billing_address.zip_code,
            province: p.billing_address.province,
            country: p.billing_address.country,
            phone: p.billing_address.phone
          })
  })

// ---------------------------------------------------------------------------------------------
// Domain → wire
// ---------------------------------------------------------------------------------------------

const wireAmount = (a: PaymentIntent.IntentAmount): OnlineApi.IntentAmount => ({
  currency: a.currency,
  total_amount: a.total,
  tip_amount: a.tip,
  taxes: a.taxes
})

const wireAddress = (a: PaymentIntent.Address): OnlineApi.CustomerAddress =>
  defined({
    street1: a.street1,
    street2: a.street2,
    city: a.city,
    postal_code: a.postalCode,
    province: a.province,
    country_code: a.countryCode,
    phone: a.phone
  })

const wireCustomer = (c: PaymentIntent.Customer): OnlineApi.Customer =>
  defined({
    name: c.name,
    phone: c.phone,
    email: c.email as OnlineApi.Customer["email"],
    billing_address: c.billingAddress === undefined ? undefined : wireAddress(c.billingAddress),
    shipping_address: c.shippingAddress === undefined ? undefined : wireAddress(c.shippingAddress)
  })

/** The intent as C1, C2 and C3 answer it. */
export const intentBody = (intent: PaymentIntent.Existing): OnlineApi.IntentResponse =>
  defined({
    reference_id: intent.intent.referenceId,
    amount: wireAmount(intent.details.amount),
    description: Option.getOrUndefined(intent.details.description),
    callback_url: Option.getOrUndefined(intent.details.callbackUrl),
    metadata: Option.getOrUndefined(intent.details.metadata) as OnlineApi.Metadata | undefined,
    customer: Option.getOrUndefined(Option.map(intent.details.customer, wireCustomer)),
    creation_date: Bogota.formatIso(intent.intent.createdAt),
    status: intent._tag,
    test: intent.intent.sandbox,
    service_transaction_id: Option.getOrUndefined(intent.transactionId)
  })

/** The payment as C5 answers it. */
export const paymentBody = (payment: Payment.Existing): OnlineApi.PaymentResponse => {
  const payer = Option.getOrElse(payment.payment.payer, (): Payment.Payer => ({}))
  return {
    transaction_id: payment.payment.transactionId,
    reference_id: payment.payment.referenceId,
    status: Payment.status(payment),
    amount: wireAmount(payment.payment.amount),
    payment_method: payment.payment.paymentMethod,
    payer: defined({
      person_type: payer.personType,
      name: payer.name,
      phone: payer.phone,
      email: payer.email as OnlineApi.PaymentResponse["payer"]["email"],
      document_type: payer.documentType,
      document_number: payer.documentNumber
    }),
    attempt_date: Bogota.formatIso(payment.payment.attemptedAt)
  }
}

/** The `status_detail` of the 3DS response while the cardholder's challenge is pending. */
export const PENDING_CHALLENGE = "pending_challenge"

/** C4's answer: bare, with `next_actions` for a bank redirect; enveloped for a 3DS challenge. */
export const attemptBody = (
  result: OnlinePayments.AttemptResult
): typeof OnlineEndpoints.AttemptSuccess.Type => {
  if (Option.isNone(result.redirect)) return { transaction_id: result.transactionId, status: "RUNNING" }
  const { kind, nextAction, token } = result.redirect.value
  const next_actions = { redirect_url: nextAction.redirectUrl, redirect_method: nextAction.redirectMethod }
  return kind === "BankRedirect"
    ? { transaction_id: result.transactionId, next_actions, status: "RUNNING" }
    : {
        payload: {
          transaction_id: result.transactionId,
          next_actions,
          status: "running",
          status_detail: PENDING_CHALLENGE,
          uuid_token: token
        },
        errors: []
      }
}

/** The refund as C9 answers it: `date_applied` null while PROCESSING. */
export const refundBody = (refund: Refund.Existing): OnlineApi.RefundStatusResponse => ({
  payload: {
    transaction_id: refund.refund.transactionId,
    status: refund._tag,
    date_applied: Option.getOrNull(Option.map(refund.dateApplied, Bogota.formatIso))
  },
  errors: []
})

/** The 404 of a read: the intent, payment or refund does not exist for this key. */
const readNotFound = (error: { readonly _tag: "IntentNotFound" | "PaymentNotFound" | "RefundNotFound" }) =>
  fromOnlineError(error as PaymentError) as Errors.NotFound

/** A path's `reference_id`: one that cannot exist is simply not found. */
const referenceOf = (raw: string) =>
  Option.match(Schema.decodeUnknownOption(IntentReference)(raw), {
    onNone: () => Effect.fail(notFound("no payment intent with this reference_id")),
    onSome: Effect.succeed
  })

/** A `handleRaw` handler's inputs: the caller's credential, then the body decoded with `schema`. */
const callerAnd = <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  Effect.all({ credential: Security.CurrentCredential, body: RequestBody.decode(schema) })

/** C2 and C5: what `read` finds of the path's `reference_id` for the caller, as `body` writes it; else a 404. */
const readByReference = <A, B, R>(
  raw: string,
  read: (
    credential: MerchantDirectory.Credential,
    referenceId: IntentReference
  ) => Effect.Effect<A, Parameters<typeof readNotFound>[0], R>,
  body: (found: A) => B
) =>
  Effect.gen(function* () {
    const credential = yield* Security.CurrentCredential
    const referenceId = yield* referenceOf(raw)
    return body(yield* read(credential, referenceId).pipe(Effect.mapError(readNotFound)))
  })

// ---------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------

/** The online payments handlers (C1–C9). */
export const layer = HttpApiBuilder.group(CobroApi, "online", (handlers) =>
  handlers
    .handleRaw("createIntent", () =>
      Effect.gen(function* () {
        const { credential, body } = yield* callerAnd(OnlineApi.IntentCreateRequest)
        const intent = yield* OnlinePayments.createIntent(credential, {
          referenceId: body.reference_id,
          details: detailsOf(body),
          deviceFingerprint: Option.map(Option.fromNullable(body.device_fingerprint), fingerprint)
        }).pipe(
          Effect.catchAll((error): Effect.Effect<never, Errors.Conflict | Errors.Forbidden> =>
            error._tag === "IntentAlreadyExists"
              ? Effect.fail(fromOnlineError(error) as Errors.Conflict)
              : error._tag === "MerchantNotInState"
                ? Effect.fail(merchantDisabled())
                : Effect.die(error)
          )
        )
        return intentBody(intent)
      })
    )
    .handle("readIntent", ({ path }) =>
      readByReference(path.reference_id, OnlinePayments.readIntent, intentBody)
    )
    .handleRaw("updateIntent", () =>
      Effect.gen(function* () {
        const { credential, body } = yield* callerAnd(OnlineApi.IntentUpdateRequest)
        const intent = yield* OnlinePayments.updateIntent(credential, {
          referenceId: body.reference_id,
          details: detailsOf(body)
        }).pipe(Effect.mapError(fromOnlineError))
        return intentBody(intent)
      })
    )
    .handleRaw("attempt", () =>
      Effect.gen(function* () {
        const { credential, body } = yield* callerAnd(OnlineApi.AttemptRequest)
        const challengeUrl = yield* ChallengePage.challengeUrl
        const method = body.payment_method
        const result = yield* OnlinePayments.attempt(credential, {
          referenceId: body.reference_id,
          paymentMethod: method.name,
          cardNumber: Option.fromNullable(method.card_number),
          cardholderName: Option.fromNullable(method.cardholder_name),
          installments: Option.fromNullable(method.installments),
          payer: Option.map(Option.fromNullable(body.payer), payerOf),
          metadata: Option.fromNullable(body.metadata),
          deviceFingerprint: Option.map(Option.fromNullable(body.device_fingerprint), fingerprint),
          challengeUrl
        }).pipe(
          // A valid key of a merchant the log does not hold is not the client's mistake: a 500.
          Effect.catchTag("MerchantNotFound", Effect.die),
          Effect.mapError((error) =>
            error._tag === "MerchantNotInState" ? merchantDisabled() : fromOnlineError(error)
          )
        )
        return attemptBody(result)
      })
    )
    .handle("banks", () =>
      Effect.map(OnlinePayments.banks(), (banks) => ({
        payload: { banks: banks.map((b) => ({ bank_code: b.code, bank_name: b.name })) },
        errors: []
      }))
    )
    .handle("refundStatus", ({ path }) =>
      Effect.flatMap(Security.CurrentCredential, (credential) =>
        OnlinePayments.refundStatus(credential, path.transaction_id)
      ).pipe(Effect.mapError(readNotFound), Effect.map(refundBody))
    )
    .handle("readPayment", ({ path }) =>
      readByReference(path.reference_id, OnlinePayments.readPayment, paymentBody)
    )
    .handleRaw("voidPayment", () =>
      Effect.gen(function* () {
        const { credential, body } = yield* callerAnd(OnlineApi.VoidRequest)
        yield* OnlinePayments.voidPayment(credential, body.transaction_id).pipe(
          Effect.mapError(fromOnlineError)
        )
      })
    )
    .handleRaw("requestRefund", () =>
      Effect.gen(function* () {
        const { credential, body } = yield* callerAnd(OnlineApi.RefundRequest)
        yield* OnlinePayments.requestRefund(credential, {
          referenceId: body.reference_id,
          transactionId: body.transaction_id,
          reason: body.reason ?? ""
        }).pipe(Effect.mapError(fromOnlineError))
      })
    )
)

/** Who the operator's and the cardholder's events name (the API's commands name the key's merchant). */
const OPERATOR = { actor: "admin" }
const CARDHOLDER = { actor: "payer" }

/** The operator's refund review. */
export const layerAdmin = HttpApiBuilder.group(CobroApi, "onlineAdmin", (handlers) =>
  handlers.handleRaw("reviewRefund", ({ path }) =>
    Effect.gen(function* () {
      const body = yield* RequestBody.decode(OnlineEndpoints.ReviewRefundRequest)
      const refund = yield* OnlinePayments.reviewRefund(
        { transactionId: path.transaction_id, outcome: body.outcome },
        OPERATOR
      ).pipe(Effect.mapError(fromOnlineError))
      return {
        refund_id: refund.refund.refundId,
        transaction_id: refund.refund.transactionId,
        status: refund._tag,
        date_applied: Option.getOrNull(Option.map(refund.dateApplied, Bogota.formatIso))
      }
    })
  )
)

/** The challenge page: GET shows it, POST records the decision through the use case. */
export const layerChallenge = HttpApiBuilder.group(CobroApi, "challenge", (handlers) =>
  handlers
    .handle("showChallenge", ({ path }) =>
      OnlinePayments.readChallenge({ transactionId: path.transaction_id, token: path.token }).pipe(
        Effect.map(ChallengePage.showPage),
        Effect.catchTag("ChallengeNotFound", () => Effect.succeed(ChallengePage.notFoundPage()))
      )
    )
    .handle("completeChallenge", ({ path, payload }) =>
      OnlinePayments.completeChallenge(
        { transactionId: path.transaction_id, token: path.token, approve: payload.decision === "approve" },
        CARDHOLDER
      ).pipe(
        Effect.map(ChallengePage.afterDecision),
        Effect.catchTags({
          ChallengeNotFound: () => Effect.succeed(ChallengePage.notFoundPage()),
          PaymentNotInState: () => Effect.succeed(ChallengePage.conflictPage()),
          // The cardholder came back after the timeout sweeper expired the payment.
          PaymentExpired: () => Effect.succeed(ChallengePage.expiredPage())
        })
      )
    )
)
