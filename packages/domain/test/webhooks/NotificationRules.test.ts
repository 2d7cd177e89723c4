import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DerivedId from "@cobro/domain/DerivedId"
import * as EventStore from "@cobro/domain/EventStore"
import * as ExactJson from "@cobro/domain/ExactJson"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as F from "@cobro/domain/testing/WebhookFixtures"

const Store = Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)
const PROD = "https://merchant.example/webhooks"
const TEST = "https://merchant.example/test-webhooks"

/** Schedules every event of the log; returns the scheduled deliveries' first events by notification id. */
const scheduleAll = Effect.gen(function* () {
  for (const event of yield* F.allEvents) yield* Notifications.schedule(event)
  return (yield* F.eventsOfType("DeliveryScheduled")).map((e) =>
    Schema.decodeUnknownSync(WebhookDelivery.DeliveryScheduled)(e.data)
  )
})

/**
 * A test on a fresh log (the in-memory store, sequential ids, the test clock at T0) whose merchant
 * MER_1 has `webhooks` registered: `body` writes the histories and checks what is scheduled.
 */
const onMerchant = <A, E>(
  webhooks: F.MerchantSetup,
  body: Effect.Effect<A, E, EventStore.EventStore | IdGenerator.IdGenerator>
) =>
  Effect.gen(function* () {
    yield* F.setTime(0)
    yield* F.merchant("MER_1", webhooks)
    return yield* body
  }).pipe(Effect.provide(Store))

/** MER_1's checkout 1 sent at T0 and approved `seconds` later: the delivery it schedules. */
const approvedAt = (seconds: number) =>
  Effect.gen(function* () {
    yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
    yield* F.setTime(seconds)
    yield* F.checkoutOutcome(1, "approve")
    const [scheduled] = yield* scheduleAll
    return scheduled!
  })

const parse = (body: string) => Either.getOrThrow(ExactJson.parse(body)) as any

/** Whether a body parsed is a notification of the spec's schema. */
const isNotification = (body: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(Notification.Notification)(body))

const nanosAt = (seconds: number) => BigInt(F.T0 + seconds * 1000) * 1_000_000n

