/**
 * `npm run bench -- http` (issue 4, "Tests and the benchmark"): A3 `POST /payments/app-checkout`, B2
 * `POST /online/link/v1` and B3 `GET /online/link/v1/{id}` loaded for a fixed time with a fixed
 * number of keep-alive connections (closed loops), then at fixed offered rates (open loops), against
 * three targets, each on a fresh database of its own:
 * - `floor`: a raw `node:http` + `pg` handler doing the same validation and the equivalent
 *   statements in plain tables (A3 in A3's shape: three round trips, `EffectFloor`);
 * - `effect-floor`: the same work on Effect's own stack as Cobro configures it (`EffectFloor.ts`:
 *   HttpApi, `@effect/sql-pg`, tracing off), so that what the stack costs and what Cobro costs apart;
 * - `cobro`: Cobro as `Server.ts` composes it on PostgreSQL.
 * Prints JSON lines and writes them to `bench/results/http.json` (closed loops) and
 * `bench/results/http-rate.json` (fixed rates).
 *
 * The load generator runs in a process of its own (`bench/LoadGenerator.ts`), so that this
 * process's CPU is the servers': every target lives here, the one under load and the idle ones,
 * whose background timers (Cobro's workers) are counted too. PostgreSQL's CPU is that of the
 * backends serving the loaded target's database (`Cpu.databaseBackends`), and its statements are
 * those sent to that database (`DatabaseStatements`).
 *
 * Environment: `DATABASE_URL` (the server to create throwaway databases on; default
 * postgres://postgres@127.0.0.1:5432/postgres), `BENCH_SECONDS` (per round, default 10),
 * `BENCH_WARMUP` (seconds before a target's first round of an endpoint, default 2), `BENCH_ROUNDS`
 * (default 1; targets alternate their order by round), `BENCH_CONNECTIONS` (default 16),
 * `BENCH_ENDPOINTS` (comma-separated subset of A3,B2,B3), `BENCH_TARGETS` (subset of
 * floor,effect-floor,cobro, the default, and `cobro-pool<N>`; `cobro` alone for profiling),
 * `BENCH_RATES` and `BENCH_RATE_SECONDS` (the open loops, below), `BENCH_SETTLE_MS` (pause around
 * each measured phase, default 1000), `BENCH_TRACE=1` (Cobro's spans timed), `BENCH_STATEMENTS=1`
 * (statements counted by text), `BENCH_TRACING=on` (Cobro with Effect's tracer on),
 * `BENCH_MERCHANT_EVENTS` (events added to Cobro's merchant before the rounds, default 0: an old
 * account's history), `BENCH_STATE_CACHE` (`off`: Cobro without its cache of known states, every
 * merchant read a replay).
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as KnownStates from "@cobro/domain/KnownStates"
import * as Merchant from "@cobro/domain/Merchant"
import { amount } from "@cobro/domain/Money"
import * as OperationalGauges from "@cobro/server/OperationalGauges"
import * as Server from "@cobro/server/Server"
import * as Telemetry from "@cobro/server/Telemetry"
import * as DateTime from "effect/DateTime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as HttpServer from "@effect/platform/HttpServer"
import { randomBytes } from "node:crypto"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import * as Pg from "pg"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as DatabaseStatements from "../../../bench/DatabaseStatements.js"
import { serial, type EndpointName, type Target } from "../../../bench/HttpRequests.js"
import * as JsonLines from "../../../bench/JsonLines.js"
import * as LoadGenerator from "../../../bench/LoadGenerator.js"
import * as Ratio from "../../../bench/Ratio.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as Settings from "../../../bench/Settings.js"
import * as SpanClock from "../../../bench/SpanClock.js"
import * as Statements from "../../../bench/Statements.js"
import * as EffectFloor from "./EffectFloor.js"

const seconds = Settings.number("BENCH_SECONDS", 10)
const warmup = Settings.number("BENCH_WARMUP", 2)
const rounds = Settings.number("BENCH_ROUNDS", 1)
const connections = Settings.number("BENCH_CONNECTIONS", 16)
const endpointsWanted = Settings.list("BENCH_ENDPOINTS", "A3,B2,B3")
const targetsWanted = Settings.list("BENCH_TARGETS", "floor,effect-floor,cobro")
/** `BENCH_TRACE=1`: Cobro's spans timed (wall clock, summed by name) and printed per endpoint. */
const spans = process.env["BENCH_TRACE"] === "1" ? SpanClock.make() : undefined
/** After each measured phase: time for background work (simulator, projections, notifier) to settle. */
const settleMillis = Settings.number("BENCH_SETTLE_MS", 1000)
const merchantEvents = Settings.number("BENCH_MERCHANT_EVENTS", 0)
const stateCache = process.env["BENCH_STATE_CACHE"] !== "off"
/** `BENCH_TRACING=on`: Cobro with Effect's default tracer on (the server turns tracing off, `Telemetry.layerTracingOff`). */
const tracingOn = process.env["BENCH_TRACING"] === "on"
/**
 * `BENCH_RATES` (`A3:50,B2:50,B3:50`): after the closed loops, each target gets each endpoint at this
 * fixed offered rate (requests/s, open loop) for `BENCH_RATE_SECONDS` (5); `0` skips an endpoint.
 */
