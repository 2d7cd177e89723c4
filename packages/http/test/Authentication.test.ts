import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ProbeApi from "./support/ProbeApi.js"
import * as TestApp from "./support/TestApp.js"

const expectUnauthorized = (reply: TestApp.Reply) => {
  TestApp.expectError(reply, 401, "Unauthorized")
  expect(reply.json.errors).toHaveLength(1)
}

describe("authentication: Authorization: x-api-key <identity key>", () => {
  it.live(
    "a valid key resolves to its merchant, integration and mode",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const prod = yield* TestApp.send("GET", "/payments/probe/who", { key: m.terminal.production })
      expect(prod.status).toBe(200)
      expect(prod.json).toEqual({
        merchant_id: m.merchantId,
        integration: "terminal_api",
        mode: "production"
      })
      const test = yield* TestApp.send("GET", "/online/probe/who", { key: m.button.test })
      expect(test.json).toEqual({ merchant_id: m.merchantId, integration: "payment_button", mode: "test" })
    })
  )

  it.live("a missing Authorization header is 401 in the envelope", () =>
    ProbeApi.run(Effect.map(TestApp.send("GET", "/payments/probe/who"), expectUnauthorized))
  )

  it.live(
    "a malformed Authorization header is 401 in the envelope",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      for (const header of [
        m.terminal.production,
        `Bearer ${m.terminal.production}`,
        "x-api-key",
        "x-api-key a b"
      ]) {
        expectUnauthorized(
          yield* TestApp.send("GET", "/payments/probe/who", { headers: { authorization: header } })
        )
      }
    })
  )

  it.live("an unknown key is 401 in the envelope", () =>
    ProbeApi.run(
      Effect.map(
        TestApp.send("GET", "/payments/probe/who", { key: "id_live_term_unknown" }),
        expectUnauthorized
      )
    )
  )

  it.live(
    "the x-api-key scheme is matched without regard to case",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const reply = yield* TestApp.send("GET", "/payments/probe/who", {
        headers: { authorization: `X-API-KEY ${m.terminal.test}` }
      })
      expect(reply.status).toBe(200)
    })
  )

  it.live(
    "a payment button key on the terminal API is 403, and a terminal key on the button APIs is 403",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const terminal = yield* TestApp.send("GET", "/payments/probe/who", { key: m.button.production })
      TestApp.expectError(terminal, 403, "Forbidden")
      const button = yield* TestApp.send("GET", "/online/probe/who", { key: m.terminal.test })
      TestApp.expectError(button, 403, "Forbidden")
    })
  )

  it.live(
    "after a rotation the old key is 401 at once; the other mode's key still works",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const rotated = yield* TestApp.admin("POST", `/admin/v1/merchants/${m.merchantId}/keys/rotate`, {
        integration: "terminal_api",
        mode: "production"
      })
      expect(rotated.status).toBe(200)
      expectUnauthorized(yield* TestApp.send("GET", "/payments/probe/who", { key: m.terminal.production }))
      const fresh = yield* TestApp.send("GET", "/payments/probe/who", { key: rotated.json.identity_key })
      expect(fresh.json).toEqual({
        merchant_id: m.merchantId,
        integration: "terminal_api",
        mode: "production"
      })
      expect((yield* TestApp.send("GET", "/payments/probe/who", { key: m.terminal.test })).status).toBe(200)
    })
  )

  it.live(
    "two merchants' keys resolve to their own merchant",
    ProbeApi.fresh(function* () {
      const a = yield* TestApp.createMerchant("A")
      const b = yield* TestApp.createMerchant("B")
      expect(a.merchantId).not.toBe(b.merchantId)
      expect((yield* TestApp.send("GET", "/online/probe/who", { key: a.button.test })).json.merchant_id).toBe(
        a.merchantId
      )
      expect((yield* TestApp.send("GET", "/online/probe/who", { key: b.button.test })).json.merchant_id).toBe(
        b.merchantId
      )
    })
  )
})
