/**
 * `npm run bench -- webhooks` (issue 5, "The benchmark"): first each stage of the webhook path
 * alone, its CPU per delivery against what the target leaves (`stages`); then webhook deliveries per
 * second from logged outcomes to a local receiver that answers 200, against the floor, a raw loop
 * that signs the same bodies with the same recipe (hex HMAC-SHA256 over the Base64 of the raw bytes) and POSTs them with
 * `undici`, in the same run, and against the durable floor (the same loop that also writes each
 * notification before sending it and each attempt after it, with plain `pg`; both in `Floor.ts`);
 * then a backlog of due notifications drained while memory is sampled.
 * Prints JSON lines and writes them to `bench/results/webhooks.json`.
 *
 * Cobro's path is the server's: approved terminal sales appended to the store (PostgreSQL, a
 * throwaway database) through the deciders, then, timed, the read models' runners, the notifier as
 * a log consumer (`Subscription.run`) and `Dispatcher.run` with the server's configuration, until the
 * receiver has every notification. The receiver is a `node:http` server in a child process
 * (`Receiver.mjs`), the same for both targets.
 *
 * Environment: `DATABASE_URL` (the server to create throwaway databases on; default
 * postgres://postgres@127.0.0.1:5432/postgres), `BENCH_DELIVERIES` (per round, default 2000),
 * `BENCH_ROUNDS` (default 3; the targets alternate their order by round), `BENCH_CONCURRENCY` (the
 * floor's POSTs in flight; default the dispatcher's, 32), `BENCH_BACKLOG` (due notifications
 * drained, default 100000; 0 skips the drain), `BENCH_PHASES` (subset of stages,throughput,backlog),
 * `BENCH_NOTIFIER=read` (the notifier without its stream memory, as `Notifier.handle`; `=event`, with
 * it but one event at a time, `Notifier.makeHandler`; default the server's batch handler),
 * `BENCH_TRACE=1` (Cobro's spans timed and printed per phase, for profiling),
 * `BENCH_CPU_PROFILE=<folder>` (a CPU profile of each timed Cobro phase, see `startProfile`),
 * `BENCH_SALES_READ_MODELS=timed` (the read models catch up on the sales inside the timed phase, as
 * before 2026-11-21's second session; by default they do so while the sales are appended, untimed),
 * `BENCH_DISPATCHERS=<n>` (n - 1 more processes running the dispatcher alone, `DispatcherProcess.ts`,
 * sharing the deliveries through the lease table as several nodes do; their CPU counts as Cobro's;
 * default 1, the bench process's dispatcher alone), `BENCH_CONSUMERS=separate` (each log consumer runs alone and reads the log for itself, as before
 * 2026-11-21's third session; by default they run as the server's, one group with one reader,
 * `Subscription.runAll`), `BENCH_COUNT=1` (the SQL statements of each timed round counted, printed).
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as Projection from "@cobro/store-pg/Projection"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as Subscription from "@cobro/store-pg/Subscription"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import { type ChildProcess, execFileSync, fork } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Inspector from "node:inspector/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as Dispatcher from "../src/Dispatcher.js"
import * as CobroLayer from "./CobroLayer.js"
import * as Floor from "./Floor.js"
import * as Notifier from "../src/Notifier.js"

const env = (name: string, fallback: number) => {
  const value = process.env[name]
  return value === undefined || value === "" ? fallback : Number(value)
}
const perRound = env("BENCH_DELIVERIES", 2000)
const rounds = env("BENCH_ROUNDS", 3)
const floorConcurrency = env("BENCH_CONCURRENCY", 32)
const backlog = env("BENCH_BACKLOG", 100_000)
const phases = (process.env["BENCH_PHASES"] ?? "stages,throughput,backlog").split(",")
const dispatchers = env("BENCH_DISPATCHERS", 1)
const trace = process.env["BENCH_TRACE"] === "1"
/** Per statement text: how many were sent, and the milliseconds from sending each to its answer. */
const statementCounts = new Map<string, { count: number; ms: number }>()
const statementCounting = process.env["BENCH_COUNT"] === "1"
if (statementCounting) {
  const original = Pg.Client.prototype.query
  Pg.Client.prototype.query = function (this: Pg.Client, ...args: Array<any>) {
    const text = typeof args[0] === "string" ? args[0] : (args[0]?.text ?? args[0]?.name ?? "?")
    const key = String(text).replace(/\s+/g, " ").slice(0, 90)
    const entry = statementCounts.get(key) ?? { count: 0, ms: 0 }
    entry.count++
    statementCounts.set(key, entry)
    const sent = performance.now()
    const answered = () => (entry.ms += performance.now() - sent)
    const last = args.length - 1
    if (typeof args[last] === "function") {
      const callback = args[last]
      args[last] = (...results: Array<unknown>) => {
        answered()
        return callback(...results)
      }
    }
    const result = (original as any).apply(this, args)
    if (result !== undefined && typeof result.then === "function") result.then(answered, answered)
    return result
  } as any
}
const printCounts = (label: string) => {
  if (statementCounts.size === 0) return
  console.error(`statements during ${label} (count, total ms from send to answer):`)
  for (const [k, { count, ms }] of [...statementCounts].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30))
    console.error(`  ${String(count).padStart(7)} ${ms.toFixed(0).padStart(7)} ${k}`)
  statementCounts.clear()
}

