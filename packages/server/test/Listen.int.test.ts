/**
 * `cobro listen` end to end, in process: a node of the server's own composition on PGlite served on
 * a real socket, the listen command's effect forwarding to a real local HTTP server, and terminal
 * sales on simulated terminals. The stream (`GET /dev/v1/listen`) carries each test-mode notification
 * with the exact body and the dispatcher's headers; its keys, filter, scope and resumption.
 */
import { verifySignature } from "@cobro/webhooks/Signature"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHmac, randomBytes } from "node:crypto"
import * as Net from "node:net"
import * as Listen from "../src/cli/Listen.js"
import type * as Config from "../src/Config.js"
import type * as Server from "../src/Server.js"
import * as Listener from "./support/Listener.js"
import * as Nodes from "./support/Nodes.js"
import * as ServerProcess from "./support/ServerProcess.js"

const ADMIN_TOKEN = "listen-admin-token"

/** One node on PGlite for the whole file, each test with merchants of its own. */
const NodeLayer = Layer.unwrapScoped(
  Effect.gen(function* () {
    return Nodes.nodeWithHttp(yield* Nodes.setUpPgliteSettings(ADMIN_TOKEN), Effect.never)
  })
)

/** The node as `ServerProcess`'s helpers take a server: its URL and admin token. */
const theServer = Effect.map(HttpServer.HttpServer, (server): ServerProcess.RunningServer => {
  const address = server.address as HttpServer.TcpAddress
  return {
    url: `http://127.0.0.1:${address.port}`,
    adminToken: ADMIN_TOKEN,
    output: () => "",
    stop: () => Promise.resolve({ code: 0, signal: null, millis: 0 })
  }
})

let serials = 0

/**
 * A merchant with a terminal bound and enabled, whose registered test webhook is a receiver of its
 * own (what the dispatcher delivers): the keys of both modes, the terminal's serial, the receiver.
 */
const givenMerchant = (server: ServerProcess.RunningServer, name: string) =>
  Effect.gen(function* () {
    const dispatched = yield* ServerProcess.webhookReceiver
    const serial = `SN-LISTEN-${++serials}`
    const merchant = yield* ServerProcess.merchantWithTerminal(server, {
      name,
      serial,
      webhook: { url: dispatched.url, mode: "test" }
    })
    return { ...merchant, serial, dispatched }
  })

type Merchant = Effect.Effect.Success<ReturnType<typeof givenMerchant>>

/** A local webhook receiver: what a listener forwards to. */
type Receiver = Effect.Effect.Success<typeof ServerProcess.webhookReceiver>

/** An A3 sale with the terminal key of `mode`; answered 201. */
const sell = (
  server: ServerProcess.RunningServer,
  merchant: Merchant,
  mode: "test" | "production",
  reference: string
) =>
  Effect.gen(function* () {
    const reply = yield* ServerProcess.withKey(
      server,
      merchant.keys.terminal_api[mode].identity_key,
      "POST",
      "/payments/app-checkout",
      ServerProcess.terminalSale(merchant.serial, reference)
    )
    expect(reply.status, reply.text).toBe(201)
  })

const referenceOf = (body: string): string => JSON.parse(body).data.metadata.reference

/** Waits (real time) until `received` holds a request whose body has the reference `reference`. */
const receivedWith = (received: ReadonlyArray<ServerProcess.Received>, reference: string, what: string) =>
  ServerProcess.within(
    30_000,
    () => `${what}: no notification of ${reference} among ${received.length}`,
    Effect.sync(() => received.find((r) => referenceOf(r.body) === reference)),
    (found) => found !== undefined
  ).pipe(Effect.map((found) => found!))

/** The notification types a listener may be told to forward (`--events`). */
type EventFilter = ReadonlyArray<"SALE_APPROVED" | "SALE_REJECTED" | "VOID_APPROVED" | "VOID_REJECTED">

