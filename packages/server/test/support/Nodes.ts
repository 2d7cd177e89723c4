/**
 * Server nodes built in the test's process from the server's own layers (`Server.layerStore`,
 * `layerPorts`, `layerBackground`, the HTTP app), on the virtual clock, with one more worker of the
 * test's (a sweeper polling faster than the server's own).
 */
import * as Nanos from "@cobro/domain/Nanos"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { expect } from "@effect/vitest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, randomBytes } from "node:crypto"
import type * as Config from "../../src/Config.js"
import * as Server from "../../src/Server.js"
import * as PgliteTemplate from "./PgliteTemplate.js"
import * as ServerProcess from "./ServerProcess.js"

/** The settings of a node on `database` with the virtual clock (`COBRO_CLOCK=virtual`). */
export const settingsFor = (
  database: Config.Database,
  sealingKey: Buffer,
  adminToken: string
): Server.Settings => ({
  config: {
    port: 0,
    host: "127.0.0.1",
    database,
    adminToken: Option.some(Redacted.make(adminToken)),
    clock: "virtual",
    devWebhooks: true,
    sealingKey: Option.none(),
    publicUrl: Option.none(),
    checkoutUrl: Option.none(),
    checkpointKey: Option.none(),
    logOrigin: Option.none(),
    checkpointEveryEvents: 10_000,
    checkpointEverySeconds: 60
  },
  adminToken: Redacted.make(adminToken),
  adminTokenGenerated: false,
  sealingKey: { key: Redacted.make(sealingKey), source: "COBRO_SEALING_KEY" },
  // The checkpoint key derived from the sealing key: one per test database, like it.
  checkpointKey: {
    signer: Checkpoint.signer(new Uint8Array(createHash("sha256").update(sealingKey).digest())),
    source: "COBRO_CHECKPOINT_KEY"
  }
})

/**
 * The settings of a node on PGlite in a copy of the run's set-up folder (removed with the scope),
 * with that folder's sealing and checkpoint keys: a node without PGlite's first start.
 */
export const setUpPgliteSettings = (adminToken: string) =>
  Effect.map(ServerProcess.pgliteEnvSetUp, ({ DATA_DIR }): Server.Settings => ({
    ...settingsFor({ _tag: "Pglite", dataDir: DATA_DIR }, PgliteTemplate.sealingKey(), adminToken),
    checkpointKey: {
      signer: Checkpoint.signer(new Uint8Array(PgliteTemplate.checkpointKey())),
      source: "COBRO_CHECKPOINT_KEY"
    }
  }))

/** The worker of the test, forked for the layer's lifetime as the server forks its own. */
type Worker = Effect.Effect<unknown, unknown, Layer.Layer.Success<ReturnType<typeof ports>>>

const ports = (settings: Server.Settings, poolSize?: number) =>
  Server.layerPorts(settings).pipe(
    Layer.provideMerge(Server.layerStore(settings, poolSize === undefined ? {} : { poolSize }))
  )

/** A node without HTTP (a second node beside the one the test talks to): its own pool, clock and workers. */
export const node = (settings: Server.Settings, worker: Worker) =>
  Layer.mergeAll(Server.layerBackground, Layer.scopedDiscard(Effect.forkScoped(worker))).pipe(
    Layer.provideMerge(ports(settings, 8))
  )

/** A node whose app is served on a test socket, whose `HttpClient` the test uses. */
export const nodeWithHttp = (settings: Server.Settings, worker: Worker) =>
  Server.layerApp.pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(Layer.scopedDiscard(Effect.forkScoped(worker))),
    Layer.provide(Server.layerBackground),
    Layer.provideMerge(ports(settings))
  )

/**
 * Runs `effect` on a node of the server on a fresh PostgreSQL database (admin token `adminToken`),
 * served on a test socket, with no worker of the test's.
 */
export const onPostgres =
  (adminToken: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const url = yield* ServerProcess.postgresDatabase
      const dataDir = yield* ServerProcess.tempDir
      const settings = settingsFor(
        { _tag: "Postgres", url: Redacted.make(url), dataDir },
        randomBytes(32),
        adminToken
      )
      return yield* effect.pipe(Effect.provide(nodeWithHttp(settings, Effect.never)))
    }).pipe(Effect.scoped)

/** An answer of a node: its status, body as text and as exact JSON (when JSON), and `Location`. */
export interface Reply {
  readonly status: number
  readonly text: string
  readonly json: any
  readonly location: string | undefined
}

/** What a request sends: JSON (a string is sent as given: exact nanoseconds), or a form; and its credential. */
export interface RequestOptions {
  readonly body?: unknown
  readonly form?: Record<string, string>
  readonly key?: string
  readonly admin?: boolean
}

/** Makes the request function of a node whose admin token is `adminToken` (through the `HttpClient` in context). */
export const sender =
  (adminToken: string) =>
  (method: "GET" | "POST" | "PUT" | "PATCH", path: string, options: RequestOptions = {}) =>
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      let request = HttpClientRequest.make(method)(path)
      if (options.body !== undefined) {
        request = HttpClientRequest.bodyText(
          request,
          typeof options.body === "string" ? options.body : JSON.stringify(options.body),
          "application/json"
        )
      }
      if (options.form !== undefined) {
        request = HttpClientRequest.bodyText(
          request,
          new URLSearchParams(options.form).toString(),
          "application/x-www-form-urlencoded"
        )
      }
      if (options.key !== undefined)
        request = HttpClientRequest.setHeader(request, "authorization", `x-api-key ${options.key}`)
      if (options.admin === true) request = HttpClientRequest.bearerToken(request, adminToken)
      const response = yield* client.execute(request)
      const text = yield* response.text
      const parsed = Nanos.parseJsonExact(text)
      const reply: Reply = {
        status: response.status,
        text,
        json: parsed._tag === "Right" ? parsed.right : undefined,
        location: response.headers["location"]
      }
      return reply
    }).pipe(Effect.orDie)

/** The request function of a node, as {@link sender} makes it. */
export type Send = ReturnType<typeof sender>

/**
 * An online payment approved by card: C1 creates the intent `reference_id` of `total_amount` COP
 * with the payment button key `button`, C4 pays it with the sandbox's approving card; C4's reply.
 */
export const paidByCard = (send: Send, button: string, reference_id: string, total_amount: number) =>
  Effect.gen(function* () {
    const intent = yield* send("POST", "/v1/payment-intent", {
      key: button,
      body: { reference_id, amount: { currency: "COP", total_amount } }
    })
    expect(intent.status, intent.text).toBe(201)
    const paid = yield* send("POST", "/v1/payment", {
      key: button,
      body: { reference_id, payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111" } }
    })
    expect(paid.status, paid.text).toBe(201)
    return paid
  })