// ---------------------------------------------------------------------------------------------
// Profiling: spans timed by name (wall clock), as in the HTTP bench
// ---------------------------------------------------------------------------------------------

const spanTimes = new Map<string, { count: number; nanos: bigint }>()
const timingTracer = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => ({
    _tag: "Span",
    name,
    spanId: randomBytes(8).toString("hex"),
    traceId: Option.match(parent, {
      onNone: () => randomBytes(16).toString("hex"),
      onSome: (p) => p.traceId
    }),
    parent,
    context,
    status: { _tag: "Started", startTime },
    attributes: new Map(),
    links,
    sampled: true,
    kind,
    end: (endTime) => {
      const entry = spanTimes.get(name) ?? { count: 0, nanos: 0n }
      entry.count++
      entry.nanos += endTime - startTime
      spanTimes.set(name, entry)
    },
    attribute: () => {},
    event: () => {},
    addLinks: () => {}
  }),
  context: (f) => f()
})
const printSpans = (label: string) => {
  if (!trace) return
  const rows = [...spanTimes].sort((a, b) => Number(b[1].nanos - a[1].nanos)).slice(0, 25)
  console.error(`spans during ${label} (count, total ms, mean ms):`)
  for (const [name, { count, nanos }] of rows)
    console.error(
      `  ${String(count).padStart(7)} ${(Number(nanos) / 1e6).toFixed(0).padStart(8)} ${(Number(nanos) / 1e6 / count).toFixed(2).padStart(8)}  ${name}`
    )
  spanTimes.clear()
}

/** PostgreSQL's own time in Cobro's SQL functions so far (cumulative over the rounds). */
const printFunctionTimes = (runtime: CobroRuntime) =>
  runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ funcname: string; calls: string; total_ms: number; self_ms: number }>`
        SELECT funcname, calls::text, round(total_time)::int AS total_ms, round(self_time)::int AS self_ms
        FROM pg_stat_user_functions ORDER BY total_time DESC`.pipe(
        Effect.tap((rows) =>
          Effect.sync(() => {
            console.error("PostgreSQL functions so far (calls, total ms, self ms):")
            for (const r of rows)
              console.error(
                `  ${r.calls.padStart(7)} ${String(r.total_ms).padStart(7)} ${String(r.self_ms).padStart(7)} ${r.funcname}`
              )
          })
        )
      )
    ).pipe(Effect.orDie)
  )

// ---------------------------------------------------------------------------------------------
// Throwaway databases
// ---------------------------------------------------------------------------------------------

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const withDatabase = (name: string) => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}
const admin = async (statement: string) => {
  const client = new Pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
/** Drops a bench database once the closed pool's sessions are gone (see StoreBench). */
const dropDatabase = async (name: string) => {
  for (let i = 0; i < 50; i++) {
    try {
      return await admin(`DROP DATABASE IF EXISTS ${name}`)
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

// ---------------------------------------------------------------------------------------------
// The receiver (a child process)
// ---------------------------------------------------------------------------------------------

/** A self-signed certificate for 127.0.0.1, made with openssl (as the tests' receiver). */
const certificate = (() => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-bench-cert-"))
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
        .concat(["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        .concat(["-keyout", Path.join(dir, "key.pem"), "-out", Path.join(dir, "cert.pem")]),
      { stdio: "pipe" }
    )
    return {
      key: Fs.readFileSync(Path.join(dir, "key.pem"), "utf8"),
      cert: Fs.readFileSync(Path.join(dir, "cert.pem"), "utf8")
    }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
})()

interface Receiver {
  readonly url: string
  readonly pid: number
  waitFor(total: number): Promise<void>
  count(): Promise<{ count: number; unsigned: number }>
  close(): void
}

const startReceiver = (): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = fork(Path.join(import.meta.dirname, "Receiver.mjs"), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { ...process.env, BENCH_TLS_CERT: certificate.cert, BENCH_TLS_KEY: certificate.key }
    })
    const waiting = new Map<number, () => void>()
    let counting: ((c: { count: number; unsigned: number }) => void) | undefined
    child.on("message", (message: { port?: number; reached?: number; count?: number; unsigned?: number }) => {
      if (message.port !== undefined) {
        resolve({
          url: `https://127.0.0.1:${message.port}/webhooks/cobro`,
          pid: child.pid!,
          waitFor: (total) =>
            new Promise<void>((done) => {
              waiting.set(total, done)
              child.send({ waitFor: total })
            }),
          count: () =>
            new Promise((done) => {
              counting = done
              child.send({ count: true })
            }),
          close: () => child.disconnect()
        })
      } else if (message.reached !== undefined) {
        waiting.get(message.reached)?.()
        waiting.delete(message.reached)
      } else if (message.count !== undefined) {
        counting?.({ count: message.count, unsigned: message.unsigned ?? 0 })
      }
    })
    child.once("error", reject)
  })

// ---------------------------------------------------------------------------------------------
// Where the CPU goes: this process, the receiver, PostgreSQL
// ---------------------------------------------------------------------------------------------

/** CPU time (ms) a process has used, from `/proc/<pid>/stat` (Linux); 0 when unreadable. */
const procCpuMs = (pid: number | string): number => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command name (which may hold spaces), from field 3 on.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return 0
  }
}
const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** The PostgreSQL server's processes, if it runs on this machine and `/proc` shows them. */
const postgresCpuMs = (): number => {
  let total = 0
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += procCpuMs(entry)
    } catch {
      // the process ended meanwhile
    }
  }
  return total
}

