import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DerivedId from "@cobro/domain/DerivedId"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
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

const parse = (body: string) => Either.getOrThrow(Nanos.parseJsonExact(body)) as any

const nanosAt = (seconds: number) => BigInt(F.T0 + seconds * 1000) * 1_000_000n

describe("Notifications", () => {
  describe("terminal checkout outcomes", () => {
    it.effect(
      "SALE_APPROVED of a terminal card sale carries the spec's envelope and every card data field",
      () =>
        Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1", { production: PROD })
          yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
          yield* F.setTime(60)
          yield* F.checkoutOutcome(1, "approve")
          const [scheduled] = yield* scheduleAll
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
          expect(scheduled!.body).toBe(Nanos.stringifyWithBigInt(expected))
          expect(scheduled!.notificationId).toBe(id)
          expect(scheduled!.type).toBe("SALE_APPROVED")
          expect(scheduled!.subject).toBe("TRX_1")
          expect(scheduled!.url).toBe(PROD)
          expect(scheduled!.signingKey).toEqual({ integration: "terminal_api", mode: "production" })
          expect(Schema.decodeUnknownEither(Notification.Notification)(parse(scheduled!.body))._tag).toBe(
            "Right"
          )
        }).pipe(Effect.provide(Store))
    )

    it.effect("time is the emission instant in nanoseconds, written as an exact integer above 2^53", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
        yield* F.setTime(61.123)
        yield* F.checkoutOutcome(1, "approve")
        const [scheduled] = yield* scheduleAll
        const time = nanosAt(61.123)
        expect(time > 2n ** 53n).toBe(true)
        expect(scheduled!.body).toContain(`"time":${time.toString()},`)
        expect(Schema.decodeUnknownSync(Nanos.Nanos)(parse(scheduled!.body).time)).toBe(time)
      }).pipe(Effect.provide(Store))
    )

    it.effect("SALE_REJECTED carries the card read, or no card and CARD when none was read (W14)", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
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
          expect(Schema.decodeUnknownEither(Notification.Notification)(body)._tag).toBe("Right")
        }
      }).pipe(Effect.provide(Store))
    )

    it.effect(
      "VOID_APPROVED and VOID_REJECTED carry the sale's data, each with its own notification id",
      () =>
        Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1", { production: PROD })
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
        }).pipe(Effect.provide(Store))
    )

    it.effect("events that are not outcomes raise no notification", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.sentCheckout({ merchantId: "MER_1", n: 1 })
        expect(yield* scheduleAll).toEqual([])
        for (const event of yield* F.allEvents) expect(Notifications.mayRaise(event)).toBe(false)
      }).pipe(Effect.provide(Store))
    )
  })

  describe("links and online payments", () => {
    it.effect(
      "a paid link is SALE_APPROVED and a failed link payment SALE_REJECTED, with the link's reference",
      () =>
        Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1", { production: PROD, button: true })
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
        }).pipe(Effect.provide(Store))
    )

    it.effect("rule 3: without the payment button a link payment is signed with the terminal-API key", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.linkPayment({ merchantId: "MER_1", n: 1 }, "paid")
        const [scheduled] = yield* scheduleAll
        expect(scheduled!.signingKey).toEqual({ integration: "terminal_api", mode: "production" })
      }).pipe(Effect.provide(Store))
    )

    it.effect(
      "an online payment's approval and void are SALE_APPROVED and VOID_APPROVED; its rejection SALE_REJECTED",
      () =>
        Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1", { production: PROD, button: true })
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
            expect(Schema.decodeUnknownEither(Notification.Notification)(parse(s.body))._tag).toBe("Right")
          }
        }).pipe(Effect.provide(Store))
    )
  })

  describe("keys, URLs and isolation", () => {
    it.effect("a sandbox sale is signed with the empty secret and goes to the test webhook (W10)", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD, test: TEST })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1, sandbox: true })
        yield* F.approvedSale({ merchantId: "MER_1", n: 2 })
        const [sandbox, production] = yield* scheduleAll
        expect([sandbox!.url, sandbox!.signingKey, sandbox!.sandbox]).toEqual([TEST, "EMPTY", true])
        expect([production!.url, production!.signingKey, production!.sandbox]).toEqual([
          PROD,
          { integration: "terminal_api", mode: "production" },
          false
        ])
      }).pipe(Effect.provide(Store))
    )

    it.effect("without a test webhook a sandbox sale goes to the webhook registered in the panel (W10)", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1, sandbox: true })
        const [sandbox] = yield* scheduleAll
        expect([sandbox!.url, sandbox!.signingKey]).toEqual([PROD, "EMPTY"])
      }).pipe(Effect.provide(Store))
    )

    it.effect("a production sale never goes to the test webhook", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { test: TEST })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        const [scheduled] = yield* scheduleAll
        // Recorded for A4 without a URL (W15), never sent.
        expect(scheduled!.url).toBeUndefined()
      }).pipe(Effect.provide(Store))
    )

    it.effect(
      "with no webhook registered the notification is recorded for A4 and born CANCELLED: nothing is sent (W15)",
      () =>
        Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1")
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
        }).pipe(Effect.provide(Store))
    )

    it.effect("each merchant's notifications go to its own webhook", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.merchant("MER_2", { production: "https://other.example/hook", keyBase: 10 })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* F.approvedSale({ merchantId: "MER_2", n: 2 })
        const scheduled = yield* scheduleAll
        expect(scheduled.map((s) => [s.merchantId, s.url])).toEqual([
          ["MER_1", PROD],
          ["MER_2", "https://other.example/hook"]
        ])
      }).pipe(Effect.provide(Store))
    )

    it.effect("the URL is the webhook registered when the event was recorded", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* F.setTime(10)
        yield* F.deleteWebhook("MER_1", "production")
        const [scheduled] = yield* scheduleAll
        expect(scheduled!.url).toBe(PROD)
      }).pipe(Effect.provide(Store))
    )
  })

  describe("idempotence", () => {
    it.effect("scheduling an event again (a replay after a crash) creates nothing twice", () =>
      Effect.gen(function* () {
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: PROD })
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
      }).pipe(Effect.provide(Store))
    )
  })
})

