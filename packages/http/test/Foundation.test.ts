import { describe, expect, it } from "@effect/vitest"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Chunk from "effect/Chunk"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import * as Http from "../src/Http.js"
import * as Idempotency from "../src/Idempotency.js"
import * as Readiness from "../src/Readiness.js"
import * as ProbeApi from "./support/ProbeApi.js"
import * as TestApp from "./support/TestApp.js"
import * as VirtualClock from "./support/TestClock.js"

/** A pause in real time (the test clock moves only when told). */
const realPause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** `POST /online/probe/echo` with a payment-button key: the body as written. */
const echo = (key: string, body: string, headers: Record<string, string> = {}) =>
  TestApp.send("POST", "/online/probe/echo", { key, body, headers })

/** `POST /payments/probe/count` of `{n}` (it sleeps `n` ms) with a terminal-API key and an `Idempotency-Key`. */
const count = (key: string, n: number, idempotencyKey: string) =>
  TestApp.send("POST", "/payments/probe/count", { key, body: { n }, idempotencyKey })

/** `POST /admin/v1/merchants` of the merchant "A" with an `Idempotency-Key`. */
const createA = (idempotencyKey: string) =>
  TestApp.send("POST", "/admin/v1/merchants", { admin: true, body: { name: "A" }, idempotencyKey })

describe("request bodies", () => {
  it.live(
    "a body over 64 KiB is 413 in the envelope (declared length)",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const reply = yield* echo(m.button.test, JSON.stringify({ pad: "x".repeat(70_000) }))
      TestApp.expectOnlyError(reply, 413, "PayloadTooLarge", "the request body exceeds 65536 bytes")
    })
  )

  it.live(
    "a body of exactly 64 KiB is read",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const text = JSON.stringify({ pad: "" })
      const body = JSON.stringify({ pad: "x".repeat(65_536 - text.length) })
      expect(Buffer.byteLength(body)).toBe(65_536)
      expect((yield* echo(m.button.test, body)).status).toBe(200)
    })
  )

  it.live(
    "a content type other than JSON is 415 in the envelope",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x"
      ]) {
        TestApp.expectError(
          yield* echo(m.button.test, "{}", { "content-type": type }),
          415,
          "UnsupportedMediaType"
        )
      }
      const charset = yield* echo(m.button.test, "{}", { "content-type": "application/json; charset=utf-8" })
      expect(charset.status).toBe(200)
    })
  )

  it.live(
    "malformed JSON is 400 MalformedJson in the envelope",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      for (const body of ["{", "{'a':1}", "", "[1,]", "{} {}", "nul"]) {
        TestApp.expectError(yield* echo(m.button.test, body), 400, "MalformedJson")
      }
    })
  )

  it.live(
    "a nanosecond integer above 2^53 reaches the handler exactly and is written back exactly",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const reply = yield* echo(m.button.test, '{"expiration_date":1712345678901234567,"total":12.5}')
      expect(reply.status).toBe(200)
      expect(reply.text).toBe('{"payload":{"expiration_date":1712345678901234567,"total":12.5},"errors":[]}')
    })
  )
})

/** Checks a 405 that names the methods the path allows. */
const expectMethodNotAllowed = (reply: TestApp.Reply, allow: string) => {
  expect(reply.status).toBe(405)
  expect(reply.headers["allow"]).toBe(allow)
}

/** A probe path whose handler dies, called with the key `keyOf` picks from a new merchant's. */
const probeDefect = (path: string, keyOf: (m: TestApp.MerchantKeys) => string) =>
  Effect.flatMap(TestApp.createMerchant(), (m) => TestApp.send("GET", path, { key: keyOf(m) }))

describe("unknown paths, methods and failures", () => {
  it.live(
    "an unknown path is 404 NotFound in the envelope",
    TestApp.fresh(function* () {
      for (const [method, path] of [
        ["GET", "/nope"],
        ["POST", "/v2/payment"],
        ["GET", "/admin/v1/merchants/MER_1/terminals/SN/extra"]
      ] as const) {
        const reply = yield* TestApp.send(method, path, { body: method === "POST" ? "{}" : undefined })
        TestApp.expectError(reply, 404, "NotFound")
      }
    })
  )

  it.live(
    "a known path with another method is 405 MethodNotAllowed with Allow",
    TestApp.fresh(function* () {
      const reply = yield* TestApp.send("DELETE", "/admin/v1/merchants")
      expectMethodNotAllowed(reply, "POST, GET")
      expect(reply.json).toMatchObject({ payload: {}, errors: [{ code: "MethodNotAllowed" }] })
      const health = yield* TestApp.send("POST", "/health", { body: "{}" })
      expectMethodNotAllowed(health, "GET")
    })
  )

  it.live(
    "a defect on a terminal API path is a 500 AP001 envelope without a stack",
    ProbeApi.fresh(function* () {
      const reply = yield* probeDefect("/payments/probe/defect", (m) => m.terminal.test)
      TestApp.expectOnlyError(reply, 500, "AP001", "internal error")
      expect(reply.text).not.toContain("boom")
    })
  )

  it.live(
    "a defect elsewhere is a 500 InternalError envelope",
    ProbeApi.fresh(function* () {
      const reply = yield* probeDefect("/online/probe/defect", (m) => m.button.test)
      TestApp.expectOnlyError(reply, 500, "InternalError", "internal error")
    })
  )
})

