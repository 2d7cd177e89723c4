/**
 * Real server processes for the integration suites: the server `npm start` runs (compiled once per
 * run, see `CompiledSetup`) on a free port, a temp `DATA_DIR` or a throwaway PostgreSQL database, stopped by a signal.
 */
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
import * as Bodies from "../../../http/test/support/Bodies.js"
import * as Cluster from "../../../store-pg/test/support/Cluster.js"
import * as Databases from "../../../store-pg/test/support/Databases.js"
import type {} from "./CompiledSetup.js"
import * as PgliteTemplate from "./PgliteTemplate.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** What `npm start` runs. */
export const startScript = Path.join(root, "scripts", "start.mjs")

/**
 * What the suites spawn: the run's compiled server (`CompiledSetup`) where the run has one, else
 * the start script itself (the failover suite).
 */
const entry = (): string => inject("compiledServer") ?? startScript

/** How long a server may take to print its banner (PGlite's first start runs initdb in WebAssembly). */
export const startTimeoutMillis = 90_000

/** A port nothing listens on right now. */
export const freePort = Cluster.freePort

/** How a stopped server ended. */
export interface Stopped {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** From the signal to the exit. */
  readonly millis: number
}

/** A running server. */
export interface RunningServer {
  readonly url: string
  readonly adminToken: string
  /** Everything it printed so far (stdout and stderr). */
  readonly output: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<Stopped>
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
    } else child.once("exit", (code, signal) => resolve({ code, signal }))
  })

/**
 * Runs the server with `env` over a clean environment (PATH and HOME kept), until it prints
 * "Cobro is listening on …"; fails with what it printed if it exits or takes too long.
 */
export const startProcess = async (env: Record<string, string>): Promise<RunningServer> => {
  const port = env["PORT"] ?? String(await freePort())
  const child = spawn(process.execPath, [entry()], {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PORT: port, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`The server did not start within ${startTimeoutMillis} ms. Output:\n${output}`))
    }, startTimeoutMillis)
    const onData = () => {
      // Plain, or inside a JSON log line (`COBRO_LOG_FORMAT=json`), where a newline is `\n`.
      const match = /Cobro is listening on (https?:\/\/[^\s"\\]+)/.exec(output)
      if (match !== null) {
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        resolve(match[1]!)
      }
    }
    child.stdout!.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(
        new Error(`The server exited (code ${code}, signal ${signal}) before listening. Output:\n${output}`)
      )
    })
  })
  const adminToken = env["ADMIN_TOKEN"] ?? /admin token {2}(\S+)/.exec(output)?.[1] ?? ""
  return {
    url,
    adminToken,
    output: () => output,
    stop: async (signal = "SIGTERM") => {
      const started = Date.now()
      const done = exited(child)
      child.kill(signal)
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      const result = await done
      clearTimeout(timer)
      return { ...result, millis: Date.now() - started }
    }
  }
}

/** A server for the scope of a test, killed if the test did not stop it. */
export const start = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(() => startProcess(env)),
    (server) => Effect.promise(() => server.stop("SIGKILL"))
  )

/** Runs a server process to its exit (for configurations that must refuse to start). */
export const runToExit = (env: Record<string, string>) =>
  Effect.promise(async () => {
    const child = spawn(process.execPath, [entry()], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), startTimeoutMillis)
    const result = await exited(child)
    clearTimeout(timer)
    return { ...result, output }
  })

/** A temp folder removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-server-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** The PostgreSQL server the suites use: `DATABASE_URL`, else the default local one. */
export const postgresUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

const onServer = (statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(
      PostgresClient.layer({ url: Redacted.make(postgresUrl), maxConnections: 1 }) as Layer.Layer<
        SqlClient.SqlClient,
        unknown
      >
    ),
    Effect.scoped
  )

/**
 * A fresh database on the PostgreSQL server, dropped when the scope closes. Fails loudly (never
 * skips) when no server answers.
 */
