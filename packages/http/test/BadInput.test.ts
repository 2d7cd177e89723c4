/**
 * Bad input over the real handlers (issue 17, items 5–7): path parameters of any length and text,
 * `callback_url` schemes and characters, and amounts. Every refusal is a 400 (or a 404) in the
 * envelope, never a 405 or a 500, and stores nothing. The same class on PostgreSQL, where NUL and
 * unpaired surrogates cannot be stored, is `packages/server/test/BadInput.int.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import type { IntentReference, MerchantId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CobroApi } from "@cobro/api/Api"
import { card, terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"

/** Every route with path parameters, as the API declares it. */
const parametrized = (): ReadonlyArray<{ readonly method: string; readonly path: string }> => {
  const out: Array<{ method: string; path: string }> = []
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      if (endpoint.path.includes(":")) out.push({ method: endpoint.method, path: endpoint.path })
    }
  })
  return out
}

const given = Effect.gen(function* () {
  const m = yield* TestApp.createMerchantWithTerminal()
  // One warm-up read: the log-backed directory answers the first lookup of a new key late.
  yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
  return m
})

const keyFor = (m: TestApp.MerchantKeys, path: string): Partial<TestApp.SendOptions> =>
  path.startsWith("/admin/")
    ? { admin: true }
    : path.startsWith("/payments/") || path.startsWith("/sandbox/")
      ? { key: m.terminal.test }
      : path.startsWith("/challenge/")
        ? {}
        : { key: m.button.test }

const bodyFor = (method: string): Partial<TestApp.SendOptions> => (method === "GET" ? {} : { body: "{}" })

/** A 400 whose first error item is `code` on `field`. */
const expectRefused = (reply: TestApp.Reply, code: string, field: string) => {
  expect(reply.status, reply.text).toBe(400)
  expect(reply.json.errors[0]).toMatchObject({ code, field })
}

const intent = (reference_id: string, extra: Record<string, unknown> = {}) => ({
  reference_id,
  amount: { currency: "COP", total_amount: 555040 },
  ...extra
})

describe("path parameters (issue 17 item 5, item 7)", () => {
  it.live(
    "an intent created with a reference of 101 to 255 characters is read back by C2, C3 and C5 (never a 405)",
    TestApp.given(given, function* (m) {
      for (const length of [101, 142, 255]) {
        const reference = "r".repeat(length)
        const created = yield* Calls.createIntent(m.button.test, intent(reference))
        expect(created.status, created.text).toBe(201)
        const read = yield* Calls.readIntent(m.button.test, reference)
        expect(read.status, read.text).toBe(200)
        expect(read.json.reference_id).toBe(reference)
        const attempt = yield* Calls.attempt(m.button.test, {
          reference_id: reference,
          payment_method: card
        })
        expect(attempt.status, attempt.text).toBe(201)
        const payment = yield* Calls.readPayment(m.button.test, reference)
        expect(payment.status, payment.text).toBe(200)
        expect(payment.json.reference_id).toBe(reference)
      }
    })
  )

  it.live(
    "a path parameter of any length on any route is answered by the route (a 400 or 404 when unknown, A4 an empty list), never a 405 or a 500",
    TestApp.given(given, function* (m) {
      const routes = parametrized()
      expect(routes.length).toBeGreaterThanOrEqual(10)
      for (const route of routes) {
        for (const length of [101, 256, 4000]) {
          const path = route.path.replace(/:(\w+)/g, () => "Z".repeat(length))
          const before = yield* TestApp.logSize
          const reply = yield* TestApp.send(route.method as "GET", path, {
            ...keyFor(m, route.path),
            ...bodyFor(route.method)
          })
          const what = `${route.method} ${route.path} (${length}) → ${reply.status} ${reply.text.slice(0, 200)}`
          expect(reply.status, what).not.toBe(405)
          expect(reply.status, what).toBeLessThan(500)
          // A4 answers an unknown id with an empty list; every other route with its 400 or 404.
          if (route.path.startsWith("/payments/")) expect(reply.json.notifications, what).toEqual([])
          else expect([400, 404], what).toContain(reply.status)
          if ((reply.headers["content-type"] ?? "").includes("json") && reply.status >= 400)
            expect(reply.json.errors.length, what).toBeGreaterThan(0)
          expect(yield* TestApp.logSize, what).toBe(before)
        }
      }
    })
  )

  it.live(
    "a path parameter with a NUL, a control character or bytes that are not UTF-8 is a 400 ValidationError naming it, on every route, and stores nothing",
    TestApp.given(given, function* (m) {
      for (const route of parametrized()) {
        const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!)
        for (const bad of ["a%00b", "%0d%0aX", "%ED%A0%80", "%FF"]) {
          for (const name of names) {
            const path = route.path
              .replace(`:${name}`, bad)
              .replace(":merchant_id", m.merchantId)
              .replace(/:(\w+)/g, "x1")
            const before = yield* TestApp.logSize
            const reply = yield* TestApp.send(route.method as "GET", path, {
              ...keyFor(m, route.path),
              ...bodyFor(route.method)
            })
            const what = `${route.method} ${path} → ${reply.status} ${reply.text.slice(0, 200)}`
            expect(reply.status, what).toBe(400)
            expect(reply.json?.errors?.[0]?.code, what).toBe("ValidationError")
            expect(reply.json?.errors?.[0]?.field, what).toBe(name)
            expect(yield* TestApp.logSize, what).toBe(before)
          }
        }
      }
    })
  )
})