/** The extra dispatcher processes of `BENCH_DISPATCHERS` running now (their CPU counts as Cobro's). */
const extraDispatchers: Array<ChildProcess> = []

interface CpuSnapshot {
  readonly bench: number
  readonly receiver: number
  readonly postgres: number
}

const cpuSnapshot = (receiver: Receiver): CpuSnapshot => {
  const self = process.cpuUsage()
  return {
    bench:
      (self.user + self.system) / 1000 +
      extraDispatchers.reduce((sum, child) => sum + procCpuMs(child.pid!), 0),
    receiver: procCpuMs(receiver.pid),
    postgres: postgresCpuMs()
  }
}

/**
 * CPU per delivery (µs) of each process between two snapshots, summed over rounds: this process
 * (Cobro's workers, or the floor's loop), the receiver, and PostgreSQL (0 if it runs elsewhere). On a
 * machine with few cores the sum bounds the rate: at best `cores / sum` deliveries per second.
 */
class CpuAccount {
  private readonly totals = { bench: 0, receiver: 0, postgres: 0 }
  private deliveries = 0
  add(before: CpuSnapshot, after: CpuSnapshot, deliveries: number) {
    this.totals.bench += after.bench - before.bench
    this.totals.receiver += after.receiver - before.receiver
    this.totals.postgres += after.postgres - before.postgres
    this.deliveries += deliveries
  }
  perDelivery() {
    const us = (ms: number) => Math.round((ms * 1000) / Math.max(1, this.deliveries))
    const bench = us(this.totals.bench)
    const receiver = us(this.totals.receiver)
    const postgres = us(this.totals.postgres)
    return { bench_process: bench, receiver, postgres, total: bench + receiver + postgres }
  }
}

// ---------------------------------------------------------------------------------------------
// Cobro
// ---------------------------------------------------------------------------------------------

/** The merchant of the bench and its production secret (terminal API key 1 of the fixtures). */
const MERCHANT = "MER_BENCH"
const SECRET = "secret-1"

/** Cobro on `url` (`CobroLayer`), with the server's pool size (24). */
const cobroRuntime = (url: string) => {
  const layer = CobroLayer.layer({
    url,
    ca: certificate.cert,
    maxConnections: 24,
    applicationName: "cobro-bench"
  })
  return ManagedRuntime.make(trace ? layer.pipe(Layer.provide(Layer.setTracer(timingTracer))) : layer)
}
type CobroRuntime = ReturnType<typeof cobroRuntime>

/**
 * Starts `BENCH_DISPATCHERS - 1` more dispatcher processes on the database at `url`
 * (`DispatcherProcess.ts`): they share the deliveries with this process's dispatcher through the
 * lease table, as the dispatchers of several nodes do. Resolves once each is dispatching.
 */
const startExtraDispatchers = (url: string) =>
  Promise.all(
    Array.from(
      { length: Math.max(0, dispatchers - 1) },
      () =>
        new Promise<void>((resolve, reject) => {
          const child = fork(Path.join(import.meta.dirname, "DispatcherProcess.ts"), [], {
            execArgv: ["--import", "tsx"],
            stdio: ["ignore", "pipe", "inherit", "ipc"],
            env: { ...process.env, DATABASE_URL: url, BENCH_TLS_CA: certificate.cert }
          })
          extraDispatchers.push(child)
          child.stdout!.once("data", () => resolve())
          child.once("exit", (code) => reject(new Error(`a dispatcher process exited (${code})`)))
        })
    )
  )

const stopExtraDispatchers = () => {
  for (const child of extraDispatchers.splice(0)) child.kill("SIGKILL")
}