export const postgresDatabase = Effect.gen(function* () {
  const name = `cobro_server_test_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(
    onServer(`CREATE DATABASE ${name}`).pipe(
      Effect.mapError(
        (cause) =>
          new Error(
            `The server's PostgreSQL suite needs a PostgreSQL server at ${postgresUrl} (set DATABASE_URL): ${String(cause)}`
          )
      ),
      Effect.orDie
    ),
    () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
  )
  return withDatabase(postgresUrl, name)
})

/** A sealing key, as `COBRO_SEALING_KEY` takes it. */
export const newSealingKey = () => randomBytes(32).toString("hex")

/** The keys a node on PostgreSQL must be given: a new sealing key and a new checkpoint key. */
export const postgresKeys = () => ({
  COBRO_SEALING_KEY: newSealingKey(),
  COBRO_CHECKPOINT_KEY: randomBytes(32).toString("hex")
})

/** The environment of a node on a fresh PostgreSQL database (dropped with the scope), with new keys. */
export const postgresEnv = Effect.map(postgresDatabase, (url) => ({ DATABASE_URL: url, ...postgresKeys() }))

/** The environment of a node on PGlite in a fresh, empty `DATA_DIR` (removed with the scope): its first start. */
export const pgliteEnv = Effect.map(tempDir, (dir) => ({ DATA_DIR: Path.join(dir, "data") }))

/**
 * The environment of a node on PGlite in a fresh copy of the run's set-up `DATA_DIR` (removed with
 * the scope): a new node without the seconds of PGlite's first start.
 */
export const pgliteEnvSetUp = Effect.map(pgliteEnv, (env) => {
  PgliteTemplate.copyTo(env.DATA_DIR)
  return env
})

/** Stops the server (SIGTERM) and checks that it exited with status 0. */
export const stopsCleanly = (server: RunningServer) =>
  Effect.gen(function* () {
    const stopped = yield* Effect.promise(() => server.stop())
    expect(stopped.code, server.output()).toBe(0)
  })

/** A JSON body whose bigints (nanosecond instants) are written as exact integer literals. */
export const jsonBody = (body: unknown) =>
  JSON.stringify(body, (_, v) => (typeof v === "bigint" ? `__big${v}__` : v)).replace(/"__big(\d+)__"/g, "$1")

/** An HTTP request to a running server, as a promise; the body parsed as JSON when it is JSON. */
export const request = async (
  server: RunningServer,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string> } = {}
) => {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: jsonBody(options.body) })
  })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return {
    status: response.status,
    text,
    json: json as any,
    headers: Object.fromEntries(response.headers.entries()) as Record<string, string>
  }
}

/** An HTTP call to a running server (`request` as an effect). */
export const call = (
  server: RunningServer,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string> } = {}
) => Effect.promise(() => request(server, method, path, options))

/** A call with the server's admin token. */
export const asAdmin = (server: RunningServer, method: string, path: string, body?: unknown) =>
  call(server, method, path, {
    headers: { authorization: `Bearer ${server.adminToken}` },
    ...(body === undefined ? {} : { body })
  })

/** A call with a merchant's identity key. */
export const withKey = (server: RunningServer, key: string, method: string, path: string, body?: unknown) =>
  call(server, method, path, {
    headers: { authorization: `x-api-key ${key}` },
    ...(body === undefined ? {} : { body })
  })

/** A request a {@link webhookReceiver} received. */
export interface Received {
  readonly body: string
  readonly headers: Http.IncomingHttpHeaders
}

