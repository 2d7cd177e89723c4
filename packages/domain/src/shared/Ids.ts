/**
 * Identifiers, each a branded schema declared once. Cobro mints the prefixed ones; merchants choose
 * references (`reference`, `reference_id`), so those are plain non-empty strings.
 */
import * as Schema from "effect/Schema"
import * as SafeText from "./SafeText.js"

const prefixed = <const Brand extends string>(prefix: string, brand: Brand) =>
  Schema.String.pipe(Schema.pattern(new RegExp(`^${prefix}[A-Za-z0-9]{1,64}$`)), Schema.brand(brand))

/**
 * A merchant account: `MER_…`.
 *
 * @category schemas
 */
export const MerchantId = prefixed("MER_", "MerchantId")
export type MerchantId = typeof MerchantId.Type

/**
 * A payment link (B): `LNK_…`, as the spec gives the prefix.
 *
 * @category schemas
 */
export const PaymentLinkId = prefixed("LNK_", "PaymentLinkId")
export type PaymentLinkId = typeof PaymentLinkId.Type

/**
 * A terminal checkout (A3): the `integration_id`, `INT_…`.
 *
 * @category schemas
 */
export const IntegrationId = prefixed("INT_", "IntegrationId")
export type IntegrationId = typeof IntegrationId.Type

/**
 * A transaction (a payment) made by Cobro: `TRX_…`. It is the `payment_id` of notifications.
 *
 * @category schemas
 */
export const TransactionId = prefixed("TRX_", "TransactionId")
export type TransactionId = typeof TransactionId.Type

/**
 * A refund: `RFD_…`. Refunds are read by the transaction id they refund (C9).
 *
 * @category schemas
 */
export const RefundId = prefixed("RFD_", "RefundId")
export type RefundId = typeof RefundId.Type

/**
 * A webhook notification: a UUID, unique per notification sent (D).
 *
 * @category schemas
 */
export const NotificationId = Schema.UUID.pipe(Schema.brand("NotificationId"))
export type NotificationId = typeof NotificationId.Type

/**
 * An event in the log: a UUID.
 *
 * @category schemas
 */
export const EventId = Schema.UUID.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/**
 * A terminal's serial number, as the merchant binds it.
 *
 * @category schemas
 */
export const TerminalSerial = SafeText.refine(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(64))).pipe(
  Schema.brand("TerminalSerial")
)
export type TerminalSerial = typeof TerminalSerial.Type

/**
 * The merchant's `reference_id` of a payment intent (C): unique per merchant and mode; 1 to 255
 * characters, no NUL or unpaired surrogate (`SafeText`).
 *
 * @category schemas
 */
export const IntentReference = SafeText.refine(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(255))).pipe(
  Schema.brand("IntentReference")
)
export type IntentReference = typeof IntentReference.Type