/**
 * What the server's background runs for webhooks: the read models and the notifier (a batch consumer,
 * `Notifier.makeBatchHandler`, as the server's; see `BENCH_NOTIFIER`) as one group of log consumers,
 * the dispatcher with the server's configuration. Each round starts them afresh.
 */
const notifier: Effect.Effect<Subscription.Consumer<never, EventStore.EventStore>> =
  process.env["BENCH_NOTIFIER"] === "read"
    ? Effect.succeed(Subscription.make(Notifier.CONSUMER_NAME, Notifier.handle))
    : process.env["BENCH_NOTIFIER"] === "event"
      ? Effect.map(Notifier.makeHandler(), (handle) => Subscription.make(Notifier.CONSUMER_NAME, handle))
      : Effect.map(Notifier.makeBatchHandler(), (handleBatch) =>
          Subscription.makeBatch(Notifier.CONSUMER_NAME, handleBatch)
        )
const separateConsumers = process.env["BENCH_CONSUMERS"] === "separate"
const workers = Effect.flatMap(notifier, (consumer) =>
  Effect.all(
    [
      ...(separateConsumers
        ? [
            ...ReadModels.asynchronous.map((projection) => Projection.run(projection)),
            Subscription.run(consumer)
          ]
        : [
            Subscription.runAll<EventStore.EventStore | SqlClient.SqlClient>([
              ...ReadModels.asynchronous.map(Projection.consumer),
              consumer
            ])
          ]),
      Effect.flatMap(LogNotifications.LogNotifications, (notifications) =>
        Dispatcher.run({ owner: `bench-${process.pid}`, wakeups: notifications.appended })
      )
    ],
    { concurrency: "unbounded", discard: true }
  )
)

/** The read model's count of deliveries attempted at least once (or settled), and of those delivered. */
const progress = (runtime: CobroRuntime) =>
  runtime.runPromise(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ attempted: string; delivered: string }>`
        SELECT count(*) FILTER (WHERE attempts >= 1 OR status <> 'PENDING')::text AS attempted,
          count(*) FILTER (WHERE status = 'DELIVERED')::text AS delivered
        FROM cobro_rm_webhook_deliveries`
    ).pipe(
      Effect.map((rows) => ({
        attempted: Number(rows[0]!.attempted),
        delivered: Number(rows[0]!.delivered)
      })),
      Effect.orDie
    )
  )

/**
 * Waits until the read model shows `total` deliveries attempted, so that no attempt is in flight
 * when the workers stop. An attempt can fail (a timeout past 2 s on a machine under load): its retry
 * is due 15 minutes later, after the round; it is counted as a failure, not waited for.
 */