/** A local webhook receiver on a free port that answers 200 and keeps what it received; closed with the scope. */
export const webhookReceiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ url: string; received: Array<Received>; server: Http.Server }>((resolve) => {
        const received: Array<Received> = []
        const server = Http.createServer((req, res) => {
          let body = ""
          req.on("data", (chunk) => (body += chunk))
          req.on("end", () => {
            received.push({ body, headers: req.headers })
            res.writeHead(200).end("ok")
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}/hook`,
            received,
            server
          })
        )
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/**
 * A server on a fresh PostgreSQL database (with `env` added) that notifies a local webhook receiver
 * (COBRO_DEV_WEBHOOKS=1): the receiver, the server, and the database's environment (its URL and keys).
 */
export const startOnPostgresWithReceiver = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const hook = yield* webhookReceiver
    const database = yield* postgresEnv
    const server = yield* start({ ...database, COBRO_DEV_WEBHOOKS: "1", ...env })
    return { hook, server, database }
  })

/** An A3 body: a COP 11,900 sale (VAT 1,900) on a SMART_PRO terminal. */
export const terminalSale = (serial: string, reference = "order-42") =>
  Bodies.terminalSale(serial, { reference })

/** A connection of the test's own to a server's database (`pg`), ended with the scope. */
export const databaseClient = Databases.databaseClient

/** A C1 body: an intent of `total_amount` COP. */
export const onlineIntent = (reference_id: string, total_amount: number) =>
  Bodies.intent(reference_id, total_amount)

/** A C4 body: a card attempt on the intent `reference_id` with the sandbox's approving card. */
export const cardAttempt = (reference_id: string) => ({
  reference_id,
  payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
  payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111", installments: 1 }
})

/** A merchant made through the admin API, with one SMART_PRO terminal bound and enabled for the API. */
export interface MerchantWithTerminal {
  readonly merchantId: string
  /** The keys as the admin API answered them: `keys.<integration>.<mode>.identity_key`. */
  readonly keys: any
  /** The webhook as `PUT …/webhook` answered it. */
  readonly webhook: any
}

/**
 * Creates a merchant named `name`, binds the terminal `serial` and enables it for the API, sets the
 * payment methods (terminal `POS` unless given) and the webhook; dies with the answer of any step
 * that fails.
 */
export const merchantWithTerminal = (
  server: RunningServer,
  options: {
    readonly name: string
    readonly serial: string
    readonly methods?: unknown
    readonly webhook: unknown
  }
) =>
  Effect.gen(function* () {
    const expectStatus = (step: string, status: number) => (reply: { status: number; text: string }) =>
      reply.status === status
        ? Effect.succeed(reply)
        : Effect.dieMessage(`${step}: ${reply.status} ${reply.text}`)
    const created = yield* Effect.flatMap(
      asAdmin(server, "POST", "/admin/v1/merchants", { name: options.name }),
      expectStatus("create the merchant", 201)
    )
    const merchantId: string = (created as any).json.merchant_id
    const base = `/admin/v1/merchants/${merchantId}`
    yield* Effect.flatMap(
      asAdmin(server, "POST", `${base}/terminals`, {
        terminal_model: "SMART_PRO",
        terminal_serial: options.serial,
        name: "Caja"
      }),
      expectStatus("bind the terminal", 201)
    )
    yield* Effect.flatMap(
      asAdmin(server, "PATCH", `${base}/terminals/${options.serial}`, { api_enabled: true }),
      expectStatus("enable the terminal for the API", 200)
    )
    yield* Effect.flatMap(
      asAdmin(server, "PUT", `${base}/payment-methods`, options.methods ?? { terminal: { POS: true } }),
      expectStatus("set the payment methods", 200)
    )
    const webhook = yield* Effect.flatMap(
      asAdmin(server, "PUT", `${base}/webhook`, options.webhook),
      expectStatus("set the webhook", 200)
    )
    return {
      merchantId,
      keys: (created as any).json.keys,
      webhook: (webhook as any).json
    } satisfies MerchantWithTerminal
  })

/** Polls `attempt` (real time) until `done`, or dies with `what` of the last result after `millis`. */
export const within = <A>(
  millis: number,
  what: (last: A) => string,
  attempt: Effect.Effect<A>,
  done: (a: A) => boolean
) =>
  Effect.gen(function* () {
    const deadline = Date.now() + millis
    for (;;) {
      const last = yield* attempt
      if (done(last)) return last
      if (Date.now() > deadline) return yield* Effect.dieMessage(`after ${millis} ms: ${what(last)}`)
      yield* Effect.sleep("250 millis")
    }
  })
