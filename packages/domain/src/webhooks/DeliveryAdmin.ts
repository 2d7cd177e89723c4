/**
 * Administrator use cases of webhook deliveries (spec D; W4, W5): list a notification's attempts,
 * re-send it to the endpoint registered now. The admin HTTP endpoints and the CLI call these.
 */
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CommandHandler from "../kernel/CommandHandler.js"
import type * as EventStore from "../kernel/EventStore.js"
import { NotificationId } from "../shared/Ids.js"
import * as Merchant from "../merchants/Merchant.js"
import * as WebhookDelivery from "./WebhookDelivery.js"

/** One attempt as an administrator sees it. */
export interface AttemptView {
  readonly attempt: number
  readonly at: DateTime.Utc
  readonly delivered: boolean
  /** The HTTP status answered, absent when nothing came back (timeout, refused connection). */
  readonly statusCode: Option.Option<number>
  /** The bounded response snippet, or why the attempt failed. */
  readonly snippet: string
  readonly latencyMs: number
}

/** A delivery as an administrator sees it. */
export interface DeliveryView {
  readonly notificationId: NotificationId
  readonly merchantId: string
  readonly type: WebhookDelivery.NotificationType
  readonly subject: string
  readonly sandbox: boolean
  readonly status: WebhookDelivery.Status
  readonly url: string
  readonly nextDueAt: Option.Option<DateTime.Utc>
  readonly attempts: ReadonlyArray<AttemptView>
  /** The exact JSON text sent. */
  readonly body: string
}

/**
 * The merchant has no webhook registered for the notification's mode: nothing to re-send to.
 *
 * @category errors
 */
export class NoWebhookRegistered extends Schema.TaggedError<NoWebhookRegistered>()("NoWebhookRegistered", {
  notificationId: NotificationId
}) {}

const loadDelivery = CommandHandler.load(WebhookDelivery.WebhookDelivery)
// The merchant is read by nearly every request: only the events since the state last read are folded.
const loadMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const handleDelivery = CommandHandler.make(WebhookDelivery.WebhookDelivery)

const attemptView = (a: WebhookDelivery.AttemptSucceeded | WebhookDelivery.AttemptFailed): AttemptView =>
  a._tag === "AttemptSucceeded"
    ? {
        attempt: a.attempt,
        at: a.at,
        delivered: true,
        statusCode: Option.some(200),
        snippet: a.snippet,
        latencyMs: a.latencyMs
      }
    : {
        attempt: a.attempt,
        at: a.at,
        delivered: false,
        statusCode: a.outcome._tag === "Answered" ? Option.some(a.outcome.statusCode) : Option.none(),
        snippet: a.outcome._tag === "Answered" ? a.outcome.snippet : a.outcome.reason,
        latencyMs: a.latencyMs
      }

/** The view of a delivery's state. */
export const viewOf = (state: WebhookDelivery.Existing): DeliveryView => ({
  notificationId: state.notification.notificationId,
  merchantId: state.notification.merchantId,
  type: state.notification.type,
  subject: state.notification.subject,
  sandbox: state.notification.sandbox,
  status: state._tag,
  url: state.url,
  nextDueAt: state.dueAt,
  attempts: state.attempts.map(attemptView),
  body: state.notification.body
})

/**
 * A notification's delivery and every attempt made, in order.
 *
 * @category queries
 */
export const listAttempts = Effect.fn("DeliveryAdmin.listAttempts")(function* (
  notificationId: NotificationId
) {
  const { state } = yield* loadDelivery(notificationId)
  if (state._tag === "Initial") return yield* new WebhookDelivery.DeliveryNotFound()
  return viewOf(state)
})

/**
 * Re-sends a DELIVERED or EXHAUSTED notification (W4): the same id and body, due at once, to the
 * webhook the merchant has registered now (for sandbox, the test webhook or else the panel's).
 *
 * @category commands
 */
export const resend = Effect.fn("DeliveryAdmin.resend")(function* (
  notificationId: NotificationId,
  /** Who asks: the operator unless told (the merchant panel names its user). */
  metadata: EventStore.EventMetadata = { actor: "admin" }
) {
  const { state } = yield* loadDelivery(notificationId)
  if (state._tag === "Initial") return yield* new WebhookDelivery.DeliveryNotFound()
  const { state: merchant } = yield* loadMerchant(state.notification.merchantId)
  const url = Merchant.webhookUrl(merchant, state.notification.sandbox ? "test" : "production")
  if (Option.isNone(url)) return yield* new NoWebhookRegistered({ notificationId })
  const now = DateTime.unsafeMake(yield* Clock.currentTimeMillis)
  const handled = yield* handleDelivery(
    notificationId,
    new WebhookDelivery.ResendDelivery({ url: url.value, now }),
    metadata
  )
  return viewOf(handled.state as WebhookDelivery.Existing)
})
