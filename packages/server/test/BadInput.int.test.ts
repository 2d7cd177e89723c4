/**
 * Bad input on PostgreSQL (issue 17, items 5 and 7), in the server's own composition: PostgreSQL
 * refuses a NUL in `text` and `jsonb` and an unpaired surrogate in `jsonb`, so such text in any
 * string field of a request body, or a NUL in a path parameter, must be refused at the wire as a
 * 400, never reach the store as a 500, and never change what is stored.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import type { YieldWrap } from "effect/Utils"
import { stringPaths, withString } from "../../http/test/support/JsonStrings.js"
import * as Nodes from "./support/Nodes.js"
import * as ServerProcess from "./support/ServerProcess.js"

const ADMIN_TOKEN = "bad-input-admin-token"

const send = Nodes.sender(ADMIN_TOKEN)

const logSize = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll({ limit: 1_000_000 }), (events) => events.length)
)

/**
 * Waits until the node's workers (the notifier's deliveries, the read models) have written what the
 * setup caused: the log holds still for a second.
 */
const settled = Effect.gen(function* () {
  let last = -1
  for (let i = 0; i < 60; i++) {
    const size = yield* logSize
    if (size === last) return
    last = size
    yield* Effect.sleep("1 second")
  }
})

const onPostgres = Nodes.onPostgres(ADMIN_TOKEN)

/** A merchant with a bound terminal, link methods, an intent paid by card; its keys and ids. */
const givenMerchant = Effect.gen(function* () {
  const created = yield* send("POST", "/admin/v1/merchants", { admin: true, body: { name: "Café Central" } })
  expect(created.status).toBe(201)
  const merchantId: string = created.json.merchant_id
  const base = `/admin/v1/merchants/${merchantId}`
  const bind = yield* send("POST", `${base}/terminals`, {
    admin: true,
    body: { terminal_model: "SMART_PRO", terminal_serial: "SN-0001", name: "Caja 1" }
  })
  expect(bind.status).toBe(201)
  yield* send("PATCH", `${base}/terminals/SN-0001`, { admin: true, body: { api_enabled: true } })
  yield* send("PUT", `${base}/payment-methods`, {
    admin: true,
    body: { link: { CREDIT_CARD: { min: 1000, max: 5000000 } } }
  })
  const button: string = created.json.keys.payment_button.test.identity_key
  const terminal: string = created.json.keys.terminal_api.test.identity_key
  // One warm-up read each: the log-backed directory answers the first lookup of a new key late.
  yield* send("GET", "/v1/payment/pse/banks", { key: button })
  yield* send("GET", "/payments/payment-methods", { key: terminal })
  const paid = yield* Nodes.paidByCard(send, button, "paid-1", 555040)
  yield* settled
  return { merchantId, button, terminal, transactionId: paid.json.transaction_id as string }
})

type Given = Effect.Effect.Success<typeof givenMerchant>

/** A test's body on a node on a fresh PostgreSQL database, given the merchant of {@link givenMerchant}. */
const withMerchantOnPostgres =
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(body: (g: Given) => Generator<Eff, A, never>) =>
  () =>
    onPostgres(Effect.flatMap(givenMerchant, Effect.fnUntraced(body)))

interface Target {
  readonly method: "POST" | "PUT"
  readonly path: string
  readonly key: (g: Given) => { readonly key?: string; readonly admin?: boolean }
  /** A body every string of which is valid; each is poisoned in turn. */
  readonly body: (g: Given) => Record<string, unknown>
}

const address = { street1: "Calle 1", street2: "Apto 2", city: "Bogotá", province: "DC", phone: "3001234567" }
const fingerprint = {
  ip: "10.0.0.1",
  user_agent: "Mozilla/5.0",
  language: "es-CO",
  model: "Pixel",
  platform: "web"
}

const TARGETS: ReadonlyArray<Target> = [
  {
    method: "POST",
    path: "/payments/app-checkout",
    key: (g) => ({ key: g.terminal }),
    body: () => ({
      ...ServerProcess.terminalSale("SN-0001"),
      description: "Two coffees",
      payer: {
        email: "ana@example.com",
        phone_number: "3001234567",
        document: { document_type: "CEDULA", document_number: "12345678" }
      }
    })
  },
  {
    method: "POST",
    path: "/online/link/v1",
    key: (g) => ({ key: g.button }),
    body: () => ({
      amount_type: "CLOSE",
      amount: { currency: "COP", total_amount: 50000 },
      reference: "ref-1",
      description: "Two coffees",
      callback_url: "https://shop.example/back",
      payer_email: "ana@example.com",
      image_url: "https://shop.example/logo.png"
    })
  },
  ...(["POST", "PUT"] as const).map((method): Target => ({
    method,
    path: "/v1/payment-intent",
    key: (g) => ({ key: g.button }),
    body: () => ({
      reference_id: method === "POST" ? "new-1" : "paid-1",
      amount: { currency: "COP", total_amount: 555040 },
      description: "Two coffees",
      callback_url: "https://shop.example/back",
      metadata: { key: "order", value: "42" },
      customer: {
        name: "Ana Gómez",
        phone: "3001234567",
        email: "ana@example.com",
        billing_address: { ...address, postal_code: "110111", country_code: "CO" }
      },
      ...(method === "POST" ? { device_fingerprint: fingerprint } : {})
    })
  })),
  {
    method: "POST",
    path: "/v1/payment",
    key: (g) => ({ key: g.button }),
    body: () => ({
      reference_id: "paid-1",
      metadata: { key: "order", value: "42" },
      payer: {
        person_type: "NATURAL_PERSON",
        name: "Ana Gómez",
        email: "ana@example.com",
        document_type: "CC",
        document_number: "12345678",
        billing_address: { ...address, zip_code: "110111", country: "CO" }
      },
      payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111", cardholder_name: "ANA GOMEZ" },
      device_fingerprint: fingerprint
    })
  },
  {
    method: "POST",
    path: "/v1/payment/refund",
    key: (g) => ({ key: g.button }),
    body: (g) => ({ reference_id: "paid-1", transaction_id: g.transactionId, reason: "returned" })
  },
  {
    method: "POST",
    path: "/admin/v1/merchants",
    key: () => ({ admin: true }),
    body: () => ({ name: "Tienda Norte" })
  },
  {
    method: "PUT",
    path: "/admin/v1/merchants/:merchant_id/webhook",
    key: () => ({ admin: true }),
    body: () => ({ url: "https://shop.example/hook", mode: "test" })
  },
  {
    method: "POST",
    path: "/admin/v1/merchants/:merchant_id/terminals",
    key: () => ({ admin: true }),
    body: () => ({ terminal_model: "SMART", terminal_serial: "SN-0002", name: "Caja 2" })
  }
]