describe("Idempotency-Key", () => {
  it.live(
    "the same key and body within 24 h replays the first response exactly",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const first = yield* count(m.terminal.test, 1, "k-1")
      const second = yield* count(m.terminal.test, 1, "k-1")
      expect(first.status).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(second.headers["idempotent-replayed"]).toBe("true")
      expect(first.headers["idempotent-replayed"]).toBeUndefined()
      expect(yield* Ref.get(ProbeApi.calls)).toBeGreaterThanOrEqual(1)
      expect(first.json.calls).toBe(second.json.calls)
    })
  )

  it.live(
    "the same key with another body is 409 IdempotencyKeyReused",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      yield* count(m.terminal.test, 1, "k")
      TestApp.expectError(yield* count(m.terminal.test, 2, "k"), 409, "IdempotencyKeyReused")
    })
  )

  it.live(
    "a key whose first request is still running is 409 IdempotencyKeyInUse",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const slow = yield* Effect.fork(count(m.terminal.test, 400, "s"))
      yield* Effect.sleep(150)
      TestApp.expectError(yield* count(m.terminal.test, 400, "s"), 409, "IdempotencyKeyInUse")
      expect((yield* Fiber.join(slow)).status).toBe(201)
    })
  )

  it.effect(
    "after a crash the key is free once its 30-second lease lapses: the retry runs, it is not 409 for 24 hours",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchant()
        const body = { n: 0 }
        // A request reserved the key, then its process died (kill -9): nothing completes or releases it.
        const store = yield* IdempotencyStore.IdempotencyStore
        const print = yield* Idempotency.fingerprint("POST", "/payments/probe/count", JSON.stringify(body))
        const scope = { merchantId: m.merchantId, mode: "test", key: "crashed" }
        expect(yield* store.reserve(scope, print, yield* DateTime.now, "dead-owner")).toEqual(
          IdempotencyStore.Reservation.Reserved()
        )
        const retry = () => count(m.terminal.test, body.n, "crashed")
        yield* TestClock.adjust(IdempotencyStore.LEASE_MS - 1)
        const early = yield* retry()
        TestApp.expectError(early, 409, "IdempotencyKeyInUse")
        yield* TestClock.adjust(1)
        const before = yield* Ref.get(ProbeApi.calls)
        const after = yield* retry()
        expect(after.status, after.text).toBe(201)
        expect(after.headers["idempotent-replayed"]).toBeUndefined()
        expect(yield* Ref.get(ProbeApi.calls)).toBe(before + 1)
        // The retry's answer is the key's answer now.
        const replayed = yield* retry()
        expect(replayed.headers["idempotent-replayed"]).toBe("true")
        expect(replayed.text).toBe(after.text)
      }).pipe(Effect.provide(ProbeApi.layer({ clock: VirtualClock.layerNotVirtual })))
  )

  it.effect(
    "a request still running past its lease renews it: a retry meanwhile is 409 IdempotencyKeyInUse and runs nothing, then replays its answer",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchant()
        const body = { n: 3 * IdempotencyStore.LEASE_MS }
        const send = () => count(m.terminal.test, body.n, "slow")
        const slow = yield* Effect.fork(send())
        // Wait (in real time) until the request sleeps on the test clock, beside its lease's renewal.
        for (let i = 0; i < 500 && Chunk.size(yield* TestClock.sleeps()) < 2; i++) {
          yield* Effect.promise(() => realPause(10))
        }
        const calls = yield* Ref.get(ProbeApi.calls)
        for (let elapsed = 0; elapsed < 2 * IdempotencyStore.LEASE_MS; elapsed += 15_000) {
          yield* TestClock.adjust(15_000)
          // A retry that ran would sleep on the test clock: give it 5 real seconds to answer 409.
          const during = yield* Effect.raceFirst(
            send(),
            Effect.promise(() => realPause(5000)).pipe(
              Effect.as({ status: "ran the request", json: undefined })
            )
          )
          expect(during.status).toBe(409)
          expect(during.json.errors[0].code).toBe("IdempotencyKeyInUse")
        }
        expect(yield* Ref.get(ProbeApi.calls)).toBe(calls)
        yield* TestClock.adjust(IdempotencyStore.LEASE_MS)
        const first = yield* Fiber.join(slow)
        expect(first.status).toBe(201)
        const replayed = yield* send()
        expect(replayed.headers["idempotent-replayed"]).toBe("true")
        expect(replayed.text).toBe(first.text)
        expect(yield* Ref.get(ProbeApi.calls)).toBe(calls)
      }).pipe(Effect.provide(ProbeApi.layer({ clock: VirtualClock.layerNotVirtual })))
  )

  it.live(
    "keys are scoped per merchant and mode: the same key of two merchants runs twice",
    ProbeApi.fresh(function* () {
      const a = yield* TestApp.createMerchant("A")
      const b = yield* TestApp.createMerchant("B")
      const ra = yield* count(a.terminal.test, 0, "same")
      const rb = yield* count(b.terminal.test, 0, "same")
      const rp = yield* count(a.terminal.production, 0, "same")
      expect(rb.headers["idempotent-replayed"]).toBeUndefined()
      expect(rp.headers["idempotent-replayed"]).toBeUndefined()
      expect(new Set([ra.json.calls, rb.json.calls, rp.json.calls]).size).toBe(3)
    })
  )

  it.live(
    "an admin POST replays: creating a merchant twice with one key creates one merchant",
    TestApp.fresh(function* () {
      const first = yield* createA("m")
      const second = yield* TestApp.storesNothing(createA("m"))
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
    })
  )

  it.live(
    "a key over 255 characters is 400 InvalidIdempotencyKey",
    TestApp.fresh(function* () {
      TestApp.expectError(yield* createA("k".repeat(256)), 400, "InvalidIdempotencyKey")
    })
  )

  it.live(
    "a 5xx answer is not kept: the key can be retried",
    ProbeApi.fresh(function* () {
      const m = yield* TestApp.createMerchant()
      const fail = () =>
        TestApp.send("POST", "/online/probe/fail", { key: m.button.test, body: "{}", idempotencyKey: "f" })
      expect((yield* fail()).status).toBe(500)
      const second = yield* fail()
      expect(second.status).toBe(500)
      expect(second.headers["idempotent-replayed"]).toBeUndefined()
    })
  )
})