describe("Notifications", () => {
  describe("terminal checkout outcomes", () => {
    it.effect(
      "SALE_APPROVED of a terminal card sale carries the spec's envelope and every card data field",
      () =>
        onMerchant(
          { production: PROD },
          Effect.gen(function* () {
            const scheduled = yield* approvedAt(60)
            const [source] = yield* F.eventsOfType("SaleApproved")
            const id = Notifications.notificationIdOf(source!.eventId)
            const expected = {
              id,
              type: "SALE_APPROVED",
              subject: "TRX_1",
              source: "/payments",
              spec_version: "1.0",
              time: nanosAt(60),
              datacontenttype: "application/json",
              seller: { name: "", last_name: "", email: "seller@shop.example" },
              data: {
                payment_id: "TRX_1",
                merchant_id: "MER_1",
                created_at: "2026-04-14T10:00:00.000-05:00",
                amount: {
                  currency: "COP",
                  total: 11900,
                  taxes: [{ type: "VAT", base: 10000, value: 1900 }],
                  tip: 0
                },
                user_id: "seller@shop.example",
                metadata: { reference: "order-1" },
                service_code: "SC-1",
                payer_email: "ana@example.com",
                integration: "API_INTEGRATIONS",
                payment_method: "CARD",
                card: {
                  capture_mode: "CONTACTLESS_CHIP",
                  brand: "VISA",
                  cardholder_name: "ANA PEREZ",
                  terminal_id: "TID-9",
                  masked_pan: "450799******1234",
                  installments: 1,
                  card_type: "CREDIT"
                },
                approval_number: "123456"
              }
            }
            expect(scheduled.body).toBe(ExactJson.stringify(expected))
            expect(scheduled.notificationId).toBe(id)
            expect(scheduled.type).toBe("SALE_APPROVED")
            expect(scheduled.subject).toBe("TRX_1")
            expect(scheduled.url).toBe(PROD)
            expect(scheduled.signingKey).toEqual({ integration: "terminal_api", mode: "production" })
            expect(isNotification(parse(scheduled.body))).toBe(true)
          })
        )
    )

    it.effect("time is the emission instant in nanoseconds, written as an exact integer above 2^53", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          const scheduled = yield* approvedAt(61.123)
          const time = nanosAt(61.123)
          expect(time > 2n ** 53n).toBe(true)
          expect(scheduled.body).toContain(`"time":${time.toString()},`)
          expect(Schema.decodeUnknownSync(Nanos.Nanos)(parse(scheduled.body).time)).toBe(time)
        })
      )
    )

    it.effect("SALE_REJECTED carries the card read, or no card and CARD when none was read (W14)", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
          yield* F.sentCheckout({ merchantId: "MER_1", n: 2 })
          yield* F.sentCheckout({ merchantId: "MER_1", n: 3, paymentMethod: "WALLET_A" })
          yield* F.checkoutOutcome(1, "rejectWithCard")
          yield* F.checkoutOutcome(2, "reject")
          yield* F.checkoutOutcome(3, "reject")
          const [withCard, withoutCard, wallet] = (yield* scheduleAll).map((s) => parse(s.body))
          expect(withCard.type).toBe("SALE_REJECTED")
          expect(withCard.data.payment_method).toBe("CARD")
          expect(withCard.data.card.masked_pan).toBe("450799******1234")
          expect(withCard.data.approval_number).toBe("")
          expect(withoutCard.type).toBe("SALE_REJECTED")
          expect(withoutCard.data.card).toBeUndefined()
          expect(withoutCard.data.payment_method).toBe("CARD")
          expect(wallet.data.payment_method).toBe("WALLET_A")
          for (const body of [withCard, withoutCard, wallet]) {
            expect(isNotification(body)).toBe(true)
          }
        })
      )
    )

    it.effect(
      "VOID_APPROVED and VOID_REJECTED carry the sale's data, each with its own notification id",
      () =>
        onMerchant(
          { production: PROD },
          Effect.gen(function* () {
            yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
            yield* F.setTime(60)
            yield* F.checkoutOutcome(1, "rejectVoid")
            yield* F.setTime(120)
            yield* F.checkoutOutcome(1, "void")
            const scheduled = yield* scheduleAll
            expect(scheduled.map((s) => s.type)).toEqual(["SALE_APPROVED", "VOID_REJECTED", "VOID_APPROVED"])
            const [sale, rejected, voided] = scheduled.map((s) => parse(s.body))
            expect(new Set(scheduled.map((s) => s.notificationId)).size).toBe(3)
            expect(rejected.data).toEqual(sale.data)
            expect(voided.data).toEqual(sale.data)
            expect(voided.subject).toBe("TRX_1")
            expect(Schema.decodeUnknownSync(Nanos.Nanos)(voided.time)).toBe(nanosAt(120))
          })
        )
    )

    it.effect("events that are not outcomes raise no notification", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
          expect(yield* scheduleAll).toEqual([])
          for (const event of yield* F.allEvents) expect(Notifications.mayRaise(event)).toBe(false)
        })
      )
    )
  })

  describe("links and online payments", () => {
    it.effect(
      "a paid link is SALE_APPROVED and a failed link payment SALE_REJECTED, with the link's reference",
      () =>
        onMerchant(
          { production: PROD, button: true },
          Effect.gen(function* () {
            yield* F.linkPayment({ merchantId: "MER_1", n: 1 }, "paid")
            yield* F.linkPayment({ merchantId: "MER_1", n: 2 }, "failed")
            const scheduled = yield* scheduleAll
            expect(scheduled.map((s) => [s.type, s.subject])).toEqual([
              ["SALE_APPROVED", "TRX_1"],
              ["SALE_REJECTED", "TRX_2"]
            ])
            const body = parse(scheduled[0]!.body)
            expect(body.source).toBe("/online/link/v1")
            expect(body.data).toMatchObject({
              payment_id: "TRX_1",
              metadata: { reference: "link-order-1" },
              service_code: "LNK_1",
              payer_email: "payer@example.com",
              payment_method: "PSE",
              amount: { currency: "COP", total: 50000, taxes: [], tip: 0 }
            })
            expect(body.seller).toBeUndefined()
            // Rule 3: a link payment is signed with the payment-button key when it is enabled.
            expect(scheduled[0]!.signingKey).toEqual({ integration: "payment_button", mode: "production" })
          })
        )
    )

    it.effect("rule 3: without the payment button a link payment is signed with the terminal-API key", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.linkPayment({ merchantId: "MER_1", n: 1 }, "paid")
          const [scheduled] = yield* scheduleAll
          expect(scheduled!.signingKey).toEqual({ integration: "terminal_api", mode: "production" })
        })
      )
    )

    it.effect(
      "an online payment's approval and void are SALE_APPROVED and VOID_APPROVED; its rejection SALE_REJECTED",
      () =>
        onMerchant(
          { production: PROD, button: true },
          Effect.gen(function* () {
            yield* F.onlinePayment({ merchantId: "MER_1", n: 1 }, ["approve", "void"])
            yield* F.onlinePayment({ merchantId: "MER_1", n: 2 }, ["reject"])
            const scheduled = yield* scheduleAll
            expect(scheduled.map((s) => [s.type, s.subject])).toEqual([
              ["SALE_APPROVED", "TRX_1"],
              ["VOID_APPROVED", "TRX_1"],
              ["SALE_REJECTED", "TRX_2"]
            ])
            const approved = parse(scheduled[0]!.body)
            expect(approved.source).toBe("/v1/payment")
            expect(approved.data).toMatchObject({
              payment_method: "CREDIT_CARD",
              approval_number: "777001",
              metadata: { reference: "intent-1" },
              payer_email: "ana@example.com"
            })
            expect(parse(scheduled[2]!.body).data.approval_number).toBeUndefined()
            for (const s of scheduled) {
              expect(isNotification(parse(s.body))).toBe(true)
            }
          })
        )
    )
  })

  describe("keys, URLs and isolation", () => {
    it.effect("a sandbox sale is signed with the empty secret and goes to the test webhook (W10)", () =>
      onMerchant(
        { production: PROD, test: TEST },
        Effect.gen(function* () {
          yield* F.approvedSale({ merchantId: "MER_1", n: 1, sandbox: true })
          yield* F.approvedSale({ merchantId: "MER_1", n: 2 })
          const [sandbox, production] = yield* scheduleAll
          expect([sandbox!.url, sandbox!.signingKey, sandbox!.sandbox]).toEqual([TEST, "EMPTY", true])
          expect([production!.url, production!.signingKey, production!.sandbox]).toEqual([
            PROD,
            { integration: "terminal_api", mode: "production" },
            false
          ])
        })
      )
    )

    it.effect("without a test webhook a sandbox sale goes to the webhook registered in the panel (W10)", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.approvedSale({ merchantId: "MER_1", n: 1, sandbox: true })
          const [sandbox] = yield* scheduleAll
          expect([sandbox!.url, sandbox!.signingKey]).toEqual([PROD, "EMPTY"])
        })
      )
    )

    it.effect("a production sale never goes to the test webhook", () =>
      onMerchant(
        { test: TEST },
        Effect.gen(function* () {
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          const [scheduled] = yield* scheduleAll
          // Recorded for A4 without a URL (W15), never sent.
          expect(scheduled!.url).toBeUndefined()
        })
      )
    )

    it.effect(
      "with no webhook registered the notification is recorded for A4 and born CANCELLED: nothing is sent (W15)",
      () =>
        onMerchant(
          {},
          Effect.gen(function* () {
            yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
            const [source] = yield* F.eventsOfType("SaleApproved")
            const id = Option.getOrThrow(yield* Notifications.schedule(source!))
            expect(id).toBe(Notifications.notificationIdOf(source!.eventId))
            const stream = yield* Effect.flatMap(EventStore.EventStore, (s) =>
              s.readStream(Notifications.deliveryStreamOf(id))
            )
            expect(stream.map((e) => e.type)).toEqual(["DeliveryScheduled", "DeliveryCancelled"])
            const scheduled = Schema.decodeUnknownSync(WebhookDelivery.DeliveryScheduled)(stream[0]!.data)
            expect(scheduled.url).toBeUndefined()
            expect(parse(scheduled.body).subject).toBe("TRX_1")
            // A replay records nothing more.
            yield* Notifications.schedule(source!)
            expect(yield* F.eventsOfType("DeliveryCancelled")).toHaveLength(1)
            // Registering a webhook later does not send it: it was CANCELLED when it arose.
            const state = (yield* CommandHandler.load(WebhookDelivery.WebhookDelivery)(id)).state
            expect(state._tag).toBe("CANCELLED")
            expect(WebhookDelivery.isDue(state, F.at(3600))).toBe(false)
          })
        )
    )

    it.effect("each merchant's notifications go to its own webhook", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.merchant("MER_2", { production: "https://other.example/hook", keyBase: 10 })
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          yield* F.approvedSale({ merchantId: "MER_2", n: 2 })
          const scheduled = yield* scheduleAll
          expect(scheduled.map((s) => [s.merchantId, s.url])).toEqual([
            ["MER_1", PROD],
            ["MER_2", "https://other.example/hook"]
          ])
        })
      )
    )

    it.effect("the URL is the webhook registered when the event was recorded", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          yield* F.setTime(10)
          yield* F.deleteWebhook("MER_1", "production")
          const [scheduled] = yield* scheduleAll
          expect(scheduled!.url).toBe(PROD)
        })
      )
    )
  })

  describe("idempotence", () => {
    it.effect("scheduling an event again (a replay after a crash) creates nothing twice", () =>
      onMerchant(
        { production: PROD },
        Effect.gen(function* () {
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          const [source] = yield* F.eventsOfType("SaleApproved")
          const first = yield* Notifications.schedule(source!)
          yield* F.setTime(3600)
          const second = yield* Notifications.schedule(source!)
          expect(second).toEqual(first)
          expect(first).toEqual(Option.some(Notifications.notificationIdOf(source!.eventId)))
          const stream = yield* Effect.flatMap(EventStore.EventStore, (s) =>
            s.readStream(Notifications.deliveryStreamOf(Option.getOrThrow(first)))
          )
          expect(stream.map((e) => e.type)).toEqual(["DeliveryScheduled"])
          expect(stream[0]!.eventId).toBe(Notifications.scheduledEventIdOf(source!.eventId))
          expect(stream[0]!.metadata.causationId).toBe(source!.eventId)
        })
      )
    )
  })
})

describe("DerivedId", () => {
  it.prop(
    "sha256 agrees with node:crypto",
    [FastCheck.string({ unit: "binary", maxLength: 300 })],
    ([text]) => {
      expect(Buffer.from(DerivedId.sha256(text)).toString("hex")).toBe(
        createHash("sha256").update(text, "utf8").digest("hex")
      )
    }
  )

  it("a derived id is a version-8 UUID, the same for the same name and different for another", () => {
    const a = DerivedId.uuid("ns", "00000000-0000-4000-8000-000000000001")
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(DerivedId.uuid("ns", "00000000-0000-4000-8000-000000000001")).toBe(a)
    expect(DerivedId.uuid("ns", "00000000-0000-4000-8000-000000000002")).not.toBe(a)
    expect(DerivedId.uuid("other", "00000000-0000-4000-8000-000000000001")).not.toBe(a)
  })
})
