/**
 * The `ListenFeed` port as the server composes it (`cobro listen`): the store's sandbox
 * notifications (`PgListenFeed`), each with the headers the webhook dispatcher computes for an
 * attempt (`Dispatcher.headersFor`), signed with the test-mode secret (the empty string, spec D,
 * Signature, step 4), and with the Standard Webhooks headers always, whatever the registered test
 * webhook asked for: a listener checks either signature.
 */
import * as ListenFeed from "@cobro/domain/ListenFeed"
import type * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as PgListenFeed from "@cobro/store-pg/PgListenFeed"
import * as Dispatcher from "@cobro/webhooks/Dispatcher"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

const encoder = new TextEncoder()

/** The headers of an attempt of a test-mode notification sent now. */
export const headers: PgListenFeed.Config["headers"] = (notification) =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    Dispatcher.headersFor(
      // `headersFor` reads the notification's id only (Standard Webhooks' `webhook-id`).
      { notificationId: notification.notificationId } as WebhookDelivery.Notification,
      encoder.encode(notification.body),
      ListenFeed.TEST_SIGNING_SECRET,
      now,
      true
    )
  )

/** The feed over the store's connections. */
export const layer = PgListenFeed.layer({ headers })
