/**
 * While the database cannot take writes (a failover, issue 33), every request gets its endpoint's
 * envelope with a status a client can act on: 503 `Unavailable` with `Retry-After`, AP001 (500) with
 * `Retry-After` on the terminal API, the panel's error page (503) under `/panel`; each failure logged
 * once. Such a refusal is never kept as an `Idempotency-Key`'s answer: the retry runs the request,
 * or recovers it at once when its effect committed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type { YieldWrap } from "effect/Utils"
import * as Fallback from "../src/Fallback.js"
import * as Http from "../src/Http.js"
import * as Unavailability from "../src/Unavailability.js"
import * as Bodies from "./support/Bodies.js"
import * as TestApp from "./support/TestApp.js"
import * as Unavailable from "./support/Unavailable.js"

/** The parts of the database a test takes away. */
type Part = "keys" | "idempotency" | "log"

/** The database as a test sets it: what is down, and whether a commit's answer is lost. */
interface Database {
  readonly down: Set<Part>
  /** The log's appends commit, then the connection is cut before their answer. */
  losesCommits: boolean
}

/** The errors (and warnings) logged, each with its message. */
type Logged = Array<{ readonly level: string; readonly message: unknown }>

const dies = (database: Database, part: Part) => database.down.has(part)

/** The app over ports that die as the PostgreSQL stores do when the database goes away. */
const appOn = (database: Database, logged: Logged) => {
  const down = Effect.die(Unavailable.adminShutdown())
  const store = Layer.effect(
    EventStore.EventStore,
    Effect.map(EventStore.EventStore, (real) =>
      EventStore.EventStore.of({
        ...real,
        append: (streamId, events, expected) =>
          dies(database, "log")
            ? down
            : database.losesCommits
              ? Effect.zipRight(real.append(streamId, events, expected), down)
              : real.append(streamId, events, expected),
        appendBatch: (items) =>
          dies(database, "log")
            ? down
            : database.losesCommits
              ? Effect.zipRight(real.appendBatch(items), down)
              : real.appendBatch(items),
        readStream: (streamId, options) => (dies(database, "log") ? down : real.readStream(streamId, options))
      })
    )
  )
  const directory = Layer.effect(
    MerchantDirectory.MerchantDirectory,
    Effect.map(MerchantDirectory.MerchantDirectory, (real) =>
      MerchantDirectory.MerchantDirectory.of({
        ...real,
        findByIdentityKey: (hash) => (dies(database, "keys") ? down : real.findByIdentityKey(hash))
      })
    )
  )
  const idempotency = Layer.effect(
    IdempotencyStore.IdempotencyStore,
    Effect.map(IdempotencyStore.IdempotencyStore, (real) =>
      IdempotencyStore.IdempotencyStore.of({
        ...real,
        reserve: (...args) => (dies(database, "idempotency") ? down : real.reserve(...args)),
        complete: (...args) => (dies(database, "idempotency") ? down : real.complete(...args)),
        release: (...args) => (dies(database, "idempotency") ? down : real.release(...args))
      })
    )
  )
  const logger = Logger.make(({ logLevel, message }) => {
    if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) logged.push({ level: logLevel.label, message })
  })
  return HttpApiBuilder.serve().pipe(
    Layer.provide(Http.layer),
    Layer.provide(
      Layer.mergeAll(store, directory, idempotency, Unavailability.layer(Unavailable.isUnavailable))
    ),
    Layer.provideMerge(TestApp.TestPorts()),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(Logger.replace(Logger.defaultLogger, logger))
  )
}

/** A merchant with a terminal, as `TestApp.createMerchantWithTerminal` makes it. */
type MerchantWithTerminal = Effect.Effect.Success<ReturnType<typeof TestApp.createMerchantWithTerminal>>

/**
 * Runs a test's body on an app of its own over `database`, with what it logs, given a merchant with
 * a terminal.
 */
const withDatabase =
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>>(
    body: (m: MerchantWithTerminal, database: Database, logged: Logged) => Generator<Eff, void, any>
  ) =>
  () => {
    const database: Database = { down: new Set(), losesCommits: false }
    const logged: Logged = []
    const run = Effect.gen(function* () {
      return yield* body(yield* TestApp.createMerchantWithTerminal(), database, logged)
    })
    return Effect.provide(run, appOn(database, logged)) as Effect.Effect<void>
  }