const fixedRates = new Map(
  Settings.list("BENCH_RATES", "A3:50,B2:50,B3:50").map((pair) => {
    const [name, rate] = pair.split(":")
    return [name ?? "", Number(rate ?? 0)] as const
  })
)
const rateSeconds = Settings.number("BENCH_RATE_SECONDS", 5)
/**
 * What every target and its background workers send to PostgreSQL; `BENCH_STATEMENTS=1`: each
 * statement's text counted, printed per target and endpoint (on stderr; every target's, the idle
 * ones' background workers included).
 */
const sent = Statements.count({ byText: process.env["BENCH_STATEMENTS"] === "1" })
/** {@link sent} by database: a phase's figures are its target's alone. */
const sentTo = DatabaseStatements.byDatabase(sent)

// ---------------------------------------------------------------------------------------------
// The endpoints (their requests: `bench/HttpRequests.ts`, built in the load generator)
// ---------------------------------------------------------------------------------------------

interface Endpoint {
  readonly name: EndpointName
  readonly label: string
  readonly expect: number
}

const endpoints: ReadonlyArray<Endpoint> = [
  { name: "A3", label: "POST /payments/app-checkout", expect: 201 },
  { name: "B2", label: "POST /online/link/v1", expect: 201 },
  { name: "B3", label: "GET /online/link/v1/{id}", expect: 200 }
]

// ---------------------------------------------------------------------------------------------
// Cobro as the server composes it
// ---------------------------------------------------------------------------------------------

/** A small JSON call for the set-up (not measured). */
const call = async (url: string, method: string, path: string, authorization: string, body?: unknown) => {
  const response = await fetch(url + path, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: text === "" ? undefined : (JSON.parse(text) as any) }
}

const expectStatus = (what: string, reply: { status: number; text: string }, status: number) => {
  if (reply.status !== status)
    throw new Error(`${what}: expected ${status}, got ${reply.status}: ${reply.text}`)
}

const cobro = async (databaseUrl: string, poolSize?: number): Promise<Target> => {
  const adminToken = randomBytes(18).toString("base64url")
  const settings = await Effect.runPromise(
    Server.settings.pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map([
            ["DATABASE_URL", databaseUrl],
            ["PORT", "0"],
            ["HOST", "127.0.0.1"],
            ["ADMIN_TOKEN", adminToken],
            ["COBRO_SEALING_KEY", randomBytes(32).toString("hex")],
            ["COBRO_CHECKPOINT_KEY", randomBytes(32).toString("hex")]
          ])
        )
      )
    )
  )
  // `Server.layer` without the banner: the same store, ports, background work, app and HTTP server.
  const ports = Layer.merge(
    Server.layerPorts(settings),
    stateCache ? Layer.empty : Layer.succeed(KnownStates.KnownStates, KnownStates.none)
  ).pipe(
    // Idle connections stay open: a backend that exits during a phase takes its CPU in that phase
    // with it (`Cpu.backendsUsBetween` reads live backends only).
    Layer.provideMerge(
      Server.layerStore(settings, {
        idleTimeout: Duration.infinity,
        ...(poolSize === undefined ? {} : { poolSize })
      })
    )
  )
  const layer = Server.layerApp.pipe(
    Layer.provideMerge(Server.layerHttpServer(settings.config)),
    Layer.provide(Layer.merge(Server.layerBackground, Server.layerTransparencyLog(settings))),
    Layer.provide(Telemetry.layerMetrics(Telemetry.defaults, "127.0.0.1", OperationalGauges.sample)),
    Layer.provideMerge(ports)
  )
  const runtime = ManagedRuntime.make(
    spans !== undefined
      ? layer.pipe(Layer.provide(Layer.setTracer(spans.tracer)))
      : tracingOn
        ? layer
        : layer.pipe(Layer.provide(Telemetry.layerTracingOff))
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("Cobro did not listen on TCP")
  const url = `http://127.0.0.1:${address.port}`
  const bearer = `Bearer ${adminToken}`

  const created = await call(url, "POST", "/admin/v1/merchants", bearer, { name: "Bench" })
  expectStatus("create merchant", created, 201)
  const merchantId: string = created.json.merchant_id
  const terminalKey: string = created.json.keys.terminal_api.test.identity_key
  const buttonKey: string = created.json.keys.payment_button.test.identity_key
  const base = `/admin/v1/merchants/${merchantId}`
  for (let w = 0; w < connections; w++) {
    expectStatus(
      "bind terminal",
      await call(url, "POST", `${base}/terminals`, bearer, {
        terminal_model: "SMART_PRO",
        terminal_serial: serial(w),
        name: `Caja ${w}`
      }),
      201
    )
    expectStatus(
      "enable terminal",
      await call(url, "PATCH", `${base}/terminals/${serial(w)}`, bearer, { api_enabled: true }),
      200
    )
  }
  expectStatus(
    "payment methods",
    await call(url, "PUT", `${base}/payment-methods`, bearer, {
      terminal: { POS: true },
      link: { CREDIT_CARD: { min: 1000, max: 5_000_000 } }
    }),
    200
  )
  if (merchantEvents > 0) {
    // An old account: its stream grows by `merchantEvents` link bounds set one after the other.
    const handle = CommandHandler.make(Merchant.Merchant)
    await runtime.runPromise(
      Effect.gen(function* () {
        let known: CommandHandler.Known<Merchant.State> | undefined = undefined
        for (let i = 0; i < merchantEvents; i++) {
          const command = new Merchant.SetLinkMethod({
            method: "CREDIT_CARD",
            min: amount(1000),
            max: amount(5_000_000 - (i % 2)),
            now: yield* DateTime.now
          })
          known = yield* Effect.orDie(handle(merchantId, command, {}, known))
        }
      })
    )
    console.log(`the merchant's stream has ${merchantEvents} more events`)
  }
  // The keys are found through a read model: wait for the projection to catch up.
  for (let i = 0; ; i++) {
    const reply = await call(url, "GET", "/online/link/v1/payment_methods", `x-api-key ${buttonKey}`)
    if (reply.status === 200) break
    if (i > 100) throw new Error(`the button key never worked: ${reply.status} ${reply.text}`)
    await sleep(50)
  }
  for (let w = 0; w < connections; w++) {
    for (let i = 0; ; i++) {
      const reply = await call(
        url,
        "PUT",
        `/sandbox/v1/terminals/${serial(w)}/behavior`,
        `x-api-key ${terminalKey}`,
        {
          mode: "auto_approve"
        }
      )
      if (reply.status === 200) break
      if (i > 100) throw new Error(`the terminal key never worked: ${reply.status} ${reply.text}`)
      await sleep(50)
    }
  }
  return {
    name: "cobro",
    url,
    terminalKey,
    buttonKey,
    links: [],
    close: () => runtime.dispose()
  }
}

