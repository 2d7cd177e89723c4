import { describe, expect, it } from "@effect/vitest"
import { TransactionId } from "@cobro/domain/Ids"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const LINKS = "/online/link/v1"
const NANOS_START = BigInt(TestClock.START) * 1_000_000n
/** An instant above 2^53 nanoseconds that a double cannot hold: 2030-01-18T…123456789. */
const EXACT_EXPIRY = 1_895_000_000_123_456_789n

type Methods = Record<string, { readonly min: number; readonly max: number }>

/** A merchant offering these link methods, configured through the admin API. */
const merchantWith = (link: Methods = { CREDIT_CARD: { min: 1_000, max: 5_000_000 } }) =>
  Effect.gen(function* () {
    const merchant = yield* TestApp.createMerchant()
    yield* TestApp.setLinkMethods(merchant.merchantId, link)
    return merchant
  })

const { createLink, readLink } = Calls

/** CREDIT_CARD and PSE links, each with its bounds. */
const CARD_AND_PSE = {
  CREDIT_CARD: { min: 1_000, max: 5_000_000 },
  PSE: { min: 2_500, max: 3_000_000 }
}

/** A B2 request that breaks one rule: 400 ValidationError on `field`, nothing stored. */
const refused = (body: unknown, field: string, methods?: Methods) =>
  Effect.gen(function* () {
    const merchant = yield* merchantWith(methods)
    const reply = yield* TestApp.storesNothing(createLink(merchant.button.test, body))
    expect(reply.status, reply.text).toBe(400)
    expect(reply.json.payload).toEqual({})
    expect(reply.json.errors).toHaveLength(1)
    expect(reply.json.errors[0]).toMatchObject({ code: "ValidationError", field })
  })

/** A B2 request that keeps every rule: 201. */
const accepted = (body: unknown, methods?: Methods) =>
  Effect.gen(function* () {
    const merchant = yield* merchantWith(methods)
    const reply = yield* createLink(merchant.button.test, body)
    expect(reply.status, reply.text).toBe(201)
    return { merchant, id: reply.json.payload.payment_link as string }
  })

const OPEN = { amount_type: "OPEN" }

/** OPEN B2 requests that set `field` to each of `values`: each keeps every rule (201). */
const acceptedEach = (field: string, values: ReadonlyArray<unknown>) =>
  Effect.forEach(values, (value) => accepted({ ...OPEN, [field]: value }), { discard: true })

/** OPEN B2 requests that set `field` to each of `values`: each refused on that field. */
const refusedEach = (field: string, values: ReadonlyArray<unknown>) =>
  Effect.forEach(values, (value) => refused({ ...OPEN, [field]: value }, field), { discard: true })
const close = Bodies.closeLink

describe("B1: GET /online/link/v1/payment_methods", { timeout: 30_000 }, () => {
  it.live(
    "B1: payload.payment_methods maps each method the merchant offers to its {max, min}",
    TestApp.given(merchantWith(CARD_AND_PSE), function* (merchant) {
      const reply = yield* TestApp.send("GET", `${LINKS}/payment_methods`, { key: merchant.button.test })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({ payload: { payment_methods: CARD_AND_PSE }, errors: [] })
      // The production key sees the same bounds: they are the merchant's.
      const production = yield* TestApp.send("GET", `${LINKS}/payment_methods`, {
        key: merchant.button.production
      })
      expect(production.json).toEqual(reply.json)
    })
  )

  it.live(
    "B1 follows the admin configuration: a method no longer offered is no longer listed",
    TestApp.fresh(function* () {
      const merchant = yield* merchantWith({
        CREDIT_CARD: { min: 1_000, max: 5_000_000 },
        PSE: { min: 1, max: 2 }
      })
      yield* TestApp.admin("PUT", `/admin/v1/merchants/${merchant.merchantId}/payment-methods`, {
        link: { WALLET_A: { min: 500, max: 500 } }
      })
      const reply = yield* TestApp.send("GET", `${LINKS}/payment_methods`, { key: merchant.button.test })
      expect(reply.json.payload.payment_methods).toEqual({ WALLET_A: { min: 500, max: 500 } })
    })
  )

  it.live(
    "B1 lists no method for a merchant that offers none",
    TestApp.withMerchant(function* (merchant) {
      const reply = yield* TestApp.send("GET", `${LINKS}/payment_methods`, { key: merchant.button.test })
      expect(reply.json).toEqual({ payload: { payment_methods: {} }, errors: [] })
    })
  )

  it.live(
    "the link API takes the payment-button key: none is 401, the terminal-API key is 403",
    TestApp.given(merchantWith(), function* (merchant) {
      for (const [method, path, body] of [
        ["GET", `${LINKS}/payment_methods`, undefined],
        ["POST", LINKS, OPEN],
        ["GET", `${LINKS}/LNK_1`, undefined]
      ] as const) {
        const none = yield* TestApp.send(method, path, { body })
        TestApp.expectError(none, 401, "Unauthorized")
        const terminal = yield* TestApp.send(method, path, { body, key: merchant.terminal.test })
        TestApp.expectError(terminal, 403, "Forbidden")
      }
    })
  )
})

