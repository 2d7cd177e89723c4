/**
 * Wire schemas of the online payments API (spec C, beta): payment intents (C1-C3), payment attempts
 * and their 3DS response (C4), the payment read (C5), banks (C6), void (C7) and refunds (C8, C9).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Envelope, ErrorEnvelope } from "../shared/Envelope.js"
import { IntentReference } from "../shared/Ids.js"
import { Email } from "../links/LinkApi.js"
import { Amount, Currency, RequestAmount, RequestTaxLine, TaxLine, toCents } from "../shared/Money.js"
import * as ReturnUrl from "../shared/ReturnUrl.js"
import { NonEmptySafeString, SafeString } from "../shared/SafeText.js"

/** Optional field that also accepts `null` as "absent"; omitted when encoded. */
const opt = <S extends Schema.Schema.All>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

const ISO_TIMESTAMP =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/

/**
 * An ISO 8601 timestamp with a time-zone designator (`Z` or `±hh:mm`), kept as the text sent.
 *
 * @category schemas
 */
export const IsoTimestamp = Schema.String.pipe(
  Schema.filter(
    (s) =>
      (ISO_TIMESTAMP.test(s) && !Number.isNaN(Date.parse(s))) ||
      "expected an ISO 8601 timestamp with an offset"
  ),
  Schema.annotations({
    identifier: "IsoTimestamp",
    arbitrary: () => (fc) =>
      fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2100-01-01T00:00:00Z"),
          noInvalidDate: true
        })
        .map((d) => d.toISOString())
  })
)
export type IsoTimestamp = typeof IsoTimestamp.Type

/**
 * An absolute URL of any scheme: what an intent stored before the return-URL rule may hold.
 *
 * @category schemas
 */
export const AbsoluteUrl = Schema.String.pipe(
  Schema.filter((s) => URL.canParse(s) || "expected an absolute URL"),
  Schema.annotations({
    identifier: "AbsoluteUrl",
    arbitrary: () => (fc) => fc.webUrl()
  })
)
export type AbsoluteUrl = typeof AbsoluteUrl.Type

/**
 * `callback_url` of C1 and C3: where the payer's browser returns after 3DS or a bank redirect, so
 * never a script or data URL, a control character or a URL without a host (`ReturnUrl.problem`).
 * `https://`, `http://` (sandbox callbacks on `localhost`) and an app's own scheme (`myapp://return`)
 * are accepted.
 *
 * @category schemas
 */
export const CallbackUrl = Schema.String.pipe(
  Schema.filter((s) => ReturnUrl.problem(s).pipe(Option.getOrUndefined)),
  Schema.annotations({
    identifier: "CallbackUrl",
    arbitrary: () => (fc) => fc.webUrl({ validSchemes: ["https", "http"] })
  })
)
export type CallbackUrl = typeof CallbackUrl.Type

/**
 * `amount` of an intent as C1 and C3 send it: `currency` and `total_amount` required; `tip_amount`
 * and `taxes` optional; every amount a `RequestAmount`. The total includes tip and taxes, so a tip
 * above the total, or a tip and tax values above it together, is refused.
 *
 * @category schemas
 */
export const IntentAmount = Schema.Struct({
  currency: Currency,
  total_amount: RequestAmount,
  tip_amount: opt(RequestAmount),
  taxes: opt(Schema.Array(RequestTaxLine))
}).pipe(
  Schema.filter((a) => {
    const total = toCents(a.total_amount)
    const tip = toCents(a.tip_amount ?? 0)
    if (tip > total) return { path: ["tip_amount"], message: "the tip exceeds total_amount" }
    const taxes = (a.taxes ?? []).reduce((sum, line) => sum + toCents(line.value), 0)
    return (
      tip + taxes <= total || { path: ["taxes"], message: "the tax values and the tip exceed total_amount" }
    )
  }),
  Schema.annotations({ identifier: "IntentAmount" })
)
export type IntentAmount = typeof IntentAmount.Type

/**
 * `amount` of an intent as C2, C3 and C5 answer it: the recorded amounts, without the request's bounds.
 *
 * @category schemas
 */
export const IntentAmountRead = Schema.Struct({
  currency: Currency,
  total_amount: Amount,
  tip_amount: opt(Amount),
  taxes: opt(Schema.Array(TaxLine))
})

/**
 * `metadata`: one key and its value, as the spec shows it.
 *
 * @category schemas
 */
export const Metadata = Schema.Struct({ key: SafeString, value: SafeString })
export type Metadata = typeof Metadata.Type

/**
 * A customer address (`billing_address`, `shipping_address`): every member optional.
 *
 * @category schemas
 */
export const CustomerAddress = Schema.Struct({
  street1: opt(SafeString),
  street2: opt(SafeString),
  city: opt(SafeString),
  postal_code: opt(SafeString),
  province: opt(SafeString),
  country_code: opt(SafeString),
  phone: opt(SafeString)
})
export type CustomerAddress = typeof CustomerAddress.Type

/**
 * `customer` of an intent: every member optional.
 *
 * @category schemas
 */
