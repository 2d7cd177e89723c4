/**
 * The Cobro HTTP app for tests, on a real socket: in-memory event store, sequential ids, the test
 * key vault, the directory read from the log, in-memory idempotency, a virtual clock from
 * 2026-11-21T15:00:00Z, and helpers to send requests, create merchants and check answers.
 *
 *   it.live("…", TestApp.fresh(function* () { const m = yield* TestApp.createMerchant(); … }))
 *
 * `fresh` (and `run`) give each test a fresh app (its own log, ids and clock), and `given` (or
 * `withMerchant`, `withTerminal`) the same after the setup the test's body starts from; `shared`
 * serves one app to the tests of a block that need no fresh one.
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Acquirer from "@cobro/domain/Acquirer"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as Nanos from "@cobro/domain/Nanos"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as SignInFailures from "@cobro/domain/SignInFailures"
import * as TransparencyLog from "@cobro/domain/TransparencyLog"
import * as Simulator from "@cobro/terminal-sim/Simulator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Tracer from "effect/Tracer"
import type { YieldWrap } from "effect/Utils"
import * as Authentication from "../../src/Authentication.js"
import * as Http from "../../src/Http.js"
import * as LoginCsrf from "@cobro/panel/LoginCsrf"
import * as PasswordHashing from "@cobro/panel/PasswordHashing"
import * as SignInThrottle from "@cobro/panel/SignInThrottle"
import * as Readiness from "../../src/Readiness.js"
import * as RequestTelemetry from "../../src/RequestTelemetry.js"
import * as TestClock from "./TestClock.js"
import * as TestKeyVault from "./TestKeyVault.js"

/** The key the test app seals panel password hashes under. */
export const TEST_SEALING_KEY = Redacted.make(Buffer.alloc(32, 7))

/** The admin token of the test app. */
export const ADMIN_TOKEN = "test-admin-token"

/**
 * A transparency log with no leaves and no checkpoint: what the audit group sees unless a test
 * gives its own (`Audit.test.ts`).
 */
export const emptyTransparencyLog = Layer.succeed(
  TransparencyLog.TransparencyLog,
  TransparencyLog.TransparencyLog.of({
    verifierKey: "cobro-test+00000000+AQ==",
    treeSize: Effect.succeed(0),
    latestCheckpoint: Effect.succeed(Option.none()),
    checkpointAt: () => Effect.succeed(Option.none()),
    inclusionProof: () =>
      Effect.fail(new TransparencyLog.SizeOutOfRange({ message: "the tree is empty", treeSize: 0 })),
    consistencyProof: () =>
      Effect.fail(new TransparencyLog.SizeOutOfRange({ message: "the tree is empty", treeSize: 0 }))
  })
)

/** What a test may replace in the app. */
export interface Options {
  readonly clock?: Layer.Layer<any>
  readonly transparencyLog?: Layer.Layer<TransparencyLog.TransparencyLog>
  /** The tracer the app's spans are made by (Effect's own by default). */
  readonly tracer?: Tracer.Tracer
}

/**
 * The in-memory ports. A group that needs another port adds its in-memory layer here, one line.
 */
export const TestPorts = (options: Options = {}) =>
  Layer.mergeAll(
    MerchantDirectory.layerFromLog,
    Readiness.layerFromEventStore,
    NotificationLog.layerFromLog,
    ListingsFromLog.layer,
    Simulator.layer,
    PanelSessions.layerMemory
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        InMemoryEventStore.layer,
        IdGenerator.layerSequential,
        TestKeyVault.layer,
        IdempotencyStore.layerMemory,
        PasswordHashing.layer(TEST_SEALING_KEY),
        LoginCsrf.layer(TEST_SEALING_KEY),
        SignInThrottle.layer.pipe(Layer.provide(SignInFailures.layerMemory)),
        Acquirer.layerSandbox,
        Layer.succeed(Authentication.AdminToken, Redacted.make(ADMIN_TOKEN)),
        options.transparencyLog ?? emptyTransparencyLog,
        options.clock ?? TestClock.layer()
      )
    )
  )

/**
 * The app served on a random local port, with an `HttpClient` that targets it. Everything the
 * app uses stays available to the test (the `EventStore`, `VirtualTime`, …).
 */
export const layer = (options: Options = {}) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(Http.layer),
    Layer.provideMerge(TestPorts(options)),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(options.tracer === undefined ? Layer.empty : Layer.setTracer(options.tracer)),
    Layer.provide(RequestTelemetry.layerPlatformTracerOff)
  )