describe("B2: POST /online/link/v1", { timeout: 30_000 }, () => {
  it.live(
    "B2: 201 with payload.payment_link (prefix LNK_) and payload.url {checkout_url}/<payment_link>",
    TestApp.given(merchantWith(), function* (merchant) {
      const reply = yield* createLink(merchant.button.test, close(50_000))
      expect(reply.status).toBe(201)
      expect(reply.json.errors).toEqual([])
      const id = reply.json.payload.payment_link
      expect(id).toMatch(/^LNK_[A-Za-z0-9]+$/)
      expect(reply.json.payload.url).toMatch(new RegExp(`^http://[^/]+/checkout/${id}$`))
    })
  )

  it.live("B2: the url is under the configured checkout_url", () =>
    Effect.gen(function* () {
      const merchant = yield* merchantWith()
      const reply = yield* createLink(merchant.button.test, OPEN)
      expect(reply.json.payload.url).toBe(`https://pay.cobro.example/c/${reply.json.payload.payment_link}`)
    }).pipe(
      Effect.provide(
        TestApp.layer().pipe(
          Layer.provide(
            PublicUrls.layer({
              publicUrl: "https://cobro.example",
              checkoutUrl: "https://pay.cobro.example/c/"
            })
          )
        )
      )
    )
  )

  it.live("B2: without checkout_url, the url is {public URL}/checkout/<payment_link>", () =>
    Effect.gen(function* () {
      const merchant = yield* merchantWith()
      const reply = yield* createLink(merchant.button.test, OPEN)
      expect(reply.json.payload.url).toBe(`https://cobro.example/checkout/${reply.json.payload.payment_link}`)
    }).pipe(
      Effect.provide(
        TestApp.layer().pipe(Layer.provide(PublicUrls.layer({ publicUrl: "https://cobro.example/" })))
      )
    )
  )

  TestApp.shared()("every field rule of the link request", (it) => {
    it.effect("amount_type is required", () => refused({}, "amount_type"))
    it.effect("amount_type is OPEN or CLOSE", () => refused({ amount_type: "FIXED" }, "amount_type"))
    it.effect("CLOSE: amount required (reported on amount)", () =>
      refused({ amount_type: "CLOSE" }, "amount")
    )
    it.effect("CLOSE: amount.total_amount required (reported on amount.total_amount)", () =>
      refused({ amount_type: "CLOSE", amount: { currency: "COP" } }, "amount.total_amount")
    )
    it.effect("OPEN: amount not required", () => accepted(OPEN))
    it.effect(
      "amount.currency is COP or USD",
      Effect.fnUntraced(function* () {
        yield* accepted(close(50_000, { amount: { total_amount: 50_000, currency: "USD" } }))
        yield* refused(
          { amount_type: "CLOSE", amount: { total_amount: 50_000, currency: "EUR" } },
          "amount.currency"
        )
      })
    )
    it.effect(
      "amount.taxes items: type VAT or CONSUMPTION, base and value numbers",
      Effect.fnUntraced(function* () {
        yield* accepted({
          amount_type: "CLOSE",
          amount: { total_amount: 11_900, taxes: [{ type: "CONSUMPTION", base: 10_000, value: 1_900 }] }
        })
        yield* refused(
          {
            amount_type: "CLOSE",
            amount: { total_amount: 11_900, taxes: [{ type: "ICA", base: 1, value: 1 }] }
          },
          "amount.taxes.0.type"
        )
      })
    )
    it.effect("total_amount includes taxes and tip: a total below their sum is refused", () =>
      refused(
        {
          amount_type: "CLOSE",
          amount: {
            total_amount: 2_000,
            tip_amount: 1_000,
            taxes: [{ type: "VAT", base: 5_000, value: 1_001 }]
          }
        },
        "amount.total_amount"
      )
    )
    it.effect(
      "reference: at most 60 characters",
      Effect.fnUntraced(function* () {
        yield* accepted({ ...OPEN, reference: "a".repeat(60) })
        yield* refused({ ...OPEN, reference: "a".repeat(61) }, "reference")
      })
    )
    it.effect(
      "reference: only letters, digits, _ and -",
      Effect.fnUntraced(function* () {
        yield* accepted({ ...OPEN, reference: "Order_42-b" })
        yield* refusedEach("reference", ["pedido-ñ", "order 42", "order.42", ""])
      })
    )
    it.effect(
      "description: 2 to 100 characters, counted as code points",
      Effect.fnUntraced(function* () {
        yield* acceptedEach("description", ["ok", "☕".repeat(100), "😀".repeat(100)])
        yield* refusedEach("description", ["x", "😀".repeat(101)])
      })
    )
    it.effect(
      "callback_url: a valid URL that starts with https://",
      Effect.fnUntraced(function* () {
        yield* accepted({ ...OPEN, callback_url: "https://shop.example/return?order=42" })
        yield* refusedEach("callback_url", [
          "http://shop.example/return",
          "https://",
          "shop.example",
          "HTTPS://shop.example"
        ])
      })
    )
    it.effect(
      "image_url: https and ends with .png or .jpg",
      Effect.fnUntraced(function* () {
        yield* acceptedEach("image_url", ["https://cdn.example/logo.png", "https://cdn.example/photo.jpg"])
        yield* refusedEach("image_url", [
          "https://cdn.example/logo.gif",
          "http://cdn.example/logo.png",
          "https://cdn.example/a.jpeg"
        ])
      })
    )
    it.effect(
      "payer_email: an e-mail address",
      Effect.fnUntraced(function* () {
        yield* accepted({ ...OPEN, payer_email: "ana@mail.co" })
        yield* refused({ ...OPEN, payer_email: "ana@" }, "payer_email")
      })
    )
    it.effect(
      "expiration_date: integer nanoseconds in the future",
      Effect.fnUntraced(function* () {
        yield* accepted({ ...OPEN, expiration_date: NANOS_START + 1n })
        yield* refused({ ...OPEN, expiration_date: NANOS_START }, "expiration_date")
        yield* refused({ ...OPEN, expiration_date: 1.5 }, "expiration_date")
        yield* refused({ ...OPEN, expiration_date: -1 }, "expiration_date")
      })
    )
    it.effect("payment_methods: names from the methods query", () =>
      refused({ ...OPEN, payment_methods: ["BITCOIN"] }, "payment_methods.0")
    )
    it.effect("payment_methods: a method the merchant does not offer is refused on its index", () =>
      refused({ ...OPEN, payment_methods: ["CREDIT_CARD", "PSE"] }, "payment_methods.1")
    )
    it.effect("payment_methods: a merchant that offers no method cannot create a link", () =>
      refused(OPEN, "payment_methods", {})
    )
    it.effect(
      "CLOSE: total_amount within the bounds of at least one allowed method (B1)",
      Effect.fnUntraced(function* () {
        const methods = { CREDIT_CARD: { min: 1_000, max: 5_000_000 }, PSE: { min: 10_000, max: 9_000_000 } }
        yield* accepted(close(1_000), methods)
        yield* accepted(close(9_000_000), methods)
        yield* refused(close(999), "amount.total_amount", methods)
        yield* refused(close(9_000_001), "amount.total_amount", methods)
        yield* refused(close(6_000_000, { payment_methods: ["CREDIT_CARD"] }), "amount.total_amount", methods)
      })
    )
  })

  it.live(
    "B2: a request that breaks several rules gets one error item per field",
    TestApp.given(merchantWith(), function* (merchant) {
      const reply = yield* createLink(merchant.button.test, {
        amount_type: "CLOSE",
        amount: { total_amount: 50_000, currency: "EUR" },
        reference: "ñ",
        description: "x",
        callback_url: "http://shop.example",
        image_url: "https://cdn.example/a.gif"
      })
      expect(reply.status).toBe(400)
      expect(reply.json.errors.map((e: any) => [e.code, e.field]).sort()).toEqual(
        [
          ["ValidationError", "amount.currency"],
          ["ValidationError", "callback_url"],
          ["ValidationError", "description"],
          ["ValidationError", "image_url"],
          ["ValidationError", "reference"]
        ].sort()
      )
    })
  )

  it.live(
    "B2: malformed JSON is a 400 in the envelope and stores nothing",
    TestApp.given(merchantWith(), function* (merchant) {
      const before = yield* TestApp.logSize
      const reply = yield* createLink(merchant.button.test, '{"amount_type": "OPEN",')
      TestApp.expectError(reply, 400, "MalformedJson")
      expect(yield* TestApp.logSize).toBe(before)
    })
  )

  it.live(
    "B2: a disabled merchant account cannot create links (403 MerchantDisabled)",
    TestApp.given(merchantWith(), function* (merchant) {
      yield* TestApp.disable(merchant.merchantId)
      const reply = yield* createLink(merchant.button.test, OPEN)
      TestApp.expectError(reply, 403, "MerchantDisabled")
    })
  )

  it.live(
    "a disabled merchant account: B2 is 403 MerchantDisabled in the envelope and stores nothing; B1 and B3 still answer",
    TestApp.given(merchantWith(), function* (merchant) {
      const created = yield* createLink(merchant.button.production, close(50_000))
      expect(created.status).toBe(201)
      const id = created.json.payload.payment_link as string
      yield* TestApp.disable(merchant.merchantId)
      const before = yield* TestApp.logSize
      for (const key of [merchant.button.test, merchant.button.production]) {
        const reply = yield* createLink(key, close(50_000))
        TestApp.expectOnlyError(
          reply,
          403,
          "MerchantDisabled",
          "the merchant account is disabled: it cannot create payment links"
        )
      }
      expect(yield* TestApp.logSize).toBe(before)
      const methods = yield* TestApp.send("GET", `${LINKS}/payment_methods`, { key: merchant.button.test })
      expect(methods.status).toBe(200)
      expect(methods.json.payload.payment_methods).toEqual({ CREDIT_CARD: { min: 1_000, max: 5_000_000 } })
      const record = yield* readLink(merchant.button.production, id)
      expect(record.status).toBe(200)
      expect(record.json.status).toBe("ACTIVE")
    })
  )
})