describe("replays kept in memory", () => {
  /** A log of sales, links and online payments of two merchants whose webhooks and keys change between them. */
  const log = (steps: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      const merchants = CommandHandler.make(Merchant.Merchant)
      yield* F.setTime(0)
      yield* F.merchant("MER_1", { production: PROD, test: TEST })
      yield* F.merchant("MER_2", { keyBase: 10 })
      for (const [i, kind] of steps.entries()) {
        const n = i + 1
        const merchantId = `MER_${(n % 2) + 1}`
        const now = yield* DateTime.now
        switch (kind) {
          case 0:
            yield* F.approvedSale({ merchantId, n, sandbox: n % 3 === 0 })
            break
          case 1:
            yield* F.approvedSale({ merchantId, n })
            yield* F.checkoutOutcome(n, "void")
            break
          case 2:
            yield* F.linkPayment({ merchantId, n }, n % 2 === 0 ? "paid" : "failed")
            break
          case 3:
            yield* F.onlinePayment({ merchantId, n }, ["approve", "void"])
            break
          case 4:
            yield* merchants(
              merchantId,
              new Merchant.SetWebhook({ mode: "production", url: `${PROD}/${n}`, now })
            )
            break
          case 5:
            yield* F.deleteWebhook(merchantId, n % 2 === 0 ? "production" : "test").pipe(Effect.ignore)
            break
          case 6:
            yield* merchants(
              merchantId,
              new Merchant.ActivateIntegration({
                integration: "payment_button",
                production: F.pair(100 + n),
                test: F.pair(200 + n),
                now
              })
            ).pipe(Effect.ignore)
            break
          default:
            yield* F.setTime(n * 3)
        }
      }
      return yield* F.allEvents
    }).pipe(Effect.provide(Store))

  /** A plan as bytes: the append it leads to, or why it schedules nothing. */
  const bytes = (
    event: EventStore.RecordedEvent,
    plan: Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Notifications.Unscheduled>>
  ) =>
    JSON.stringify(
      Option.map(
        plan,
        Either.map((command) => Notifications.scheduleAppend(event, command))
      )
    )

  it.effect.prop(
    "a replay kept as the log is followed plans what planFromHistory plans from the same records, in recordedAt order or not",
    [
      FastCheck.array(FastCheck.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 30 }),
      FastCheck.array(FastCheck.integer({ min: -20_000, max: 20_000 }), { minLength: 1, maxLength: 40 }),
      FastCheck.boolean()
    ],
    ([steps, shifts, merchantsToo]) =>
      Effect.gen(function* () {
        // Every other record moved in time (a clock that jumps back, commits out of order): the
        // merchants' too (out of `recordedAt` order), or only the others' (a merchant asked as of an
        // instant before some of its records, after a later one).
        const moved = (e: EventStore.RecordedEvent, i: number) =>
          i % 2 === 1 && (merchantsToo || !e.streamId.startsWith(Notifications.merchantStreamOf("")))
        const records = (yield* log(steps)).map((e, i) =>
          moved(e, i)
            ? { ...e, recordedAt: new Date(e.recordedAt.getTime() + shifts[i % shifts.length]!) }
            : e
        )
        const histories = new Map<string, Array<EventStore.RecordedEvent>>()
        const replays = new Map<string, Notifications.Replay>()
        let planned = 0
        for (const event of records) {
          const history = [...(histories.get(event.streamId) ?? []), event]
          histories.set(event.streamId, history)
          const replay = replays.get(event.streamId)
          if (replay === undefined)
            replays.set(event.streamId, Notifications.replayOf(event.streamId, [event]))
          else replay.records.push(event)
          if (!Notifications.mayRaise(event)) continue
          const notice = Notifications.noticeFromReplay(
            event,
            replays.get(event.streamId)!,
            event.streamVersion
          )
          expect(notice).toEqual(Notifications.noticeFromHistory(event, history))
          if (Option.isNone(notice)) continue
          const merchantStream = Notifications.merchantStreamOf(notice.value.merchantId)
          const cached = Option.some(
            Notifications.deliveryOf(
              event.eventId,
              notice.value,
              Notifications.merchantAsOf(replays.get(merchantStream)!, event.recordedAt)
            )
          )
          const uncached = Notifications.planFromHistory(event, history, histories.get(merchantStream)!)
          expect(bytes(event, cached)).toBe(bytes(event, uncached))
          planned++
        }
        expect(planned).toBe(records.filter(Notifications.mayRaise).length)
      }),
    { fastCheck: { numRuns: 40 } }
  )
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
