/**
 * `npm run bench -- http` (issue 4, "Tests and the benchmark"): A3 `POST /payments/app-checkout`, B2
 * `POST /online/link/v1` and B3 `GET /online/link/v1/{id}` loaded for a fixed time with a fixed
 * number of keep-alive connections, against Cobro as `Server.ts` composes it on PostgreSQL and
 * against the floor, a raw `node:http` + `pg` handler doing the same validation and an equivalent
 * insert or select in plain tables. Prints JSON lines and writes them to `bench/results/http.json`.
 *
 * Environment: `DATABASE_URL` (the server to create throwaway databases on; default
 * postgres://postgres@127.0.0.1:5432/postgres), `BENCH_SECONDS` (per round, default 10),
 * `BENCH_WARMUP` (seconds before a target's first round of an endpoint, default 2), `BENCH_ROUNDS`
 * (default 1; targets alternate their order by round), `BENCH_CONNECTIONS` (default 16),
 * `BENCH_ENDPOINTS` (comma-separated subset of A3,B2,B3), `BENCH_TARGETS` (subset of floor,cobro;
 * `cobro` alone for profiling), `BENCH_SETTLE_MS` (pause around each measured phase, default 1000),
 * `BENCH_MERCHANT_EVENTS` (events added to Cobro's merchant before the rounds, default 0: an old
 * account's history), `BENCH_STATE_CACHE` (`off`: Cobro without its cache of known states, every
 * merchant read a replay).
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as KnownStates from "@cobro/domain/KnownStates"
import * as Merchant from "@cobro/domain/Merchant"
import { amount } from "@cobro/domain/Money"
import * as Server from "@cobro/server/Server"
import * as DateTime from "effect/DateTime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as HttpServer from "@effect/platform/HttpServer"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import * as Pg from "pg"
import { Pool } from "undici"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as JsonLines from "../../../bench/JsonLines.js"
import * as Ratio from "../../../bench/Ratio.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as Settings from "../../../bench/Settings.js"
import * as SpanClock from "../../../bench/SpanClock.js"
import * as Statements from "../../../bench/Statements.js"

const seconds = Settings.number("BENCH_SECONDS", 10)
const warmup = Settings.number("BENCH_WARMUP", 2)
const rounds = Settings.number("BENCH_ROUNDS", 1)
const connections = Settings.number("BENCH_CONNECTIONS", 16)
const endpointsWanted = Settings.list("BENCH_ENDPOINTS", "A3,B2,B3")
const targetsWanted = Settings.list("BENCH_TARGETS", "floor,cobro")
/** `BENCH_TRACE=1`: Cobro's spans timed (wall clock, summed by name) and printed per endpoint. */
const spans = process.env["BENCH_TRACE"] === "1" ? SpanClock.make() : undefined
/** After each measured phase: time for background work (simulator, projections, notifier) to settle. */
const settleMillis = Settings.number("BENCH_SETTLE_MS", 1000)
const merchantEvents = Settings.number("BENCH_MERCHANT_EVENTS", 0)
const stateCache = process.env["BENCH_STATE_CACHE"] !== "off"
/** `BENCH_TRACING=on`: Cobro with Effect's default tracer on (the server turns tracing off, `Server.layerTracingOff`). */
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
 * statement's text counted, printed per target and endpoint (on stderr).
 */
const sent = Statements.count({ byText: process.env["BENCH_STATEMENTS"] === "1" })

// ---------------------------------------------------------------------------------------------
// The requests
// ---------------------------------------------------------------------------------------------

/** One terminal per connection: a terminal takes one sale at a time, as a shop's till does. */
const serial = (worker: number) => `SN-BENCH-${worker}`

const checkoutBody = (i: number, worker: number) =>
  JSON.stringify({
    amount: {
      currency: "COP",
      total_amount: 11900,
      taxes: [{ type: "VAT", base: 10000, value: 1900 }],
      tip_amount: 0
    },
    user_email: "seller@shop.co",
    payment_method: "POS",
    terminal_model: "SMART_PRO",
    terminal_serial: serial(worker),
    reference: `order-${i}`
  })