const settle = async (runtime: CobroRuntime, total: number, intervalMs = 250) => {
  for (let i = 0; i < (300 * 1000) / intervalMs; i++) {
    if ((await progress(runtime)).attempted >= total) return
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
  throw new Error(`the read model never showed ${total} deliveries attempted`)
}

/**
 * With `BENCH_CPU_PROFILE=<folder>`, a V8 CPU profile of this process over each timed Cobro phase
 * (and the warm-up), written there as `webhooks-<n>.cpuprofile`: the timed work alone, without the
 * setup around it. Returns the function that stops and writes it.
 */
const profileFolder = process.env["BENCH_CPU_PROFILE"]
let profiles = 0
const startProfile = async (): Promise<(() => Promise<void>) | undefined> => {
  if (profileFolder === undefined || profileFolder === "") return undefined
  const session = new Inspector.Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.start")
  return async () => {
    const { profile } = await session.post("Profiler.stop")
    Fs.mkdirSync(profileFolder, { recursive: true })
    Fs.writeFileSync(Path.join(profileFolder, `webhooks-${++profiles}.cpuprofile`), JSON.stringify(profile))
    session.disconnect()
  }
}

/**
 * Runs the workers until `count` more deliveries are done: the receiver has that many more requests,
 * or every delivery has been attempted (some failed). Returns the seconds it took and how many of
 * them were delivered.
 */
const runWorkers = async (runtime: CobroRuntime, receiver: Receiver, count: number, total: number) => {
  const base = (await receiver.count()).count
  const before = (await progress(runtime)).delivered
  const profiler = await startProfile()
  const cpuBefore = cpuSnapshot(receiver)
  const start = performance.now()
  const fiber = runtime.runFork(workers)
  // While the workers run, the read model is counted every 2 s only: the count scans the whole
  // table (100,000 rows in the backlog), PostgreSQL work of the harness, not of Cobro.
  await Promise.race([receiver.waitFor(base + count), settle(runtime, total, 2000)])
  const seconds = (performance.now() - start) / 1000
  const cpuAfter = cpuSnapshot(receiver)
  await profiler?.()
  await settle(runtime, total)
  await runtime.runPromise(Fiber.interrupt(fiber))
  return { seconds, delivered: (await progress(runtime)).delivered - before, cpuBefore, cpuAfter }
}

const salesReadModelsTimed = process.env["BENCH_SALES_READ_MODELS"] === "timed"

/**
 * Appends `count` approved terminal sales `TRX_<from+1>`… through the deciders; returns events/s.
 * Then (untimed, unless `BENCH_SALES_READ_MODELS=timed`) the read models catch up on them: a server
 * updates its sales' read models (A1, A2) as the sales happen, which is the sales' work, not the
 * webhooks'. The notifier is left behind them: reading the outcomes is the timed path's first step.
 */
const appendSales = async (runtime: CobroRuntime, from: number, count: number) => {
  const start = performance.now()
  await runtime.runPromise(
    Effect.forEach(
      Array.from({ length: count }, (_, i) => from + i + 1),
      (n) => F.approvedSale({ merchantId: MERCHANT, n }),
      { concurrency: 8, discard: true }
    )
  )
  // Four events per sale: created, pushed, on the terminal, approved.
  const rate = (count * 4) / ((performance.now() - start) / 1000)
  if (!salesReadModelsTimed) {
    await runtime.runPromise(
      Effect.forEach(ReadModels.asynchronous, (projection) => Projection.catchUp(projection))
    )
  }
  return rate
}

const decodeScheduled = Schema.decodeUnknownSync(WebhookDelivery.DeliveryScheduled)

/** The bodies of every notification scheduled so far (the floor sends the same bytes). */
const scheduledBodies = (runtime: CobroRuntime) =>
  runtime.runPromise(
    Effect.map(F.eventsOfType("DeliveryScheduled"), (events) => events.map((e) => decodeScheduled(e.data)))
  )

// ---------------------------------------------------------------------------------------------
// The floor: sign and POST with undici
// ---------------------------------------------------------------------------------------------

/** One round of the floor (`durable`: of the durable floor), its CPU added to `cpu`; returns its seconds. */
const floorRound = async (
  receiver: Receiver,
  bodies: ReadonlyArray<string>,
  cpu: CpuAccount,
  durable?: { readonly pg: Pg.Pool; readonly batch: number }
) => {
  const cpuBefore = cpuSnapshot(receiver)
  const seconds = await Floor.round({
    url: receiver.url,
    ca: certificate.cert,
    bodies,
    secret: SECRET,
    concurrency: floorConcurrency,
    ...(durable === undefined ? {} : { durable })
  })
  cpu.add(cpuBefore, cpuSnapshot(receiver), bodies.length)
  return seconds
}

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

interface Line {
  readonly [key: string]: unknown
}
const lines: Array<Line> = []
const emit = (line: Line) => {
  lines.push(line)
  console.log(JSON.stringify(line))
}
const loadAverage = () => Os.loadavg().map((l) => Number(l.toFixed(2)))
const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1))