export const Customer = Schema.Struct({
  name: opt(SafeString),
  phone: opt(SafeString),
  email: opt(Email),
  billing_address: opt(CustomerAddress),
  shipping_address: opt(CustomerAddress)
})
export type Customer = typeof Customer.Type

/**
 * The device of the buyer, for fraud scoring and 3DS. One schema for both places it appears (the
 * intent create lists all the members, the attempt a subset); every member optional.
 *
 * @category schemas
 */
export const DeviceFingerprint = Schema.Struct({
  ip: opt(SafeString),
  device_type: opt(SafeString),
  os: opt(SafeString),
  browser: opt(SafeString),
  accept_header: opt(SafeString),
  user_agent: opt(SafeString),
  java_enabled: opt(Schema.Boolean),
  language: opt(SafeString),
  color_depth: opt(Schema.Int),
  screen_height: opt(Schema.Int),
  screen_width: opt(Schema.Int),
  time_zone_offset: opt(Schema.Int),
  latitude: opt(SafeString),
  longitude: opt(SafeString),
  model: opt(SafeString),
  platform: opt(SafeString)
})
export type DeviceFingerprint = typeof DeviceFingerprint.Type

const intentFields = {
  reference_id: IntentReference,
  amount: IntentAmount,
  description: opt(SafeString),
  callback_url: opt(CallbackUrl),
  metadata: opt(Metadata),
  customer: opt(Customer)
}

/**
 * C3 request (PUT, the full body). Required: `reference_id` and `amount` with `currency` and
 * `total_amount`. `callback_url` is required for PSE and bank-button payments, a rule of the use
 * case (the method is chosen at the attempt), so it is optional here.
 *
 * @category schemas
 */
export const IntentUpdateRequest = Schema.Struct(intentFields).annotations({
  identifier: "IntentUpdateRequest"
})
export type IntentUpdateRequest = typeof IntentUpdateRequest.Type

/**
 * C1 request: as the update, plus `device_fingerprint`.
 *
 * @category schemas
 */
export const IntentCreateRequest = Schema.Struct({
  ...intentFields,
  device_fingerprint: opt(DeviceFingerprint)
}).annotations({ identifier: "IntentCreateRequest" })
export type IntentCreateRequest = typeof IntentCreateRequest.Type

/**
 * The states of an intent, as the PaymentIntent aggregate has them: ACTIVE (seen in the spec),
 * PROCESSING while an attempt is under way, PAID once a payment is approved.
 *
 * @category schemas
 */
export const IntentStatus = Schema.Literal("ACTIVE", "PROCESSING", "PAID")
export type IntentStatus = typeof IntentStatus.Type

/**
 * C1, C2 and C3 response, not enveloped: the intent with `creation_date`, `status` and `test`, and
 * `service_transaction_id` once a transaction exists.
 *
 * @category schemas
 */
export const IntentResponse = Schema.Struct({
  ...intentFields,
  amount: IntentAmountRead,
  callback_url: opt(AbsoluteUrl),
  creation_date: IsoTimestamp,
  status: IntentStatus,
  test: Schema.Boolean,
  service_transaction_id: opt(Schema.String)
}).annotations({ identifier: "IntentResponse" })
export type IntentResponse = typeof IntentResponse.Type

/**
 * The payer's billing address in an attempt (its member names differ from the customer's).
 *
 * @category schemas
 */
export const PayerBillingAddress = Schema.Struct({
  street1: opt(SafeString),
  street2: opt(SafeString),
  city: opt(SafeString),
  zip_code: opt(SafeString),
  province: opt(SafeString),
  country: opt(SafeString),
  phone: opt(SafeString)
})
export type PayerBillingAddress = typeof PayerBillingAddress.Type

const payerFields = {
  person_type: opt(SafeString),
  name: opt(SafeString),
  phone: opt(SafeString),
  email: opt(Email),
  document_type: opt(SafeString),
  document_number: opt(SafeString)
}

/**
 * `payer` of an attempt: every member optional (sample `person_type`: NATURAL_PERSON).
 *
 * @category schemas
 */
export const AttemptPayer = Schema.Struct({ ...payerFields, billing_address: opt(PayerBillingAddress) })
export type AttemptPayer = typeof AttemptPayer.Type

/**
 * `payment_method` of an attempt: `name` required (sample CREDIT_CARD; other values not shown), the
 * card members optional but, when given, well formed: 12 to 19 digits, month `01`-`12`, year of 2 or
 * 4 digits, CVC of 3 or 4 digits, at least one installment.
 *
 * @category schemas
 */
export const AttemptPaymentMethod = Schema.Struct({
  name: NonEmptySafeString,
  card_number: opt(Schema.String.pipe(Schema.pattern(/^[0-9]{12,19}$/))),
  cardholder_name: opt(SafeString),
  expiration_month: opt(Schema.String.pipe(Schema.pattern(/^(0[1-9]|1[0-2])$/))),
  expiration_year: opt(Schema.String.pipe(Schema.pattern(/^([0-9]{2}|[0-9]{4})$/))),
  installments: opt(Schema.Int.pipe(Schema.positive())),
  cvc: opt(Schema.String.pipe(Schema.pattern(/^[0-9]{3,4}$/)))
})
export type AttemptPaymentMethod = typeof AttemptPaymentMethod.Type