// ---------------------------------------------------------------------------------------------
// The floor: node:http + pg, the same validation, plain tables
// ---------------------------------------------------------------------------------------------

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
const isString = (u: unknown, max = 255): u is string => typeof u === "string" && u.length <= max
const isAmount = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u) && u >= 0
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const TERMINAL_METHODS = new Set(["", "POS", "WALLET_A", "WALLET_B", "PAY_BY_LINK", "PAY_BY_QR_SERVICE"])
const MODELS = new Set(["SMART", "SMART_PRO"])
const LINK_METHODS = new Set(["CREDIT_CARD", "PSE", "NEQUI", "BANCOLOMBIA_TRANSFER"])

/** A3's field checks: the first problem's field, or undefined when the request is well formed. */
const checkCheckout = (body: unknown): string | undefined => {
  if (!isObject(body)) return "body"
  const amount = body["amount"]
  if (!isObject(amount)) return "amount"
  if (amount["currency"] !== "COP") return "amount.currency"
  if (!isAmount(amount["total_amount"])) return "amount.total_amount"
  if (!isAmount(amount["tip_amount"])) return "amount.tip_amount"
  const taxes = amount["taxes"]
  if (!Array.isArray(taxes)) return "amount.taxes"
  let taxed = 0
  for (const tax of taxes) {
    if (!isObject(tax) || !isString(tax["type"]) || !isAmount(tax["base"]) || !isAmount(tax["value"]))
      return "amount.taxes"
    taxed += tax["value"]
  }
  if (taxed + (amount["tip_amount"] as number) > (amount["total_amount"] as number)) return "amount.taxes"
  if (!isString(body["user_email"]) || !EMAIL.test(body["user_email"])) return "user_email"
  if (!isString(body["payment_method"]) || !TERMINAL_METHODS.has(body["payment_method"]))
    return "payment_method"
  if (!isString(body["terminal_model"]) || !MODELS.has(body["terminal_model"])) return "terminal_model"
  if (!isString(body["terminal_serial"], 64) || body["terminal_serial"] === "") return "terminal_serial"
  if (body["reference"] !== undefined && !isString(body["reference"])) return "reference"
  return undefined
}