const throughput = async (receiver: Receiver) => {
  const database = `cobro_bench_webhooks_${randomBytes(4).toString("hex")}`
  await admin(`CREATE DATABASE ${database}`)
  // With BENCH_COUNT=1, PostgreSQL also times Cobro's SQL functions (`pg_stat_user_functions`).
  if (statementCounting) await admin(`ALTER DATABASE ${database} SET track_functions = 'all'`)
  const runtime = cobroRuntime(withDatabase(database))
  // The durable floor's tables live beside Cobro's, in the same throwaway database.
  const floorPg = new Pg.Pool({ connectionString: withDatabase(database), max: 4 })
  try {
    await runtime.runPromise(F.merchant(MERCHANT, { production: receiver.url }))
    await floorPg.query(Floor.schema)
    await startExtraDispatchers(withDatabase(database))
    // Warm-up: connections, plans, JIT, keep-alive sockets: 100 sales through the whole path.
    let sales = 0
    const warm = 100
    await appendSales(runtime, sales, warm)
    sales += warm
    statementCounts.clear()
    await runWorkers(runtime, receiver, warm, sales)
    printSpans("warm-up")
    statementCounts.clear()
    const cobroRates: Array<number> = []
    const floorRates: Array<number> = []
    const appendRates: Array<number> = []
    const failed: Array<number> = []
    let bodies: ReadonlyArray<string> = []
    const cobroCpu = new CpuAccount()
    const floorCpu = new CpuAccount()
    const durableRates: Array<number> = []
    const durableCpu = new CpuAccount()
    const cobro = async () => {
      appendRates.push(await appendSales(runtime, sales, perRound))
      sales += perRound
      statementCounts.clear()
      const { seconds, delivered, cpuBefore, cpuAfter } = await runWorkers(runtime, receiver, perRound, sales)
      cobroCpu.add(cpuBefore, cpuAfter, perRound)
      cobroRates.push(delivered / seconds)
      failed.push(perRound - delivered)
      printSpans(`cobro round ${cobroRates.length}`)
      printCounts(`cobro round ${cobroRates.length}`)
      if (statementCounting) await printFunctionTimes(runtime)
      if (bodies.length === 0) bodies = (await scheduledBodies(runtime)).slice(warm).map((s) => s.body)
    }
    const floor = async () => {
      const seconds = await floorRound(receiver, bodies, floorCpu)
      floorRates.push(bodies.length / seconds)
      // The durable floor right after the floor, on the same bodies.
      const durableSeconds = await floorRound(receiver, bodies, durableCpu, { pg: floorPg, batch: 100 })
      durableRates.push(bodies.length / durableSeconds)
    }
    // The floor needs Cobro's bodies: the first round is Cobro's; then the order alternates.
    await cobro()
    await floor()
    for (let round = 1; round < rounds; round++) {
      if (round % 2 === 1) {
        await floor()
        await cobro()
      } else {
        await cobro()
        await floor()
      }
    }
    const counted = await receiver.count()
    if (counted.unsigned !== 0) throw new Error(`the receiver got ${counted.unsigned} unsigned requests`)
    const rate = (rates: ReadonlyArray<number>) =>
      Math.round((rates.length * perRound) / rates.reduce((s, r) => s + perRound / r, 0))
    const floorRate = rate(floorRates)
    const cobroRate = rate(cobroRates)
    const durableRate = rate(durableRates)
    emit({
      target: "floor",
      workload: "throughput",
      deliveries: perRound,
      rounds,
      concurrency: floorConcurrency,
      deliveries_per_s: floorRate,
      per_round: floorRates.map(Math.round),
      cpu_us_per_delivery: floorCpu.perDelivery()
    })
    emit({
      target: "floor-durable",
      workload: "throughput",
      deliveries: perRound,
      rounds,
      concurrency: floorConcurrency,
      deliveries_per_s: durableRate,
      per_round: durableRates.map(Math.round),
      ratio_to_floor: Number((durableRate / floorRate).toFixed(3)),
      ratio_per_round: durableRates.map((r, i) => Number((r / floorRates[i]!).toFixed(3))),
      cpu_us_per_delivery: durableCpu.perDelivery()
    })
    emit({
      target: "cobro",
      workload: "throughput",
      deliveries: perRound,
      rounds,
      dispatcher_processes: dispatchers,
      deliveries_per_s: cobroRate,
      per_round: cobroRates.map(Math.round),
      failed_attempts_per_round: failed,
      ratio_to_floor: Number((cobroRate / floorRate).toFixed(3)),
      ratio_per_round: cobroRates.map((r, i) => Number((r / floorRates[i]!).toFixed(3))),
      ratio_to_durable_floor: Number((cobroRate / durableRate).toFixed(3)),
      cpu_us_per_delivery: cobroCpu.perDelivery()
    })
    emit({
      target: "cobro",
      workload: "append-sales (setup, not timed above)",
      events_per_s: Math.round(appendRates.reduce((s, r) => s + r, 0) / appendRates.length)
    })
  } finally {
    stopExtraDispatchers()
    await floorPg.end().catch(() => {})
    await runtime.dispose().catch(() => {})
    await dropDatabase(database)
  }
}

/**
 * Phase `stages`: where Cobro's CPU per delivery goes, stage by stage, against what the target leaves
 * for all of them. The sales of one throughput round, but each stage of the webhook path runs alone
 * to its end, one after the other, with nothing else running: the notifier (read the outcomes, plan,
 * schedule), the read models on the schedules, the dispatcher (claim, sign, POST, record, release),
 * the read models on the attempts. Then one floor round on the same bodies. Each stage's line gives
 * its CPU per delivery in this process, the receiver and PostgreSQL; the last line the CPU per
 * delivery that 0.5 of that floor allows for the whole path on this machine's cores
 * (`cores × 10⁶ / (0.5 × floor rate)` µs), since the throughput phase runs every stage at once and is
 * bounded by their sum.
 */