/**
 * C4 request: `reference_id` of the intent and `payment_method` required; the rest optional.
 *
 * @category schemas
 */
export const AttemptRequest = Schema.Struct({
  reference_id: IntentReference,
  metadata: opt(Metadata),
  payer: opt(AttemptPayer),
  payment_method: AttemptPaymentMethod,
  device_fingerprint: opt(DeviceFingerprint)
}).annotations({ identifier: "AttemptRequest" })
export type AttemptRequest = typeof AttemptRequest.Type

/**
 * The redirect an attempt requires (3DS or another): where and with which method.
 *
 * @category schemas
 */
export const NextActions = Schema.Struct({
  redirect_url: Schema.String,
  redirect_method: Schema.Literal("POST", "GET")
})
export type NextActions = typeof NextActions.Type

/**
 * C4 response, not enveloped: status always RUNNING; `next_actions` only when a redirect is required.
 *
 * @category schemas
 */
export const AttemptResponse = Schema.Struct({
  transaction_id: Schema.String,
  next_actions: Schema.optional(NextActions),
  status: Schema.Literal("RUNNING")
}).annotations({ identifier: "AttemptResponse" })
export type AttemptResponse = typeof AttemptResponse.Type

/**
 * C4 response when 3DS is required, enveloped as its sample shows, with `status_detail` and
 * `uuid_token`; its status is lower-case `running`, as in that sample.
 *
 * @category schemas
 */
export const ThreeDsAttemptResponse = Envelope(
  Schema.Struct({
    transaction_id: Schema.String,
    next_actions: NextActions,
    status: Schema.Literal("running"),
    status_detail: Schema.String,
    uuid_token: Schema.String
  })
)
export type ThreeDsAttemptResponse = typeof ThreeDsAttemptResponse.Type

/**
 * The states a payment reads with (C5), as `Payment.status` gives them: RUNNING until decided (a
 * pending 3DS challenge included), then APPROVED or REJECTED; VOIDED after a void, REFUNDED after an
 * approved refund. PROCESSING, which the spec's text mentions, is accepted when reading.
 *
 * @category schemas
 */
export const PaymentStatus = Schema.Literal(
  "RUNNING",
  "PROCESSING",
  "APPROVED",
  "REJECTED",
  "VOIDED",
  "REFUNDED"
)
export type PaymentStatus = typeof PaymentStatus.Type

/**
 * C5 response, not enveloped.
 *
 * @category schemas
 */
export const PaymentResponse = Schema.Struct({
  transaction_id: Schema.String,
  reference_id: IntentReference,
  status: PaymentStatus,
  amount: IntentAmountRead,
  payment_method: Schema.String,
  payer: Schema.Struct(payerFields),
  attempt_date: IsoTimestamp
}).annotations({ identifier: "PaymentResponse" })
export type PaymentResponse = typeof PaymentResponse.Type

/**
 * A bank of the PSE list.
 *
 * @category schemas
 */
export const Bank = Schema.Struct({ bank_code: Schema.String, bank_name: Schema.String })
export type Bank = typeof Bank.Type

/**
 * C6 response: `payload.banks[]`.
 *
 * @category schemas
 */
export const BanksResponse = Envelope(Schema.Struct({ banks: Schema.Array(Bank) }))
export type BanksResponse = typeof BanksResponse.Type

/**
 * C7 request.
 *
 * @category schemas
 */
export const VoidRequest = Schema.Struct({ transaction_id: NonEmptySafeString })
export type VoidRequest = typeof VoidRequest.Type

/**
 * C8 request: `reference_id` and `transaction_id` required, `reason` optional.
 *
 * @category schemas
 */
export const RefundRequest = Schema.Struct({
  reference_id: IntentReference,
  transaction_id: NonEmptySafeString,
  reason: opt(SafeString)
})
export type RefundRequest = typeof RefundRequest.Type

/**
 * The states of a refund, which passes a review by the service.
 *
 * @category schemas
 */
export const RefundStatus = Schema.Literal("PROCESSING", "APPROVED", "REJECTED")
export type RefundStatus = typeof RefundStatus.Type

/**
 * C9 response: `payload.transaction_id`, `payload.status`, `payload.date_applied`. The refund is
 * applied when reviewed, so `date_applied` is `null` while the refund is PROCESSING.
 *
 * @category schemas
 */
export const RefundStatusResponse = Envelope(
  Schema.Struct({
    transaction_id: Schema.String,
    status: RefundStatus,
    date_applied: Schema.NullOr(IsoTimestamp)
  })
)
export type RefundStatusResponse = typeof RefundStatusResponse.Type

/**
 * The body of a C error response (the spec's "Error" schema, whose fields are not shown): the same
 * envelope as A and B, an empty `payload` and `{code, message, field?}` items.
 *
 * @category schemas
 */
export const OnlineError = ErrorEnvelope
export type OnlineError = typeof OnlineError.Type
