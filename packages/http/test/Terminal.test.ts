import { describe, expect, it } from "@effect/vitest"
import { terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as Notifications from "./support/Notifications.js"
import * as TestApp from "./support/TestApp.js"

type Json = Record<string, any>

const body = terminalSale

const without = (json: Json, key: string): Json => {
  const copy = structuredClone(json)
  delete copy[key]
  return copy
}

const { checkout, checkoutEvents } = Calls

describe("terminal API (A1–A4)", () => {
  // A1 and A2 read what the merchant's terminal-API key may see: each answers 200 with its payload.
  for (const read of [
    {
      name: "A1: GET /payments/payment-methods lists {name, enabled} in the A1 order",
      path: "/payments/payment-methods",
      mode: "production",
      payload: {
        payment_methods: [
          { name: "POS", enabled: true },
          { name: "WALLET_A", enabled: false },
          { name: "WALLET_B", enabled: false },
          { name: "PAY_BY_LINK", enabled: false },
          { name: "PAY_BY_QR_SERVICE", enabled: false }
        ]
      }
    },
    {
      name: "A2: GET /payments/binded-terminals lists the bound terminals as BINDED",
      path: "/payments/binded-terminals",
      mode: "test",
      payload: {
        available_terminals: [
          { terminal_model: "SMART_PRO", terminal_serial: "SN-0001", status: "BINDED", name: "Caja 1" }
        ]
      }
    }
  ] as const) {
    it.live(
      read.name,
      TestApp.withTerminal(function* (m) {
        const reply = yield* TestApp.send("GET", read.path, { key: m.terminal[read.mode] })
        expect(reply.status).toBe(200)
        expect(reply.json).toEqual({ payload: read.payload, errors: [] })
      })
    )
  }

  it.live(
    "A1–A4 take the terminal-API key: no key is 401, a payment-button key is 403",
    TestApp.withTerminal(function* (m) {
      expect((yield* TestApp.send("GET", "/payments/payment-methods")).status).toBe(401)
      const button = yield* TestApp.send("GET", "/payments/binded-terminals", { key: m.button.production })
      TestApp.expectError(button, 403, "Forbidden")
    })
  )

  it.live(
    "A3: 201 with payload.integration_id and empty errors; the checkout is pushed to the terminal",
    TestApp.withTerminal(function* (m) {
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
    })
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
      it.live(
        `A3 ${name} (HTTP 400), and stores nothing`,
        TestApp.withTerminal(function* (m) {
          const before = yield* TestApp.logSize
          const reply = yield* checkout(m.terminal.production, make(m.serial))
          expect(reply.status).toBe(400)
          expect(reply.json.payload).toEqual({})
          expect(reply.json.errors).toHaveLength(1)
          expect(reply.json.errors[0].code).toBe(code)
          expect(reply.json.errors[0].field).toBe(field)
          expect(yield* TestApp.logSize).toBe(before)
        })
      )
    }

    it.live(
      "A3 malformed JSON is a 400 in the envelope",
      TestApp.withTerminal(function* (m) {
        const reply = yield* checkout(m.terminal.production, "{not json")
        expect(reply.status).toBe(400)
        expect(reply.json.payload).toEqual({})
      })
    )

    it.live(
      "A3 of a disabled merchant account is AP004 (HTTP 400) on terminal_serial and stores nothing; A1, A2 and A4 still answer",
      TestApp.withTerminal(function* (m) {
        yield* Notifications.seedMany(m.merchantId, false, 1)
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
      })
    )

    it.live(
      "A3 AP004: another merchant's terminal cannot be used",
      TestApp.fresh(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* checkout(other.terminal.production, body(owner.serial))
        TestApp.expectError(reply, 400, "AP004")
      })
    )
  })

  describe("A4 fallback notifications", () => {
    it.live(
      "A4 by transaction id (is_external_reference defaults to false): {notifications} with franchise",
      TestApp.withTerminal(function* (m) {
        yield* Notifications.seedMany(m.merchantId, false, 5)
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
      })
    )

    it.live(
      "A4 by external reference (is_external_reference=true) returns at most 10 notifications",
      TestApp.withTerminal(function* (m) {
        yield* Notifications.seedMany(m.merchantId, false, 12)
        const reply = yield* TestApp.send(
          "GET",
          "/payments/webhook/notifications/order-42?is_external_reference=true",
          {
            key: m.terminal.production
          }
        )
        expect(reply.status).toBe(200)
        expect(reply.json.notifications).toHaveLength(10)
      })
    )

    it.live(
      "A4 with a test key sees only sandbox notifications",
      TestApp.withTerminal(function* (m) {
        yield* Notifications.seedMany(m.merchantId, false, 5)
        yield* Notifications.seedMany(m.merchantId, true, 1, "TRX_s")
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
      })
    )

    it.live(
      "A4 is_external_reference other than true or false is a 400 in the envelope",
      TestApp.withTerminal(function* (m) {
        const reply = yield* TestApp.send(
          "GET",
          "/payments/webhook/notifications/TRX_n3?is_external_reference=yes",
          {
            key: m.terminal.production
          }
        )
        expect(reply.status).toBe(400)
        expect(reply.json.payload).toEqual({})
      })
    )
  })
})
