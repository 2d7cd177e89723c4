/**
 * The hosted checkout page through the real handler on a socket, without a browser: statuses, the
 * form flow (POST then redirect), escaping of merchant-supplied text, language, and no 500 whatever
 * the form holds. The browser suite (packages/server/test/browser) drives the same pages in Chromium.
 */
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Nanos from "@cobro/domain/Nanos"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Form from "@cobro/pages/CheckoutPageForm"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

/** A merchant offering every link method from 1,000 to 5,000,000, with its test payment-button key. */
const merchant = (name = "Café Central") =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchant(name)
    const bounds = { min: 1000, max: 5000000 }
    yield* TestApp.setLinkMethods(m.merchantId, {
      CREDIT_CARD: bounds,
      PSE: bounds,
      BOTON_BANK: bounds,
      WALLET_A: bounds
    })
    return m.button.test
  })

const createLink = Calls.newLink
const status = Calls.linkStatus
const post = Calls.postForm
const cardForm = Bodies.cardForm

const close = Bodies.closeLink

/**
 * Given a merchant (its test button key) and its CLOSE link of `total` (and `extra`): the key, the
 * link's id and path.
 */
const givenLink = (total: number, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const key = yield* merchant()
    return { key, ...(yield* createLink(key, close(total, extra))) }
  })

/** On a {@link givenLink}, the payer sends the page's card form: the link, and the answer. */
const paidByCard = (total: number) =>
  Effect.gen(function* () {
    const link = yield* givenLink(total)
    return { ...link, answer: yield* post(link.path, cardForm()) }
  })

