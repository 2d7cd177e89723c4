/**
 * The listen feed port (`cobro listen`, spec D for what it carries): a merchant's sandbox
 * notifications in the order a later commit cannot land behind (the log's position under the xmin
 * rule, brief "Exactly once at the edge" 4), each ready to POST as a delivery attempt would send it:
 * the exact body and the headers the dispatcher computes. The store reads the durable notifications
 * (`DeliveryScheduled`); the server composes the signing. Nothing about the merchant is stored or
 * changed by reading it.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as EventStore from "../kernel/EventStore.js"
import type { MerchantId, NotificationId } from "../shared/Ids.js"
import type { NotificationType } from "./WebhookDelivery.js"

/**
 * The secret that signs every test-mode notification: the empty string (spec D, Signature, step 4;
 * `SigningKey.signingKeyFor` gives `EMPTY` to every sandbox transaction).
 *
 * @category constants
 */
export const TEST_SIGNING_SECRET = ""

/**
 * One notification as a delivery attempt would send it.
 *
 * @category models
 */
export interface Delivery {
  readonly notificationId: NotificationId
  readonly type: NotificationType
  /** The exact JSON text: the signatures cover its UTF-8 bytes. */
  readonly body: string
  /** The attempt's headers: content type, user agent, `x-service-signature`, Standard Webhooks'. */
  readonly headers: Readonly<Record<string, string>>
  /** Its place in the feed: a reader that resumes after it receives what follows, once. */
  readonly position: EventStore.Checkpoint
}

/**
 * What one read of the feed found, and where the next read starts (past every notification the
 * read could see, even those the type filter left out).
 *
 * @category models
 */
export interface Batch {
  readonly items: ReadonlyArray<Delivery>
  readonly cursor: EventStore.Checkpoint
}

/**
 * What to read: one merchant's sandbox notifications after `after`, of `types` when given, at most
 * `limit`.
 *
 * @category models
 */
export interface Query {
  readonly merchantId: MerchantId
  readonly after: EventStore.Checkpoint
  readonly types?: ReadonlyArray<NotificationType> | undefined
  readonly limit: number
}

/**
 * The listen feed port.
 *
 * @category services
 */
export class ListenFeed extends Context.Tag("@cobro/domain/ListenFeed")<
  ListenFeed,
  {
    /** The position of "now": every notification committed from here on sorts after it. */
    readonly now: Effect.Effect<EventStore.Checkpoint>
    /** The sandbox notifications of a merchant after a position, oldest first. */
    readonly since: (query: Query) => Effect.Effect<Batch>
  }
>() {}

/**
 * The position after `a` and `b`: the later of the two, in the log's order.
 *
 * @category getters
 */
export const later = (a: EventStore.Checkpoint, b: EventStore.Checkpoint): EventStore.Checkpoint =>
  a.transactionId > b.transactionId ||
  (a.transactionId === b.transactionId && a.globalPosition >= b.globalPosition)
    ? a
    : b