/** A listener running in the test's scope: what it printed, and how to stop it and read its end. */
const startListener = (options: {
  readonly server: ServerProcess.RunningServer
  readonly apiKey: string
  readonly forwardTo: string
  readonly events?: EventFilter | undefined
  readonly apiUrl?: string | undefined
}) =>
  Effect.gen(function* () {
    const { out, err, stopped } = yield* Listener.fork({
      forwardTo: options.forwardTo,
      apiKey: Redacted.make(options.apiKey),
      apiUrl: options.apiUrl ?? options.server.url,
      events: Option.fromNullable(options.events)
    })
    yield* ServerProcess.within(
      10_000,
      () => `the listener is not ready: ${[...out, ...err].join("\n")}`,
      Effect.sync(() => out.length),
      (n) => n > 0
    )
    return { out, err, stopped }
  })

/** A listener running in the test's scope, as {@link startListener} starts it. */
type Listening = Effect.Effect.Success<ReturnType<typeof startListener>>

/**
 * A merchant of `name` on `server` and a listener of its test key (the terminal's, unless `key` says
 * the payment button's) forwarding to a receiver of the test's: through `through` and only `events`,
 * when given.
 */
const givenListener = (
  server: ServerProcess.RunningServer,
  name: string,
  options: {
    readonly key?: "terminal_api" | "payment_button"
    readonly through?: Proxy
    readonly events?: EventFilter
  } = {}
) =>
  Effect.gen(function* () {
    const merchant = yield* givenMerchant(server, name)
    const local = yield* ServerProcess.webhookReceiver
    const listener = yield* startListener({
      server,
      apiUrl: options.through?.url,
      apiKey: merchant.keys[options.key ?? "terminal_api"].test.identity_key,
      forwardTo: local.url,
      events: options.events
    })
    return { merchant, local, listener }
  })

/** The references forwarded to `local`, in order, read a second later (a late duplicate would be among them). */
const settledReferences = (local: Receiver) =>
  Effect.zipRight(
    Effect.sleep("1 second"),
    Effect.sync(() => local.received.map((r) => referenceOf(r.body)))
  )

/** A raw request to the stream: its status and first bytes (the stream is cut after them). */
const openStream = (server: ServerProcess.RunningServer, headers: Record<string, string>, query = "") =>
  Effect.promise(async () => {
    const controller = new AbortController()
    const response = await fetch(`${server.url}/dev/v1/listen${query}`, {
      headers,
      signal: controller.signal
    })
    const text =
      response.status === 200
        ? new TextDecoder().decode((await response.body!.getReader().read()).value)
        : await response.text()
    controller.abort()
    return { status: response.status, text, contentType: response.headers.get("content-type") }
  })

/**
 * A TCP proxy to the node whose connections the test can cut, and hold (new connections wait,
 * unconnected, until released): a stream dropped, and a reconnection delayed past a notification.
 */
const proxy = (target: ServerProcess.RunningServer) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{
          url: string
          cut: () => void
          hold: () => void
          release: () => void
          /** Later connections go to `next`. */
          retarget: (next: ServerProcess.RunningServer) => void
          connections: () => number
          server: Net.Server
        }>((resolve) => {
          let port = Number(new URL(target.url).port)
          const sockets = new Set<Net.Socket>()
          let held: Array<() => void> | undefined = undefined
          let count = 0
          const server = Net.createServer((client) => {
            count++
            const connect = () => {
              const upstream = Net.connect(port, "127.0.0.1")
              sockets.add(client).add(upstream)
              client.pipe(upstream).pipe(client)
              const close = () => {
                client.destroy()
                upstream.destroy()
                sockets.delete(client)
                sockets.delete(upstream)
              }
              client.on("error", close).on("close", close)
              upstream.on("error", close).on("close", close)
            }
            if (held === undefined) connect()
            else held.push(connect)
          })
          server.listen(0, "127.0.0.1", () =>
            resolve({
              url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
              cut: () => {
                for (const socket of sockets) socket.destroy()
              },
              hold: () => {
                held = []
              },
              release: () => {
                const waiting = held ?? []
                held = undefined
                for (const connect of waiting) connect()
              },
              retarget: (next) => {
                port = Number(new URL(next.url).port)
              },
              connections: () => count,
              server
            })
          )
        })
    ),
    ({ cut, server }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            cut()
            server.close(() => resolve())
          })
      )
  )