/** Sends a request and returns its answer with the lines logged while it ran. */
const sendLogged = (logged: Logged, ...args: Parameters<typeof TestApp.send>) =>
  Effect.gen(function* () {
    logged.length = 0
    const reply = yield* TestApp.send(...args)
    return { reply, logs: [...logged] }
  })

const UNAVAILABLE = {
  payload: {},
  errors: [{ code: "Unavailable", message: "the service cannot take this request now; retry" }]
}

/** Checks a 503 `Unavailable` in the envelope, with `Retry-After`, that is not a replay. */
const expectUnavailable = (reply: TestApp.Reply) => {
  expect(reply.status, reply.text).toBe(503)
  expect(reply.headers["retry-after"]).toBe("1")
  expect(reply.headers["content-type"]).toMatch(/^application\/json/)
  expect(reply.json).toEqual(UNAVAILABLE)
  expect(reply.headers["idempotent-replayed"]).toBeUndefined()
}

const linkBody = { amount_type: "CLOSE", amount: { total_amount: 50_000 } }

/** B2's request with the merchant's test button key, under `idempotencyKey` when one is given. */
const b2Of = (m: TestApp.MerchantKeys, idempotencyKey?: string): TestApp.SendOptions => ({
  key: m.button.test,
  body: linkBody,
  ...(idempotencyKey === undefined ? {} : { idempotencyKey })
})

const countOf = (type: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 100_000 }), (events) => events.filter((e) => e.type === type).length)
  )

describe("the database cannot take writes (issue 33, item 1)", () => {
  it("the tests' classifier recognises a failover's errors as the PostgreSQL stores die with them", () => {
    Unavailable.expectRecognisesFailover(Unavailable.isUnavailable)
    // The default classifier recognises nothing: without the server's, a defect stays a 500.
    expect(Unavailability.Unavailability.defaultValue().isUnavailable(Unavailable.adminShutdown())).toBe(
      false
    )
  })

  it.live(
    "B2: the key lookup, the key's reservation and the handler's append each answer 503 Unavailable in the envelope with Retry-After, logged once",
    withDatabase(function* (m, database, logged) {
      const b2 = (part: Part, idempotencyKey?: string) =>
        Effect.gen(function* () {
          database.down.add(part)
          const { logs, reply } = yield* sendLogged(
            logged,
            "POST",
            "/online/link/v1",
            b2Of(m, idempotencyKey)
          )
          database.down.delete(part)
          expectUnavailable(reply)
          expect(
            logs.map((l) => l.level),
            `${part} ${idempotencyKey}`
          ).toEqual(["ERROR"])
        })
      // The idempotency middleware's own lookup of the key, and the route's.
      yield* b2("keys", "b2-keys")
      yield* b2("keys")
      yield* b2("idempotency", "b2-reserve")
      yield* b2("log", "b2-append")
      yield* b2("log")
      expect(yield* countOf("LinkCreated")).toBe(0)
    })
  )

  it.live(
    "A3: the same failures answer AP001 with status 500, as the spec fixes it, and Retry-After, logged once",
    withDatabase(function* (m, database, logged) {
      for (const [part, idempotencyKey] of [
        ["keys", "a3-keys"],
        ["keys", undefined],
        ["idempotency", "a3-reserve"],
        ["log", "a3-append"]
      ] as const) {
        database.down.add(part)
        const { logs, reply } = yield* sendLogged(logged, "POST", "/payments/app-checkout", {
          key: m.terminal.test,
          body: Bodies.terminalSale(m.serial, { reference: `down-${part}-${idempotencyKey}` }),
          ...(idempotencyKey === undefined ? {} : { idempotencyKey })
        })
        database.down.delete(part)
        expect(reply.status, `${part} ${idempotencyKey}: ${reply.text}`).toBe(500)
        expect(reply.headers["retry-after"]).toBe("1")
        expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        expect(reply.json).toEqual({ payload: {}, errors: [{ code: "AP001", message: "internal error" }] })
        expect(
          logs.map((l) => l.level),
          `${part} ${idempotencyKey}`
        ).toEqual(["ERROR"])
      }
      expect(yield* countOf("CheckoutCreated")).toBe(0)
    })
  )

  it.live(
    "a retry under the same Idempotency-Key once the database is back runs the request (nothing committed); the 503 is never replayed",
    withDatabase(function* (m, database) {
      const b2 = TestApp.send("POST", "/online/link/v1", b2Of(m, "b2-retried"))
      database.down.add("log")
      expectUnavailable(yield* b2)
      expectUnavailable(yield* b2)
      database.down.delete("log")
      const created = yield* b2
      expect(created.status, created.text).toBe(201)
      expect(created.headers["idempotent-replayed"]).toBeUndefined()
      const replayed = yield* b2
      expect(replayed.text).toBe(created.text)
      expect(replayed.headers["idempotent-replayed"]).toBe("true")
      expect(yield* countOf("LinkCreated")).toBe(1)
    })
  )

  it.live(
    "a 503 of a request whose effect committed (its commit's answer lost) is not kept: the retry at once answers from the link it wrote, and makes no second link",
    withDatabase(function* (m, database) {
      const b2 = TestApp.send("POST", "/online/link/v1", b2Of(m, "b2-committed"))
      database.losesCommits = true
      expectUnavailable(yield* b2)
      database.losesCommits = false
      expect(yield* countOf("LinkCreated")).toBe(1)
      // No lease to wait out: the key was handed back with the 503.
      const recovered = yield* b2
      expect(recovered.status, recovered.text).toBe(201)
      expect(recovered.headers["idempotent-replayed"]).toBe("true")
      const link = recovered.json.payload.payment_link as string
      const read = yield* TestApp.send("GET", `/online/link/v1/${link}`, { key: m.button.test })
      expect(read.status, read.text).toBe(200)
      expect((yield* b2).text).toBe(recovered.text)
      expect(yield* countOf("LinkCreated")).toBe(1)
    })
  )

  it.live(
    "a read (B3) is answered 503 Unavailable with Retry-After too",
    withDatabase(function* (m, database) {
      database.down.add("log")
      expectUnavailable(yield* TestApp.send("GET", "/online/link/v1/LNK_unknown", { key: m.button.test }))
    })
  )
})