describe("the checkout page", { timeout: 60_000 }, () => {
  it.live(
    "B2's url is served: merchant, description, amount in pesos, only the link's methods, sandbox notice",
    TestApp.fresh(function* () {
      const { path } = yield* givenLink(50_000, {
        description: "Dos cafés",
        payment_methods: ["CREDIT_CARD", "PSE"]
      })
      expect(path).toMatch(/^\/checkout\/LNK_/)
      const page = yield* Calls.showPage(path)
      expect(page.text).toContain('<html lang="es">')
      expect(page.text).toContain("Café Central")
      expect(page.text).toContain("Dos cafés")
      expect(page.text).toContain("$ 50.000")
      expect(page.text).toContain('value="CREDIT_CARD"')
      expect(page.text).toContain('value="PSE"')
      expect(page.text).not.toContain('value="WALLET_A"')
      expect(page.text).toContain('id="sandbox-notice"')
      expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
      expect(page.headers["cache-control"]).toBe("no-store")
    })
  )

  it.live(
    "a production link says nothing of the sandbox; an image_url is shown",
    TestApp.withMerchant(function* (m) {
      yield* TestApp.setLinkMethods(m.merchantId, { CREDIT_CARD: { min: 1000, max: 5000000 } })
      const { path } = yield* createLink(
        m.button.production,
        close(50_000, { image_url: "https://cdn.example/cafe.png" })
      )
      const page = yield* TestApp.send("GET", path)
      expect(page.text).not.toContain('id="sandbox-notice"')
      expect(page.text).toContain('src="https://cdn.example/cafe.png"')
    })
  )

  it.live(
    "the language follows Accept-Language (English: COP 50,000), and ?lang= switches it",
    TestApp.fresh(function* () {
      const { path } = yield* givenLink(50_000)
      const english = yield* TestApp.send("GET", path, { headers: { "accept-language": "en-US,en;q=0.9" } })
      expect(english.text).toContain('<html lang="en">')
      expect(english.text).toContain("Pay COP 50,000")
      const french = yield* TestApp.send("GET", path, {
        headers: { "accept-language": "fr-FR, en;q=0.5, es;q=0.4" }
      })
      expect(french.text).toContain('<html lang="en">')
      const switched = yield* TestApp.send("GET", `${path}?lang=es`, {
        headers: { "accept-language": "en" }
      })
      expect(switched.text).toContain("Pagar $ 50.000")
    })
  )

  it.live(
    "merchant-supplied text is escaped: name, description, reference, image_url, callback_url (XSS)",
    TestApp.given(merchant(`<script>alert("name")</script>`), function* (key) {
      const { path } = yield* createLink(
        key,
        close(50_000, {
          description: `"><img src=x onerror=alert(1)>`,
          image_url: `https://cdn.example/a.png?x="><script>alert(2)</script>`,
          callback_url: `https://shop.example/back?a="><script>alert(3)</script>`
        })
      )
      const page = yield* TestApp.send("GET", path)
      expect(page.status).toBe(200)
      expect(page.text).not.toContain("<script>alert")
      expect(page.text).not.toContain("<img src=x")
      expect(page.text).toContain("&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;")
      expect(page.text).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;")
      // The only script is the page's own, allowed by its hash.
      expect(page.text.match(/<script>/g)).toHaveLength(1)
      expect(page.headers["content-security-policy"]).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/)
    })
  )

  it.live(
    "an unknown link is a 404 page in HTML, never JSON",
    TestApp.fresh(function* () {
      const page = yield* TestApp.send("GET", "/checkout/LNK_nope")
      TestApp.expectPage(page, 404)
      expect((yield* post("/checkout/LNK_nope", cardForm())).status).toBe(404)
      expect((yield* TestApp.send("GET", "/checkout/LNK_nope/payments/TRX_1")).status).toBe(404)
    })
  )

  it.live(
    "an approving card: 303 to the confirmation, the link PAID (B3)",
    TestApp.fresh(function* () {
      const { key, id, path, answer: paid } = yield* paidByCard(50_000)
      expect(paid.status, paid.text).toBe(303)
      expect(paid.headers.location).toMatch(new RegExp(`^${path}/payments/TRX_[A-Za-z0-9]+\\?lang=es$`))
      const confirmation = yield* TestApp.send("GET", paid.headers.location!)
      expect(confirmation.status).toBe(200)
      expect(confirmation.text).toContain('data-status="PAID"')
      expect(yield* status(key, id)).toBe("PAID")
      // The link's page now shows its state and no form; paying again is refused with the state.
      const after = yield* TestApp.send("GET", path)
      expect(after.text).toContain('data-status="PAID"')
      expect(after.text).not.toContain('id="pay-form"')
      const again = yield* post(path, cardForm())
      expect(again.status).toBe(409)
      expect(again.text).toContain('data-status="PAID"')
    })
  )

  it.live(
    "with a callback_url, an approved payment sends the customer there, the URL unchanged",
    TestApp.fresh(function* () {
      const { path } = yield* givenLink(50_000, { callback_url: "https://shop.example/back?o=1" })
      const paid = yield* post(path, cardForm())
      expect(paid.status).toBe(303)
      expect(paid.headers.location).toBe("https://shop.example/back?o=1")
    })
  )

  it.live(
    "a declined card (sandbox 555042): back to the page with the message, the link ACTIVE",
    TestApp.fresh(function* () {
      const { key, id, answer: declined } = yield* paidByCard(555_042)
      expect(declined.status).toBe(303)
      expect(declined.headers.location).toMatch(/\?declined=TRX_/)
      const page = yield* TestApp.send("GET", declined.headers.location!)
      expect(page.text).toContain('id="declined"')
      expect(page.text).toContain('id="pay-form"')
      expect(yield* status(key, id)).toBe("ACTIVE")
    })
  )

  it.live(
    "bad card fields: the page again (400) with one message per field, nothing recorded",
    TestApp.fresh(function* () {
      const { key, id, path } = yield* givenLink(50_000)
      const before = yield* TestApp.logSize
      const bad = yield* post(
        path,
        cardForm({ card_number: "4111 1111 1111 1112", card_expiry: "13/20", card_cvc: "1", card_name: "" })
      )
      expect(bad.status).toBe(400)
      for (const field of ["card_number", "card_name", "card_expiry", "card_cvc"]) {
        expect(bad.text).toContain(`id="${field}-error"`)
      }
      expect(bad.text).toContain('id="error-summary"')
      // The card number and CVC are never written back into the page.
      expect(bad.text).not.toContain("4111 1111 1111 1112")
      expect(yield* TestApp.logSize).toBe(before)
      expect(yield* status(key, id)).toBe("ACTIVE")
    })
  )

  it.live(
    "an OPEN link refuses an amount outside the method's bounds (400) and takes one within",
    TestApp.given(merchant(), function* (key) {
      const { id, path } = yield* createLink(key, { amount_type: "OPEN" })
      const page = yield* TestApp.send("GET", path)
      expect(page.text).toContain('id="amount"')
      for (const amount of ["999", "5000001", "12,5", "abc", ""]) {
        const refused = yield* post(path, cardForm({ amount }))
        expect(refused.status, amount).toBe(400)
        expect(refused.text).toContain('id="amount-error"')
      }
      expect((yield* Calls.readLink(key, id)).json.transaction_id).toBeNull()
      const paid = yield* post(path, cardForm({ amount: "25.000" }))
      expect(paid.status).toBe(303)
      const record = (yield* Calls.readLink(key, id)).json
      expect([record.status, record.total]).toEqual(["PAID", 25000])
    })
  )

  it.live(
    "EXPIRED, CANCELLED: the page shows the state and cannot be paid (409)",
    TestApp.given(merchant(), function* (key) {
      const expiring = yield* createLink(
        key,
        close(50_000, { expiration_date: Nanos.fromEpochMillis(TestClock.START + 3_600_000) })
      )
      const cancelled = yield* createLink(key, close(50_000))
      yield* LinkPayments.cancel(cancelled.id)
      const clock = yield* TestClock.VirtualTime
      yield* clock.advance(2 * 3_600_000)
      for (const [link, state] of [
        [expiring, "EXPIRED"],
        [cancelled, "CANCELLED"]
      ] as const) {
        const page = yield* TestApp.send("GET", link.path)
        expect(page.text).toContain(`data-status="${state}"`)
        expect(page.text).not.toContain('id="pay-form"')
        const refused = yield* post(link.path, cardForm())
        expect(refused.status).toBe(409)
        expect(yield* status(key, link.id)).toBe(state)
      }
    })
  )

  it.live(
    "PSE: to the simulated bank, PROCESSING meanwhile (a second tab is told), approve → PAID",
    TestApp.fresh(function* () {
      const { key, id, path } = yield* givenLink(80_000)
      const noBank = yield* post(path, { method: "PSE", bank: "" })
      expect(noBank.status).toBe(400)
      expect(noBank.text).toContain('id="bank-error"')
      const started = yield* post(path, { method: "PSE", bank: "1007" })
      expect(started.status).toBe(303)
      const bank = yield* TestApp.send("GET", started.headers.location!)
      expect(bank.text).toContain('id="approve"')
      expect(yield* status(key, id)).toBe("PROCESSING")
      const secondTab = yield* TestApp.send("GET", path)
      expect(secondTab.text).toContain('data-status="PROCESSING"')
      expect(secondTab.text).toContain('id="continue"')
      expect((yield* post(path, cardForm())).status).toBe(409)
      const stepPath = started.headers.location!.split("?")[0]!
      expect((yield* post(stepPath, { decision: "maybe" })).status).toBe(400)
      const approved = yield* post(stepPath, { decision: "approve" })
      expect(approved.status).toBe(303)
      expect(yield* status(key, id)).toBe("PAID")
      // A reloaded approval changes nothing; a decline after it is refused.
      expect((yield* post(stepPath, { decision: "approve" })).status).toBe(303)
      expect((yield* post(stepPath, { decision: "decline" })).status).toBe(409)
    })
  )

  it.live(
    "a link's 3DS challenge (sandbox 555020): decline → ACTIVE; a wallet payment declined likewise",
    TestApp.fresh(function* () {
      const { key, id, path, answer: started } = yield* paidByCard(555_020)
      const challenge = yield* TestApp.send("GET", started.headers.location!)
      expect(challenge.text).toContain("3-D Secure")
      const declined = yield* post(started.headers.location!.split("?")[0]!, { decision: "decline" })
      expect(declined.headers.location).toMatch(/\?declined=TRX_/)
      expect(yield* status(key, id)).toBe("ACTIVE")
      const badPhone = yield* post(path, { method: "WALLET_A", phone: "12" })
      expect(badPhone.status).toBe(400)
      const wallet = yield* post(path, { method: "WALLET_A", phone: "300 123 4567" })
      expect(wallet.status).toBe(303)
      yield* post(wallet.headers.location!.split("?")[0]!, { decision: "decline" })
      expect(yield* status(key, id)).toBe("ACTIVE")
    })
  )

  it.live(
    "two tabs submitting at once pay once: one 303, the others 409, one transaction",
    TestApp.fresh(function* () {
      const { key, id, path } = yield* givenLink(50_000)
      const replies = yield* Effect.all(
        Array.from({ length: 5 }, () => post(path, cardForm())),
        { concurrency: "unbounded" }
      )
      expect(replies.map((r) => r.status).sort()).toEqual([303, 409, 409, 409, 409])
      const log = yield* TestApp.logSize
      expect(log).toBeGreaterThan(0)
      expect(yield* status(key, id)).toBe("PAID")
    })
  )

  it.live.prop(
    "whatever the form body holds, the page answers HTML with 303, 400 or 409, never a 500",
    [
      FastCheck.oneof(
        FastCheck.string({ maxLength: 300 }),
        FastCheck.dictionary(
          FastCheck.constantFrom(
            "method",
            "amount",
            "card_number",
            "card_expiry",
            "card_cvc",
            "bank",
            "phone",
            "lang",
            "installments"
          ),
          FastCheck.string({ maxLength: 40 })
        ).map((d) => new URLSearchParams(d).toString()),
        FastCheck.constantFrom(
          "%zz%",
          "a=%E0%A4%A",
          "method=CREDIT_CARD&".repeat(500),
          '{"method":"PSE"}',
          "\u0000\uffff"
        )
      )
    ],
    ([body]) =>
      TestApp.run(
        Effect.gen(function* () {
          const key = yield* merchant()
          const { path } = yield* createLink(key, { amount_type: "OPEN" })
          const reply = yield* post(path, body)
          expect([303, 400, 409], `${reply.status} for ${JSON.stringify(body).slice(0, 200)}`).toContain(
            reply.status
          )
          if (reply.status !== 303) expect(reply.headers["content-type"]).toMatch(/^text\/html/)
        })
      ),
    { fastCheck: { numRuns: 40 } }
  )

  it.live(
    "a form body larger than the page's form could be is the page again, not a failure",
    TestApp.fresh(function* () {
      const { key, id, path } = yield* givenLink(50_000)
      const huge = yield* post(path, `method=CREDIT_CARD&card_name=${"x".repeat(Form.MAX_BODY_BYTES)}`)
      expect(huge.status).toBe(400)
      expect(huge.text).toContain('id="error-summary"')
      expect(yield* status(key, id)).toBe("ACTIVE")
    })
  )

  it.live("a configured CHECKOUT_URL path is where the page is served", () =>
    Effect.gen(function* () {
      const { path } = yield* givenLink(50_000)
      expect(path).toMatch(/^\/pagar\/LNK_/)
      expect((yield* TestApp.send("GET", path)).status).toBe(200)
    }).pipe(
      Effect.provide(
        TestApp.layer().pipe(Layer.provide(PublicUrls.layer({ checkoutUrl: "https://pay.example/pagar/" })))
      )
    )
  )
})
