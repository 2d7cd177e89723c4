/**
 * An `Idempotency-Key` is a record with a recovery point, through the real app on a real socket: a
 * request whose effect committed is never run again; a retry after its node died answers from what
 * it wrote; a request whose client went away runs to its end and its answer is replayed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AppendFence from "@cobro/domain/AppendFence"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as Nanos from "@cobro/domain/Nanos"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Idempotency from "../src/Idempotency.js"
import * as Bodies from "./support/Bodies.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

/** How many events of `type` the log holds. */
const countOf = (type: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 100_000 }), (events) => events.filter((e) => e.type === type).length)
  )

/**
 * A request that reserved `key`, ran `effect` under the key's fence, and whose process then died
 * (nothing completes, releases or renews its key): what `kill -9` leaves after the commit.
 */
const diedAfterCommit = <A, E, R>(
  scope: IdempotencyStore.Scope,
  method: string,
  path: string,
  body: string,
  effect: Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const store = yield* IdempotencyStore.IdempotencyStore
    const print = yield* Idempotency.fingerprint(method, path, body)
    expect(yield* store.reserve(scope, print, yield* DateTime.now, "dead-owner")).toEqual(
      IdempotencyStore.Reservation.Reserved()
    )
    return yield* Effect.provideService(effect, AppendFence.AppendFence, store.fence(scope, "dead-owner"))
  })

describe("Idempotency-Key recovery points", () => {
  it.live(
    "A3 retried after its node died past the checkout's commit: in use until the lease lapses, then the checkout's own 201 answer, replayed, and still one checkout",
    TestApp.withTerminal(function* (m) {
      const body = Nanos.stringifyWithBigInt(Bodies.terminalSale(m.serial, { reference: "once-1" }))
      const scope = { merchantId: m.merchantId, mode: "test", key: "sale-once-1" }
      const created = yield* diedAfterCommit(
        scope,
        "POST",
        "/payments/app-checkout",
        body,
        TerminalPayments.checkout({ merchantId: m.merchantId as never, sandbox: true }, JSON.parse(body))
      )
      const retry = () =>
        TestApp.send("POST", "/payments/app-checkout", {
          key: m.terminal.test,
          body,
          idempotencyKey: scope.key
        })
      const early = yield* retry()
      TestApp.expectError(early, 409, "IdempotencyKeyInUse")
      expect(early.headers["retry-after"]).toBe("1")
      yield* Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(IdempotencyStore.LEASE_MS))
      const recovered = yield* retry()
      expect(recovered.status, recovered.text).toBe(201)
      expect(recovered.json).toEqual({ payload: { integration_id: created.integrationId }, errors: [] })
      expect(recovered.headers["idempotent-replayed"]).toBe("true")
      // A fresh A3 answers in the same shape and content type.
      const fresh = yield* TestApp.send("POST", "/payments/app-checkout", {
        key: m.terminal.test,
        body: Bodies.terminalSale(m.serial, { reference: "once-2" })
      })
      expect(Object.keys(fresh.json)).toEqual(Object.keys(recovered.json))
      expect(recovered.headers["content-type"]).toBe(fresh.headers["content-type"])
      const again = yield* retry()
      expect(again.text).toBe(recovered.text)
      expect(yield* countOf("CheckoutCreated")).toBe(2)
    })
  )

  it.live(
    "B2 retried after its node died past the link's commit answers the link's own 201 and creates no second link",
    TestApp.withTerminal(function* (m) {
      const body = JSON.stringify({ amount_type: "CLOSE", amount: { total_amount: 50_000 } })
      const scope = { merchantId: m.merchantId, mode: "test", key: "link-once" }
      const credential = MerchantDirectory.Credential.make({
        merchantId: m.merchantId as never,
        integration: "payment_button",
        mode: "test",
        identityKeyHash: "0".repeat(64) as never
      })
      const request = yield* Schema.decodeUnknown(LinkApi.CreateLinkRequest)(JSON.parse(body))
      const created = yield* diedAfterCommit(
        scope,
        "POST",
        "/online/link/v1",
        body,
        LinkPayments.create(credential, request)
      )
      yield* Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(IdempotencyStore.LEASE_MS))
      const recovered = yield* TestApp.send("POST", "/online/link/v1", {
        key: m.button.test,
        body,
        idempotencyKey: scope.key
      })
      expect(recovered.status, recovered.text).toBe(201)
      expect(recovered.json.payload.payment_link).toBe(created.linkId)
      expect(recovered.json.payload.url).toMatch(new RegExp(`/${created.linkId}$`))
      expect(yield* countOf("LinkCreated")).toBe(1)
    })
  )

  it.live(
    "a route that cannot make its answer again answers 409 IdempotencyKeyUnanswered after its node died past the commit, and runs nothing",
    TestApp.withTerminal(function* (m) {
      const path = `/admin/v1/merchants/${m.merchantId}/keys/rotate`
      const body = JSON.stringify({ integration: "terminal_api", mode: "test" })
      const scope = { merchantId: "admin", mode: "admin", key: "rotate-once" }
      const before = yield* countOf("KeyRotated")
      yield* diedAfterCommit(
        scope,
        "POST",
        path,
        body,
        MerchantAdmin.rotateKey(m.merchantId, "terminal_api", "test")
      )
      expect(yield* countOf("KeyRotated")).toBe(before + 1)
      yield* Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(IdempotencyStore.LEASE_MS))
      const retried = yield* TestApp.send("POST", path, { admin: true, body, idempotencyKey: scope.key })
      TestApp.expectError(retried, 409, "IdempotencyKeyUnanswered")
      expect(yield* countOf("KeyRotated")).toBe(before + 1)
    })
  )

  it.live(
    "a client that goes away while its keyed A3 runs: the checkout is made once, the request runs to its end, and the retry replays its answer",
    TestApp.withTerminal(function* (m) {
      const body = Nanos.stringifyWithBigInt(Bodies.terminalSale(m.serial, { reference: "gone-1" }))
      const client = yield* HttpClient.HttpClient
      const request = HttpClientRequest.post("/payments/app-checkout").pipe(
        HttpClientRequest.bodyText(body, "application/json"),
        HttpClientRequest.setHeader("authorization", `x-api-key ${m.terminal.test}`),
        HttpClientRequest.setHeader("idempotency-key", "gone-1")
      )
      // The client gives up at once: its request is interrupted, the socket closed.
      yield* client.execute(request).pipe(Effect.timeout("1 millis"), Effect.ignore)
      let replayed: TestApp.Reply | undefined
      for (let i = 0; i < 100; i++) {
        const retry = yield* TestApp.send("POST", "/payments/app-checkout", {
          key: m.terminal.test,
          body,
          idempotencyKey: "gone-1"
        })
        if (retry.status !== 409) {
          replayed = retry
          break
        }
        yield* Effect.sleep("20 millis")
      }
      expect(replayed?.status, replayed?.text).toBe(201)
      expect(yield* countOf("CheckoutCreated")).toBe(1)
    })
  )
})
