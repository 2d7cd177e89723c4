/**
 * The notification log port (spec D, fallback query A4): the last notification sent for a payment,
 * found by transaction id or by the merchant's external reference. The store implements it with
 * read models of the `WebhookDelivery` streams.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EventStore from "../kernel/EventStore.js"
import type { MerchantId } from "../shared/Ids.js"
import * as Nanos from "../shared/Nanos.js"
import * as WebhookDelivery from "./WebhookDelivery.js"

/** Whose notifications: one merchant, production or sandbox. */
export interface Owner {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
}

/**
 * The notification log port; bodies are the exact JSON text that was (or will be) sent.
 *
 * @category services
 */
export class NotificationLog extends Context.Tag("@cobro/domain/NotificationLog")<
  NotificationLog,
  {
    /** The last notification of one payment (transaction id). */
    readonly lastByPaymentId: (owner: Owner, paymentId: string) => Effect.Effect<Option.Option<string>>
    /** The last notification of each payment with this external reference, newest first. */
    readonly lastByExternalReference: (
      owner: Owner,
      reference: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

const deliveryPrefix = `${WebhookDelivery.WebhookDelivery.name}-`
const decodeDeliveryEvent = Schema.decodeUnknownOption(WebhookDelivery.Event)

/** `data.metadata.reference` of a notification body, if it has one. */
export const referenceOf = (body: string): string | undefined => {
  const parsed = Nanos.parseJsonExact(body)
  if (Either.isLeft(parsed)) return undefined
  const value = parsed.right as { data?: { metadata?: { reference?: unknown } } } | null
  const reference = value?.data?.metadata?.reference
  return typeof reference === "string" ? reference : undefined
}

/**
 * The notification log by scanning the log's `DeliveryScheduled` events on every query: for tests
 * and the in-memory server. Per payment (subject), the last notification scheduled wins.
 *
 * @category layers
 */
export const layerFromLog: Layer.Layer<NotificationLog, never, EventStore.EventStore> = Layer.effect(
  NotificationLog,
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    /** Per subject of the owner, its last scheduled body, in the order of their last scheduling. */
    const lastPerSubject = (owner: Owner) =>
      Effect.gen(function* () {
        const last = new Map<string, string>()
        let after = EventStore.Start
        while (true) {
          const page = yield* store.readAll({ after, limit: 1000 })
          if (page.length === 0) break
          for (const event of page) {
            if (event.type !== "DeliveryScheduled" || !event.streamId.startsWith(deliveryPrefix)) continue
            const decoded = decodeDeliveryEvent(event.data)
            if (Option.isNone(decoded) || decoded.value._tag !== "DeliveryScheduled") continue
            const scheduled = decoded.value
            if (scheduled.merchantId !== owner.merchantId || scheduled.sandbox !== owner.sandbox) continue
            last.delete(scheduled.subject)
            last.set(scheduled.subject, scheduled.body)
          }
          after = page[page.length - 1]!.checkpoint
        }
        return last
      })
    return {
      lastByPaymentId: (owner, paymentId) =>
        Effect.map(lastPerSubject(owner), (last) => Option.fromNullable(last.get(paymentId))),
      lastByExternalReference: (owner, reference, limit) =>
        Effect.map(lastPerSubject(owner), (last) =>
          [...last.values()]
            .filter((body) => referenceOf(body) === reference)
            .reverse()
            .slice(0, limit)
        )
    }
  })
)
