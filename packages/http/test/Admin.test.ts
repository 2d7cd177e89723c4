import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "./support/TestClock.js"
import * as TestApp from "./support/TestApp.js"

const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(effect, TestApp.layer()) as Effect.Effect<A, E>

const merchantPath = (id: string) => `/admin/v1/merchants/${id}`

describe("admin API", () => {
  describe("POST /admin/v1/merchants", () => {
    it.live("creates a merchant: 201 with merchant_id and both integrations' production and test keys", () =>
      run(
        Effect.gen(function* () {
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
    )

    it.live("a merchant name is required and not blank (400 ValidationError on name)", () =>
      run(
        Effect.gen(function* () {
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
    )

    it.live("admin calls without the Bearer ADMIN_TOKEN are 401 in the envelope", () =>
      run(
        Effect.gen(function* () {
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
            expect(reply.status).toBe(401)
            expect(reply.json).toMatchObject({ payload: {}, errors: [{ code: "Unauthorized" }] })
          }
          expect(yield* TestApp.logSize).toBe(0)
        })
      )
    )
  })

  describe("terminals", () => {
    it.live("POST terminals binds a terminal: 201 with the A2 entry and api_enabled false", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("POST", `${merchantPath(m.merchantId)}/terminals`, {
            terminal_model: "SMART",
            terminal_serial: "SN-0001",
            name: "Caja 1"
          })
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
    )

    it.live("binding an unsupported terminal model is 400 on terminal_model", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("POST", `${merchantPath(m.merchantId)}/terminals`, {
            terminal_model: "smart_pro",
            terminal_serial: "SN-0001",
            name: "Caja 1"
          })
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
    )

    it.live("binding a serial bound as something else is 409 TerminalAlreadyBound", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const path = `${merchantPath(m.merchantId)}/terminals`
          const first = { terminal_model: "SMART", terminal_serial: "SN-0001", name: "Caja 1" }
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
    )

    it.live("PATCH terminals selects and deselects a terminal for the API: 200 with the terminal", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const base = `${merchantPath(m.merchantId)}/terminals`
          yield* TestApp.admin("POST", base, {
            terminal_model: "SMART_PRO",
            terminal_serial: "SN-0001",
            name: "Caja 1"
          })
          const on = yield* TestApp.admin("PATCH", `${base}/SN-0001`, { api_enabled: true })
          expect(on.status).toBe(200)
          expect(on.json).toMatchObject({ terminal_serial: "SN-0001", api_enabled: true, status: "BINDED" })
          const off = yield* TestApp.admin("PATCH", `${base}/SN-0001`, { api_enabled: false })
          expect(off.json.api_enabled).toBe(false)
        })
      )
    )

    it.live("PATCH of a terminal that is not bound is 404 TerminalNotFound", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("PATCH", `${merchantPath(m.merchantId)}/terminals/SN-9`, {
            api_enabled: true
          })
          expect(reply.status).toBe(404)
          expect(reply.json.errors[0].code).toBe("TerminalNotFound")
        })
      )
    )
  })

  describe("payment methods", () => {
    it.live("a new merchant has POS on, the other terminal methods off and no link methods", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("PUT", `${merchantPath(m.merchantId)}/payment-methods`, {})
          expect(reply.status).toBe(200)
          expect(reply.json).toEqual({
            terminal: {
              POS: true,
              WALLET_A: false,
              WALLET_B: false,
              PAY_BY_LINK: false,
              PAY_BY_QR_SERVICE: false
            },
            link: {}
          })
        })
      )
    )

    it.live("PUT payment-methods replaces each section given: 200 with the methods after", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const path = `${merchantPath(m.merchantId)}/payment-methods`
          const first = yield* TestApp.admin("PUT", path, {
            terminal: { POS: true, WALLET_A: true },
            link: { CREDIT_CARD: { min: 1000, max: 5000000 }, PSE: { min: 1000, max: 100000 } }
          })
          expect(first.status).toBe(200)
          expect(first.json).toEqual({
            terminal: {
              POS: true,
              WALLET_A: true,
              WALLET_B: false,
              PAY_BY_LINK: false,
              PAY_BY_QR_SERVICE: false
            },
            link: { CREDIT_CARD: { min: 1000, max: 5000000 }, PSE: { min: 1000, max: 100000 } }
          })
          const second = yield* TestApp.admin("PUT", path, { link: { CREDIT_CARD: { min: 1, max: 2 } } })
          expect(second.json).toEqual({
            terminal: {
              POS: true,
              WALLET_A: true,
              WALLET_B: false,
              PAY_BY_LINK: false,
              PAY_BY_QR_SERVICE: false
            },
            link: { CREDIT_CARD: { min: 1, max: 2 } }
          })
        })
      )
    )

    it.live("link bounds with min above max are 400 on link.<method> and change nothing", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const before = yield* TestApp.logSize
          const reply = yield* TestApp.admin("PUT", `${merchantPath(m.merchantId)}/payment-methods`, {
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
    )

    it.live("an unknown method name or a negative bound is 400", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const path = `${merchantPath(m.merchantId)}/payment-methods`
          const unknown = yield* TestApp.admin("PUT", path, { terminal: { BITCOIN: true } })
          expect(unknown.status).toBe(400)
          expect(unknown.json.errors[0].field).toBe("terminal.BITCOIN")
          const negative = yield* TestApp.admin("PUT", path, { link: { PSE: { min: -1, max: 5 } } })
          expect(negative.status).toBe(400)
          expect(negative.json.errors[0].field).toBe("link.PSE.min")
        })
      )
    )
  })

  describe("webhooks", () => {
    it.live("PUT webhook registers the URL of a mode: 200 {url, mode}; DELETE ?mode= is 204", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const path = `${merchantPath(m.merchantId)}/webhook`
          const prod = yield* TestApp.admin("PUT", path, {
            url: "https://shop.example/hooks",
            mode: "production"
          })
          expect(prod.status).toBe(200)
          expect(prod.json).toEqual({ url: "https://shop.example/hooks", mode: "production" })
          const test = yield* TestApp.admin("PUT", path, { url: "http://localhost:9000/hooks", mode: "test" })
          expect(test.status).toBe(200)
          const deleted = yield* TestApp.admin("DELETE", `${path}?mode=test`)
          expect(deleted.status).toBe(204)
          expect(deleted.text).toBe("")
          const again = yield* TestApp.admin("DELETE", `${path}?mode=test`)
          expect(again.status).toBe(204)
        })
      )
    )

    it.live("the production webhook must be https (400 on url)", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("PUT", `${merchantPath(m.merchantId)}/webhook`, {
            url: "http://shop.example/hooks",
            mode: "production"
          })
          expect(reply.status).toBe(400)
          expect(reply.json.errors[0]).toMatchObject({ code: "ValidationError", field: "url" })
        })
      )
    )

    it.live("DELETE webhook without a valid mode is 400 on mode", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const none = yield* TestApp.admin("DELETE", `${merchantPath(m.merchantId)}/webhook`)
          expect(none.status).toBe(400)
          expect(none.json.errors[0]).toMatchObject({ code: "ValidationError", field: "mode" })
          const bad = yield* TestApp.admin("DELETE", `${merchantPath(m.merchantId)}/webhook?mode=staging`)
          expect(bad.status).toBe(400)
        })
      )
    )
  })

  describe("keys", () => {
    it.live(
      "POST keys/rotate: 200 with the new pair; the old key stops working, the other mode's does not",
      () =>
        run(
          Effect.gen(function* () {
            const m = yield* TestApp.createMerchant()
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
    )

    it.live("a body naming no integration is 400 on integration", () =>
      run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchant()
          const reply = yield* TestApp.admin("POST", `${merchantPath(m.merchantId)}/keys/rotate`, {
            integration: "pos",
            mode: "test"
          })
          expect(reply.status).toBe(400)
          expect(reply.json.errors[0].field).toBe("integration")
        })
      )
    )
  })

  describe("unknown merchant", () => {
    it.live("every merchant endpoint answers 404 MerchantNotFound for an unknown merchant id", () =>
      run(
        Effect.gen(function* () {
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
            })
          ]
          for (const reply of replies) {
            expect(reply.status).toBe(404)
            expect(reply.json).toMatchObject({ payload: {}, errors: [{ code: "MerchantNotFound" }] })
          }
          expect(yield* TestApp.logSize).toBe(0)
        })
      )
    )
  })

  describe("clock", () => {
    it.live("POST clock/advance moves the virtual clock: 200 {now}", () =>
      run(
        Effect.gen(function* () {
          const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: 3600 })
          expect(reply.status).toBe(200)
          expect(reply.json).toEqual({ now: "2026-11-21T16:00:00.000Z" })
          const time = yield* TestClock.VirtualTime
          expect(time.now()).toBe(TestClock.START + 3_600_000)
        })
      )
    )

    it.live("clock/advance on the real clock is 409 ClockNotVirtual", () =>
      Effect.gen(function* () {
        const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: 1 })
        expect(reply.status).toBe(409)
        expect(reply.json.errors[0].code).toBe("ClockNotVirtual")
      }).pipe(Effect.provide(TestApp.layer({ clock: TestClock.layerNotVirtual })))
    )

    it.live("a negative advance is 400 on seconds", () =>
      run(
        Effect.gen(function* () {
          const reply = yield* TestApp.admin("POST", "/admin/v1/clock/advance", { seconds: -1 })
          expect(reply.status).toBe(400)
          expect(reply.json.errors[0].field).toBe("seconds")
        })
      )
    )
  })
})
