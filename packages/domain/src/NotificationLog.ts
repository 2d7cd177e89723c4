/**
 * The notification log port (spec D, fallback query A4): the last notification sent for a payment,
 * found by transaction id or by the merchant's external reference. The store implements it with
 * read models of the `WebhookDelivery` streams.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { MerchantId } from "./Ids.js"

/** Whose notifications: one merchant, production or sandbox. */
export interface Owner {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
}

/** The notification log port; bodies are the exact JSON text that was (or will be) sent. */
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