const REFUSED_CALLBACKS = [
  "javascript:alert(1)",
  "JavaScript:alert(document.cookie)",
  "javascript://shop.example/%0aalert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data://shop.example/x",
  "vbscript:msgbox(1)",
  "file:///etc/passwd",
  "blob:https://shop.example/0d6c",
  "https://shop.example/back\r\nSet-Cookie: a=b",
  "https://shop.example/back\nx",
  "https://shop.example/\tback",
  "https://shop.example/\u0000",
  "https://shop.example/\u0085",
  " https://shop.example/back",
  "myapp:return",
  "mailto:ana@example.com",
  "/relative/path",
  `https://shop.example/${"x".repeat(2048)}`
]

const ACCEPTED_CALLBACKS = [
  "https://shop.example/back?order=1",
  "http://localhost:3000/return",
  "myapp://return",
  "com.shop.app://payment/done?x=1"
]

describe("callback_url (issue 17 item 6)", () => {
  it.live(
    "C1 and C3 refuse a callback_url a browser would run or that breaks a header (script and data schemes, control characters, no host) with a 400 on callback_url, and store nothing",
    TestApp.given(given, function* (m) {
      const created = yield* Calls.createIntent(
        m.button.test,
        intent("cb-1", { callback_url: "https://shop.example/back" })
      )
      expect(created.status).toBe(201)
      for (const url of REFUSED_CALLBACKS) {
        for (const method of ["POST", "PUT"] as const) {
          const before = yield* TestApp.logSize
          const reply = yield* TestApp.send(method, "/v1/payment-intent", {
            key: m.button.test,
            body: intent(method === "POST" ? "cb-2" : "cb-1", { callback_url: url })
          })
          const what = `${method} ${JSON.stringify(url)} → ${reply.status} ${reply.text}`
          expect(reply.status, what).toBe(400)
          expect(
            reply.json.errors.map((e: any) => e.field),
            what
          ).toEqual(["callback_url"])
          expect(yield* TestApp.logSize, what).toBe(before)
        }
      }
      const read = yield* Calls.readIntent(m.button.test, "cb-1")
      expect(read.json.callback_url).toBe("https://shop.example/back")
    })
  )

  it.live(
    "C1 accepts https, http (sandbox callbacks on localhost) and a mobile app's own scheme with a host",
    TestApp.given(given, function* (m) {
      let i = 0
      for (const url of ACCEPTED_CALLBACKS) {
        const reply = yield* Calls.createIntent(m.button.test, intent(`ok-${i++}`, { callback_url: url }))
        expect(reply.status, `${url} → ${reply.text}`).toBe(201)
        expect(reply.json.callback_url).toBe(url)
      }
    })
  )

  it.live(
    "B2 refuses a callback_url with control characters (the URL parser would drop them silently)",
    TestApp.given(given, function* (m) {
      for (const url of ["https://shop.example/back\r\nSet-Cookie: a=b", "https://shop.example/\tx"]) {
        const before = yield* TestApp.logSize
        const reply = yield* Calls.createLink(m.button.test, {
          amount_type: "CLOSE",
          amount: { total_amount: 50_000 },
          callback_url: url
        })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.json.errors.map((e: any) => e.field)).toEqual(["callback_url"])
        expect(yield* TestApp.logSize).toBe(before)
      }
    })
  )

  it.live(
    "the 3DS return never writes a malformed Location: an intent stored with a bad callback_url gets a result page without the link",
    TestApp.given(given, function* (m) {
      // Stored before the rule existed: written through the use case, past the wire schema.
      for (const [i, bad] of [
        "https://shop.example/back\r\nSet-Cookie: a=b",
        "javascript:alert(1)"
      ].entries()) {
        const reference = `legacy-${i}`
        yield* OnlinePayments.createIntent(
          { merchantId: m.merchantId as MerchantId, sandbox: true },
          {
            referenceId: reference as IntentReference,
            details: new PaymentIntent.IntentDetails({
              amount: new PaymentIntent.IntentAmount({
                currency: "COP",
                total: amount(555020),
                tip: amount(0),
                taxes: []
              }),
              description: Option.none(),
              callbackUrl: Option.some(bad),
              metadata: Option.none(),
              customer: Option.none()
            }),
            deviceFingerprint: Option.none()
          }
        )
        const attempt = yield* Calls.attempt(m.button.test, {
          reference_id: reference,
          payment_method: card
        })
        expect(attempt.status, attempt.text).toBe(201)
        const path = new URL(attempt.json.payload.next_actions.redirect_url).pathname
        const shown = yield* TestApp.send("GET", path)
        expect(shown.status).toBe(200)
        const decided = yield* TestApp.send("POST", path, {
          body: "decision=approve",
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        expect(decided.status, decided.text).toBe(200)
        expect(decided.headers["location"]).toBeUndefined()
        expect(decided.headers["set-cookie"]).toBeUndefined()
        expect(decided.text).toContain('data-status="APPROVED"')
        expect(decided.text).not.toContain("javascript:")
        expect(decided.text).not.toContain('id="return"')
        const again = yield* TestApp.send("GET", path)
        expect(again.text).not.toContain('id="return"')
      }
    })
  )
})

describe("amounts (issue 17 item 7)", () => {
  it.live(
    "A3: total_amount 1e308 with IVA_19 is AP006 on amount.total_amount, and stores nothing",
    TestApp.given(given, function* (m) {
      const reply = yield* TestApp.storesNothing(
        Calls.checkout(
          m.terminal.test,
          `{"amount":{"currency":"COP","total_amount":1e308,"taxes":[{"type":"IVA_19"}],"tip_amount":0},"user_email":"seller@shop.co","payment_method":"POS","terminal_model":"SMART_PRO","terminal_serial":"${m.serial}","reference":"order-42"}`
        )
      )
      expectRefused(reply, "AP006", "amount.total_amount")
    })
  )

  it.live(
    "A3: a tip larger than the total is AP006 on amount.tip_amount; full-form tax values larger than the total are AP002",
    TestApp.given(given, function* (m) {
      const send = (amount: unknown) => Calls.checkout(m.terminal.test, terminalSale(m.serial, { amount }))
      const [tip, taxes] = yield* TestApp.storesNothing(
        Effect.all([
          send({ currency: "COP", total_amount: 1000, taxes: [], tip_amount: 5000 }),
          send({
            currency: "COP",
            total_amount: 1000,
            taxes: [{ type: "VAT", base: 10000, value: 1900 }],
            tip_amount: 0
          })
        ])
      )
      expectRefused(tip, "AP006", "amount.tip_amount")
      expectRefused(taxes, "AP002", "amount.taxes")
    })
  )

  it.live(
    "C1: an amount above 1,000,000,000,000, with more than 2 decimals, or a tip or taxes above the total is a 400 on its field; 2 decimals are accepted",
    TestApp.given(given, function* (m) {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`{"currency":"COP","total_amount":1e308}`, "amount.total_amount"],
        [`{"currency":"COP","total_amount":1000000000000.01}`, "amount.total_amount"],
        [`{"currency":"USD","total_amount":10.125}`, "amount.total_amount"],
        [`{"currency":"COP","total_amount":1000,"tip_amount":1001}`, "amount.tip_amount"],
        [
          `{"currency":"COP","total_amount":1000,"taxes":[{"type":"VAT","base":1000,"value":190}],"tip_amount":900}`,
          "amount.taxes"
        ],
        [
          `{"currency":"COP","total_amount":1000,"taxes":[{"type":"VAT","base":1e309,"value":1}]}`,
          "amount.taxes.0.base"
        ]
      ]
      for (const [amountJson, field] of cases) {
        const before = yield* TestApp.logSize
        const reply = yield* Calls.createIntent(
          m.button.test,
          `{"reference_id":"amt","amount":${amountJson}}`
        )
        expect(reply.status, `${amountJson} → ${reply.text}`).toBe(400)
        expect(
          reply.json.errors.map((e: any) => e.field),
          amountJson
        ).toContain(field)
        expect(yield* TestApp.logSize).toBe(before)
      }
      const ok = yield* Calls.createIntent(
        m.button.test,
        `{"reference_id":"amt","amount":{"currency":"USD","total_amount":1000000000000,"tip_amount":10.15}}`
      )
      expect(ok.status, ok.text).toBe(201)
    })
  )
})
