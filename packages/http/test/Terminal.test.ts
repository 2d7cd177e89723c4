import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as Nanos from "@cobro/domain/Nanos"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestApp from "./support/TestApp.js"

type Json = Record<string, any>

// ---------------------------------------------------------------------------------------------
// Notifications in the log, as the webhooks notifier schedules them (A4 reads them back).
// ---------------------------------------------------------------------------------------------

/** A notification body as the notifier stores it (card `brand`, `time` beyond 2^53). */
const notificationBody = (merchantId: string, paymentId: string, reference: string) =>
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
      metadata: { reference },
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

/** Seeds the log as the notifier would: one scheduled delivery per payment `TRX_n0`…`TRX_n<count-1>`. */
const seedNotifications = (merchantId: string, sandbox: boolean, count: number, prefix = "TRX_n") =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const ids = yield* IdGenerator.IdGenerator
    const encode = Schema.encodeSync(WebhookDelivery.Event)
    for (let i = 0; i < count; i++) {
      const subject = `${prefix}${i}`
      const event = new WebhookDelivery.DeliveryScheduled({
        notificationId: NotificationId.make(yield* ids.uuid),
        merchantId: MerchantId.make(merchantId),
        url: "https://shop.example/webhook",
        type: "SALE_APPROVED",
        subject: TransactionId.make(subject),
        body: notificationBody(merchantId, subject, "order-42"),
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
    }
  }).pipe(Effect.orDie)

const AppLayer = TestApp.layer()

const body = (serial: string, overrides: Json = {}): Json => ({
  amount: {
    currency: "COP",
    total_amount: 11900,
    taxes: [{ type: "VAT", base: 10000, value: 1900 }],
    tip_amount: 0
  },
  user_email: "seller@shop.co",
  payment_method: "POS",
  terminal_model: "SMART_PRO",
  terminal_serial: serial,
  reference: "order-42",
  ...overrides
})

const without = (json: Json, key: string): Json => {
  const copy = structuredClone(json)
  delete copy[key]
  return copy
}

const checkout = (key: string, json: unknown) =>
  TestApp.send("POST", "/payments/app-checkout", { key, body: json })

const checkoutEvents = (integrationId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`TerminalCheckout-${integrationId}`), (events) => events.map((e) => e.type))
  )

