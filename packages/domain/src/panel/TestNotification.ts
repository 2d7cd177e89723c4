/**
 * The merchant panel's "send a test notification" (spec D, Registration: "One test webhook per
 * merchant is allowed. It receives all event types"): a sandbox SALE_APPROVED notification about a
 * made-up transaction, scheduled on a `WebhookDelivery` stream of its own like any sandbox
 * notification — same body schema, the sandbox's empty signing secret, the same dispatcher, retries
 * and attempt log. No payment is recorded: only the delivery exists.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CommandHandler from "../kernel/CommandHandler.js"
import type * as EventStore from "../kernel/EventStore.js"
import { IdGenerator, nextId } from "../kernel/IdGenerator.js"
import * as Merchant from "../merchants/Merchant.js"
import * as Bogota from "../shared/Bogota.js"
import { type MerchantId, NotificationId, TransactionId } from "../shared/Ids.js"
import * as Money from "../shared/Money.js"
import * as NotificationRules from "../webhooks/NotificationRules.js"
import * as WebhookDelivery from "../webhooks/WebhookDelivery.js"

/** The reference a test notification carries, so that a receiver can tell it from a sale's. */
export const TEST_REFERENCE = "cobro-test-notification"

/** The amount a test notification says was paid (COP). */
export const TEST_AMOUNT = 1000

/**
 * The merchant has no webhook a sandbox notification would go to (neither a test webhook nor the
 * production one it falls back to, W10).
 *
 * @category errors
 */
export class NoTestWebhook extends Schema.TaggedError<NoTestWebhook>()("NoTestWebhook", {
  merchantId: Schema.String
}) {}

/** What was scheduled: the notification, the made-up transaction it is about, and where it goes. */
export interface Sent {
  readonly notificationId: NotificationId
  readonly subject: TransactionId
  readonly url: string
}

/**
 * The notice of a test notification: an approved sandbox payment of {@link TEST_AMOUNT} pesos by
 * credit card, with the reference {@link TEST_REFERENCE}.
 */
export const notice = (
  merchantId: MerchantId,
  subject: TransactionId,
  at: DateTime.Utc
): NotificationRules.Notice => ({
  type: "SALE_APPROVED",
  subject,
  merchantId,
  sandbox: true,
  channel: "other",
  source: NotificationRules.SOURCES.online,
  at,
  data: {
    payment_id: subject,
    merchant_id: merchantId,
    created_at: Bogota.formatIso(at),
    amount: { currency: "COP", total: Money.amount(TEST_AMOUNT), taxes: [], tip: Money.amount(0) },
    user_id: "",
    metadata: { reference: TEST_REFERENCE },
    service_code: "",
    payer_email: "",
    integration: "API_INTEGRATIONS",
    payment_method: "CREDIT_CARD"
  },
  seller: Option.none()
})

const loadMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const handleDelivery = CommandHandler.make(WebhookDelivery.WebhookDelivery)

/**
 * Schedules a test notification to the webhook sandbox notifications go to now (the test webhook,
 * else the production one: `Merchant.webhookUrl(…, "test")`), due at once. `metadata` names who
 * asked (the panel's user).
 *
 * @category commands
 */
export const send = Effect.fn("TestNotification.send")(function* (
  merchantId: string,
  metadata: EventStore.EventMetadata = {}
) {
  const { state } = yield* loadMerchant(merchantId)
  if (state._tag === "Initial") return yield* new Merchant.MerchantNotFound()
  const url = Merchant.webhookUrl(state, "test")
  if (Option.isNone(url)) return yield* new NoTestWebhook({ merchantId })
  const now = yield* DateTime.now
  const notificationId = NotificationId.make(yield* Effect.flatMap(IdGenerator, (ids) => ids.uuid))
  const subject = TransactionId.make(yield* nextId("TRX_"))
  // The body is built from typed values: a refusal by its schema is a defect of this module.
  const body = yield* Effect.orDie(
    NotificationRules.body(notificationId, notice(state.merchantId, subject, now))
  )
  yield* handleDelivery(
    notificationId,
    new WebhookDelivery.ScheduleDelivery({
      notificationId,
      merchantId: state.merchantId,
      url: url.value,
      type: "SALE_APPROVED",
      subject,
      body,
      signingKey: "EMPTY",
      sandbox: true,
      now
    }),
    metadata,
    CommandHandler.fresh(WebhookDelivery.WebhookDelivery)
  ).pipe(
    // A fresh notification id on a fresh stream: a refusal or a conflict is a defect.
    Effect.orDie
  )
  return { notificationId, subject, url: url.value } satisfies Sent
})