describe("B3: GET /online/link/v1/{payment_link}", { timeout: 30_000 }, () => {
  it.live(
    "B3: the link record, not wrapped in payload, with exact nanosecond dates",
    TestApp.given(merchantWith(), function* (merchant) {
      const created = yield* createLink(merchant.button.test, {
        amount_type: "CLOSE",
        amount: {
          currency: "COP",
          total_amount: 12_900,
          tip_amount: 1_000,
          taxes: [{ type: "VAT", base: 10_000, value: 1_900 }]
        },
        reference: "order-42",
        description: "Two coffees",
        expiration_date: EXACT_EXPIRY
      })
      const id = created.json.payload.payment_link
      const reply = yield* readLink(merchant.button.test, id)
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        api_version: 1,
        id,
        total: 12_900,
        subtotal: 10_000,
        tip_amount: 1_000,
        taxes: [{ type: "VAT", base: 10_000, value: 1_900 }],
        status: "ACTIVE",
        expiration_date: EXACT_EXPIRY,
        // A literal that a double writes back as sent is read as a number (the text is checked below).
        creation_date: Number(NANOS_START),
        description: "Two coffees",
        payment_method: "",
        transaction_id: null,
        amount_type: "CLOSE",
        is_sandbox: true,
        reference: "order-42"
      })
    })
  )

  it.live(
    "an expiration_date above 2^53 is kept to the nanosecond from the request text to the record text",
    TestApp.given(merchantWith(), function* (merchant) {
      // Written by hand: the literal a client sends, which JSON.parse would round to …700.
      const created = yield* createLink(
        merchant.button.test,
        `{"amount_type":"OPEN","expiration_date":${EXACT_EXPIRY}}`
      )
      expect(created.status).toBe(201)
      const reply = yield* readLink(merchant.button.test, created.json.payload.payment_link)
      expect(reply.text).toContain(`"expiration_date":${EXACT_EXPIRY}`)
      expect(reply.text).toContain(`"creation_date":${NANOS_START}`)
      expect(reply.text).not.toContain(`"${EXACT_EXPIRY}"`)
    })
  )

  it.live(
    "without a reference the record's reference is the link id; OPEN links have no expiration_date",
    TestApp.fresh(function* () {
      const { id, merchant } = yield* accepted(OPEN)
      const reply = yield* readLink(merchant.button.test, id)
      expect(reply.json).toMatchObject({
        reference: id,
        expiration_date: null,
        description: null,
        total: 0
      })
    })
  )

  it.live(
    "an overdue link reads EXPIRED",
    TestApp.given(merchantWith(), function* (merchant) {
      const created = yield* createLink(merchant.button.test, {
        ...OPEN,
        expiration_date: NANOS_START + 60_000_000_000n
      })
      const id = created.json.payload.payment_link
      expect((yield* readLink(merchant.button.test, id)).json.status).toBe("ACTIVE")
      const clock = yield* TestClock.VirtualTime
      yield* clock.advance(60_000)
      expect((yield* readLink(merchant.button.test, id)).json.status).toBe("EXPIRED")
    })
  )

  it.live(
    "B3: an unknown link, or a malformed id, is a 404 LinkNotFound in the envelope",
    TestApp.given(merchantWith(), function* (merchant) {
      for (const id of ["LNK_404", "not-a-link"]) {
        const reply = yield* readLink(merchant.button.test, id)
        TestApp.expectOnlyError(reply, 404, "LinkNotFound", "no payment link with this id for this key")
      }
    })
  )

  it.live(
    "B3: another merchant's link is a 404, exactly as an unknown one",
    TestApp.fresh(function* () {
      const owner = yield* merchantWith()
      const other = yield* merchantWith()
      const created = yield* createLink(owner.button.test, OPEN)
      const reply = yield* readLink(other.button.test, created.json.payload.payment_link)
      expect(reply.status).toBe(404)
      expect(reply.text).toBe((yield* readLink(other.button.test, "LNK_404")).text)
    })
  )

  it.live(
    "sandbox and production are isolated: a test key sees sandbox links only, a production key production links only",
    TestApp.given(merchantWith(), function* (merchant) {
      const sandbox = (yield* createLink(merchant.button.test, OPEN)).json.payload.payment_link
      const production = (yield* createLink(merchant.button.production, OPEN)).json.payload.payment_link
      expect((yield* readLink(merchant.button.test, sandbox)).json.is_sandbox).toBe(true)
      expect((yield* readLink(merchant.button.production, production)).json.is_sandbox).toBe(false)
      expect((yield* readLink(merchant.button.production, sandbox)).status).toBe(404)
      expect((yield* readLink(merchant.button.test, production)).status).toBe(404)
    })
  )

  it.live(
    "B3 shows a link paid on the checkout: PAID, the method and the transaction",
    TestApp.given(merchantWith(), function* (merchant) {
      const id = (yield* createLink(merchant.button.test, close(50_000))).json.payload.payment_link
      const { transactionId } = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
      expect((yield* readLink(merchant.button.test, id)).json.status).toBe("PROCESSING")
      yield* LinkPayments.completePayment(id, TransactionId.make(transactionId))
      expect((yield* readLink(merchant.button.test, id)).json).toMatchObject({
        status: "PAID",
        payment_method: "CREDIT_CARD",
        transaction_id: transactionId,
        total: 50_000
      })
    })
  )
})