describe("terminal API (A1–A4)", () => {
  it.live("A1: GET /payments/payment-methods lists {name, enabled} in the A1 order", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const reply = yield* TestApp.send("GET", "/payments/payment-methods", { key: m.terminal.production })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        payload: {
          payment_methods: [
            { name: "POS", enabled: true },
            { name: "WALLET_A", enabled: false },
            { name: "WALLET_B", enabled: false },
            { name: "PAY_BY_LINK", enabled: false },
            { name: "PAY_BY_QR_SERVICE", enabled: false }
          ]
        },
        errors: []
      })
    }).pipe(Effect.provide(AppLayer))
  )

  it.live("A2: GET /payments/binded-terminals lists the bound terminals as BINDED", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const reply = yield* TestApp.send("GET", "/payments/binded-terminals", { key: m.terminal.test })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        payload: {
          available_terminals: [
            { terminal_model: "SMART_PRO", terminal_serial: "SN-0001", status: "BINDED", name: "Caja 1" }
          ]
        },
        errors: []
      })
    }).pipe(Effect.provide(AppLayer))
  )

  it.live("A1–A4 take the terminal-API key: no key is 401, a payment-button key is 403", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      expect((yield* TestApp.send("GET", "/payments/payment-methods")).status).toBe(401)
      const button = yield* TestApp.send("GET", "/payments/binded-terminals", { key: m.button.production })
      expect(button.status).toBe(403)
      expect(button.json.errors[0].code).toBe("Forbidden")
    }).pipe(Effect.provide(AppLayer))
  )

  it.live(
    "A3: 201 with payload.integration_id and empty errors; the checkout is pushed to the terminal",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        const reply = yield* checkout(m.terminal.production, body(m.serial))
        expect(reply.status).toBe(201)
        expect(reply.json.errors).toEqual([])
        expect(Object.keys(reply.json.payload)).toEqual(["integration_id"])
        expect(reply.json.payload.integration_id).toMatch(/^INT_[A-Za-z0-9]+$/)
        expect(yield* checkoutEvents(reply.json.payload.integration_id)).toEqual([
          "CheckoutCreated",
          "PushAttempted",
          "CheckoutSent",
          "SaleApproved"
        ])
      }).pipe(Effect.provide(AppLayer))
  )

  describe("A3 error codes", () => {
    const cases: ReadonlyArray<readonly [string, (serial: string) => unknown, string, string | undefined]> = [
      ["AP005 names the missing field", (s) => without(body(s), "reference"), "AP005", "reference"],
      [
        "AP005 names a missing nested field",
        (s) => body(s, { amount: { currency: "COP", taxes: [], tip_amount: 0 } }),
        "AP005",
        "amount.total_amount"
      ],
      ["AP006 names the mistyped field", (s) => body(s, { user_email: 42 }), "AP006", "user_email"],
      ["AP006 for a body that is not an object, with no field", (s) => [body(s)], "AP006", undefined],
      [
        "AP002 when amount.taxes fits no tax form",
        (s) =>
          body(s, {
            amount: {
              currency: "COP",
              total_amount: 100,
              taxes: [{ type: "IVA_19", value: 1 }],
              tip_amount: 0
            }
          }),
        "AP002",
        "amount.taxes"
      ],
      [
        "AP003 when the payment method is not active",
        (s) => body(s, { payment_method: "WALLET_A" }),
        "AP003",
        "payment_method"
      ],
      ["AP004 when the terminal is not bound", () => body("SN-OTHER"), "AP004", "terminal_serial"],
      [
        "AP004 when the model is not the one bound",
        (s) => body(s, { terminal_model: "SMART" }),
        "AP004",
        "terminal_serial"
      ]
    ]
    for (const [name, make, code, field] of cases) {
      it.live(`A3 ${name} (HTTP 400), and stores nothing`, () =>
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchantWithTerminal()
          const before = yield* TestApp.logSize
          const reply = yield* checkout(m.terminal.production, make(m.serial))
          expect(reply.status).toBe(400)
          expect(reply.json.payload).toEqual({})
          expect(reply.json.errors).toHaveLength(1)
          expect(reply.json.errors[0].code).toBe(code)
          expect(reply.json.errors[0].field).toBe(field)
          expect(yield* TestApp.logSize).toBe(before)
        }).pipe(Effect.provide(AppLayer))
      )
    }

    it.live("A3 malformed JSON is a 400 in the envelope", () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        const reply = yield* checkout(m.terminal.production, "{not json")
        expect(reply.status).toBe(400)
        expect(reply.json.payload).toEqual({})
      }).pipe(Effect.provide(AppLayer))
    )

    it.live(
      "A3 of a disabled merchant account is AP004 (HTTP 400) on terminal_serial and stores nothing; A1, A2 and A4 still answer",
      () =>
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchantWithTerminal()
          yield* seedNotifications(m.merchantId, false, 1)
          const status = `/admin/v1/merchants/${m.merchantId}/status`
          expect((yield* TestApp.admin("PUT", status, { status: "DISABLED" })).status).toBe(200)
          const before = yield* TestApp.logSize
          for (const key of [m.terminal.production, m.terminal.test]) {
            const reply = yield* checkout(key, body(m.serial))
            expect(reply.status).toBe(400)
            expect(reply.json).toEqual({
              payload: {},
              errors: [expect.objectContaining({ code: "AP004", field: "terminal_serial" })]
            })
          }
          expect(yield* TestApp.logSize).toBe(before)
          // AP003 still comes first (TT-2: the spec's field order).
          const inactive = yield* checkout(
            m.terminal.production,
            body(m.serial, { payment_method: "WALLET_A" })
          )
          expect(inactive.json.errors[0].code).toBe("AP003")
          const methods = yield* TestApp.send("GET", "/payments/payment-methods", {
            key: m.terminal.production
          })
          expect(methods.status).toBe(200)
          expect(methods.json.payload.payment_methods[0]).toEqual({ name: "POS", enabled: true })
          const terminals = yield* TestApp.send("GET", "/payments/binded-terminals", {
            key: m.terminal.production
          })
          expect(terminals.status).toBe(200)
          expect(terminals.json.payload.available_terminals).toHaveLength(1)
          const fallback = yield* TestApp.send("GET", "/payments/webhook/notifications/TRX_n0", {
            key: m.terminal.production
          })
          expect(fallback.status).toBe(200)
          expect(fallback.json.notifications).toHaveLength(1)
          // Enabled again, the same checkout goes through.
          expect((yield* TestApp.admin("PUT", status, { status: "ENABLED" })).status).toBe(200)
          expect((yield* checkout(m.terminal.production, body(m.serial))).status).toBe(201)
        }).pipe(Effect.provide(AppLayer))
    )

    it.live("A3 AP004: another merchant's terminal cannot be used", () =>
      Effect.gen(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* checkout(other.terminal.production, body(owner.serial))
        expect(reply.status).toBe(400)
        expect(reply.json.errors[0].code).toBe("AP004")
      }).pipe(Effect.provide(AppLayer))
    )
  })

  describe("A4 fallback notifications", () => {
    it.live(
      "A4 by transaction id (is_external_reference defaults to false): {notifications} with franchise",
      () =>
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchantWithTerminal()
          yield* seedNotifications(m.merchantId, false, 5)
          const reply = yield* TestApp.send("GET", "/payments/webhook/notifications/TRX_n3", {
            key: m.terminal.production
          })
          expect(reply.status).toBe(200)
          expect(Object.keys(reply.json)).toEqual(["notifications"])
          expect(reply.json.notifications).toHaveLength(1)
          const [item] = reply.json.notifications
          expect(item.data.payment_id).toBe("TRX_n3")
          expect(item.data.card.franchise).toBe("MASTERCARD")
          expect(item.data.card.brand).toBe("MASTERCARD")
          expect(reply.text).toContain(`"time":1744644662123456789`)
          const byReference = yield* TestApp.send("GET", "/payments/webhook/notifications/order-42", {
            key: m.terminal.production
          })
          expect(byReference.json).toEqual({ notifications: [] })
        }).pipe(Effect.provide(AppLayer))
    )

    it.live("A4 by external reference (is_external_reference=true) returns at most 10 notifications", () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        yield* seedNotifications(m.merchantId, false, 12)
        const reply = yield* TestApp.send(
          "GET",
          "/payments/webhook/notifications/order-42?is_external_reference=true",
          {
            key: m.terminal.production
          }
        )
        expect(reply.status).toBe(200)
        expect(reply.json.notifications).toHaveLength(10)
      }).pipe(Effect.provide(AppLayer))
    )

    it.live("A4 with a test key sees only sandbox notifications", () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        yield* seedNotifications(m.merchantId, false, 5)
        yield* seedNotifications(m.merchantId, true, 1, "TRX_s")
        const reply = yield* TestApp.send("GET", "/payments/webhook/notifications/TRX_n3", {
          key: m.terminal.test
        })
        expect(reply.json).toEqual({ notifications: [] })
        const sandboxOnly = yield* TestApp.send(
          "GET",
          "/payments/webhook/notifications/order-42?is_external_reference=true",
          { key: m.terminal.test }
        )
        expect(sandboxOnly.json.notifications.map((n: any) => n.data.payment_id)).toEqual(["TRX_s0"])
      }).pipe(Effect.provide(AppLayer))
    )

    it.live("A4 is_external_reference other than true or false is a 400 in the envelope", () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        const reply = yield* TestApp.send(
          "GET",
          "/payments/webhook/notifications/TRX_n3?is_external_reference=yes",
          {
            key: m.terminal.production
          }
        )
        expect(reply.status).toBe(400)
        expect(reply.json.payload).toEqual({})
      }).pipe(Effect.provide(AppLayer))
    )
  })
})
