/**
 * Terminal notifications in the log, as the webhooks notifier schedules them (the notifier does not
 * run in the HTTP test app): what A4 reads back.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as Nanos from "@cobro/domain/Nanos"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The body of an approved card sale's notification as the notifier stores it (card `brand`, `time`
 * beyond 2^53), for the payment `paymentId` with the external reference `order-42`.
 */
export const body = (merchantId: string, paymentId: string) =>
  Nanos.stringifyWithBigInt({
    id: "2b6f0cc9-4c8e-4d6f-8f5e-2a1b3c4d5e6f",
    type: "SALE_APPROVED",
    subject: paymentId,
    source: "/payments",
    spec_version: "1.0",
    time: 1744644662123456789n,
    datacontenttype: "application/json",
    data: {
      payment_id: paymentId,
      merchant_id: merchantId,
      created_at: "2026-11-21T10:00:00.000-05:00",
      amount: { currency: "COP", total: 11900, taxes: [{ base: 10000, type: "VAT", value: 1900 }], tip: 0 },
      user_id: "seller@shop.co",
      metadata: { reference: "order-42" },
      service_code: "SN-0001-00000001",
      payer_email: "payer@mail.co",
      payment_method: "CARD",
      card: {
        capture_mode: "CHIP",
        brand: "MASTERCARD",
        cardholder_name: "ANA PEREZ",
        terminal_id: "SN-0001",
        masked_pan: "552233******1234",
        installments: 1,
        card_type: "CREDIT"
      },
      approval_number: "123456",
      integration: "API_INTEGRATIONS"
    }
  })

const encode = Schema.encodeSync(WebhookDelivery.Event)

/** Seeds the delivery of the notification of the merchant's payment `subject` (sandbox or production). */
export const seed = (merchantId: string, sandbox: boolean, subject: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const ids = yield* IdGenerator.IdGenerator
    const event = new WebhookDelivery.DeliveryScheduled({
      notificationId: NotificationId.make(yield* ids.uuid),
      merchantId: MerchantId.make(merchantId),
      url: "https://shop.example/webhook",
      type: "SALE_APPROVED",
      subject: TransactionId.make(subject),
      body: body(merchantId, subject),
      signingKey: "EMPTY",
      sandbox,
      dueAt: DateTime.unsafeMake(0),
      createdAt: DateTime.unsafeMake(0)
    })
    yield* store.append(
      `WebhookDelivery-${subject}-${sandbox}`,
      [{ eventId: yield* ids.uuid, type: event._tag, schemaVersion: 1, data: encode(event), metadata: {} }],
      EventStore.ExpectedVersion.Any()
    )
  }).pipe(Effect.orDie)

/** Seeds one notification per payment `<prefix>0` … `<prefix><count - 1>`. */
export const seedMany = (merchantId: string, sandbox: boolean, count: number, prefix = "TRX_n") =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => `${prefix}${i}`),
    (subject) => seed(merchantId, sandbox, subject)
  )

const deliveries = CommandHandler.make(WebhookDelivery.WebhookDelivery)

/**
 * A sandbox notification `id` of the merchant about `subject`, scheduled, then attempted once and
 * answered `statusCode`: one the panel lists and can re-send.
 */
export const notified = (
  merchantId: string,
  subject: string,
  id: string,
  statusCode: number,
  snippet = "ok"
) =>
  Effect.gen(function* () {
    const notificationId = NotificationId.make(id)
    yield* deliveries(
      notificationId,
      new WebhookDelivery.ScheduleDelivery({
        notificationId,
        merchantId: MerchantId.make(merchantId),
        url: "https://merchant.example/hooks",
        type: "SALE_APPROVED",
        subject: TransactionId.make(subject),
        body: `{"id":"${id}"}`,
        signingKey: "EMPTY",
        sandbox: true,
        now: DateTime.unsafeMake("2026-11-21T15:00:00Z")
      })
    )
    yield* deliveries(
      notificationId,
      new WebhookDelivery.RecordAttempt({
        attempt: 1,
        result: { _tag: "Answered", statusCode, snippet },
        latencyMs: 87,
        now: DateTime.unsafeMake("2026-11-21T15:00:01Z")
      })
    )
    return notificationId
  })