const stages = async (receiver: Receiver) => {
  const database = `cobro_bench_stages_${randomBytes(4).toString("hex")}`
  await admin(`CREATE DATABASE ${database}`)
  const runtime = cobroRuntime(withDatabase(database))
  try {
    await runtime.runPromise(F.merchant(MERCHANT, { production: receiver.url }))
    // Warm-up as in the throughput phase: 100 sales through the whole path, all stages at once.
    const warm = 100
    await appendSales(runtime, 0, warm)
    await runWorkers(runtime, receiver, warm, warm)
    await appendSales(runtime, warm, perRound)
    const consumer = await runtime.runPromise(notifier)
    const readModels = Subscription.catchUpAll<EventStore.EventStore | SqlClient.SqlClient>(
      ReadModels.asynchronous.map(Projection.consumer)
    )
    const stageTotals = { bench_process: 0, receiver: 0, postgres: 0, total: 0 }
    const stage = async (name: string, work: () => Promise<unknown>) => {
      const cpu = new CpuAccount()
      const profiler = await startProfile()
      const before = cpuSnapshot(receiver)
      const start = performance.now()
      await work()
      const seconds = (performance.now() - start) / 1000
      cpu.add(before, cpuSnapshot(receiver), perRound)
      await profiler?.()
      const perDelivery = cpu.perDelivery()
      for (const key of Object.keys(stageTotals) as Array<keyof typeof stageTotals>)
        stageTotals[key] += perDelivery[key]
      emit({
        target: "cobro",
        workload: "stages",
        stage: name,
        deliveries: perRound,
        seconds: Number(seconds.toFixed(2)),
        cpu_us_per_delivery: perDelivery
      })
    }
    await stage("notifier", () => runtime.runPromise(Subscription.catchUp(consumer)))
    await stage("read models on the schedules", () => runtime.runPromise(readModels))
    const base = (await receiver.count()).count
    await stage("dispatcher", async () => {
      const fiber = runtime.runFork(Dispatcher.run({ owner: `bench-stages-${process.pid}` }))
      // A failed attempt (a timeout under load) is retried 15 minutes later: fail, never hang.
      let timer: NodeJS.Timeout | undefined
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`stages: the receiver never got ${perRound} deliveries from the dispatcher`)),
          120_000
        )
      })
      try {
        await Promise.race([receiver.waitFor(base + perRound), stalled])
      } finally {
        clearTimeout(timer)
        await runtime.runPromise(Fiber.interrupt(fiber))
      }
    })
    await stage("read models on the attempts", () => runtime.runPromise(readModels))
    const bodies = (await scheduledBodies(runtime)).slice(warm).map((s) => s.body)
    const floorCpu = new CpuAccount()
    const floorRate = bodies.length / (await floorRound(receiver, bodies, floorCpu))
    const cores = Os.cpus().length
    // 0.5 of the floor on `cores` cores leaves this much CPU per delivery for every process together.
    const budget = (cores * 1e6) / (0.5 * floorRate)
    emit({
      target: "cobro",
      workload: "stages",
      stage: "all, against the target",
      deliveries: perRound,
      cpu_us_per_delivery: stageTotals,
      floor_deliveries_per_s: Math.round(floorRate),
      floor_cpu_us_per_delivery: floorCpu.perDelivery(),
      cores,
      target_cpu_us_per_delivery: Math.round(budget),
      over_target: Number((stageTotals.total / budget).toFixed(2))
    })
  } finally {
    await runtime.dispose().catch(() => {})
    await dropDatabase(database)
  }
}