/** A proxy to a node, as {@link proxy} makes it. */
type Proxy = Effect.Effect.Success<ReturnType<typeof proxy>>

/**
 * Cuts the listener's stream at `through` and holds its reconnection while `reference` is sold on
 * `server` and dispatched; once released, the listener must forward it (`what` names the wait).
 */
const dropWhileSelling = (
  through: Proxy,
  given: {
    readonly listener: Listening
    readonly merchant: Merchant
    readonly local: Receiver
  },
  server: ServerProcess.RunningServer,
  reference: string,
  what: string
) =>
  Effect.gen(function* () {
    const { listener, local, merchant } = given
    const before = through.connections()
    through.hold()
    through.cut()
    // The listener reconnects, and waits held, while the sale is notified.
    yield* ServerProcess.within(
      10_000,
      () => `no reconnection: ${listener.err.join("\n")}`,
      Effect.sync(() => through.connections()),
      (n) => n > before
    )
    yield* sell(server, merchant, "test", reference)
    yield* receivedWith(merchant.dispatched.received, reference, "dispatched")
    through.release()
    yield* receivedWith(local.received, reference, what)
  })

describe("cobro listen", { timeout: 120_000 }, () => {
  layer(NodeLayer, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped(
      "a test-mode sale is forwarded with the exact body, a valid x-service-signature for the printed secret and valid Standard Webhooks headers; the registered test webhook still receives it",
      () =>
        Effect.gen(function* () {
          const server = yield* theServer
          const { merchant, local, listener } = yield* givenListener(server, "Tienda Escucha", {
            key: "payment_button"
          })
          expect(listener.out[0]).toBe(
            'Ready. Signing secret: "" (test mode: every test-mode notification is signed with the empty string).'
          )
          const secret = JSON.parse(/Signing secret: (".*?") /.exec(listener.out[0]!)![1]!) as string

          yield* sell(server, merchant, "test", "listen-1")
          const forwarded = yield* receivedWith(local.received, "listen-1", "forwarded")
          const dispatched = yield* receivedWith(merchant.dispatched.received, "listen-1", "dispatched")
          // The exact bytes the dispatcher sends.
          expect(forwarded.body).toBe(dispatched.body)
          const body = JSON.parse(forwarded.body)
          expect(body).toMatchObject({ type: "SALE_APPROVED", data: { merchant_id: merchant.merchantId } })
          expect(forwarded.headers["content-type"]).toBe("application/json")
          expect(forwarded.headers["user-agent"]).toBe("Cobro-Webhooks/1")
          expect(verifySignature(forwarded.body, forwarded.headers["x-service-signature"], secret)).toBe(true)
          expect(verifySignature(forwarded.body, forwarded.headers["x-service-signature"], "x")).toBe(false)
          const { "webhook-id": id, "webhook-timestamp": timestamp } = forwarded.headers
          expect(id).toBe(body.id)
          expect(timestamp).toMatch(/^\d+$/)
          const expected = createHmac("sha256", secret)
            .update(`${id}.${timestamp}.${forwarded.body}`)
            .digest("base64")
          expect(forwarded.headers["webhook-signature"]).toBe(`v1,${expected}`)

          yield* ServerProcess.within(
            5_000,
            () => listener.out.join("\n"),
            Effect.sync(() => listener.out),
            (out) => out.some((line) => line.includes(body.id))
          )
          expect(listener.out.find((line) => line.includes(body.id))).toMatch(
            new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z SALE_APPROVED ${body.id} → 200$`)
          )
          expect(local.received).toHaveLength(1)
          const exit = yield* listener.stopped
          expect(Exit.isSuccess(exit)).toBe(true)
        })
    )

    it.scoped(
      "--events filters: a listener of SALE_APPROVED receives the sale, one of VOID_APPROVED,SALE_REJECTED does not",
      () =>
        Effect.gen(function* () {
          const server = yield* theServer
          const { merchant, local: approvals } = yield* givenListener(server, "Tienda Filtro", {
            events: ["SALE_APPROVED"]
          })
          const others = yield* ServerProcess.webhookReceiver
          const filtered = yield* startListener({
            server,
            apiKey: merchant.keys.terminal_api.test.identity_key,
            forwardTo: others.url,
            events: ["VOID_APPROVED", "SALE_REJECTED"]
          })
          expect(filtered.out[1]).toContain("(VOID_APPROVED, SALE_REJECTED only)")
          yield* sell(server, merchant, "test", "filter-1")
          yield* receivedWith(approvals.received, "filter-1", "forwarded")
          // Well past a few polls of the filtered stream.
          yield* Effect.sleep("1500 millis")
          expect(others.received).toEqual([])
          expect(approvals.received).toHaveLength(1)
        })
    )

    it.scoped(
      "the stream takes a test key only: a production key is 403, no key or an unknown key 401, a wrong filter 400, all in the error envelope",
      () =>
        Effect.gen(function* () {
          const server = yield* theServer
          const merchant = yield* givenMerchant(server, "Tienda Llaves")
          const production = yield* openStream(server, {
            authorization: `x-api-key ${merchant.keys.terminal_api.production.identity_key}`
          })
          expect(production.status).toBe(403)
          expect(JSON.parse(production.text)).toMatchObject({ payload: {}, errors: [{ code: "Forbidden" }] })
          const none = yield* openStream(server, {})
          expect(none.status).toBe(401)
          expect(JSON.parse(none.text)).toMatchObject({ payload: {}, errors: [{ code: "Unauthorized" }] })
          const unknown = yield* openStream(server, { authorization: "x-api-key id_test_tapi_nope" })
          expect(unknown.status).toBe(401)
          const test = `x-api-key ${merchant.keys.terminal_api.test.identity_key}`
          const wrong = yield* openStream(server, { authorization: test }, "?events=SALE_APPROVED,REFUND")
          expect(wrong.status).toBe(400)
          expect(JSON.parse(wrong.text)).toMatchObject({
            errors: [{ code: "ValidationError", field: "events" }]
          })
          const badId = yield* openStream(server, { authorization: test, "last-event-id": "nope" })
          expect(badId.status).toBe(400)
          const open = yield* openStream(server, { authorization: test })
          expect(open.status).toBe(200)
          expect(open.contentType).toContain("text/event-stream")
          expect(open.text).toMatch(/^event: ready\nid: \d+\.\d+\ndata: /)
          expect(JSON.parse(/data: (.*)\n/.exec(open.text)![1]!)).toStrictEqual({
            merchant_id: merchant.merchantId,
            signing_secret: "",
            mode: "test"
          })

          // The listener says why and ends (status 2), rather than retrying a key that cannot work.
          const local = yield* ServerProcess.webhookReceiver
          const refused = yield* Listen.listen({
            forwardTo: local.url,
            apiKey: Redacted.make(merchant.keys.terminal_api.production.identity_key),
            apiUrl: server.url,
            events: Option.none()
          }).pipe(
            Effect.provideService(Listen.ListenIo, {
              out: () => Effect.void,
              err: () => Effect.void,
              stop: Effect.never
            }),
            Effect.flip
          )
          expect(refused._tag).toBe("UserError")
          expect(refused.message).toContain("403")
        })
    )

    it.scoped(
      "a production-mode notification and another merchant's test notification are never streamed",
      () =>
        Effect.gen(function* () {
          const server = yield* theServer
          const { merchant, local } = yield* givenListener(server, "Tienda Propia")
          const other = yield* givenMerchant(server, "Tienda Ajena")
          yield* sell(server, merchant, "production", "live-1")
          yield* sell(server, other, "test", "other-1")
          yield* receivedWith(other.dispatched.received, "other-1", "the other merchant's dispatched")
          // The production sale's notification is recorded (A4 finds it), though no webhook receives it.
          const live = yield* ServerProcess.within(
            30_000,
            (reply) => `A4 of live-1: ${reply.status} ${reply.text}`,
            ServerProcess.withKey(
              server,
              merchant.keys.terminal_api.production.identity_key,
              "GET",
              "/payments/webhook/notifications/live-1?is_external_reference=true"
            ),
            (reply) => reply.status === 200 && reply.json?.notifications?.length === 1
          )
          expect(live.json.notifications[0].type).toBe("SALE_APPROVED")
          // The own test sale commits after the two others: had they been streamed, they came first.
          yield* sell(server, merchant, "test", "own-1")
          yield* receivedWith(local.received, "own-1", "forwarded")
          expect(yield* settledReferences(local)).toEqual(["own-1"])
        })
    )

    it.scoped(
      "a dropped stream resumes from the last event id: nothing lost while it was down (before and after a first notification), nothing twice",
      () =>
        Effect.gen(function* () {
          const server = yield* theServer
          const through = yield* proxy(server)
          const given = yield* givenListener(server, "Tienda Corte", { through })
          const { listener, local, merchant } = given
          const reconnected = "forwarded after the reconnection"
          // Dropped before any notification: resumed from the `ready` event's id.
          yield* dropWhileSelling(through, given, server, "drop-1", reconnected)
          yield* sell(server, merchant, "test", "steady-2")
          yield* receivedWith(local.received, "steady-2", "forwarded")
          // Dropped after one.
          yield* dropWhileSelling(through, given, server, "drop-3", reconnected)
          expect(yield* settledReferences(local)).toEqual(["drop-1", "steady-2", "drop-3"])
          expect(listener.err.filter((line) => line.startsWith("Connection lost"))).toHaveLength(2)
          expect(listener.err.filter((line) => line.startsWith("Reconnected"))).toHaveLength(2)
          expect(Exit.isSuccess(yield* listener.stopped)).toBe(true)
        })
    )
  })
})

/** A node of the server's composition on `settings`' database, served on a socket of its own. */
const nodeOn = (settings: Server.Settings) =>
  Effect.map(Layer.build(Nodes.nodeWithHttp(settings, Effect.never)), (context) =>
    Effect.runSync(Effect.provide(theServer, context))
  )

describe("cobro listen on PostgreSQL, two nodes", { timeout: 180_000 }, () => {
  it.scopedLive(
    "a listener on one node receives what the other node records; moved to the other node by a drop, it resumes there without loss or duplicate",
    () =>
      Effect.gen(function* () {
        const database: Config.Database = {
          _tag: "Postgres",
          url: Redacted.make(yield* ServerProcess.postgresDatabase),
          dataDir: yield* ServerProcess.tempDir
        }
        const settings = Nodes.settingsFor(database, randomBytes(32), ADMIN_TOKEN)
        const a = yield* nodeOn(settings)
        const b = yield* nodeOn(settings)
        const through = yield* proxy(a)
        const given = yield* givenListener(a, "Tienda Dos Nodos", { through })
        const { listener, local, merchant } = given
        yield* sell(b, merchant, "test", "pg-1")
        yield* receivedWith(local.received, "pg-1", "forwarded from the other node")

        // The listener's next connection goes to the other node.
        through.retarget(b)
        yield* dropWhileSelling(through, given, a, "pg-2", "forwarded after moving to the other node")
        yield* sell(b, merchant, "test", "pg-3")
        yield* receivedWith(local.received, "pg-3", "forwarded")
        expect(yield* settledReferences(local)).toEqual(["pg-1", "pg-2", "pg-3"])
        expect(Exit.isSuccess(yield* listener.stopped)).toBe(true)
      })
  )
})