/** B2's field checks (CLOSE needs `amount.total_amount`), as above. */
const checkLink = (body: unknown): string | undefined => {
  if (!isObject(body)) return "body"
  if (body["amount_type"] !== "CLOSE" && body["amount_type"] !== "OPEN") return "amount_type"
  const amount = body["amount"]
  if (amount !== undefined) {
    if (!isObject(amount)) return "amount"
    if (amount["total_amount"] !== undefined && !isAmount(amount["total_amount"]))
      return "amount.total_amount"
  }
  if (
    body["amount_type"] === "CLOSE" &&
    (amount === undefined || (amount as any)["total_amount"] === undefined)
  )
    return "amount.total_amount"
  if (body["reference"] !== undefined && !isString(body["reference"])) return "reference"
  if (body["description"] !== undefined && !isString(body["description"], 1000)) return "description"
  if (body["expiration_date"] !== undefined && typeof body["expiration_date"] !== "number")
    return "expiration_date"
  if (
    body["callback_url"] !== undefined &&
    !(isString(body["callback_url"], 2048) && body["callback_url"].startsWith("https://"))
  )
    return "callback_url"
  const methods = body["payment_methods"]
  if (methods !== undefined && !(Array.isArray(methods) && methods.every((m) => LINK_METHODS.has(m))))
    return "payment_methods"
  if (
    body["payer_email"] !== undefined &&
    !(isString(body["payer_email"]) && EMAIL.test(body["payer_email"]))
  )
    return "payer_email"
  return undefined
}

