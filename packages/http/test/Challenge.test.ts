import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"

const setup = (body: Record<string, unknown>, payment_method: Record<string, unknown>) =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchant()
    // One warm-up read: the log-backed directory answers the first lookup of a new key late.
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
    yield* TestApp.send("POST", "/v1/payment-intent", { key: m.button.test, body })
    const attempt = yield* TestApp.send("POST", "/v1/payment", {
      key: m.button.test,
      body: { reference_id: body.reference_id, payment_method }
    })
    const next = attempt.json.next_actions ?? attempt.json.payload.next_actions
    return { key: m.button.test, path: new URL(next.redirect_url).pathname }
  })

const card = { name: "CREDIT_CARD", card_number: "4111111111111111" }
const withCallback = {
  reference_id: "order-1",
  amount: { currency: "COP", total_amount: 555020 },
  description: "Two <b>coffees</b>",
  callback_url: "https://shop.example/back?order=1"
}
const post = (path: string, decision: string) =>
  TestApp.send("POST", path, {
    body: `decision=${decision}`,
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })

describe("the 3DS challenge page", () => {
  it.live("GET shows the amount, the escaped description, the masked card and approve/decline buttons", () =>
    Effect.gen(function* () {
      const { path } = yield* setup(withCallback, card)
      const page = yield* TestApp.send("GET", path)
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toMatch(/^text\/html/)
      expect(page.text).toContain("COP 555,020")
      expect(page.text).toContain("Two &lt;b&gt;coffees&lt;/b&gt;")
      expect(page.text).toContain("411111******1111")
      expect(page.text).toContain('id="approve"')
      expect(page.text).toContain('id="decline"')
    }).pipe(Effect.provide(TestApp.layer()))
  )

  it.live("a wrong token or transaction is a 404 page and changes nothing", () =>
    Effect.gen(function* () {
      const { key, path } = yield* setup(withCallback, card)
      const wrong = path.replace(/[0-9a-f]{12}$/, "ffffffffffff")
      expect((yield* TestApp.send("GET", wrong)).status).toBe(404)
      expect((yield* post(wrong, "approve")).status).toBe(404)
      expect((yield* TestApp.send("GET", "/challenge/3ds/TRX_404/x")).status).toBe(404)
      expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("RUNNING")
    }).pipe(Effect.provide(TestApp.layer()))
  )

  it.live(
    "the callback_url is kept as given; a reloaded approval redirects again, a decline after it is 409",
    () =>
      Effect.gen(function* () {
        const { key, path } = yield* setup(withCallback, card)
        const first = yield* post(path, "approve")
        expect(first.status).toBe(303)
        expect(first.headers.location).toBe("https://shop.example/back?order=1")
        const reload = yield* post(path, "approve")
        expect(reload.status).toBe(303)
        expect((yield* post(path, "decline")).status).toBe(409)
        expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("APPROVED")
        const after = yield* TestApp.send("GET", path)
        expect(after.text).toContain('data-status="APPROVED"')
      }).pipe(Effect.provide(TestApp.layer()))
  )

  it.live("without a callback_url the page shows the result instead of redirecting", () =>
    Effect.gen(function* () {
      const { key, path } = yield* setup({ ...withCallback, callback_url: undefined }, card)
      const done = yield* post(path, "decline")
      expect(done.status).toBe(200)
      expect(done.text).toContain('data-status="REJECTED"')
      expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("REJECTED")
    }).pipe(Effect.provide(TestApp.layer()))
  )

  it.live("a PSE attempt goes through the same page as a bank: approved, C5 APPROVED", () =>
    Effect.gen(function* () {
      const { key, path } = yield* setup(
        { ...withCallback, amount: { currency: "COP", total_amount: 80000 } },
        { name: "PSE" }
      )
      const page = yield* TestApp.send("GET", path)
      expect(page.text).toContain("PSE payment")
      expect((yield* post(path, "approve")).status).toBe(303)
      expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("APPROVED")
    }).pipe(Effect.provide(TestApp.layer()))
  )

  it.live("a decision other than approve or decline is a 400 and changes nothing", () =>
    Effect.gen(function* () {
      const { key, path } = yield* setup(withCallback, card)
      expect((yield* post(path, "maybe")).status).toBe(400)
      expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("RUNNING")
    }).pipe(Effect.provide(TestApp.layer()))
  )
})