describe("Fallback: a defect of a database that cannot take requests (issue 33, item 1)", () => {
  /** The fallback's answer to `app` for a request of `method url`, with the tests' classifier. */
  const answer = (app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>, url: string) =>
    (Fallback.middleware([])(app as never) as Effect.Effect<HttpServerResponse.HttpServerResponse>).pipe(
      Effect.provideService(
        HttpServerRequest.HttpServerRequest,
        HttpServerRequest.fromWeb(new Request(`http://localhost${url}`, { method: "POST" }))
      ),
      Effect.provide(Unavailability.layer(Unavailable.isUnavailable))
    )

  it.effect("under /panel it is the panel's error page, 503 with Retry-After", () =>
    Effect.gen(function* () {
      const response = yield* answer(Effect.die(Unavailable.adminShutdown()), "/panel/payments")
      expect(response.status).toBe(503)
      expect(response.headers["retry-after"]).toBe("1")
      expect(response.headers["content-type"]).toMatch(/^text\/html/)
      expect(response.headers["x-frame-options"]).toBe("DENY")
    })
  )

  it.effect(
    "it is found anywhere in the cause (a failure or a defect, beside others); any other defect stays a 500 without Retry-After",
    () =>
      Effect.gen(function* () {
        const bug = new Error("a bug")
        for (const cause of [
          Cause.parallel(Cause.die(bug), Cause.fail(Unavailable.adminShutdown())),
          Cause.sequential(Cause.die(bug), Cause.die(Unavailable.adminShutdown()))
        ]) {
          const both = yield* answer(Effect.failCause(cause), "/online/link/v1")
          expect([both.status, both.headers["retry-after"]]).toEqual([503, "1"])
        }
        const other = yield* answer(Effect.die(bug), "/online/link/v1")
        expect([other.status, other.headers["retry-after"]]).toEqual([500, undefined])
        const terminal = yield* answer(Effect.die(Unavailable.adminShutdown()), "/payments/app-checkout")
        expect([terminal.status, terminal.headers["retry-after"]]).toEqual([500, "1"])
      })
  )
})