const linkBody = (i: number) =>
  JSON.stringify({
    amount_type: "CLOSE",
    amount: { total_amount: 50_000 },
    reference: `bench-${i}`,
    description: "a bench link"
  })

/** A target under load: its base URL, keys, links to read, and how it stops. */
interface Target {
  readonly name: string
  readonly url: string
  readonly terminalKey: string
  readonly buttonKey: string
  /** Links created for B3, read round robin. */
  readonly links: Array<string>
  close(): Promise<void>
}

interface Endpoint {
  readonly name: "A3" | "B2" | "B3"
  readonly label: string
  readonly expect: number
  request(
    target: Target,
    i: number,
    worker: number
  ): { method: string; path: string; key: string; body?: string }
}

const endpoints: ReadonlyArray<Endpoint> = [
  {
    name: "A3",
    label: "POST /payments/app-checkout",
    expect: 201,
    request: (t, i, worker) => ({
      method: "POST",
      path: "/payments/app-checkout",
      key: t.terminalKey,
      body: checkoutBody(i, worker)
    })
  },
  {
    name: "B2",
    label: "POST /online/link/v1",
    expect: 201,
    request: (t, i) => ({ method: "POST", path: "/online/link/v1", key: t.buttonKey, body: linkBody(i) })
  },
  {
    name: "B3",
    label: "GET /online/link/v1/{id}",
    expect: 200,
    request: (t, i) => ({
      method: "GET",
      path: `/online/link/v1/${t.links[i % t.links.length]}`,
      key: t.buttonKey
    })
  }
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
    // Idle connections stay open: a backend that exits during another target's phase would add its
    // whole life's CPU to that phase (the postmaster's reaped children, `databaseCpu`).
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
    Layer.provideMerge(ports)
  )
  const runtime = ManagedRuntime.make(
    spans !== undefined
      ? layer.pipe(Layer.provide(Layer.setTracer(spans.tracer)))
      : tracingOn
        ? layer
        : layer.pipe(Layer.provide(Server.layerTracingOff))
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
  // Idle connections stay open (0: never closed), as Cobro's do in the bench: see `databaseCpu`.
  const pool = new Pg.Pool({ connectionString: databaseUrl, max: 10, idleTimeoutMillis: 0 })
  pool.on("error", () => {})
  await pool.query(`
    CREATE TABLE api_keys (hash text PRIMARY KEY, merchant_id text NOT NULL, integration text NOT NULL, sandbox boolean NOT NULL);
    CREATE TABLE merchants (id text PRIMARY KEY, enabled boolean NOT NULL, terminal_methods text[] NOT NULL,
      link_min numeric NOT NULL, link_max numeric NOT NULL);
    CREATE TABLE terminals (merchant_id text NOT NULL, serial text NOT NULL, model text NOT NULL, api_enabled boolean NOT NULL,
      PRIMARY KEY (merchant_id, serial));
    CREATE TABLE checkouts (integration_id text PRIMARY KEY, transaction_id text NOT NULL UNIQUE, merchant_id text NOT NULL,
      sandbox boolean NOT NULL, terminal_serial text NOT NULL, terminal_model text NOT NULL, payment_method text NOT NULL,
      total numeric NOT NULL, request jsonb NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE links (id text PRIMARY KEY, merchant_id text NOT NULL, sandbox boolean NOT NULL, amount_type text NOT NULL,
      total numeric, reference text NOT NULL, description text, expiration_date bigint, status text NOT NULL,
      creation_date bigint NOT NULL);`)
  const merchantId = `MER_${randomBytes(8).toString("hex")}`
  const terminalKey = `id_test_term_${randomBytes(16).toString("hex")}`
  const buttonKey = `id_test_btn_${randomBytes(16).toString("hex")}`
  const hash = (key: string) => createHash("sha256").update(key, "utf8").digest("hex")
  await pool.query(
    `INSERT INTO api_keys VALUES ($1, $3, 'terminal_api', true), ($2, $3, 'payment_button', true);
     `.trim(),
    [hash(terminalKey), hash(buttonKey), merchantId]
  )
  await pool.query(`INSERT INTO merchants VALUES ($1, true, '{POS}', 1000, 5000000)`, [merchantId])
  for (let w = 0; w < connections; w++) {
    await pool.query(`INSERT INTO terminals VALUES ($1, $2, 'SMART_PRO', true)`, [merchantId, serial(w)])
  }

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
    const match = /^x-api-key[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? "")
    if (match === null) return { status: 401 as const }
    const { rows } = await pool.query(
      "SELECT merchant_id, integration, sandbox FROM api_keys WHERE hash = $1",
      [hash(match[1]!)]
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
      const who = await authenticate(req, "terminal_api")
      if (who.status !== 200) return unauthorized(res, who.status)
      const body = await jsonBody(req, res)
      if (body === undefined) return
      const field = checkCheckout(body.value)
      if (field !== undefined) return fail(res, 400, "AP002", "invalid request", field)
      const request = body.value as any
      const { rows } = await pool.query(
        `SELECT m.enabled, m.terminal_methods, t.model, t.api_enabled FROM merchants m
         LEFT JOIN terminals t ON t.merchant_id = m.id AND t.serial = $2 WHERE m.id = $1`,
        [who.merchantId, request.terminal_serial]
      )
      const merchant = rows[0]
      if (merchant === undefined) return fail(res, 500, "AP001", "unknown merchant")
      if (!merchant.terminal_methods.includes(request.payment_method))
        return fail(res, 400, "AP003", "method not active", "payment_method")
      if (!merchant.enabled || merchant.model !== request.terminal_model || merchant.api_enabled !== true)
        return fail(res, 400, "AP004", "terminal not bound", "terminal_serial")
      const integrationId = `INT_${randomUUID().replaceAll("-", "")}`
      await pool.query(
        `INSERT INTO checkouts (integration_id, transaction_id, merchant_id, sandbox, terminal_serial, terminal_model,
          payment_method, total, request, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'SENT')`,
        [
          integrationId,
          `TRX_${randomUUID().replaceAll("-", "")}`,
          who.merchantId,
          who.sandbox,
          request.terminal_serial,
          request.terminal_model,
          request.payment_method,
          request.amount.total_amount,
          JSON.stringify(request)
        ]
      )
      return send(res, 201, { payload: { integration_id: integrationId }, errors: [] })
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
      const id = `LNK_${randomUUID().replaceAll("-", "")}`
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
// The load generator: undici, `connections` keep-alive connections, one request in flight on each
// ---------------------------------------------------------------------------------------------

/** Sends one of an endpoint's requests with its merchant's key; its status and body. */
const send = async (
  pool: Pool,
  request: {
    readonly method: string
    readonly path: string
    readonly key: string
    readonly body?: string | undefined
  }
): Promise<{ readonly status: number; readonly text: string }> => {
  const { body, key, method, path } = request
  const response = await pool.request({
    method: method as "GET" | "POST",
    path,
    headers:
      body === undefined
        ? { authorization: `x-api-key ${key}` }
        : { authorization: `x-api-key ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body })
  })
  return { status: response.statusCode, text: await response.body.text() }
}

/** One target's rounds of an endpoint: rate, latencies and CPU, and what PostgreSQL was sent. */
interface Tally {
  readonly rounds: Rounds.Tally
  statements: number
  transactions: number
  failures: number
  firstFailure: string | undefined
}

let counter = 0

/** Runs `connections` closed loops for `duration` seconds; adds to `tally` when given. */
const load = async (
  target: Target,
  endpoint: Endpoint,
  duration: number,
  tally?: Tally,
  database?: string
) => {
  const pool = new Pool(target.url, { connections, pipelining: 1, keepAliveTimeout: 60_000 })
  const node0 = process.cpuUsage()
  const database0 = database === undefined ? 0 : Cpu.backendsUs(database)
  const sent0 = { ...sent }
  if (tally !== undefined) sent.byText?.clear()
  const latencies: Array<number> = []
  let done = 0
  const start = performance.now()
  const end = start + duration * 1000
  try {
    await Promise.all(
      Array.from({ length: connections }, async (_, worker) => {
        while (performance.now() < end) {
          const t = performance.now()
          const { status, text } = await send(pool, endpoint.request(target, counter++, worker))
          latencies.push(performance.now() - t)
          done++
          if (status !== endpoint.expect) {
            if (tally !== undefined) {
              tally.failures++
              tally.firstFailure ??= `${status} ${text}`
            }
          } else if (endpoint.name === "B2" && target.links.length < 1000) {
            target.links.push(JSON.parse(text).payload.payment_link)
          }
        }
      })
    )
  } finally {
    await pool.close()
  }
  const elapsed = (performance.now() - start) / 1000
  if (tally !== undefined) {
    const node = process.cpuUsage(node0)
    tally.rounds.add(done, elapsed, {
      nodeUs: node.user + node.system,
      postgresUs: database === undefined ? 0 : Cpu.backendsUs(database) - database0
    })
    tally.rounds.latencies.push(...latencies)
    tally.statements += sent.statements - sent0.statements
    tally.transactions += sent.transactions - sent0.transactions
    if (sent.byText !== undefined) {
      const top = [...sent.byText].sort((a, b) => b[1].count - a[1].count).slice(0, 25)
      console.error(`${target.name} ${endpoint.name}: statements per request`)
      for (const [text, { count }] of top)
        console.error(`  ${(count / Math.max(1, done)).toFixed(2)}  ${text}`)
    }
  }
}

/** What an open-loop phase at a fixed offered rate measured. */
interface AtRate {
  readonly target: string
  readonly endpoint: string
  readonly offered_per_s: number
  readonly completed_per_s: number
  readonly p50_ms: number
  readonly p99_ms: number
  readonly node_cpu_us_per_request: number
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
  target: Target,
  endpoint: Endpoint,
  rate: number,
  duration: number,
  database: string
): Promise<AtRate> => {
  const pool = new Pool(target.url, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 })
  const node0 = process.cpuUsage()
  const database0 = Cpu.backendsUs(database)
  const sent0 = { ...sent }
  const tally = new Rounds.Tally()
  const total = Math.max(1, Math.round(rate * duration))
  const start = performance.now()
  let failures = 0
  let firstFailure: string | undefined
  try {
    const inFlight: Array<Promise<void>> = []
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      inFlight.push(
        send(pool, endpoint.request(target, counter++, i % connections)).then(({ status, text }) => {
          tally.latencies.push(performance.now() - due)
          if (status !== endpoint.expect) {
            failures++
            firstFailure ??= `${status} ${text}`
          }
        })
      )
    }
    await Promise.all(inFlight)
  } finally {
    await pool.close()
  }
  const node = process.cpuUsage(node0)
  tally.add(total, (performance.now() - start) / 1000, {
    nodeUs: node.user + node.system,
    postgresUs: Cpu.backendsUs(database) - database0
  })
  if (failures > 0) {
    process.exitCode = 1
    console.error(
      `${target.name} ${endpoint.name} at ${rate}/s: ${failures} failures; first: ${firstFailure}`
    )
  }
  const cpu = tally.cpuPerOperation()
  return {
    target: target.name,
    endpoint: `${endpoint.name} ${endpoint.label}`,
    offered_per_s: rate,
    completed_per_s: Math.round(tally.rate()),
    p50_ms: tally.latencyMs(50),
    p99_ms: tally.latencyMs(99),
    node_cpu_us_per_request: cpu.node,
    db_cpu_us_per_request: cpu.postgres,
    statements_per_request: Number(((sent.statements - sent0.statements) / total).toFixed(2))
  }
}

interface Result {
  readonly target: string
  readonly endpoint: string
  readonly connections: number
  readonly requests_per_s: number
  readonly p50_ms: number
  readonly p99_ms: number
  readonly ratio_to_floor: number | null
  /** CPU per request, µs: this process (server and load generator) and the database's backends. */
  readonly node_cpu_us_per_request: number
  readonly db_cpu_us_per_request: number
  /** Sent to PostgreSQL per request, on the request path and by the background workers (counted). */
  readonly statements_per_request: number
  readonly transactions_per_request: number
}

const main = async () => {
  // `cobro-pool<N>`: Cobro with a pool of N connections instead of `Server.defaultPoolSize`.
  const makers = targetsWanted.map((name): [string, (url: string) => Promise<Target>] => {
    if (name === "floor") return [name, floor]
    if (name === "cobro") return [name, (url) => cobro(url)]
    const pool = /^cobro-pool(\d+)$/.exec(name)
    if (pool !== null) return [name, async (url) => ({ ...(await cobro(url, Number(pool[1]))), name })]
    throw new Error(`unknown target ${name}: floor, cobro or cobro-pool<N>`)
  })
  const targets: Array<{ target: Target; database: string }> = []
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
    for (const { target } of targets) {
      const b2 = endpoints.find((e) => e.name === "B2")!
      await load(target, b2, 0.5)
    }
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
        }
      }))
      await Rounds.run(rounds, runs, async ({ target, database, tally }, round) => {
        if (round < targets.length) await load(target, endpoint, warmup)
        await sleep(settleMillis)
        spans?.reset()
        await load(target, endpoint, seconds, tally, database)
        if (target.name !== "floor") spans?.print(`${endpoint.name} round ${round}`)
        await sleep(settleMillis)
      })
      const rate = fixedRates.get(endpoint.name) ?? 0
      if (rate > 0) {
        for (const { target, database } of targets) {
          await sleep(settleMillis)
          atRates.emit(await atRate(target, endpoint, rate, rateSeconds, database))
        }
      }
      const floorRate = runs.find(({ target }) => target.name === "floor")?.tally.rounds.rate()
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
          ratio_to_floor: floorRate === undefined ? null : Ratio.of(rate, floorRate),
          node_cpu_us_per_request: cpu.node,
          db_cpu_us_per_request: cpu.postgres,
          statements_per_request: per(tally.statements),
          transactions_per_request: per(tally.transactions)
        })
        perRound.set(`${target.name} ${endpoint.name}`, tally.rounds.perRound)
      }
    }
    results.write()
    console.log(
      `\nratios to the floor (requests/s, ${connections} connections, ${rounds} round(s) of ${seconds} s; per round in brackets):`
    )
    for (const r of results.lines.filter((r) => r.target !== "floor")) {
      const mine = perRound.get(`${r.target} ${r.endpoint.slice(0, 2)}`) ?? []
      const theirs = perRound.get(`floor ${r.endpoint.slice(0, 2)}`) ?? []
      console.log(`${r.target} ${r.endpoint}: ${Ratio.describe(r.ratio_to_floor ?? "n/a", mine, theirs)}`)
    }
    console.log("\nCPU per request, µs (this process + the database's backends), and its ratio floor/cobro:")
    for (const r of results.lines) {
      const floor = results.lines.find((f) => f.target === "floor" && f.endpoint === r.endpoint)
      const total = r.node_cpu_us_per_request + r.db_cpu_us_per_request
      const ratio =
        floor === undefined
          ? ""
          : ` (${((floor.node_cpu_us_per_request + floor.db_cpu_us_per_request) / total).toFixed(3)})`
      console.log(
        `${r.target} ${r.endpoint}: ${r.node_cpu_us_per_request} + ${r.db_cpu_us_per_request} = ${total}${ratio}`
      )
    }
    console.log("\nSent to PostgreSQL per request (request path and background workers, counted):")
    for (const r of results.lines) {
      console.log(
        `${r.target} ${r.endpoint}: ${r.statements_per_request} statements, ${r.transactions_per_request} transactions`
      )
    }
    if (atRates.lines.length > 0) {
      console.log(
        "\nAt a fixed offered rate (open loop, latency from when each request was due; CPU µs per request, node + db):"
      )
      for (const r of atRates.lines) {
        console.log(
          `${r.target} ${r.endpoint} at ${r.offered_per_s}/s (${r.completed_per_s}/s done): p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ` +
            `CPU ${r.node_cpu_us_per_request} + ${r.db_cpu_us_per_request}, ${r.statements_per_request} statements`
        )
      }
      atRates.write()
    }
  } finally {
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
