import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { card } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"

/** An intent of `body` attempted with `payment_method`: the key, and the path of the page C4 sends to. */
const setup = (body: Record<string, unknown>, payment_method: Record<string, unknown>) =>
  Effect.gen(function* () {
    const key = (yield* TestApp.createMerchant()).button.test
    // One warm-up read: the log-backed directory answers the first lookup of a new key late.
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key })
    yield* Calls.createIntent(key, body)
    const attempt = yield* Calls.attempt(key, { reference_id: body.reference_id, payment_method })
    return { key, path: Calls.challengePath(attempt) }
  })

const withCallback = {
  reference_id: "order-1",
  amount: { currency: "COP", total_amount: 555020 },
  description: "Two <b>coffees</b>",
  callback_url: "https://shop.example/back?order=1"
}
const post = Calls.decide
/** What C5 reads of the payment `order-1`. */
const statusOf = (key: string) => Effect.map(Calls.readPayment(key, "order-1"), (reply) => reply.json.status)

TestApp.shared()("the 3DS challenge page", (it) => {
  it.effect(
    "GET shows the amount, the escaped description, the masked card and approve/decline buttons",
    Effect.fnUntraced(function* () {
      const { path } = yield* setup(withCallback, card)
      const page = yield* Calls.showPage(path)
      for (const shown of ["COP 555,020", "Two &lt;b&gt;coffees&lt;/b&gt;", "411111******1111"]) {
        expect(page.text).toContain(shown)
      }
      for (const button of ["approve", "decline"]) expect(page.text).toContain(`id="${button}"`)
    })
  )

  it.effect(
    "a wrong token or transaction is a 404 page and changes nothing",
    Effect.fnUntraced(function* () {
      const { key, path } = yield* setup(withCallback, card)
      const wrong = path.replace(/[0-9a-f]{12}$/, "ffffffffffff")
      expect((yield* TestApp.send("GET", wrong)).status).toBe(404)
      expect((yield* post(wrong, "approve")).status).toBe(404)
      expect((yield* TestApp.send("GET", "/challenge/3ds/TRX_404/x")).status).toBe(404)
      expect(yield* statusOf(key)).toBe("RUNNING")
    })
  )

  it.effect(
    "the callback_url is kept as given; a reloaded approval redirects again, a decline after it is 409",
    Effect.fnUntraced(function* () {
      const { key, path } = yield* setup(withCallback, card)
      const first = yield* post(path, "approve")
      expect(first.status).toBe(303)
      expect(first.headers.location).toBe("https://shop.example/back?order=1")
      const reload = yield* post(path, "approve")
      expect(reload.status).toBe(303)
      expect((yield* post(path, "decline")).status).toBe(409)
      expect(yield* statusOf(key)).toBe("APPROVED")
      const after = yield* TestApp.send("GET", path)
      expect(after.text).toContain('data-status="APPROVED"')
    })
  )

  it.effect(
    "without a callback_url the page shows the result instead of redirecting",
    Effect.fnUntraced(function* () {
      const { key, path } = yield* setup({ ...withCallback, callback_url: undefined }, card)
      const done = yield* post(path, "decline")
      expect(done.status).toBe(200)
      expect(done.text).toContain('data-status="REJECTED"')
      expect(yield* statusOf(key)).toBe("REJECTED")
    })
  )

  it.effect(
    "a PSE attempt goes through the same page as a bank: approved, C5 APPROVED",
    Effect.fnUntraced(function* () {
      const { key, path } = yield* setup(
        { ...withCallback, amount: { currency: "COP", total_amount: 80000 } },
        { name: "PSE" }
      )
      const page = yield* TestApp.send("GET", path)
      expect(page.text).toContain("PSE payment")
      expect((yield* post(path, "approve")).status).toBe(303)
      expect(yield* statusOf(key)).toBe("APPROVED")
    })
  )

  it.effect(
    "a decision other than approve or decline is a 400 and changes nothing",
    Effect.fnUntraced(function* () {
      const { key, path } = yield* setup(withCallback, card)
      expect((yield* post(path, "maybe")).status).toBe(400)
      expect(yield* statusOf(key)).toBe("RUNNING")
    })
  )
})
