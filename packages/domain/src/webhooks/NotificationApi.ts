/**
 * Wire schemas of webhook notifications (spec D, "Envelope fields" and "`data` fields for card
 * payments") and of the items the fallback query (A4) returns.
 */
import * as Schema from "effect/Schema"
import * as Cards from "../shared/Cards.js"
import { MerchantId, NotificationId, TransactionId } from "../shared/Ids.js"
import { Amount, CurrencyCode, TaxLine } from "../shared/Money.js"
import { Nanos } from "../shared/Nanos.js"
import * as WebhookDelivery from "./WebhookDelivery.js"

// The card and currency values were defined here first; wire users still find them here.
export * from "../shared/Cards.js"
export { CurrencyCode } from "../shared/Money.js"

/**
 * The four notification types: the state of the transaction when the notification was emitted
 * (the same literal as the deliveries record, `WebhookDelivery.NotificationType`).
 *
 * @category schemas
 */
export const NotificationType = WebhookDelivery.NotificationType
export type NotificationType = WebhookDelivery.NotificationType

const BOGOTA_TIMESTAMP =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?-05:00$/
const BOGOTA_OFFSET_MILLIS = 5 * 60 * 60 * 1000

/**
 * An ISO 8601 timestamp with Bogotá's offset, e.g. `2025-04-14T10:31:02.123-05:00` (`created_at`).
 *
 * @category schemas
 */
export const BogotaTimestamp = Schema.String.pipe(
  Schema.filter(
    (s) =>
      (BOGOTA_TIMESTAMP.test(s) && !Number.isNaN(Date.parse(s))) ||
      "expected an ISO 8601 timestamp with the -05:00 offset"
  ),
  Schema.annotations({
    identifier: "BogotaTimestamp",
    arbitrary: () => (fc) =>
      fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2100-01-01T00:00:00Z"),
          noInvalidDate: true
        })
        .map((d) => new Date(d.getTime() - BOGOTA_OFFSET_MILLIS).toISOString().replace("Z", "-05:00"))
  })
)
export type BogotaTimestamp = typeof BogotaTimestamp.Type

/**
 * The `data.card` object of a card notification.
 *
 * @category schemas
 */
export const CardDetails = Schema.Struct({
  capture_mode: Cards.CaptureMode,
  brand: Cards.CardBrand,
  cardholder_name: Schema.String,
  terminal_id: Schema.String,
  masked_pan: Cards.MaskedPan,
  installments: Schema.Int.pipe(Schema.positive()),
  card_type: Cards.CardType
}).annotations({ identifier: "CardDetails" })
export type CardDetails = typeof CardDetails.Type

/**
 * The `card` object of an A4 item: the webhook's card fields plus `franchise`, the same value as
 * `brand`, so that clients written against either sample (webhook `brand`, fallback `franchise`)
 * work. Decodes to {@link CardDetails}; `brand` is authoritative.
 *
 * @category schemas
 */
export const FallbackCardDetails = Schema.transform(
  Schema.Struct({ ...CardDetails.fields, franchise: Cards.CardBrand }),
  Schema.typeSchema(CardDetails),
  {
    strict: true,
    decode: ({ franchise: _franchise, ...card }) => card,
    encode: (card) => ({ ...card, franchise: card.brand })
  }
).annotations({ identifier: "FallbackCardDetails" })

/**
 * `data.amount`: ISO 4217 currency, total including tip and taxes, tax lines and tip.
 *
 * @category schemas
 */
export const NotificationAmount = Schema.Struct({
  currency: CurrencyCode,
  total: Amount,
  taxes: Schema.Array(TaxLine),
  tip: Amount
})
export type NotificationAmount = typeof NotificationAmount.Type

/**
 * Where the sale came from: dedicated terminal, mobile terminal, or the terminal API (A3).
 *
 * @category schemas
 */
export const Integration = Schema.Literal("POS", "SERVICE_TAP", "API_INTEGRATIONS")
export type Integration = typeof Integration.Type

const commonDataFields = {
  payment_id: TransactionId,
  merchant_id: MerchantId,
  created_at: BogotaTimestamp,
  amount: NotificationAmount,
  user_id: Schema.String,
  metadata: Schema.Struct({ reference: Schema.String }),
  service_code: Schema.String,
  payer_email: Schema.String,
  integration: Integration
}

const cardData = <C extends Schema.Schema.Any>(card: C) =>
  Schema.Struct({
    ...commonDataFields,
    payment_method: Cards.CardPaymentMethod,
    card,
    approval_number: Schema.String
  })

/**
 * `data` of a card payment, with every field the spec lists.
 *
 * @category schemas
 */
export const CardPaymentData = cardData(CardDetails).annotations({ identifier: "CardPaymentData" })
export type CardPaymentData = typeof CardPaymentData.Type

/**
 * `data` of a payment by another method: the common fields, no `card`, `approval_number` if any.
 *
 * @category schemas
 */
export const OtherPaymentData = Schema.Struct({
  ...commonDataFields,
  payment_method: Cards.OtherPaymentMethod,
  approval_number: Schema.optional(Schema.String)
}).annotations({ identifier: "OtherPaymentData" })
export type OtherPaymentData = typeof OtherPaymentData.Type

/**
 * `data` of a notification.
 *
 * @category schemas
 */
export const PaymentData = Schema.Union(CardPaymentData, OtherPaymentData)
export type PaymentData = typeof PaymentData.Type

/**
 * The seller who made the sale.
 *
 * @category schemas
 */
export const Seller = Schema.Struct({ name: Schema.String, last_name: Schema.String, email: Schema.String })
export type Seller = typeof Seller.Type

const envelopeFields = {
  id: NotificationId,
  type: NotificationType,
  subject: Schema.String,
  source: Schema.String,
  spec_version: Schema.String,
  time: Nanos,
  datacontenttype: Schema.String,
  seller: Schema.optional(Seller)
}

/**
 * A webhook notification (CloudEvents style). `time` is nanoseconds as a `bigint`: write the body
 * with `ExactJson.stringify` so it stays exact, and sign those exact bytes.
 *
 * @category schemas
 */
export const Notification = Schema.Struct({ ...envelopeFields, data: PaymentData }).annotations({
  identifier: "Notification"
})
export type Notification = typeof Notification.Type

/**
 * `data` of an A4 item: as {@link PaymentData}, with the card also carrying `franchise`.
 *
 * @category schemas
 */
export const FallbackPaymentData = Schema.Union(
  cardData(FallbackCardDetails).annotations({ identifier: "FallbackCardPaymentData" }),
  OtherPaymentData
)

/**
 * An item of the A4 response: the notification of the last valid state of one payment.
 *
 * @category schemas
 */
export const FallbackNotification = Schema.Struct({
  ...envelopeFields,
  data: FallbackPaymentData
}).annotations({
  identifier: "FallbackNotification"
})
export type FallbackNotification = typeof FallbackNotification.Type