/** Text PostgreSQL cannot store, put somewhere in a valid string. */
const poison = FastCheck.tuple(
  FastCheck.constantFrom("\u0000", "\ud800", "\udfff", "a\u0000b", "\udc00x"),
  FastCheck.nat(),
  FastCheck.boolean()
).map(([bad, at, replace]) => (s: string) => {
  const i = s.length === 0 ? 0 : at % s.length
  return replace ? bad : s.slice(0, i) + bad + s.slice(i)
})

describe("bad input on PostgreSQL", { timeout: 240_000 }, () => {
  it.live(
    "a NUL or an unpaired surrogate in any string field of A3, B2, C1, C3, C4, C8 and the admin bodies is a 400 naming the field, never a 500, and stores nothing",
    withMerchantOnPostgres(function* (g) {
      const runtime = (yield* Effect.runtime<never>()) as Runtime.Runtime<any>
      for (const target of TARGETS) {
        const path = target.path.replace(":merchant_id", g.merchantId)
        const valid = target.body(g)
        const fields = stringPaths(valid)
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(FastCheck.constantFrom(...fields), poison, (field, f) =>
              Runtime.runPromise(runtime)(
                Effect.gen(function* () {
                  const before = yield* logSize
                  const body = withString(valid, field, f)
                  const reply = yield* send(target.method, path, { ...target.key(g), body })
                  const what = `${target.method} ${path} ${field.join(".")}=${JSON.stringify(
                    field.reduce((v: any, k) => v[k], body)
                  )} → ${reply.status} ${reply.text}`
                  expect(reply.status, what).toBe(400)
                  expect(reply.json?.errors?.length, what).toBeGreaterThan(0)
                  expect(yield* logSize, what).toBe(before)
                })
              )
            ),
            { numRuns: 30 }
          )
        )
      }
    })
  )

  it.live(
    "a NUL in an id path parameter is a 400 naming it on every route with ids, and an id of 255 characters is read back",
    withMerchantOnPostgres(function* (g) {
      const calls: ReadonlyArray<
        readonly [
          method: "GET" | "POST" | "PUT",
          path: string,
          field: string,
          auth: { key?: string; admin?: boolean }
        ]
      > = [
        ["GET", "/v1/payment-intent/a%00b", "reference_id", { key: g.button }],
        ["GET", "/v1/payment/a%00b", "reference_id", { key: g.button }],
        ["GET", "/v1/payment/refund/TRX_%00", "transaction_id", { key: g.button }],
        ["GET", "/online/link/v1/LNK_%00", "payment_link", { key: g.button }],
        ["GET", "/payments/webhook/notifications/a%00b", "payment_id", { key: g.terminal }],
        [
          "GET",
          "/payments/webhook/notifications/a%00b?is_external_reference=true",
          "payment_id",
          { key: g.terminal }
        ],
        ["PUT", "/sandbox/v1/terminals/SN%00/behavior", "terminal_serial", { key: g.terminal }],
        ["PUT", "/admin/v1/merchants/MER_%00/status", "merchant_id", { admin: true }],
        ["POST", "/admin/v1/links/LNK_%00/cancel", "payment_link", { admin: true }],
        ["GET", "/admin/v1/notifications/%00/attempts", "notification_id", { admin: true }],
        ["POST", "/admin/v1/refunds/TRX_%00/review", "transaction_id", { admin: true }],
        ["GET", "/challenge/3ds/TRX_1/%00", "token", {}]
      ]
      for (const [method, path, field, auth] of calls) {
        const before = yield* logSize
        const reply = yield* send(method, path, { ...auth, ...(method === "GET" ? {} : { body: "{}" }) })
        expect(reply.status, `${path} → ${reply.text}`).toBe(400)
        expect(reply.json.errors[0].field, path).toBe(field)
        expect(yield* logSize).toBe(before)
      }
      const reference = "r".repeat(255)
      const created = yield* send("POST", "/v1/payment-intent", {
        key: g.button,
        body: { reference_id: reference, amount: { currency: "COP", total_amount: 1000 } }
      })
      expect(created.status, created.text).toBe(201)
      const read = yield* send("GET", `/v1/payment-intent/${reference}`, { key: g.button })
      expect(read.status, read.text).toBe(200)
      const unknown = yield* send("GET", `/v1/payment-intent/${"u".repeat(5000)}`, { key: g.button })
      expect(unknown.status, unknown.text).toBe(404)
    })
  )
})