const drain = async (receiver: Receiver) => {
  const database = `cobro_bench_backlog_${randomBytes(4).toString("hex")}`
  await admin(`CREATE DATABASE ${database}`)
  const runtime = cobroRuntime(withDatabase(database))
  try {
    // One real notification, as the notifier schedules it: the template of the backlog's bodies.
    await runtime.runPromise(
      Effect.gen(function* () {
        yield* F.merchant(MERCHANT, { production: receiver.url })
        yield* F.approvedSale({ merchantId: MERCHANT, n: 1 })
      })
    )
    // Catch-up reads see a commit once no older transaction is in flight: poll until scheduled.
    let template: WebhookDelivery.DeliveryScheduled | undefined
    while (template === undefined) {
      await runtime.runPromise(
        Subscription.catchUp(Subscription.make(Notifier.CONSUMER_NAME, Notifier.handle))
      )
      template = (await scheduledBodies(runtime))[0]
      if (template === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // The backlog: `backlog` deliveries scheduled and due, each on its own stream, as the notifier
    // appends them (one `DeliveryScheduled` per stream).
    const seedStart = performance.now()
    await runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const encode = Schema.encodeSync(WebhookDelivery.Event)
        yield* Effect.forEach(
          Array.from({ length: backlog }, (_, i) => i),
          (i) => {
            const notificationId = randomUUID()
            const subject = `TRX_B${i}`
            const event = new WebhookDelivery.DeliveryScheduled({
              ...template!,
              notificationId: notificationId as WebhookDelivery.DeliveryScheduled["notificationId"],
              subject: subject as WebhookDelivery.DeliveryScheduled["subject"],
              body: template!.body
                .replace(template!.notificationId, notificationId)
                .replaceAll(template!.subject, subject)
            })
            return store.append(
              Notifications.deliveryStreamOf(notificationId),
              [
                {
                  eventId: randomUUID(),
                  type: event._tag,
                  schemaVersion: 1,
                  data: encode(event),
                  metadata: {}
                }
              ],
              EventStore.ExpectedVersion.NoStream()
            )
          },
          { concurrency: 16, discard: true }
        )
        // Everything due in the queue before the drain starts.
        for (const projection of ReadModels.asynchronous) yield* Projection.catchUp(projection)
        yield* Subscription.catchUp(Subscription.make(Notifier.CONSUMER_NAME, Notifier.handle))
      }).pipe(Effect.orDie)
    )
    const seedSeconds = (performance.now() - seedStart) / 1000
    await startExtraDispatchers(withDatabase(database))
    const already = (await receiver.count()).count
    const total = backlog + 1
    const samples: Array<{ delivered: number; rss: number; heap: number; seconds: number }> = []
    const before = process.memoryUsage()
    let done = false
    const start = performance.now()
    const drained = runWorkers(runtime, receiver, total, total).finally(() => (done = true))
    while (!done) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const { count } = await receiver.count()
      const memory = process.memoryUsage()
      samples.push({
        delivered: count - already,
        rss: memory.rss,
        heap: memory.heapUsed,
        seconds: (performance.now() - start) / 1000
      })
    }
    const { seconds, delivered, cpuBefore, cpuAfter } = await drained
    const cpu = new CpuAccount()
    cpu.add(cpuBefore, cpuAfter, total)
    printSpans("backlog drain")
    const at = (fraction: number) => samples.find((s) => s.delivered >= fraction * total) ?? samples.at(-1)!
    const point = (fraction: number) => {
      const s = at(fraction)
      return { delivered: s.delivered, heap_mb: mb(s.heap), rss_mb: mb(s.rss) }
    }
    emit({
      target: "cobro",
      workload: "backlog",
      notifications: total,
      dispatcher_processes: dispatchers,
      seed_seconds: Number(seedSeconds.toFixed(1)),
      drain_seconds: Number(seconds.toFixed(1)),
      delivered,
      deliveries_per_s: Math.round(delivered / seconds),
      cpu_us_per_delivery: cpu.perDelivery(),
      heap_mb_before: mb(before.heapUsed),
      rss_mb_before: mb(before.rss),
      heap_mb_peak: mb(Math.max(...samples.map((s) => s.heap))),
      rss_mb_peak: mb(Math.max(...samples.map((s) => s.rss))),
      at_10: point(0.1),
      at_50: point(0.5),
      at_90: point(0.9),
      // Per tenth of the drain, the lowest and highest heap sampled: garbage collection makes single
      // samples saw-toothed; flat memory is a range that does not climb from tenth to tenth.
      heap_mb_min_max_per_tenth: Array.from({ length: 10 }, (_, k) => {
        const window = samples.filter(
          (s) => s.delivered >= (k * total) / 10 && s.delivered < ((k + 1) * total) / 10
        )
        return window.length === 0
          ? null
          : [mb(Math.min(...window.map((s) => s.heap))), mb(Math.max(...window.map((s) => s.heap)))]
      }),
      samples: samples.length
    })
  } finally {
    stopExtraDispatchers()
    await runtime.dispose().catch(() => {})
    await dropDatabase(database)
  }
}

const main = async () => {
  const receiver = await startReceiver()
  const startLoad = loadAverage()
  try {
    if (phases.includes("stages")) await stages(receiver)
    if (phases.includes("throughput")) await throughput(receiver)
    if (phases.includes("backlog") && backlog > 0) await drain(receiver)
  } finally {
    receiver.close()
  }
  emit({
    machine: { cpus: Os.cpus().length, node: process.version },
    load_average_start: startLoad,
    load_average_end: loadAverage()
  })
  const out = Path.resolve(import.meta.dirname, "../../../bench/results/webhooks.json")
  Fs.mkdirSync(Path.dirname(out), { recursive: true })
  Fs.writeFileSync(out, lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
  const cobro = lines.find((l) => l["target"] === "cobro" && l["workload"] === "throughput")
  if (cobro !== undefined) {
    console.log(
      `\nratio cobro/floor (deliveries/s, ${perRound} per round, ${rounds} rounds; per round in brackets): ` +
        `${String(cobro["ratio_to_floor"])} [${(cobro["ratio_per_round"] as Array<number>).join(" ")}]`
    )
    const durable = lines.find((l) => l["target"] === "floor-durable")!
    console.log(
      `ratio durable floor/floor: ${String(durable["ratio_to_floor"])} ` +
        `[${(durable["ratio_per_round"] as Array<number>).join(" ")}]; ` +
        `cobro/durable floor: ${String(cobro["ratio_to_durable_floor"])}`
    )
  }
  const drained = lines.find((l) => l["workload"] === "backlog")
  if (drained !== undefined) {
    const p = (k: string) => drained[k] as { heap_mb: number; rss_mb: number }
    console.log(
      `backlog of ${String(drained["notifications"])}: ${String(drained["deliveries_per_s"])} deliveries/s; ` +
        `heap MB at 10/50/90 %: ${p("at_10").heap_mb} / ${p("at_50").heap_mb} / ${p("at_90").heap_mb}; ` +
        `peak RSS ${String(drained["rss_mb_peak"])} MB`
    )
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