/** Runs a test's effect on a fresh app of its own (`options` as in {@link layer}). */
export const run = <A, E>(effect: Effect.Effect<A, E, any>, options: Options = {}) =>
  Effect.provide(effect, layer(options)) as Effect.Effect<A, E>

/**
 * A test's body run on a fresh app of its own (`options` as in {@link layer}): its own log, ids and
 * clock. `it.live("…", TestApp.fresh(function* () { … }))`.
 */
export const fresh =
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
    body: () => Generator<Eff, A, never>,
    options: Options = {}
  ) =>
  () =>
    run(Effect.gen(body), options)

/**
 * One app for the tests of a block, `@effect/vitest`'s `layer` (no test services: a real socket):
 * `TestApp.shared()("name", (it) => { it.effect(…) })`. For tests that leave nothing another test
 * reads: each makes its own merchant and neither moves the clock nor counts the whole log.
 */
export const shared = (options: Options = {}) => sharedLayer(layer(options), { excludeTestServices: true })

/** A response as a test reads it. */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The body parsed exactly (`bigint` beyond 2^53), or `undefined` when it is not JSON. */
  readonly json: any
}

/** What to send. A `body` that is not a string is written as JSON with `Nanos.stringifyWithBigInt`. */
export interface SendOptions {
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** An identity key: sent as `Authorization: x-api-key <key>`. */
  readonly key?: string
  /** Send the admin token as `Authorization: Bearer …`. */
  readonly admin?: boolean
  readonly idempotencyKey?: string
}

/** Sends a request to the app and reads the whole response. */
export const send = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS",
  path: string,
  options: SendOptions = {}
) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.body !== undefined) {
      request =
        typeof options.body === "string"
          ? HttpClientRequest.bodyText(request, options.body, "application/json")
          : HttpClientRequest.bodyText(request, Nanos.stringifyWithBigInt(options.body), "application/json")
    }
    if (options.key !== undefined)
      request = HttpClientRequest.setHeader(request, "authorization", `x-api-key ${options.key}`)
    if (options.admin === true) request = HttpClientRequest.bearerToken(request, ADMIN_TOKEN)
    if (options.idempotencyKey !== undefined) {
      request = HttpClientRequest.setHeader(request, "idempotency-key", options.idempotencyKey)
    }
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      request = HttpClientRequest.setHeader(request, name, value)
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    const parsed = Nanos.parseJsonExact(text)
    const reply: Reply = {
      status: response.status,
      headers: response.headers,
      text,
      json: parsed._tag === "Right" ? parsed.right : undefined
    }
    return reply
  }).pipe(Effect.orDie)

/** Sends an admin request (Bearer token). */
export const admin = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown) =>
  send(method, path, body === undefined ? { admin: true } : { admin: true, body })

/** The password of the panel users the tests create. */
export const PANEL_PASSWORD = "correct horse battery"

/** A panel user of the merchant, created through the admin API (201 checked); its id. */
export const createPanelUser = (
  merchantId: string,
  email: string,
  role: "full_access" | "read_only" = "full_access"
) =>
  Effect.gen(function* () {
    const created = yield* admin("POST", `/admin/v1/merchants/${merchantId}/users`, {
      email,
      password: PANEL_PASSWORD,
      role
    })
    expect(created.status, created.text).toBe(201)
    return created.json.user_id as string
  })

/** The keys of a merchant created through the admin API. */
export interface MerchantKeys {
  readonly merchantId: string
  readonly terminal: { readonly production: string; readonly test: string }
  readonly button: { readonly production: string; readonly test: string }
  /** The whole 201 body. */
  readonly created: any
}

/** Creates a merchant through `POST /admin/v1/merchants` and returns its identity keys. */
export const createMerchant = (name = "Café Central") =>
  Effect.gen(function* () {
    const reply = yield* admin("POST", "/admin/v1/merchants", { name })
    if (reply.status !== 201) return yield* Effect.dieMessage(`createMerchant: ${reply.status} ${reply.text}`)
    const body: any = reply.json
    return {
      merchantId: body.merchant_id,
      terminal: {
        production: body.keys.terminal_api.production.identity_key,
        test: body.keys.terminal_api.test.identity_key
      },
      button: {
        production: body.keys.payment_button.production.identity_key,
        test: body.keys.payment_button.test.identity_key
      },
      created: body
    } satisfies MerchantKeys
  })

