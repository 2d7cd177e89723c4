/**
 * The composed service through real server processes: the admin API, merchant keys, links and the
 * sandbox clock across restarts, and two processes on one PostgreSQL serving the same merchants.
 */
import { verifySignature } from "@cobro/webhooks/Signature"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHmac } from "node:crypto"
import * as ServerProcess from "./support/ServerProcess.js"

type Server = ServerProcess.RunningServer

const admin = ServerProcess.asAdmin
const withKey = ServerProcess.withKey

/** A merchant created through the admin API, with CREDIT_CARD links from 1,000 to 5,000,000. */
const createMerchant = (server: Server) =>
  Effect.gen(function* () {
    const created = yield* admin(server, "POST", "/admin/v1/merchants", { name: "Tienda Uno" })
    expect(created.status, created.text).toBe(201)
    const merchantId: string = created.json.merchant_id
    const methods = yield* admin(server, "PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, {
      link: { CREDIT_CARD: { min: 1000, max: 5000000 } }
    })
    expect(methods.status, methods.text).toBe(200)
    return {
      merchantId,
      keys: created.json.keys,
      buttonTest: created.json.keys.payment_button.test.identity_key as string
    }
  })

const createLink = (server: Server, key: string) =>
  Effect.gen(function* () {
    const reply = yield* withKey(server, key, "POST", "/online/link/v1", {
      amount_type: "CLOSE",
      amount: { total_amount: 50_000 }
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.json.payload.payment_link as string
  })

/** `env` with the sandbox's virtual clock (`COBRO_CLOCK=virtual`) and the admin token `adminToken`. */
const withVirtualClock = (env: Record<string, string>, adminToken: string) => ({
  ...env,
  COBRO_CLOCK: "virtual",
  ADMIN_TOKEN: adminToken
})

const readLink = (server: Server, key: string, id: string) =>
  withKey(server, key, "GET", `/online/link/v1/${id}`)

describe("the service end to end on PGlite", () => {
  it.scopedLive(
    "POST /admin/v1/merchants with the printed admin token creates a merchant whose keys work",
    Effect.fnUntraced(function* () {
      const server = yield* ServerProcess.start(yield* ServerProcess.pgliteEnvSetUp)
      const refused = yield* ServerProcess.call(server, "POST", "/admin/v1/merchants", {
        body: { name: "x" },
        headers: { authorization: "Bearer wrong" }
      })
      expect(refused.status).toBe(401)
      const merchant = yield* createMerchant(server)
      expect(merchant.merchantId).toMatch(/^MER_[A-Za-z0-9]{1,64}$/)
      expect(merchant.buttonTest).toMatch(/^id_test_btn_/)
      const methods = yield* withKey(server, merchant.buttonTest, "GET", "/online/link/v1/payment_methods")
      expect(methods.status, methods.text).toBe(200)
      const unknownKey = yield* withKey(server, "id_test_btn_nope", "GET", "/online/link/v1/payment_methods")
      expect(unknownKey.status).toBe(401)
      const id = yield* createLink(server, merchant.buttonTest)
      const link = yield* readLink(server, merchant.buttonTest, id)
      expect(link.status, link.text).toBe(200)
      yield* ServerProcess.stopsCleanly(server)
    })
  )

  it.scopedLive(
    "a restart on the same DATA_DIR keeps merchants, keys, links and the virtual clock's offset",
    Effect.fnUntraced(function* () {
      const env = withVirtualClock(yield* ServerProcess.pgliteEnvSetUp, "restart-token")
      const first = yield* ServerProcess.start(env)
      const merchant = yield* createMerchant(first)
      const id = yield* createLink(first, merchant.buttonTest)
      const advanced = yield* admin(first, "POST", "/admin/v1/clock/advance", { seconds: 86_400 })
      expect(advanced.status, advanced.text).toBe(200)
      const advancedTo = Date.parse(advanced.json.now)
      expect(advancedTo - Date.now()).toBeGreaterThan(86_400_000 - 60_000)
      yield* ServerProcess.stopsCleanly(first)

      const second = yield* ServerProcess.start(env)
      const link = yield* readLink(second, merchant.buttonTest, id)
      expect(link.status, link.text).toBe(200)
      expect(link.text).toContain(id)
      const again = yield* admin(second, "POST", "/admin/v1/clock/advance", { seconds: 0 })
      expect(again.status, again.text).toBe(200)
      // The offset survived the restart: the clock did not go back to real time.
      expect(Date.parse(again.json.now)).toBeGreaterThanOrEqual(advancedTo)
      yield* ServerProcess.stopsCleanly(second)
    })
  )

  it.scopedLive(
    "without COBRO_CLOCK=virtual, POST /admin/v1/clock/advance is refused with ClockNotVirtual",
    Effect.fnUntraced(function* () {
      const server = yield* ServerProcess.start(yield* ServerProcess.pgliteEnvSetUp)
      const reply = yield* admin(server, "POST", "/admin/v1/clock/advance", { seconds: 60 })
      expect(reply.status).toBe(409)
      expect(reply.json.errors[0].code).toBe("ClockNotVirtual")
      yield* ServerProcess.stopsCleanly(server)
    })
  )
})

/**
 * A server on PGlite with COBRO_DEV_WEBHOOKS=1, a merchant whose webhook of `webhook.mode` is a local
 * receiver, and a sale with the terminal key of that mode: the first notification delivered, the
 * merchant's id and keys (of the mode) and its webhook; the server stopped cleanly after.
 */
const notifiedSale = (merchant: {
  readonly name: string
  readonly serial: string
  readonly webhook: { readonly mode: "test" | "production"; readonly standard_webhooks?: boolean }
}) =>
  Effect.gen(function* () {
    const hook = yield* ServerProcess.webhookReceiver
    const server = yield* ServerProcess.start({
      ...(yield* ServerProcess.pgliteEnvSetUp),
      COBRO_DEV_WEBHOOKS: "1"
    })
    const { keys, merchantId, webhook } = yield* ServerProcess.merchantWithTerminal(server, {
      ...merchant,
      webhook: { url: hook.url, ...merchant.webhook }
    })
    const terminal = keys.terminal_api[merchant.webhook.mode]
    const sale = ServerProcess.terminalSale(merchant.serial)
    const checkout = yield* withKey(server, terminal.identity_key, "POST", "/payments/app-checkout", sale)
    expect(checkout.status, checkout.text).toBe(201)
    for (let i = 0; i < 150 && hook.received.length === 0; i++) yield* Effect.sleep("200 millis")
    expect(hook.received.length, server.output()).toBeGreaterThan(0)
    yield* ServerProcess.stopsCleanly(server)
    return { delivered: hook.received[0]!, hookUrl: hook.url, merchantId, keys: terminal, webhook }
  })

describe("terminal sale to signed webhook, through the composed server", () => {
  it.scopedLive(
    "a sandbox sale on a simulated terminal is notified to the test webhook, signed with the empty key (COBRO_DEV_WEBHOOKS=1), with the Standard Webhooks headers the endpoint asked for",
    Effect.fnUntraced(function* () {
      const { delivered, hookUrl, merchantId, webhook } = yield* notifiedSale({
        name: "Tienda Dos",
        serial: "SN-E2E",
        webhook: { mode: "test", standard_webhooks: true }
      })
      expect(webhook).toStrictEqual({ url: hookUrl, mode: "test", standard_webhooks: true })
      expect(JSON.parse(delivered.body).type).toBe("SALE_APPROVED")
      expect(JSON.parse(delivered.body).data.merchant_id).toBe(merchantId)
      expect(verifySignature(delivered.body, delivered.headers["x-service-signature"], "")).toBe(true)
      // Standard Webhooks: v1, Base64 HMAC-SHA256 of "id.timestamp.body", keyed with the same (empty) secret.
      const { "webhook-id": id, "webhook-timestamp": timestamp } = delivered.headers
      expect(id).toBe(JSON.parse(delivered.body).id)
      const expected = createHmac("sha256", "")
        .update(`${id}.${timestamp}.${delivered.body}`)
        .digest("base64")
      expect(delivered.headers["webhook-signature"]).toBe(`v1,${expected}`)
    })
  )
})

describe("production notifications in development (COBRO_DEV_WEBHOOKS=1)", () => {
  it.scopedLive(
    "a production sale is notified to a production webhook at http://127.0.0.1, signed with the production secret",
    Effect.fnUntraced(function* () {
      const { delivered, merchantId, keys } = yield* notifiedSale({
        name: "Tienda Tres",
        serial: "SN-DEV",
        webhook: { mode: "production" }
      })
      expect(JSON.parse(delivered.body)).toMatchObject({
        type: "SALE_APPROVED",
        data: { merchant_id: merchantId }
      })
      expect(verifySignature(delivered.body, delivered.headers["x-service-signature"], keys.secret_key)).toBe(
        true
      )
    })
  )
})

describe("two server processes on one PostgreSQL", () => {
  it.scopedLive(
    "a merchant created on one node is served by the other: keys, links, rotation and the clock",
    Effect.fnUntraced(function* () {
      const env = withVirtualClock(yield* ServerProcess.postgresEnv, "shared-admin-token")
      const [a, b] = yield* Effect.all([ServerProcess.start(env), ServerProcess.start(env)], {
        concurrency: 2
      })

      const merchant = yield* createMerchant(a)
      // B authenticates a key A issued the moment A answered (the directory reads its own writes).
      const methods = yield* withKey(b, merchant.buttonTest, "GET", "/online/link/v1/payment_methods")
      expect(methods.status, methods.text).toBe(200)
      const id = yield* createLink(a, merchant.buttonTest)
      const onB = yield* readLink(b, merchant.buttonTest, id)
      expect(onB.status, onB.text).toBe(200)
      const fromB = yield* createLink(b, merchant.buttonTest)
      expect((yield* readLink(a, merchant.buttonTest, fromB)).status).toBe(200)

      // A key rotated on B stops working on A at once.
      const rotated = yield* admin(b, "POST", `/admin/v1/merchants/${merchant.merchantId}/keys/rotate`, {
        integration: "payment_button",
        mode: "test"
      })
      expect(rotated.status, rotated.text).toBe(200)
      expect((yield* readLink(a, merchant.buttonTest, id)).status).toBe(401)
      expect((yield* readLink(a, rotated.json.identity_key, id)).status).toBe(200)

      // The virtual clock is shared: an advance on A reaches B.
      const advanced = yield* admin(a, "POST", "/admin/v1/clock/advance", { seconds: 7200 })
      expect(advanced.status, advanced.text).toBe(200)
      const onBNow = yield* admin(b, "POST", "/admin/v1/clock/advance", { seconds: 0 })
      expect(Date.parse(onBNow.json.now)).toBeGreaterThanOrEqual(Date.parse(advanced.json.now))

      const [stopA, stopB] = yield* Effect.promise(() => Promise.all([a.stop(), b.stop()]))
      expect(stopA.code).toBe(0)
      expect(stopB.code).toBe(0)
    })
  )
})