const floor = async (databaseUrl: string): Promise<Target> => {
  // Idle connections stay open (0: never closed), as Cobro's do in the bench: see `Cpu.backendsUsBetween`.
  const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 0 })
  pool.on("error", () => {})
  const { terminalKey, buttonKey } = await EffectFloor.setUp(pool, connections)

  const send = (res: NodeHttp.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  }
  const fail = (
    res: NodeHttp.ServerResponse,
    status: number,
    code: string,
    message: string,
    field?: string
  ) =>
    send(res, status, { payload: {}, errors: [{ code, message, ...(field === undefined ? {} : { field }) }] })

  const authenticate = async (req: NodeHttp.IncomingMessage, integration: string) => {
    const key = EffectFloor.keyOf(req.headers.authorization ?? "")
    if (key === undefined) return { status: 401 as const }
    const { rows } = await pool.query(
      "SELECT merchant_id, integration, sandbox FROM api_keys WHERE hash = $1",
      [EffectFloor.hashKey(key)]
    )
    const row = rows[0]
    if (row === undefined) return { status: 401 as const }
    if (row.integration !== integration) return { status: 403 as const }
    return { status: 200 as const, merchantId: row.merchant_id as string, sandbox: row.sandbox as boolean }
  }
  const readBody = (req: NodeHttp.IncomingMessage) =>
    new Promise<string | undefined>((resolve, reject) => {
      const chunks: Array<Buffer> = []
      let size = 0
      req.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size <= 64 * 1024) chunks.push(chunk)
      })
      req.on("end", () => resolve(size > 64 * 1024 ? undefined : Buffer.concat(chunks).toString("utf8")))
      req.on("error", reject)
    })
  const jsonBody = async (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
    const type = req.headers["content-type"]
    if (type !== undefined && !type.toLowerCase().startsWith("application/json")) {
      fail(res, 415, "UnsupportedMediaType", "the request body must be application/json")
      return undefined
    }
    const text = await readBody(req)
    if (text === undefined) {
      fail(res, 413, "PayloadTooLarge", "the request body exceeds 65536 bytes")
      return undefined
    }
    try {
      return { value: JSON.parse(text) as unknown }
    } catch {
      fail(res, 400, "MalformedJson", "malformed JSON")
      return undefined
    }
  }
  const unauthorized = (res: NodeHttp.ServerResponse, status: 401 | 403) =>
    fail(res, status, status === 401 ? "Unauthorized" : "Forbidden", "wrong key")

  const handle = async (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
    const url = req.url ?? "/"
    if (req.method === "POST" && url === "/payments/app-checkout") {
      // A3's shape (`EffectFloor`): the body first, then the key with the merchant and the terminal
      // it names in one statement, the checkout with its claim, the approval, the answer.
      const body = await jsonBody(req, res)
      if (body === undefined) return
      const field = checkCheckout(body.value)
      if (field !== undefined) return fail(res, 400, "AP002", "invalid request", field)
      const request = body.value as any
      const key = EffectFloor.keyOf(req.headers.authorization ?? "")
      if (key === undefined) return unauthorized(res, 401)
      const { rows } = await pool.query(
        `SELECT k.merchant_id, k.integration, k.sandbox, m.enabled, m.terminal_methods, t.model, t.api_enabled
         FROM api_keys k
         LEFT JOIN merchants m ON m.id = k.merchant_id
         LEFT JOIN terminals t ON t.merchant_id = k.merchant_id AND t.serial = $2
         WHERE k.hash = $1`,
        [EffectFloor.hashKey(key), request.terminal_serial]
      )
      const found = rows[0]
      if (found === undefined) return unauthorized(res, 401)
      if (found.integration !== "terminal_api") return unauthorized(res, 403)
      if (found.enabled === null || found.terminal_methods === null)
        return fail(res, 500, "AP001", "unknown merchant")
      if (!found.terminal_methods.includes(request.payment_method))
        return fail(res, 400, "AP003", "method not active", "payment_method")
      if (!found.enabled || found.model !== request.terminal_model || found.api_enabled !== true)
        return fail(res, 400, "AP004", "terminal not bound", "terminal_serial")
      const checkout = {
        integrationId: EffectFloor.newId("INT"),
        transactionId: EffectFloor.newId("TRX"),
        total: request.amount.total_amount as number
      }
      await pool.query(
        `INSERT INTO checkouts (integration_id, transaction_id, merchant_id, sandbox, terminal_serial, terminal_model,
          payment_method, total, request, status, claimed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'SENDING', now())`,
        [
          checkout.integrationId,
          checkout.transactionId,
          found.merchant_id,
          found.sandbox,
          request.terminal_serial,
          request.terminal_model,
          request.payment_method,
          checkout.total,
          JSON.stringify(request)
        ]
      )
      const answer = EffectFloor.approve(checkout)
      await pool.query(
        `WITH answered AS (
           UPDATE checkouts SET status = $2, answered_at = now() WHERE integration_id = $1 RETURNING integration_id
         )
         INSERT INTO notifications (checkout_id, body) SELECT integration_id, $3 FROM answered`,
        [checkout.integrationId, answer.status, JSON.stringify(EffectFloor.notification(checkout, answer))]
      )
      return send(res, 201, { payload: { integration_id: checkout.integrationId }, errors: [] })
    }
    if (req.method === "POST" && url === "/online/link/v1") {
      const who = await authenticate(req, "payment_button")
      if (who.status !== 200) return unauthorized(res, who.status)
      const body = await jsonBody(req, res)
      if (body === undefined) return
      const field = checkLink(body.value)
      if (field !== undefined) return fail(res, 400, "ValidationError", "invalid request", field)
      const request = body.value as any
      const { rows } = await pool.query("SELECT enabled, link_min, link_max FROM merchants WHERE id = $1", [
        who.merchantId
      ])
      const merchant = rows[0]
      if (merchant === undefined || !merchant.enabled) return fail(res, 403, "MerchantDisabled", "disabled")
      const total = request.amount?.total_amount
      if (total !== undefined && (total < Number(merchant.link_min) || total > Number(merchant.link_max)))
        return fail(res, 400, "ValidationError", "amount out of range", "amount.total_amount")
      const id = EffectFloor.newId("LNK")
      await pool.query(
        `INSERT INTO links (id, merchant_id, sandbox, amount_type, total, reference, description, expiration_date, status,
          creation_date) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ACTIVE', $9)`,
        [
          id,
          who.merchantId,
          who.sandbox,
          request.amount_type,
          total ?? null,
          request.reference ?? "",
          request.description ?? null,
          request.expiration_date ?? null,
          (BigInt(Date.now()) * 1_000_000n).toString()
        ]
      )
      return send(res, 201, {
        payload: { payment_link: id, url: `https://checkout.example/${id}` },
        errors: []
      })
    }
    if (req.method === "GET" && url.startsWith("/online/link/v1/") && url.indexOf("/", 16) === -1) {
      const who = await authenticate(req, "payment_button")
      if (who.status !== 200) return unauthorized(res, who.status)
      const id = decodeURIComponent(url.slice(16))
      const { rows } = await pool.query(
        `SELECT id, total, status, expiration_date, creation_date, description, amount_type, sandbox, reference
         FROM links WHERE id = $1 AND merchant_id = $2 AND sandbox = $3`,
        [id, who.merchantId, who.sandbox]
      )
      const link = rows[0]
      if (link === undefined)
        return fail(res, 404, "LinkNotFound", "no payment link with this id for this key")
      const total = Number(link.total)
      return send(res, 200, {
        api_version: 1,
        id: link.id,
        total,
        subtotal: total,
        tip_amount: 0,
        taxes: [],
        status: link.status,
        expiration_date: link.expiration_date === null ? null : Number(link.expiration_date),
        creation_date: Number(link.creation_date),
        description: link.description,
        payment_method: "",
        transaction_id: null,
        amount_type: link.amount_type,
        is_sandbox: link.sandbox,
        reference: link.reference
      })
    }
    return fail(res, 404, "NotFound", "no route")
  }
  const server = NodeHttp.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) fail(res, 500, "InternalError", "internal error")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  return {
    name: "floor",
    url: `http://127.0.0.1:${port}`,
    terminalKey,
    buttonKey,
    links: [],
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await pool.end()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The measured phases: the load from the load generator's process, the CPU and statements here
// ---------------------------------------------------------------------------------------------

/** A target with its database's name. */
interface Run {
  readonly target: Target
  readonly database: string
}

/** What one phase of load measured: the load generator's outcome, and what it cost here and in PostgreSQL. */
interface Phase {
  readonly outcome: LoadGenerator.Outcome
  readonly nodeUs: number
  readonly postgresUs: number
  readonly statements: number
  readonly transactions: number
}

/**
 * Loads `run`'s target with `endpoint` (closed loops of `connections` connections, or `rate`
 * requests/s); B2's created links go to the target's `links` (up to 1000) for B3.
 */
const phase = async (
  generator: LoadGenerator.LoadGenerator,
  { database, target }: Run,
  endpoint: Endpoint,
  duration: number,
  rate?: number
): Promise<Phase> => {
  sent.byText?.clear()
  const sent0 = DatabaseStatements.of(sentTo, database)
  const backends0 = Cpu.databaseBackends(database)
  // This process's CPU is the servers': the target under load, and the idle targets' background
  // timers (Cobro's workers, pools) counted with it.
  const node0 = process.cpuUsage()
  const outcome = await generator.run({
    url: target.url,
    endpoint: endpoint.name,
    keys: { terminalKey: target.terminalKey, buttonKey: target.buttonKey, links: target.links },
    expect: endpoint.expect,
    connections,
    seconds: duration,
    rate,
    collectLinks: Math.max(0, 1000 - target.links.length)
  })
  const node = process.cpuUsage(node0)
  const postgresUs = Cpu.backendsUsBetween(backends0, Cpu.databaseBackends(database))
  const sent1 = DatabaseStatements.of(sentTo, database)
  target.links.push(...outcome.links)
  return {
    outcome,
    nodeUs: node.user + node.system,
    postgresUs,
    statements: sent1.statements - sent0.statements,
    transactions: sent1.transactions - sent0.transactions
  }
}

/** Each statement text's count per request of a phase (`BENCH_STATEMENTS=1`), on stderr. */
const printStatements = (title: string, requests: number) => {
  if (sent.byText === undefined) return
  const top = [...sent.byText].sort((a, b) => b[1].count - a[1].count).slice(0, 25)
  console.error(`${title}: statements per request`)
  for (const [text, { count }] of top)
    console.error(`  ${(count / Math.max(1, requests)).toFixed(2)}  ${text}`)
}

/** One target's rounds of an endpoint: rate, latencies and CPU, and what PostgreSQL was sent. */
interface Tally {
  readonly rounds: Rounds.Tally
  statements: number
  transactions: number
  failures: number
  firstFailure: string | undefined
}

const addPhase = (tally: Tally, { outcome, ...used }: Phase) => {
  tally.rounds.add(outcome.requests, outcome.seconds, used)
  for (const latency of outcome.latencies) tally.rounds.latencies.push(latency)
  tally.statements += used.statements
  tally.transactions += used.transactions
  tally.failures += outcome.failures
  tally.firstFailure ??= outcome.firstFailure
}

/** What an open-loop phase at a fixed offered rate measured. */
interface AtRate {
  readonly target: string
  readonly endpoint: string
  readonly offered_per_s: number
  readonly completed_per_s: number
  readonly p50_ms: number
  readonly p99_ms: number
  /** The effect floor's at the same rate, for comparison. */
  readonly effect_floor_p50_ms: number | null
  readonly effect_floor_p99_ms: number | null
  readonly node_cpu_us_per_request: number
  /** Of `node_cpu_us_per_request`, about this much is the idle targets' background work (`idle` over the rate). */
  readonly idle_node_cpu_us_per_request: number
  readonly node_cpu_ratio_to_effect_floor: number | null
  readonly db_cpu_us_per_request: number
  readonly statements_per_request: number
}

/**
 * Offers `rate` requests per second for `duration` seconds, whatever the responses' pace (open loop):
 * request _i_ is due at start + _i_/`rate`, and its latency runs from when it was due, so a server
 * that falls behind sees its queueing counted (no coordinated omission). A3 request _i_ uses terminal
 * _i_ mod `BENCH_CONNECTIONS`.
 */
const atRate = async (
  generator: LoadGenerator.LoadGenerator,
  run: Run,
  endpoint: Endpoint,
  rate: number,
  duration: number
) => {
  const measured = await phase(generator, run, endpoint, duration, rate)
  const { outcome } = measured
  if (outcome.failures > 0) {
    process.exitCode = 1
    console.error(
      `${run.target.name} ${endpoint.name} at ${rate}/s: ${outcome.failures} failures; first: ${outcome.firstFailure}`
    )
  }
  const tally = new Rounds.Tally()
  tally.add(outcome.requests, outcome.seconds, measured)
  for (const latency of outcome.latencies) tally.latencies.push(latency)
  const cpu = tally.cpuPerOperation()
  return {
    target: run.target.name,
    endpoint: `${endpoint.name} ${endpoint.label}`,
    offered_per_s: rate,
    completed_per_s: Math.round(tally.rate()),
    p50_ms: tally.latencyMs(50),
    p99_ms: tally.latencyMs(99),
    node_cpu_us_per_request: cpu.node,
    db_cpu_us_per_request: cpu.postgres,
    statements_per_request: Number((measured.statements / Math.max(1, outcome.requests)).toFixed(2))
  }
}

interface Result {
  readonly target: string
  readonly endpoint: string
  readonly connections: number
  readonly requests_per_s: number
  readonly p50_ms: number
  readonly p99_ms: number
  /** Requests per second over the floor's, and over the effect floor's. */
  readonly ratio_to_floor: number | null
  readonly ratio_to_effect_floor: number | null
  /** CPU per request, µs: the servers' process (not the load generator) and the database's backends. */
  readonly node_cpu_us_per_request: number
  /** Of `node_cpu_us_per_request`, about this much is the idle targets' background work (`idle` over the rate). */
  readonly idle_node_cpu_us_per_request: number
  /** Node µs per request over the effect floor's. */
  readonly node_cpu_ratio_to_effect_floor: number | null
  readonly db_cpu_us_per_request: number
  /** Sent to the target's database per request, on the request path and by its background workers. */
  readonly statements_per_request: number
  readonly transactions_per_request: number
}

/** `mine / theirs`, or null without theirs. */
const ratioTo = (mine: number, theirs: number | undefined) =>
  theirs === undefined || theirs === 0 ? null : Ratio.of(mine, theirs)

const main = async () => {
  // `cobro-pool<N>`: Cobro with a pool of N connections instead of `Server.defaultPoolSize`.
  const makers = targetsWanted.map((name): [string, (url: string) => Promise<Target>] => {
    if (name === "floor") return [name, floor]
    if (name === "effect-floor") return [name, (url) => EffectFloor.make(url, connections)]
    if (name === "cobro") return [name, (url) => cobro(url)]
    const pool = /^cobro-pool(\d+)$/.exec(name)
    if (pool !== null) return [name, async (url) => ({ ...(await cobro(url, Number(pool[1]))), name })]
    throw new Error(`unknown target ${name}: floor, effect-floor, cobro or cobro-pool<N>`)
  })
  const targets: Array<Run> = []
  const generator = LoadGenerator.start()
  let failed = false
  try {
    for (const [name, make] of makers) {
      const database = await Database.create(`http-${name}`)
      try {
        targets.push({ target: await make(database.url), database: database.name })
      } catch (error) {
        await Database.drop(database.name)
        throw error
      }
    }
    // B3 reads links made by B2; when B2 is not measured, make some.
    const b2 = endpoints.find((e) => e.name === "B2")!
    for (const run of targets) await phase(generator, run, b2, 0.5)
    await sleep(settleMillis)
    // Every phase counts the idle targets' background work with the loaded one's: what it comes to.
    const idle0 = process.cpuUsage()
    const idleSince = performance.now()
    await sleep(1000)
    const idle = process.cpuUsage(idle0)
    const idlePerSecond = (idle.user + idle.system) / ((performance.now() - idleSince) / 1000)
    console.log(
      `every target idle: the servers' process uses ${Math.round(idlePerSecond)} µs of CPU per second`
    )
    const results = JsonLines.make<Result>("http")
    const atRates = JsonLines.make<AtRate>("http-rate")
    const perRound = new Map<string, ReadonlyArray<number>>()
    for (const endpoint of endpoints.filter((e) => endpointsWanted.includes(e.name))) {
      const runs = targets.map((run) => ({
        ...run,
        tally: {
          rounds: new Rounds.Tally(),
          statements: 0,
          transactions: 0,
          failures: 0,
          firstFailure: undefined
        } as Tally
      }))
      await Rounds.run(rounds, runs, async (run, round) => {
        if (round < targets.length) await phase(generator, run, endpoint, warmup)
        await sleep(settleMillis)
        spans?.reset()
        const measured = await phase(generator, run, endpoint, seconds)
        addPhase(run.tally, measured)
        printStatements(`${run.target.name} ${endpoint.name}`, measured.outcome.requests)
        if (run.target.name.startsWith("cobro")) spans?.print(`${endpoint.name} round ${round}`)
        await sleep(settleMillis)
      })
      const rate = fixedRates.get(endpoint.name) ?? 0
      if (rate > 0) {
        const measured = []
        for (const run of targets) {
          await sleep(settleMillis)
          measured.push(await atRate(generator, run, endpoint, rate, rateSeconds))
        }
        const effectFloor = measured.find((m) => m.target === "effect-floor")
        for (const m of measured) {
          atRates.emit({
            ...m,
            effect_floor_p50_ms: effectFloor?.p50_ms ?? null,
            effect_floor_p99_ms: effectFloor?.p99_ms ?? null,
            idle_node_cpu_us_per_request: Math.round(idlePerSecond / m.offered_per_s),
            node_cpu_ratio_to_effect_floor: ratioTo(
              m.node_cpu_us_per_request,
              effectFloor?.node_cpu_us_per_request
            )
          })
        }
      }
      const rateOf = (name: string) => runs.find(({ target }) => target.name === name)?.tally.rounds.rate()
      const floorRate = rateOf("floor")
      const effectFloorRate = rateOf("effect-floor")
      const effectFloorNodeUs = runs
        .find(({ target }) => target.name === "effect-floor")
        ?.tally.rounds.cpuPerOperation().node
      for (const { target, tally } of runs) {
        if (tally.failures > 0) {
          failed = true
          console.error(
            `${target.name} ${endpoint.name}: ${tally.failures} responses were not ${endpoint.expect}; first: ${tally.firstFailure}`
          )
        }
        const rate = tally.rounds.rate()
        const cpu = tally.rounds.cpuPerOperation()
        const per = (n: number) => Number((n / Math.max(1, tally.rounds.count)).toFixed(2))
        results.emit({
          target: target.name,
          endpoint: `${endpoint.name} ${endpoint.label}`,
          connections,
          requests_per_s: Math.round(rate),
          p50_ms: tally.rounds.latencyMs(50),
          p99_ms: tally.rounds.latencyMs(99),
          ratio_to_floor: ratioTo(rate, floorRate),
          ratio_to_effect_floor: ratioTo(rate, effectFloorRate),
          node_cpu_us_per_request: cpu.node,
          idle_node_cpu_us_per_request: Math.round(idlePerSecond / rate),
          node_cpu_ratio_to_effect_floor: ratioTo(cpu.node, effectFloorNodeUs),
          db_cpu_us_per_request: cpu.postgres,
          statements_per_request: per(tally.statements),
          transactions_per_request: per(tally.transactions)
        })
        perRound.set(`${target.name} ${endpoint.name}`, tally.rounds.perRound)
      }
    }
    results.write()
    const show = (ratio: number | null) => (ratio === null ? "n/a" : String(ratio))
    console.log(
      `\nratios to the floor and to the effect floor (requests/s, ${connections} connections, ${rounds} round(s) of ${seconds} s; per round in brackets):`
    )
    for (const r of results.lines.filter((r) => r.target !== "floor")) {
      const rounds = (target: string) => perRound.get(`${target} ${r.endpoint.slice(0, 2)}`) ?? []
      const toFloor = Ratio.describe(show(r.ratio_to_floor), rounds(r.target), rounds("floor"))
      const toEffectFloor =
        r.target === "effect-floor"
          ? ""
          : `; to the effect floor ${Ratio.describe(show(r.ratio_to_effect_floor), rounds(r.target), rounds("effect-floor"))}`
      console.log(`${r.target} ${r.endpoint}: to the floor ${toFloor}${toEffectFloor}`)
    }
    console.log(
      "\nCPU per request, µs (the servers' process, of which the idle targets' background work, + the database's backends), the floor's total over this one's, and Node's over the effect floor's:"
    )
    for (const r of results.lines) {
      const floor = results.lines.find((f) => f.target === "floor" && f.endpoint === r.endpoint)
      const total = r.node_cpu_us_per_request + r.db_cpu_us_per_request
      const ratio =
        floor === undefined
          ? ""
          : ` (floor/this ${((floor.node_cpu_us_per_request + floor.db_cpu_us_per_request) / total).toFixed(3)})`
      console.log(
        `${r.target} ${r.endpoint}: ${r.node_cpu_us_per_request} (idle ${r.idle_node_cpu_us_per_request}) + ${r.db_cpu_us_per_request} = ${total}${ratio}, ` +
          `node ÷ effect floor's ${show(r.node_cpu_ratio_to_effect_floor)}`
      )
    }
    console.log("\nSent to the target's database per request (request path and background workers, counted):")
    for (const r of results.lines) {
      console.log(
        `${r.target} ${r.endpoint}: ${r.statements_per_request} statements, ${r.transactions_per_request} transactions`
      )
    }
    if (atRates.lines.length > 0) {
      console.log(
        "\nAt a fixed offered rate (open loop, latency from when each request was due; the effect floor's in brackets; CPU µs per request, node (of which idle) + db):"
      )
      for (const r of atRates.lines) {
        console.log(
          `${r.target} ${r.endpoint} at ${r.offered_per_s}/s (${r.completed_per_s}/s done): ` +
            `p50 ${r.p50_ms} ms (${r.effect_floor_p50_ms ?? "n/a"}), p99 ${r.p99_ms} ms (${r.effect_floor_p99_ms ?? "n/a"}), ` +
            `CPU ${r.node_cpu_us_per_request} (idle ${r.idle_node_cpu_us_per_request}) + ${r.db_cpu_us_per_request} (node ÷ effect floor's ${show(r.node_cpu_ratio_to_effect_floor)}), ` +
            `${r.statements_per_request} statements`
        )
      }
      atRates.write()
    }
  } finally {
    await generator.close()
    for (const { target, database } of targets) {
      await target.close().catch(() => {})
      await Database.drop(database)
    }
  }
  if (failed) process.exitCode = 1
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