/**
 * Creates a merchant with a terminal bound and selected for the API (default `SN-0001`, SMART_PRO),
 * and the link methods given (default CREDIT_CARD 1000–5000000).
 */
export const createMerchantWithTerminal = (
  options: { readonly serial?: string; readonly model?: "SMART" | "SMART_PRO" } = {}
) =>
  Effect.gen(function* () {
    const merchant = yield* createMerchant()
    const serial = options.serial ?? "SN-0001"
    const base = `/admin/v1/merchants/${merchant.merchantId}`
    yield* admin("POST", `${base}/terminals`, {
      terminal_model: options.model ?? "SMART_PRO",
      terminal_serial: serial,
      name: "Caja 1"
    })
    yield* admin("PATCH", `${base}/terminals/${serial}`, { api_enabled: true })
    yield* admin("PUT", `${base}/payment-methods`, { link: { CREDIT_CARD: { min: 1000, max: 5000000 } } })
    return { ...merchant, serial }
  })

/**
 * A test's body on a fresh app (as {@link fresh}), given what `setup` makes first:
 * `it.live("…", TestApp.given(setup, function* (made) { … }))`.
 */
export const given = <G, Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  setup: Effect.Effect<G, any, any>,
  body: (made: G) => Generator<Eff, A, any>,
  options: Options = {}
) =>
  fresh(function* () {
    return yield* body(yield* setup)
  }, options)

/** A test's body given a new merchant: `it.live("…", TestApp.withMerchant(function* (m) { … }))`. */
export const withMerchant = <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  body: (m: MerchantKeys) => Generator<Eff, A, any>
) => given(createMerchant(), body)

/** A test's body given a merchant with a terminal ({@link createMerchantWithTerminal}). */
export const withTerminal = <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  body: (m: MerchantKeys & { readonly serial: string }) => Generator<Eff, A, any>
) => given(createMerchantWithTerminal(), body)

/** Sets the merchant's link methods (`PUT …/payment-methods`), each with its `{min, max}`. */
export const setLinkMethods = (
  merchantId: string,
  link: Readonly<Record<string, { readonly min: number; readonly max: number }>>
) =>
  Effect.gen(function* () {
    const reply = yield* admin("PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, { link })
    expect(reply.status, reply.text).toBe(200)
  })

/** Sets the merchant's test-mode webhook (`PUT …/webhook`) to `url` (200 checked). */
export const setTestWebhook = (merchantId: string, url = "http://merchant.example/test-hooks") =>
  Effect.gen(function* () {
    const reply = yield* admin("PUT", `/admin/v1/merchants/${merchantId}/webhook`, { url, mode: "test" })
    expect(reply.status, reply.text).toBe(200)
  })

/** Sets the merchant account's status (`PUT /admin/v1/merchants/{id}/status`): the answer, unchecked. */
export const setStatus = (merchantId: string, status: unknown) =>
  admin("PUT", `/admin/v1/merchants/${merchantId}/status`, { status })

/** Disables the merchant's account through the admin API. */
export const disable = (merchantId: string) =>
  Effect.gen(function* () {
    const reply = yield* setStatus(merchantId, "DISABLED")
    expect(reply.status, reply.text).toBe(200)
  })

/** How many events the log holds: a rejected request must not grow it. */
export const logSize = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll({ limit: 1_000_000 }), (events) => events.length)
)

/** Runs `effect` and checks that the log holds as many events after it as before: it stored nothing. */
export const storesNothing = <A, E, R>(effect: Effect.Effect<A, E, R>, what?: string) =>
  Effect.gen(function* () {
    const before = yield* logSize
    const result = yield* effect
    expect(yield* logSize, what).toBe(before)
    return result
  })

/** Checks an answer in the error envelope: its status, and its one error item's code. */
export const expectError = (reply: Reply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.json, reply.text).toMatchObject({ payload: {}, errors: [{ code }] })
}

/** Checks an answer that is exactly the error envelope of the one item `{code, message}`. */
export const expectOnlyError = (reply: Reply, status: number, code: string, message: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.json).toEqual({ payload: {}, errors: [{ code, message }] })
}

/** Checks an answer of a hosted page: its status, as HTML. */
export const expectPage = (reply: Reply, status: number) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers["content-type"]).toMatch(/^text\/html/)
}