describe("health", () => {
  it.live(
    "GET /health is 200 and GET /ready is 200 when the store answers",
    TestApp.fresh(function* () {
      const health = yield* TestApp.send("GET", "/health")
      expect([health.status, health.json]).toEqual([200, { payload: { status: "ok" }, errors: [] }])
      const ready = yield* TestApp.send("GET", "/ready")
      expect([ready.status, ready.json]).toEqual([200, { payload: { status: "ok" }, errors: [] }])
    })
  )

  /**
   * The app whose `/ready` checks an event store that reads the log with `readAll` (the in-memory
   * store otherwise): the server's `Readiness.layerFromEventStore` over a store in trouble.
   */
  const appWithStore = (readAll: EventStore.EventStore["Type"]["readAll"]) =>
    HttpApiBuilder.serve().pipe(
      Layer.provide(Http.layer),
      Layer.provide(
        // Fresh: the same layer value in TestPorts (over the in-memory store) would be shared otherwise.
        Layer.fresh(Readiness.layerFromEventStore).pipe(
          Layer.provide(
            Layer.effect(
              EventStore.EventStore,
              Effect.map(EventStore.EventStore, (store) => EventStore.EventStore.of({ ...store, readAll }))
            ).pipe(Layer.provide(InMemoryEventStore.layer))
          )
        )
      ),
      Layer.provideMerge(TestApp.TestPorts()),
      Layer.provideMerge(NodeHttpServer.layerTest)
    )

  const NOT_READY = {
    payload: {},
    errors: [{ code: "NotReady", message: "the event store does not answer" }]
  }

  /** Checks that `GET /ready` answers 503 NotReady in the envelope. */
  const expectNotReady = Effect.gen(function* () {
    const ready = yield* TestApp.send("GET", "/ready")
    expect([ready.status, ready.json]).toEqual([503, NOT_READY])
  })

  it.live(
    "GET /ready is 503 NotReady in the envelope when the database is unreachable (the store's read dies, as PgEventStore's does on a connection error)",
    () =>
      Effect.gen(function* () {
        yield* expectNotReady
        // The process itself is alive: /health still answers 200.
        expect((yield* TestApp.send("GET", "/health")).status).toBe(200)
      }).pipe(
        Effect.provide(
          appWithStore(() =>
            Effect.die(new Error("connect ECONNREFUSED 127.0.0.1:5432 (the database is down)"))
          )
        )
      )
  )

  it.live("GET /ready is 503 NotReady in the envelope when the store's read fails", () =>
    expectNotReady.pipe(
      Effect.provide(
        appWithStore(
          () => Effect.fail(new Error("the database is starting up")) as unknown as Effect.Effect<never>
        )
      )
    )
  )

  it.live(
    "GET /ready is 503 NotReady in the envelope when the store does not answer within Readiness.TIMEOUT",
    () => expectNotReady.pipe(Effect.provide(appWithStore(() => Effect.never))),
    30_000
  )
})
