/**
 * What the notifier's suites write to a log besides the domain's fixtures (`WebhookFixtures`): a
 * merchant changed at the clock's now, and a delivery scheduled already by another notifier.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifications from "@cobro/domain/Notifications"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as F from "@cobro/domain/testing/WebhookFixtures"

const merchants = CommandHandler.make(Merchant.Merchant)

/** Runs on merchant `merchantId` the command `change` makes of the clock's now. */
export const changeMerchant = (merchantId: string, change: (now: DateTime.Utc) => Merchant.Command) =>
  Effect.flatMap(DateTime.now, (now) => merchants(merchantId, change(now)))

/** The payment button activated with the test key numbers `production` and `test` (`F.pair`). */
export const buttonActivation = (now: DateTime.Utc, production: number, test: number) =>
  new Merchant.ActivateIntegration({
    integration: "payment_button",
    production: F.pair(production),
    test: F.pair(test),
    now
  })

/**
 * Appends the delivery `source` leads to as another notifier would have: the same stream and
 * content, its first event under an id of its own (`eventId`).
 */
export const scheduledByAnother = (source: EventStore.RecordedEvent, eventId: string) =>
  Effect.gen(function* () {
    const command = Option.getOrThrow(Option.flatMap(yield* Notifications.planFor(source), Either.getRight))
    const append = Notifications.scheduleAppend(source, command)
    const store = yield* EventStore.EventStore
    yield* store.append(
      append.streamId,
      append.events.map((e) => ({ ...e, eventId })),
      append.expected
    )
    return command.notificationId
  })
