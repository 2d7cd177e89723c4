/**
 * Tenant and sandbox isolation through the real handler (issue 4, "Keys and isolation"): for each
 * endpoint A1–A4, B1–B3 and C1–C9, merchant B's key on merchant A's resources, and a key of the other
 * mode, sees nothing of A's (404, AP004 or an empty answer, as the spec's endpoint has it) and
 * changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { card, terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as Notifications from "./support/Notifications.js"
import * as TestApp from "./support/TestApp.js"

/** Sends a request that must not see the owner's resource: `status` (and `code`), and the log unchanged. */
const refused = (
  method: "GET" | "POST" | "PUT",
  path: string,
  options: TestApp.SendOptions,
  status: number,
  code?: string
) =>
  Effect.gen(function* () {
    const before = yield* TestApp.logSize
    const reply = yield* TestApp.send(method, path, options)
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(status)
    if (code !== undefined) expect(reply.json.errors[0].code, `${method} ${path}`).toBe(code)
    expect(yield* TestApp.logSize, `${method} ${path} must store nothing`).toBe(before)
    return reply
  })

describe("tenant and sandbox isolation", () => {
  it.live(
    "A1, A2: another merchant's key lists its own methods and terminals, never A's",
    TestApp.fresh(function* () {
      const a = yield* TestApp.createMerchantWithTerminal({ serial: "SN-A" })
      yield* TestApp.admin("PUT", `/admin/v1/merchants/${a.merchantId}/payment-methods`, {
        terminal: { POS: true, WALLET_A: true }
      })
      const b = yield* TestApp.createMerchant("B")
      const methods = (key: string) =>
        Effect.map(TestApp.send("GET", "/payments/payment-methods", { key }), (r) =>
          Object.fromEntries(r.json.payload.payment_methods.map((m: any) => [m.name, m.enabled]))
        )
      expect((yield* methods(a.terminal.production)).WALLET_A).toBe(true)
      expect((yield* methods(b.terminal.production)).WALLET_A).toBe(false)
      const terminals = (key: string) =>
        Effect.map(TestApp.send("GET", "/payments/binded-terminals", { key }), (r) =>
          r.json.payload.available_terminals.map((t: any) => t.terminal_serial)
        )
      expect(yield* terminals(a.terminal.test)).toEqual(["SN-A"])
      expect(yield* terminals(b.terminal.production)).toEqual([])
      expect(yield* terminals(b.terminal.test)).toEqual([])
    })
  )

  it.live(
    "A3: merchant B cannot charge on A's terminal (AP004), with either of its keys, and nothing is stored",
    TestApp.fresh(function* () {
      const a = yield* TestApp.createMerchantWithTerminal({ serial: "SN-A" })
      const b = yield* TestApp.createMerchant("B")
      for (const key of [b.terminal.production, b.terminal.test]) {
        yield* refused(
          "POST",
          "/payments/app-checkout",
          {
            key,
            body: terminalSale(a.serial, {
              amount: { currency: "COP", total_amount: 11900, taxes: [], tip_amount: 0 }
            })
          },
          400,
          "AP004"
        )
      }
    })
  )

  it.live(
    "A4: another merchant's key, or A's key of the other mode, reads none of A's notifications",
    TestApp.withTerminal(function* (a) {
      const b = yield* TestApp.createMerchantWithTerminal({ serial: "SN-B" })
      yield* Notifications.seed(a.merchantId, false, "TRX_live1")
      yield* Notifications.seed(a.merchantId, true, "TRX_test1")
      const read = (key: string, id: string, byReference = false) =>
        Effect.map(
          TestApp.send(
            "GET",
            `/payments/webhook/notifications/${id}${byReference ? "?is_external_reference=true" : ""}`,
            { key }
          ),
          (r) => {
            expect(r.status).toBe(200)
            return r.json.notifications.map((n: any) => n.data.payment_id)
          }
        )
      expect(yield* read(a.terminal.production, "TRX_live1")).toEqual(["TRX_live1"])
      expect(yield* read(a.terminal.test, "TRX_test1")).toEqual(["TRX_test1"])
      expect(yield* read(a.terminal.test, "TRX_live1")).toEqual([])
      expect(yield* read(a.terminal.production, "TRX_test1")).toEqual([])
      for (const key of [b.terminal.production, b.terminal.test]) {
        expect(yield* read(key, "TRX_live1")).toEqual([])
        expect(yield* read(key, "TRX_test1")).toEqual([])
        expect(yield* read(key, "order-42", true)).toEqual([])
      }
    })
  )

  it.live(
    "B1–B3: another merchant's key, or the other mode's, never reads A's link (404 LinkNotFound)",
    TestApp.fresh(function* () {
      const a = yield* TestApp.createMerchant("A")
      const b = yield* TestApp.createMerchant("B")
      yield* TestApp.admin("PUT", `/admin/v1/merchants/${a.merchantId}/payment-methods`, {
        link: { CREDIT_CARD: { min: 1_000, max: 5_000_000 } }
      })
      // B1: B's methods are its own (none), not A's.
      const methods = yield* TestApp.send("GET", "/online/link/v1/payment_methods", { key: b.button.test })
      expect(methods.json.payload.payment_methods).toEqual({})
      // B2: B cannot create a link with A's methods.
      yield* refused(
        "POST",
        "/online/link/v1",
        { key: b.button.test, body: { amount_type: "CLOSE", amount: { total_amount: 5_000 } } },
        400,
        "ValidationError"
      )
      const created = yield* Calls.createLink(a.button.test, {
        amount_type: "CLOSE",
        amount: { total_amount: 5_000 }
      })
      const id = created.json.payload.payment_link
      for (const key of [b.button.test, b.button.production, a.button.production]) {
        yield* refused("GET", `/online/link/v1/${id}`, { key }, 404, "LinkNotFound")
      }
      expect((yield* Calls.readLink(a.button.test, id)).status).toBe(200)
    })
  )

  it.live(
    "C1–C9: another merchant's key, or the other mode's, on A's intent and payment is 404 PaymentNotFound and changes nothing",
    TestApp.fresh(function* () {
      const a = yield* TestApp.createMerchant("A")
      const b = yield* TestApp.createMerchant("B")
      // A's production data, so that A's test key is an intruder too (test keys see sandbox data only).
      const owner = a.button.production
      const intent = {
        reference_id: "order-1",
        amount: { currency: "COP", total_amount: 50_000 },
        callback_url: "https://shop.example/back"
      }
      expect((yield* Calls.createIntent(owner, intent)).status).toBe(201)
      const attempt = yield* Calls.attempt(owner, { reference_id: "order-1", payment_method: card })
      const transaction_id = attempt.json.transaction_id
      for (const key of [b.button.production, b.button.test, a.button.test]) {
        yield* refused("GET", "/v1/payment-intent/order-1", { key }, 404, "PaymentNotFound")
        yield* refused(
          "PUT",
          "/v1/payment-intent",
          { key, body: { ...intent, amount: { currency: "COP", total_amount: 1 } } },
          404,
          "PaymentNotFound"
        )
        yield* refused(
          "POST",
          "/v1/payment",
          { key, body: { reference_id: "order-1", payment_method: card } },
          404,
          "PaymentNotFound"
        )
        yield* refused("GET", "/v1/payment/order-1", { key }, 404, "PaymentNotFound")
        yield* refused("POST", "/v1/payment/void", { key, body: { transaction_id } }, 404, "PaymentNotFound")
        yield* refused(
          "POST",
          "/v1/payment/refund",
          { key, body: { reference_id: "order-1", transaction_id } },
          404,
          "PaymentNotFound"
        )
        yield* refused("GET", `/v1/payment/refund/${transaction_id}`, { key }, 404, "PaymentNotFound")
      }
      // C1: the same reference is another intent for B and in A's sandbox; A's is untouched.
      for (const key of [b.button.production, a.button.test]) {
        const created = yield* Calls.createIntent(key, {
          ...intent,
          amount: { currency: "COP", total_amount: 7 }
        })
        expect(created.status).toBe(201)
        expect(created.json.status).toBe("ACTIVE")
      }
      // C6 lists the same banks to everyone: it holds no merchant's data.
      const banks = yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: b.button.test })
      expect(banks.json).toEqual((yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: owner })).json)
      // A's intent and payment are as they were: 50 000, PAID, APPROVED, no refund.
      const read = yield* Calls.readIntent(owner, "order-1")
      expect(read.json).toMatchObject({
        amount: { total_amount: 50_000 },
        status: "PAID",
        service_transaction_id: transaction_id
      })
      const payment = yield* Calls.readPayment(owner, "order-1")
      expect(payment.json).toMatchObject({ transaction_id, status: "APPROVED" })
      expect((yield* Calls.refundStatus(owner, transaction_id)).status).toBe(404)
      // And A can still void it: nothing the intruders sent counted.
      expect(
        (yield* TestApp.send("POST", "/v1/payment/void", { key: owner, body: { transaction_id } })).status
      ).toBe(204)
    })
  )
})
