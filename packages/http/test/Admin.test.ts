import { describe, expect, it } from "@effect/vitest"
import * as DevWebhooks from "@cobro/domain/DevWebhooks"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FastCheck from "effect/FastCheck"
import * as TestClock from "./support/TestClock.js"
import { cardAttempt, intent, terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"

const merchantPath = (id: string) => `/admin/v1/merchants/${id}`

/** A `POST …/terminals` body: the terminal SN-0001, "Caja 1", of the model given. */
const caja1 = (terminal_model: string) => ({ terminal_model, terminal_serial: "SN-0001", name: "Caja 1" })

/** The admin path `…/merchants/{id}/<suffix>` of a new merchant. */
const newMerchant = (suffix: string) =>
  Effect.map(TestApp.createMerchant(), (m) => `${merchantPath(m.merchantId)}/${suffix}`)

/** The terminal methods of a new merchant: POS on, the others off. */
const NEW_TERMINAL_METHODS = {
  POS: true,
  WALLET_A: false,
  WALLET_B: false,
  PAY_BY_LINK: false,
  PAY_BY_QR_SERVICE: false
}

/** `PUT …/webhook` at the merchant's `path`: the URL of a mode, and any other field of the body. */
const putWebhook = (path: string, url: string, mode: string, extra: Record<string, unknown> = {}) =>
  TestApp.admin("PUT", path, { url, mode, ...extra })

/** Checks a 400 whose first error item names `field`. */
const expectInvalid = (reply: TestApp.Reply, field: string) => {
  expect(reply.status).toBe(400)
  expect(reply.json.errors[0].field).toBe(field)
}

const MERCHANT_DISABLED = {
  payload: {},
  errors: [{ code: "MerchantDisabled", message: expect.stringContaining("the merchant account is disabled") }]
}

/** A B2 body: a CLOSE link of COP 50,000. */
const CLOSE_LINK = { amount_type: "CLOSE", amount: { total_amount: 50_000 } }

/** The four calls that ask for a payment (A3, B2, C1, C4), each with a fresh reference. */
const askForPayments = (
  m: { terminal: { production: string }; button: { test: string }; serial: string },
  n: number
) =>
  Effect.gen(function* () {
    const a3 = yield* Calls.checkout(
      m.terminal.production,
      terminalSale(m.serial, { reference: `order-a${n}` })
    )
    const b2 = yield* Calls.createLink(m.button.test, CLOSE_LINK)
    const c1 = yield* Calls.createIntent(m.button.test, intent(`order-c${n}`, 555040))
    return { a3, b2, c1 }
  })

describe("admin API", () => {
  describe("POST /admin/v1/merchants", () => {
    it.live(
      "creates a merchant: 201 with merchant_id and both integrations' production and test keys",
      TestApp.fresh(function* () {
        const reply = yield* TestApp.admin("POST", "/admin/v1/merchants", { name: "Café Central" })
        expect(reply.status).toBe(201)
        const body = reply.json
        expect(body.merchant_id).toMatch(/^MER_[A-Za-z0-9]+$/)
        expect(body.keys.terminal_api.production.identity_key).toMatch(/^id_live_term_[0-9A-Za-z]{32}$/)
        expect(body.keys.terminal_api.production.secret_key).toMatch(/^sk_live_term_/)
        expect(body.keys.terminal_api.test.identity_key).toMatch(/^id_test_term_/)
        expect(body.keys.terminal_api.test.secret_key).toMatch(/^sk_test_term_/)
        expect(body.keys.payment_button.production.identity_key).toMatch(/^id_live_btn_/)
        expect(body.keys.payment_button.test.identity_key).toMatch(/^id_test_btn_/)
        expect(Object.keys(body).sort()).toEqual(["keys", "merchant_id"])
      })
    )

    it.live(
      "a merchant name is required and not blank (400 ValidationError on name)",
      TestApp.fresh(function* () {
        for (const body of [{}, { name: "   " }, { name: 7 }]) {
          const reply = yield* TestApp.admin("POST", "/admin/v1/merchants", body)
          expect(reply.status).toBe(400)
          expect(reply.json).toMatchObject({
            payload: {},
            errors: [{ code: "ValidationError", field: "name" }]
          })
        }
        expect(yield* TestApp.logSize).toBe(0)
      })
    )

    it.live(
      "admin calls without the Bearer ADMIN_TOKEN are 401 in the envelope",
      TestApp.fresh(function* () {
        const none = yield* TestApp.send("POST", "/admin/v1/merchants", { body: { name: "x" } })
        const wrong = yield* TestApp.send("POST", "/admin/v1/merchants", {
          body: { name: "x" },
          headers: { authorization: "Bearer nope" }
        })
        const apiKey = yield* TestApp.send("POST", "/admin/v1/merchants", {
          body: { name: "x" },
          key: "id_live_term_x"
        })
        for (const reply of [none, wrong, apiKey]) {
          TestApp.expectError(reply, 401, "Unauthorized")
        }
        expect(yield* TestApp.logSize).toBe(0)
      })
    )
  })

  describe("terminals", () => {
    it.live(
      "POST terminals binds a terminal: 201 with the A2 entry and api_enabled false",
      TestApp.given(newMerchant("terminals"), function* (path) {
        const reply = yield* TestApp.admin("POST", path, caja1("SMART"))
        expect(reply.status).toBe(201)
        expect(reply.json).toEqual({
          terminal_model: "SMART",
          terminal_serial: "SN-0001",
          name: "Caja 1",
          status: "BINDED",
          api_enabled: false
        })
      })
    )

    it.live(
      "binding an unsupported terminal model is 400 on terminal_model",
      TestApp.given(newMerchant("terminals"), function* (path) {
        const reply = yield* TestApp.admin("POST", path, caja1("smart_pro"))
        expect(reply.status).toBe(400)
        expect(reply.json.errors).toEqual([
          {
            code: "ValidationError",
            message: "terminal_model must be SMART or SMART_PRO",
            field: "terminal_model"
          }
        ])
      })
    )

    it.live(
      "binding a serial bound as something else is 409 TerminalAlreadyBound",
      TestApp.given(newMerchant("terminals"), function* (path) {
        const first = caja1("SMART")
        expect((yield* TestApp.admin("POST", path, first)).status).toBe(201)
        expect((yield* TestApp.admin("POST", path, first)).status).toBe(201)
        const other = yield* TestApp.admin("POST", path, { ...first, terminal_model: "SMART_PRO" })
        expect(other.status).toBe(409)
        expect(other.json.errors[0]).toMatchObject({
          code: "TerminalAlreadyBound",
          field: "terminal_serial"
        })
      })
    )

    it.live(
      "PATCH terminals selects and deselects a terminal for the API: 200 with the terminal",
      TestApp.given(newMerchant("terminals"), function* (base) {
        yield* TestApp.admin("POST", base, caja1("SMART_PRO"))
        const on = yield* TestApp.admin("PATCH", `${base}/SN-0001`, { api_enabled: true })
        expect(on.status).toBe(200)
        expect(on.json).toMatchObject({ terminal_serial: "SN-0001", api_enabled: true, status: "BINDED" })
        const off = yield* TestApp.admin("PATCH", `${base}/SN-0001`, { api_enabled: false })
        expect(off.json.api_enabled).toBe(false)
      })
    )

    it.live(
      "PATCH of a terminal that is not bound is 404 TerminalNotFound",
      TestApp.given(newMerchant("terminals/SN-9"), function* (path) {
        const reply = yield* TestApp.admin("PATCH", path, {
          api_enabled: true
        })
        TestApp.expectError(reply, 404, "TerminalNotFound")
      })
    )
  })

  describe("payment methods", () => {
    it.live(
      "a new merchant has POS on, the other terminal methods off and no link methods",
      TestApp.given(newMerchant("payment-methods"), function* (path) {
        const reply = yield* TestApp.admin("PUT", path, {})
        expect(reply.status).toBe(200)
        expect(reply.json).toEqual({ terminal: NEW_TERMINAL_METHODS, link: {} })
      })
    )

    it.live(
      "PUT payment-methods replaces each section given: 200 with the methods after",
      TestApp.given(newMerchant("payment-methods"), function* (path) {
        const first = yield* TestApp.admin("PUT", path, {
          terminal: { POS: true, WALLET_A: true },
          link: { CREDIT_CARD: { min: 1000, max: 5000000 }, PSE: { min: 1000, max: 100000 } }
        })
        expect(first.status).toBe(200)
        expect(first.json).toEqual({
          terminal: { ...NEW_TERMINAL_METHODS, WALLET_A: true },
          link: { CREDIT_CARD: { min: 1000, max: 5000000 }, PSE: { min: 1000, max: 100000 } }
        })
        const second = yield* TestApp.admin("PUT", path, { link: { CREDIT_CARD: { min: 1, max: 2 } } })
        expect(second.json).toEqual({
          terminal: { ...NEW_TERMINAL_METHODS, WALLET_A: true },
          link: { CREDIT_CARD: { min: 1, max: 2 } }
        })
      })
    )

    it.live(
      "link bounds with min above max are 400 on link.<method> and change nothing",
      TestApp.given(newMerchant("payment-methods"), function* (path) {
        const before = yield* TestApp.logSize
        const reply = yield* TestApp.admin("PUT", path, {
          terminal: { POS: false },
          link: { CREDIT_CARD: { min: 10, max: 5 } }
        })
        expect(reply.status).toBe(400)
        expect(reply.json.errors).toEqual([
          { code: "ValidationError", message: "min must not exceed max", field: "link.CREDIT_CARD" }
        ])
        expect(yield* TestApp.logSize).toBe(before)
      })
    )

    it.live(
      "an unknown method name or a negative bound is 400",
      TestApp.given(newMerchant("payment-methods"), function* (path) {
        const unknown = yield* TestApp.admin("PUT", path, { terminal: { BITCOIN: true } })
        expectInvalid(unknown, "terminal.BITCOIN")
        const negative = yield* TestApp.admin("PUT", path, { link: { PSE: { min: -1, max: 5 } } })
        expectInvalid(negative, "link.PSE.min")
      })
    )
  })

  describe("webhooks", () => {
    it.live(
      "PUT webhook registers the URL of a mode: 200 {url, mode}; DELETE ?mode= is 204",
      TestApp.given(newMerchant("webhook"), function* (path) {
        const prod = yield* putWebhook(path, "https://shop.example/hooks", "production")
        expect(prod.status).toBe(200)
        expect(prod.json).toEqual({
          url: "https://shop.example/hooks",
          mode: "production",
          standard_webhooks: false
        })
        const test = yield* putWebhook(path, "http://localhost:9000/hooks", "test")
        expect(test.status).toBe(200)
        const deleted = yield* TestApp.admin("DELETE", `${path}?mode=test`)
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        const again = yield* TestApp.admin("DELETE", `${path}?mode=test`)
        expect(again.status).toBe(204)
      })
    )

    it.live(
      "PUT webhook with standard_webhooks: true registers the endpoint with the Standard Webhooks headers; a non-boolean is 400 on standard_webhooks",
      TestApp.given(newMerchant("webhook"), function* (path) {
        const url = "https://shop.example/hooks"
        const on = yield* putWebhook(path, url, "production", { standard_webhooks: true })
        expect(on.status).toBe(200)
        expect(on.json).toEqual({ url, mode: "production", standard_webhooks: true })
        const bad = yield* putWebhook(path, url, "production", { standard_webhooks: "yes" })
        expect(bad.status).toBe(400)
        expect(bad.json.errors[0]).toMatchObject({ code: "ValidationError", field: "standard_webhooks" })
        // Registering the same URL without it turns them off.
        const off = yield* putWebhook(path, url, "production")
        expect(off.json).toEqual({ url, mode: "production", standard_webhooks: false })
      })
    )

    it.live(
      "the production webhook must be https (400 on url)",
      TestApp.given(newMerchant("webhook"), function* (path) {
        const reply = yield* putWebhook(path, "http://shop.example/hooks", "production")
        expect(reply.status).toBe(400)
        expect(reply.json.errors[0]).toMatchObject({ code: "ValidationError", field: "url" })
      })
    )

    it.live(
      "with COBRO_DEV_WEBHOOKS=1 the production webhook may be http:// on loopback (200); ftp:// is still 400 on url",
      () =>
        Effect.gen(function* () {
          const path = yield* newMerchant("webhook")
          const url = "http://127.0.0.1:4000/hooks"
          const reply = yield* putWebhook(path, url, "production")
          expect(reply.status, reply.text).toBe(200)
          expect(reply.json).toEqual({ url, mode: "production", standard_webhooks: false })
          const ftp = yield* putWebhook(path, "ftp://127.0.0.1/hooks", "production")
          expect(ftp.status).toBe(400)
          expect(ftp.json.errors[0]).toMatchObject({
            code: "ValidationError",
            field: "url",
            message: "the production webhook must be an http:// or https:// URL"
          })
        }).pipe(
          Effect.provide(TestApp.layer()),
          Effect.provide(Layer.succeed(DevWebhooks.DevWebhooks, { enabled: true }))
        )
    )

    it.live(
      "DELETE webhook without a valid mode is 400 on mode",
      TestApp.given(newMerchant("webhook"), function* (path) {
        const none = yield* TestApp.admin("DELETE", path)
        expect(none.status).toBe(400)
        expect(none.json.errors[0]).toMatchObject({ code: "ValidationError", field: "mode" })
        const bad = yield* TestApp.admin("DELETE", `${path}?mode=staging`)
        expect(bad.status).toBe(400)
      })
    )
  })

  describe("keys", () => {
    it.live(
      "POST keys/rotate: 200 with the new pair; the old key stops working, the other mode's does not",
      TestApp.withMerchant(function* (m) {
        const reply = yield* TestApp.admin("POST", `${merchantPath(m.merchantId)}/keys/rotate`, {
          integration: "terminal_api",
          mode: "test"
        })
        expect(reply.status).toBe(200)
        expect(reply.json.integration).toBe("terminal_api")
        expect(reply.json.mode).toBe("test")
        expect(reply.json.identity_key).toMatch(/^id_test_term_/)
        expect(reply.json.secret_key).toMatch(/^sk_test_term_/)
        expect(reply.json.identity_key).not.toBe(m.terminal.test)
        // The old key is refused by the directory at once (Authentication.test.ts covers it over HTTP).
      })
    )

    it.live(
      "a body naming no integration is 400 on integration",
      TestApp.given(newMerchant("keys/rotate"), function* (path) {
        const reply = yield* TestApp.admin("POST", path, {
          integration: "pos",
          mode: "test"
        })
        expectInvalid(reply, "integration")
      })
    )
  })

  describe("merchant status", () => {
    it.live(
      "PUT status DISABLED: 200 {merchant_id, status}; A3 is AP004 (400), B2, C1 and C4 are 403 MerchantDisabled and record nothing; A1, B1, B3 and C5 still answer",
      TestApp.withTerminal(function* (m) {
        const key = m.button.test
        const link = yield* Calls.createLink(key, CLOSE_LINK)
        expect(link.status, link.text).toBe(201)
        const linkId = link.json.payload.payment_link as string
        expect((yield* Calls.createIntent(key, intent("order-1", 555040))).status).toBe(201)
        expect((yield* Calls.attempt(key, cardAttempt("order-1"))).status).toBe(201)
        expect((yield* Calls.createIntent(key, intent("order-2", 555040))).status).toBe(201)

        const disabled = yield* TestApp.setStatus(m.merchantId, "DISABLED")
        expect(disabled.status).toBe(200)
        expect(disabled.json).toEqual({ merchant_id: m.merchantId, status: "DISABLED" })

        const { a3, b2, c1, c4 } = yield* TestApp.storesNothing(
          Effect.gen(function* () {
            const asked = yield* askForPayments(m, 1)
            return { ...asked, c4: yield* Calls.attempt(key, cardAttempt("order-2")) }
          })
        )
        expect(a3.status).toBe(400)
        expect(a3.json).toEqual({
          payload: {},
          errors: [expect.objectContaining({ code: "AP004", field: "terminal_serial" })]
        })
        for (const refused of [b2, c1, c4]) {
          expect(refused.status).toBe(403)
          expect(refused.json).toEqual(MERCHANT_DISABLED)
        }

        const a1 = yield* TestApp.send("GET", "/payments/payment-methods", { key: m.terminal.production })
        expect(a1.status).toBe(200)
        expect(a1.json.payload.payment_methods[0]).toEqual({ name: "POS", enabled: true })
        const b1 = yield* TestApp.send("GET", "/online/link/v1/payment_methods", { key })
        expect(b1.status).toBe(200)
        const b3 = yield* Calls.readLink(key, linkId)
        expect(b3.status).toBe(200)
        expect(b3.json.status).toBe("ACTIVE")
        const c5 = yield* Calls.readPayment(key, "order-1")
        expect(c5.status).toBe(200)
        expect(c5.json.status).toBe("APPROVED")
        // Disabling stops payments, not support: the configuration stays editable (M1).
        const methods = yield* TestApp.admin("PUT", `${merchantPath(m.merchantId)}/payment-methods`, {
          terminal: { POS: true, WALLET_A: true }
        })
        expect(methods.status).toBe(200)
      })
    )

    it.live(
      "PUT status ENABLED again: A3, B2, C1 and C4 are accepted as before",
      TestApp.withTerminal(function* (m) {
        expect((yield* TestApp.setStatus(m.merchantId, "DISABLED")).status).toBe(200)
        const refused = yield* askForPayments(m, 1)
        expect([refused.a3.status, refused.b2.status, refused.c1.status]).toEqual([400, 403, 403])
        const enabled = yield* TestApp.setStatus(m.merchantId, "ENABLED")
        expect(enabled.status).toBe(200)
        expect(enabled.json).toEqual({ merchant_id: m.merchantId, status: "ENABLED" })
        const { a3, b2, c1 } = yield* askForPayments(m, 2)
        expect(a3.status, a3.text).toBe(201)
        expect(b2.status, b2.text).toBe(201)
        expect(c1.status, c1.text).toBe(201)
        const c4 = yield* Calls.attempt(m.button.test, cardAttempt("order-c2"))
        expect(c4.status, c4.text).toBe(201)
      })
    )

    it.live(
      "setting the status the account has is a 200 that records nothing (disabling twice, enabling an enabled account)",
      TestApp.withMerchant(function* (m) {
        const start = yield* TestApp.logSize
        const enabled = yield* TestApp.setStatus(m.merchantId, "ENABLED")
        expect(enabled.status).toBe(200)
        expect(enabled.json).toEqual({ merchant_id: m.merchantId, status: "ENABLED" })
        expect(yield* TestApp.logSize).toBe(start)
        expect((yield* TestApp.setStatus(m.merchantId, "DISABLED")).status).toBe(200)
        expect(yield* TestApp.logSize).toBe(start + 1)
        const again = yield* TestApp.setStatus(m.merchantId, "DISABLED")
        expect(again.status).toBe(200)
        expect(again.json).toEqual({ merchant_id: m.merchantId, status: "DISABLED" })
        expect(yield* TestApp.logSize).toBe(start + 1)
      })
    )

    it.live(
      "a status other than ENABLED or DISABLED, a missing one or malformed JSON is 400 in the envelope and records nothing",
      TestApp.withMerchant(function* (m) {
        const before = yield* TestApp.logSize
        const path = `${merchantPath(m.merchantId)}/status`
        for (const body of [{ status: "PAUSED" }, { status: "disabled" }, { status: true }, {}, []]) {
          const reply = yield* TestApp.admin("PUT", path, body)
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(reply.json).toMatchObject({ payload: {}, errors: [{ code: "ValidationError" }] })
          if (!Array.isArray(body)) expect(reply.json.errors[0].field).toBe("status")
        }
        const malformed = yield* TestApp.admin("PUT", path, "{not json")
        TestApp.expectError(malformed, 400, "MalformedJson")
        // An unknown merchant with a bad body: the body is checked first, as on every admin call.
        expect((yield* TestApp.setStatus("MER_404", "PAUSED")).status).toBe(400)
        expect(yield* TestApp.logSize).toBe(before)
        expect(
          (yield* TestApp.send("GET", "/online/link/v1/payment_methods", { key: m.button.test })).status
        ).toBe(200)
      })
    )

    it.live.prop(
      "whatever the body, PUT status answers 200 with the status asked or 400 in the envelope that records nothing, never a 5xx",
      [
        FastCheck.oneof(
          FastCheck.jsonValue().map((v) => JSON.stringify(v)),
          FastCheck.record({
            status: FastCheck.oneof(FastCheck.constantFrom("ENABLED", "DISABLED"), FastCheck.jsonValue())
          }).map((v) => JSON.stringify(v)),
          FastCheck.string({ maxLength: 40 })
        )
      ],
      ([text]) =>
        TestApp.run(
          Effect.gen(function* () {
            const m = yield* TestApp.createMerchant()
            const before = yield* TestApp.logSize
            const reply = yield* TestApp.send("PUT", `${merchantPath(m.merchantId)}/status`, {
              admin: true,
              body: text
            })
            expect([200, 400], `${reply.status} for ${text}: ${reply.text}`).toContain(reply.status)
            if (reply.status === 200) {
              const asked = JSON.parse(text).status
              expect(reply.json).toEqual({ merchant_id: m.merchantId, status: asked })
              expect(yield* TestApp.logSize).toBe(asked === "DISABLED" ? before + 1 : before)
            } else {
              expect(reply.json.payload).toEqual({})
              expect(reply.json.errors.length).toBeGreaterThan(0)
              expect(yield* TestApp.logSize).toBe(before)
            }
          })
        ),
      { fastCheck: { numRuns: 30 } }
    )

    it.live(
      "PUT status without the Bearer ADMIN_TOKEN is 401 and the account stays enabled",
      TestApp.withMerchant(function* (m) {
        const before = yield* TestApp.logSize
        for (const options of [
          {},
          { key: m.button.production },
          { headers: { authorization: "Bearer nope" } }
        ]) {
          const reply = yield* TestApp.send("PUT", `${merchantPath(m.merchantId)}/status`, {
            ...options,
            body: { status: "DISABLED" }
          })
          TestApp.expectError(reply, 401, "Unauthorized")
        }
        expect(yield* TestApp.logSize).toBe(before)
      })
    )
  })

  describe("unknown merchant", () => {
    it.live(
      "every merchant endpoint answers 404 MerchantNotFound for an unknown merchant id",
      TestApp.fresh(function* () {
        const base = merchantPath("MER_404")
        const replies = [
          yield* TestApp.admin("POST", `${base}/terminals`, {
            terminal_model: "SMART",
            terminal_serial: "SN-1",
            name: "x"
          }),
          yield* TestApp.admin("PATCH", `${base}/terminals/SN-1`, { api_enabled: true }),
          yield* TestApp.admin("PUT", `${base}/payment-methods`, { terminal: { POS: true } }),
          yield* TestApp.admin("PUT", `${base}/webhook`, {
            url: "https://a.example/h",
            mode: "production"
          }),
          yield* TestApp.admin("DELETE", `${base}/webhook?mode=production`),
          yield* TestApp.admin("POST", `${base}/keys/rotate`, {
            integration: "terminal_api",
            mode: "test"
          }),
          yield* TestApp.admin("PUT", `${merchantPath("not-an-id")}/payment-methods`, {
            terminal: { POS: true }
          }),
          yield* TestApp.setStatus("MER_404", "DISABLED"),
          yield* TestApp.setStatus("MER_404", "ENABLED")
        ]
        for (const reply of replies) {
          TestApp.expectError(reply, 404, "MerchantNotFound")
        }
        expect(yield* TestApp.logSize).toBe(0)
      })
    )
  })

  describe("clock", () => {
    it.live(
      "POST clock/advance moves the virtual clock: 200 {now}",
      TestApp.fresh(function* () {
        const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: 3600 })
        expect(reply.status).toBe(200)
        expect(reply.json).toEqual({ now: "2026-11-21T16:00:00.000Z" })
        const time = yield* TestClock.VirtualTime
        expect(time.now()).toBe(TestClock.START + 3_600_000)
      })
    )

    it.live("clock/advance on the real clock is 409 ClockNotVirtual", () =>
      Effect.gen(function* () {
        const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: 1 })
        TestApp.expectError(reply, 409, "ClockNotVirtual")
      }).pipe(Effect.provide(TestApp.layer({ clock: TestClock.layerNotVirtual })))
    )

    it.live(
      "a negative advance is 400 on seconds",
      TestApp.fresh(function* () {
        const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: -1 })
        expectInvalid(reply, "seconds")
      })
    )
  })
})
