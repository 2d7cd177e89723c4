/**
 * The read models: the spec's lookups that no stream id answers, as projections of the log, one
 * module each under `readModels/`, which holds how the read model is written and the queries that
 * read it:
 *
 * - `RefundsByTransaction`: refunds by transaction id (C9).
 * - `TerminalCheckouts`: terminal checkouts by merchant reference (A3).
 * - `TerminalPushes`: the terminal pushes under way, by their claim (the pusher, spec-decisions A-23).
 * - `LastNotification`: the last notification per payment (D, A4), read by `PgNotificationLog`.
 * - `LastNotificationByReference`: the same per external reference (A4), read by `PgNotificationLog`.
 * - `WebhookDeliveries`: webhook deliveries due by time, the dispatcher's queue (`PgDeliveryQueue`).
 * - `ApiKeys`: API keys by identity-key hash (Authentication), read by `PgMerchantDirectory`.
 * - `LinkExpiry`: the links that can expire, by their expiry instant (the link expiry sweeper).
 * - `PaymentsInFlight`: the payments under way, by their start (the payment timeout sweeper).
 * - The listings of the operator's API and the merchant panel (`PgListings`), newest first with a
 *   keyset index each: `Merchants`, and per merchant `Transactions` (terminal checkouts, link
 *   payments, online payments), `Links`, `Notifications` (with where each delivery stands),
 *   `MerchantRefunds` and `PanelUsers` (the merchant panel's users).
 *
 * All but `LinkExpiry` and `PaymentsInFlight` are written by the store in the transaction that
 * appends their events (`InlineReadModels`); a runner keeps those two current. Reads by id (a payment's C5, a link's
 * B3, an intent's C2, a refund's C9) load their streams and use no read model.
 */
import * as ApiKeys from "./readModels/ApiKeys.js"
import * as LastNotification from "./readModels/LastNotification.js"
import * as LastNotificationByReference from "./readModels/LastNotificationByReference.js"
import * as LinkExpiry from "./readModels/LinkExpiry.js"
import * as Links from "./readModels/Links.js"
import * as MerchantRefunds from "./readModels/MerchantRefunds.js"
import * as Merchants from "./readModels/Merchants.js"
import * as Notifications from "./readModels/Notifications.js"
import * as PanelUsers from "./readModels/PanelUsers.js"
import * as PaymentsInFlight from "./readModels/PaymentsInFlight.js"
import * as RefundsByTransaction from "./readModels/RefundsByTransaction.js"
import * as TerminalCheckouts from "./readModels/TerminalCheckouts.js"
import * as TerminalPushes from "./readModels/TerminalPushes.js"
import * as Transactions from "./readModels/Transactions.js"
import * as WebhookDeliveries from "./readModels/WebhookDeliveries.js"
import * as Projection from "./Projection.js"

// The names other packages know each read model by.
export { projection as apiKeys } from "./readModels/ApiKeys.js"
export { projection as lastNotification } from "./readModels/LastNotification.js"
export { projection as lastNotificationByReference } from "./readModels/LastNotificationByReference.js"
export { dueLinks, projection as linkExpiry } from "./readModels/LinkExpiry.js"
export {
  type DuePayment,
  duePayments,
  type InFlightKind,
  projection as paymentsInFlight
} from "./readModels/PaymentsInFlight.js"
export { projection as refundsByTransaction } from "./readModels/RefundsByTransaction.js"
export { projection as terminalCheckouts } from "./readModels/TerminalCheckouts.js"
export {
  type DuePush,
  duePushClaims,
  duePushes,
  pendingPushes,
  projection as terminalPushes
} from "./readModels/TerminalPushes.js"
export { projection as webhookDeliveries } from "./readModels/WebhookDeliveries.js"
export { projection as links } from "./readModels/Links.js"
export { projection as merchantRefunds } from "./readModels/MerchantRefunds.js"
export { projection as merchants } from "./readModels/Merchants.js"
export { projection as notifications } from "./readModels/Notifications.js"
export { projection as panelUsers } from "./readModels/PanelUsers.js"
export { projection as transactions } from "./readModels/Transactions.js"

/** Every read model, for `Projection.rebuildAll` in the composition root. */
export const all = [
  RefundsByTransaction.projection,
  TerminalCheckouts.projection,
  TerminalPushes.projection,
  LastNotification.projection,
  LastNotificationByReference.projection,
  WebhookDeliveries.projection,
  ApiKeys.projection,
  LinkExpiry.projection,
  PaymentsInFlight.projection,
  Merchants.projection,
  Transactions.projection,
  Links.projection,
  Notifications.projection,
  MerchantRefunds.projection,
  PanelUsers.projection
] as const

/**
 * The read models that follow the log behind a runner: the sweepers' (link expiry, payments in
 * flight), which no request reads right after a write, and which their workers poll anyway.
 */
export const asynchronous = all.filter((projection) => !Projection.isInline(projection))
