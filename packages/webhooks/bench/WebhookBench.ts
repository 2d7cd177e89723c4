/**
 * `npm run bench -- webhooks`: webhook deliveries per second from committed sale outcomes to a local
 * receiver that answers 200, against three others on the same bodies in the same rounds (rotating
 * order): the floor, a raw loop that signs with the spec's recipe (hex HMAC-SHA256 over the Base64 of
 * the raw bytes) and POSTs with `undici`; the durable floor, the same loop writing each notification
 * before it is sent and each attempt after it, with plain `pg` (both in `Floor.ts`); and
 * graphile-worker, the job queue a Node team would pick instead, one job per notification queued in
 * bulk, as it comes and with its documented batching (`GraphileWorker.ts`). Then the latency from a
 * committed outcome to the receiver's 200 at a fixed offered rate of sales; then a backlog of due
 * notifications drained while memory is sampled. Prints JSON lines and writes them to
 * `bench/results/webhooks.json`.
 *
 * Cobro's path is the server's: approved terminal sales committed through the deciders with their
 * notifications scheduled in the same commit (the server's outbox, `Notifications.outbox`), then,
 * timed, `Dispatcher.run` with the server's configuration until the receiver has every notification.
 * The receiver is a `node:https` server in a child process (`Receiver.mjs`), the same for every
 * target.
 *
 * Environment: `DATABASE_URL` (the server to create throwaway databases on; default
 * postgres://postgres@127.0.0.1:5432/postgres), `BENCH_DELIVERIES` (per round, default 3000),
 * `BENCH_ROUNDS` (default 3), `BENCH_CONCURRENCY` (POSTs in flight of the floors and graphile-worker's
 * jobs at once; default the dispatcher's, 32), `BENCH_RATE` and `BENCH_LATENCY_SECONDS` (the latency
 * phase's offered sales per second, default 100, and its length, default 15), `BENCH_BACKLOG` (due
 * notifications drained, default 100000; 0 skips the drain), `BENCH_PHASES` (subset of
 * throughput,latency,backlog), `BENCH_TARGETS` (subset of the throughput targets: cobro is always
 * run), `BENCH_TRACE=1` (Cobro's spans timed and printed per phase, for profiling),
 * `BENCH_CPU_PROFILE=<folder>` (a CPU profile of each timed Cobro phase, see `startProfile`),
 * `BENCH_DISPATCHERS=<n>` (n - 1 more processes running the dispatcher alone, `DispatcherProcess.ts`,
 * sharing the deliveries through the lease table as several nodes do; their CPU counts as Cobro's),
 * `BENCH_COUNT=1` (the SQL statements of each timed Cobro round printed by text, with the time from
 * send to answer).
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { type ChildProcess, fork } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Inspector from "node:inspector/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as JsonLines from "../../../bench/JsonLines.js"
import * as Percentile from "../../../bench/Percentile.js"
import * as Ratio from "../../../bench/Ratio.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as Settings from "../../../bench/Settings.js"
import * as SpanClock from "../../../bench/SpanClock.js"
import * as Statements from "../../../bench/Statements.js"
import * as Dispatcher from "../src/Dispatcher.js"
import * as TestReceiver from "../test/support/Receiver.js"
import * as CobroLayer from "./CobroLayer.js"
import * as Floor from "./Floor.js"
import * as GraphileWorker from "./GraphileWorker.js"

const perRound = Settings.number("BENCH_DELIVERIES", 3000)
const rounds = Settings.number("BENCH_ROUNDS", 3)
const concurrency = Settings.number("BENCH_CONCURRENCY", 32)
const offeredRate = Settings.number("BENCH_RATE", 100)
const latencySeconds = Settings.number("BENCH_LATENCY_SECONDS", 15)
const backlog = Settings.number("BENCH_BACKLOG", 100_000)
const phases = Settings.list("BENCH_PHASES", "throughput,latency,backlog")
const dispatchers = Settings.number("BENCH_DISPATCHERS", 1)
/** `BENCH_TRACE=1`: Cobro's spans timed by name (wall clock) and printed per phase, for profiling. */
const spans = process.env["BENCH_TRACE"] === "1" ? SpanClock.make() : undefined

/**
 * Every `pg` statement of this process (Cobro's and graphile-worker's alike); with `BENCH_COUNT=1`,
 * by text, with the time from sending each to its answer.
 */
const sent = Statements.count({ byText: process.env["BENCH_COUNT"] === "1" })
const printCounts = (label: string) => {
  if (sent.byText === undefined || sent.byText.size === 0) return
  console.error(`statements during ${label} (count, total ms from send to answer):`)
  for (const [k, { count, ms }] of [...sent.byText].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30))
    console.error(`  ${String(count).padStart(7)} ${ms.toFixed(0).padStart(7)} ${k}`)
  sent.byText.clear()
}

/** The receiver's certificate for 127.0.0.1: the tests' receiver's. */
const certificate = TestReceiver.certificate()

// ---------------------------------------------------------------------------------------------
// The receiver (a child process)
// ---------------------------------------------------------------------------------------------

interface Receiver {
  readonly url: string
  readonly pid: number
  waitFor(total: number): Promise<void>
  count(): Promise<{ count: number; unsigned: number }>
  /** From now on, the receiver notes when it answers each notification (by its subject). */
  record(): void
  /** What was noted since `record`: subject and epoch ms of the 200. */
  arrivals(): Promise<ReadonlyArray<readonly [string, number]>>
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
    let noted: ((a: ReadonlyArray<readonly [string, number]>) => void) | undefined
    child.on(
      "message",
      (message: {
        port?: number
        reached?: number
        count?: number
        unsigned?: number
        arrivals?: ReadonlyArray<readonly [string, number]>
      }) => {
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
            record: () => child.send({ record: true }),
            arrivals: () =>
              new Promise((done) => {
                noted = done
                child.send({ arrivals: true })
              }),
            close: () => child.disconnect()
          })
        } else if (message.reached !== undefined) {
          waiting.get(message.reached)?.()
          waiting.delete(message.reached)
        } else if (message.count !== undefined) {
          counting?.({ count: message.count, unsigned: message.unsigned ?? 0 })
        } else if (message.arrivals !== undefined) {
          noted?.(message.arrivals)
        }
      }
    )
    child.once("error", reject)
  })

// ---------------------------------------------------------------------------------------------
// Where the CPU goes: this process, the receiver, PostgreSQL
// ---------------------------------------------------------------------------------------------

/** The extra dispatcher processes of `BENCH_DISPATCHERS` running now (their CPU counts as Cobro's). */
const extraDispatchers: Array<ChildProcess> = []

interface CpuSnapshot {
  /** This process, and every PostgreSQL process (the floors and the peer share Cobro's database). */
  readonly cpu: Cpu.Snapshot
  readonly dispatchersUs: number
  readonly receiverUs: number
  /** SQL statements this process has sent so far. */
  readonly statements: number
}

const cpuSnapshot = (receiver: Receiver): CpuSnapshot => ({
  cpu: Cpu.snapshot(),
  dispatchersUs: extraDispatchers.reduce((sum, child) => sum + Cpu.processUs(child.pid!), 0),
  receiverUs: Cpu.processUs(receiver.pid),
  statements: sent.statements
})

/**
 * One target's deliveries, summed over rounds: rates, failed attempts, and CPU per delivery (µs) of
 * each process, this process (Cobro's workers with its extra dispatcher processes, or the floor's
 * loop), the receiver, and PostgreSQL (0 if it runs elsewhere). On a machine with few cores the sum
 * bounds the rate: at best `cores / sum` deliveries per second.
 */
class Deliveries {
  readonly tally = new Rounds.Tally()
  readonly failed: Array<number> = []
  private receiverUs = 0
  private statements = 0
  add(deliveries: number, seconds: number, failed: number, before: CpuSnapshot, after: CpuSnapshot) {
    const used = Cpu.used(before.cpu, after.cpu)
    this.tally.add(deliveries, seconds, {
      nodeUs: used.nodeUs + after.dispatchersUs - before.dispatchersUs,
      postgresUs: used.postgresUs
    })
    this.failed.push(failed)
    this.receiverUs += after.receiverUs - before.receiverUs
    this.statements += after.statements - before.statements
  }
  /** Total deliveries over total time. */
  rate() {
    return Math.round(this.tally.rate())
  }
  perDelivery() {
    const { node, postgres } = this.tally.cpuPerOperation()
    const receiver = Math.round(this.receiverUs / Math.max(1, this.tally.count))
    return { bench_process: node, receiver, postgres, total: node + receiver + postgres }
  }
  /** SQL statements this process sent per delivery (an extra dispatcher process's are not counted). */
  statementsPerDelivery() {
    return Number((this.statements / Math.max(1, this.tally.count)).toFixed(2))
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
  return ManagedRuntime.make(
    spans === undefined ? layer : layer.pipe(Layer.provide(Layer.setTracer(spans.tracer)))
  )
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

/** What the server runs for webhooks: the dispatcher with its configuration, woken by the log's appends. */
const dispatcher = Effect.flatMap(LogNotifications.LogNotifications, (notifications) =>
  Dispatcher.run({ owner: `bench-${process.pid}`, wakeups: notifications.appended })
)

/** How many deliveries have been attempted at least once (or settled), and how many delivered. */
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
 * Waits until `total` deliveries have been attempted, so that no attempt is in flight when the
 * dispatcher stops. An attempt can fail (a timeout past 2 s on a machine under load): its retry is
 * due 15 minutes later, after the round; it is counted as a failure, not waited for.
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
 * Runs the dispatcher until `count` more deliveries are done: the receiver has that many more
 * requests, or every delivery has been attempted (some failed). Returns the seconds it took, how
 * many were delivered, and the CPU and statements around it.
 */
const runDispatcher = async (runtime: CobroRuntime, receiver: Receiver, count: number, total: number) => {
  const base = (await receiver.count()).count
  const before = (await progress(runtime)).delivered
  const profiler = await startProfile()
  const cpuBefore = cpuSnapshot(receiver)
  const start = performance.now()
  const fiber = runtime.runFork(dispatcher)
  // While it runs, the read model is counted every 2 s only: the count scans the whole table
  // (100,000 rows in the backlog), PostgreSQL work of the harness, not of Cobro.
  await Promise.race([receiver.waitFor(base + count), settle(runtime, total, 2000)])
  const seconds = (performance.now() - start) / 1000
  const cpuAfter = cpuSnapshot(receiver)
  await profiler?.()
  await settle(runtime, total)
  await runtime.runPromise(Fiber.interrupt(fiber))
  return { seconds, delivered: (await progress(runtime)).delivered - before, cpuBefore, cpuAfter }
}

/**
 * Commits `count` approved terminal sales `TRX_<from+1>`… through the deciders, each outcome with its
 * notification scheduled in the same commit (the sales' work, not timed); returns sales/s.
 */
const commitSales = async (runtime: CobroRuntime, from: number, count: number) => {
  const start = performance.now()
  await runtime.runPromise(
    Effect.forEach(
      Array.from({ length: count }, (_, i) => from + i + 1),
      (n) => F.approvedSale({ merchantId: MERCHANT, n }),
      { concurrency: 8, discard: true }
    )
  )
  return count / ((performance.now() - start) / 1000)
}

const decodeScheduled = Schema.decodeUnknownSync(WebhookDelivery.DeliveryScheduled)

/** The notifications scheduled so far (the other targets send the same bodies). */
const scheduled = (runtime: CobroRuntime) =>
  runtime.runPromise(
    Effect.map(F.eventsOfType("DeliveryScheduled"), (events) => events.map((e) => decodeScheduled(e.data)))
  )

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

interface Line {
  readonly [key: string]: unknown
}
const results = JsonLines.make<Line>("webhooks")
const loadAverage = () => Os.loadavg().map((l) => Number(l.toFixed(2)))
const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1))

/** The throughput targets besides Cobro, in the order of round 1 (later rounds rotate it). */
const others = ["floor", "floor-durable", "graphile-worker", "graphile-worker-batched"] as const
type Other = (typeof others)[number]
const chosenOthers = others.filter((o) => Settings.list("BENCH_TARGETS", others.join(",")).includes(o))

const throughput = async (receiver: Receiver) => {
  const { name: database, url } = await Database.create("webhooks")
  const runtime = cobroRuntime(url)
  // The durable floor's tables and graphile-worker's schema live beside Cobro's, in the same database.
  const floorPg = new Pg.Pool({ connectionString: url, max: 4 })
  try {
    await runtime.runPromise(F.merchant(MERCHANT, { production: receiver.url }))
    await floorPg.query(Floor.schema)
    await GraphileWorker.setup(url)
    await startExtraDispatchers(url)
    // Warm-up: connections, plans, JIT, keep-alive sockets: 100 sales through the whole path.
    let sales = 0
    const warm = 100
    await commitSales(runtime, sales, warm)
    sales += warm
    await runDispatcher(runtime, receiver, warm, sales)
    spans?.print("warm-up")
    sent.byText?.clear()
    const targets = new Map<"cobro" | Other, Deliveries>([
      ["cobro", new Deliveries()],
      ...chosenOthers.map((o) => [o, new Deliveries()] as const)
    ])
    const saleRates: Array<number> = []
    let bodies: ReadonlyArray<string> = []
    const cobro = async () => {
      saleRates.push(await commitSales(runtime, sales, perRound))
      sales += perRound
      sent.byText?.clear()
      const { seconds, delivered, cpuBefore, cpuAfter } = await runDispatcher(
        runtime,
        receiver,
        perRound,
        sales
      )
      const round = targets.get("cobro")!
      round.add(perRound, seconds, perRound - delivered, cpuBefore, cpuAfter)
      spans?.print(`cobro round ${round.failed.length}`)
      printCounts(`cobro round ${round.failed.length}`)
      if (bodies.length === 0) bodies = (await scheduled(runtime)).slice(warm).map((s) => s.body)
    }
    const other = async (target: Other) => {
      const before = cpuSnapshot(receiver)
      const base = (await receiver.count()).count
      let seconds: number
      let failed = 0
      let after: CpuSnapshot | undefined
      if (target === "floor" || target === "floor-durable") {
        seconds = await Floor.round({
          url: receiver.url,
          ca: certificate.cert,
          bodies,
          secret: SECRET,
          concurrency,
          ...(target === "floor-durable" ? { durable: { pg: floorPg, batch: 100 } } : {})
        })
      } else {
        const result = await GraphileWorker.round({
          connectionString: url,
          url: receiver.url,
          ca: certificate.cert,
          bodies,
          secret: SECRET,
          concurrency,
          batched: target === "graphile-worker-batched",
          onDrained: () => {
            after = cpuSnapshot(receiver)
          }
        })
        seconds = result.seconds
        failed = result.failed
      }
      after ??= cpuSnapshot(receiver)
      const received = (await receiver.count()).count - base
      if (received < bodies.length)
        throw new Error(`${target}: the receiver got ${received} of ${bodies.length}`)
      targets.get(target)!.add(bodies.length, seconds, failed, before, after)
    }
    // Cobro first in round 1: the others need its bodies.
    await Rounds.run(rounds, [...targets.keys()], (target) => (target === "cobro" ? cobro() : other(target)))
    const counted = await receiver.count()
    if (counted.unsigned !== 0) throw new Error(`the receiver got ${counted.unsigned} unsigned requests`)
    const floor = targets.get("floor")
    const peer = targets.get("graphile-worker-batched")
    const ratios = (result: Deliveries, to: Deliveries) => ({
      ratio: Ratio.of(result.rate(), to.rate()),
      perRound: result.tally.perRound.map((r, i) => Ratio.of(r, to.tally.perRound[i]!))
    })
    for (const [target, result] of targets) {
      const toFloor = floor !== undefined && target !== "floor" ? ratios(result, floor) : undefined
      const toPeer =
        peer !== undefined && target !== "graphile-worker-batched" ? ratios(result, peer) : undefined
      results.emit({
        target,
        workload: "throughput",
        deliveries: perRound,
        rounds,
        concurrency,
        ...(target === "cobro" ? { dispatcher_processes: dispatchers } : {}),
        deliveries_per_s: result.rate(),
        per_round: result.tally.perRound.map(Math.round),
        failed_attempts_per_round: result.failed,
        ...(toFloor === undefined
          ? {}
          : { ratio_to_floor: toFloor.ratio, ratio_to_floor_per_round: toFloor.perRound }),
        ...(toPeer === undefined
          ? {}
          : {
              ratio_to_graphile_worker_batched: toPeer.ratio,
              ratio_to_graphile_worker_batched_per_round: toPeer.perRound
            }),
        cpu_us_per_delivery: result.perDelivery(),
        statements_per_delivery: result.statementsPerDelivery()
      })
    }
    results.emit({
      target: "cobro",
      workload: "commit-sales (setup, not timed above)",
      sales_per_s: Math.round(saleRates.reduce((s, r) => s + r, 0) / saleRates.length)
    })
  } finally {
    stopExtraDispatchers()
    await floorPg.end().catch(() => {})
    await runtime.dispose().catch(() => {})
    await Database.drop(database)
  }
}

/**
 * Phase `latency`: the dispatcher running as on a server (woken by the log's appends), sales
 * committed at `BENCH_RATE` per second for `BENCH_LATENCY_SECONDS`, each outcome with its
 * notification; for each, the time from its commit (the sale's last append answered, in this
 * process) to the receiver's 200 (noted by the receiver; both clocks are this machine's).
 */
const latency = async (receiver: Receiver) => {
  const database = await Database.create("latency")
  const runtime = cobroRuntime(database.url)
  const fiber = runtime.runFork(dispatcher)
  try {
    await runtime.runPromise(F.merchant(MERCHANT, { production: receiver.url }))
    // Warm-up: 100 sales at the offered rate, not measured.
    const offer = async (from: number, count: number, committed: Map<string, number>) => {
      const start = performance.now()
      const pending: Array<Promise<void>> = []
      for (let i = 0; i < count; i++) {
        const due = start + (i * 1000) / offeredRate
        const wait = due - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        const n = from + i + 1
        pending.push(
          runtime.runPromise(F.approvedSale({ merchantId: MERCHANT, n })).then(() => {
            committed.set(`TRX_${n}`, performance.timeOrigin + performance.now())
          })
        )
      }
      await Promise.all(pending)
      return count / ((performance.now() - start) / 1000)
    }
    const base = (await receiver.count()).count
    await offer(0, 100, new Map())
    await receiver.waitFor(base + 100)
    const count = Math.round(offeredRate * latencySeconds)
    const committed = new Map<string, number>()
    receiver.record()
    const cpuBefore = cpuSnapshot(receiver)
    const start = performance.now()
    const achieved = await offer(100, count, committed)
    await Promise.race([
      receiver.waitFor(base + 100 + count),
      new Promise((_, reject) => setTimeout(() => reject(new Error("latency: deliveries missing")), 120_000))
    ])
    const cpu = new Deliveries()
    cpu.add(count, (performance.now() - start) / 1000, 0, cpuBefore, cpuSnapshot(receiver))
    const arrivals = await receiver.arrivals()
    const latencies = arrivals
      .flatMap(([subject, at]) => {
        const from = committed.get(subject)
        return from === undefined ? [] : [at - from]
      })
      .sort((a, b) => a - b)
    results.emit({
      target: "cobro",
      workload: "latency",
      offered_sales_per_s: offeredRate,
      achieved_sales_per_s: Math.round(achieved),
      notifications: count,
      measured: latencies.length,
      p50_ms: Number(Percentile.of(latencies, 50).toFixed(1)),
      p90_ms: Number(Percentile.of(latencies, 90).toFixed(1)),
      p99_ms: Number(Percentile.of(latencies, 99).toFixed(1)),
      max_ms: Number(latencies.at(-1)!.toFixed(1)),
      // Sales and deliveries together: the sales' work is in it.
      cpu_us_per_sale_and_delivery: cpu.perDelivery(),
      statements_per_sale_and_delivery: cpu.statementsPerDelivery()
    })
  } finally {
    await runtime.runPromise(Fiber.interrupt(fiber)).catch(() => {})
    await runtime.dispose().catch(() => {})
    await Database.drop(database.name)
  }
}

const drain = async (receiver: Receiver) => {
  const database = await Database.create("backlog")
  const runtime = cobroRuntime(database.url)
  try {
    // One real notification, scheduled with its sale: the template of the backlog's bodies.
    await runtime.runPromise(
      Effect.gen(function* () {
        yield* F.merchant(MERCHANT, { production: receiver.url })
        yield* F.approvedSale({ merchantId: MERCHANT, n: 1 })
      })
    )
    const template = (await scheduled(runtime))[0]!
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
        // Each delivery's queue row is written with its event: all are due when the drain starts.
      }).pipe(Effect.orDie)
    )
    const seedSeconds = (performance.now() - seedStart) / 1000
    await startExtraDispatchers(database.url)
    const already = (await receiver.count()).count
    const total = backlog + 1
    const samples: Array<{ delivered: number; rss: number; heap: number; seconds: number }> = []
    const before = process.memoryUsage()
    let done = false
    const start = performance.now()
    const drained = runDispatcher(runtime, receiver, total, total).finally(() => (done = true))
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
    const cpu = new Deliveries()
    cpu.add(total, seconds, 0, cpuBefore, cpuAfter)
    spans?.print("backlog drain")
    const at = (fraction: number) => samples.find((s) => s.delivered >= fraction * total) ?? samples.at(-1)!
    const point = (fraction: number) => {
      const s = at(fraction)
      return { delivered: s.delivered, heap_mb: mb(s.heap), rss_mb: mb(s.rss) }
    }
    results.emit({
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
    await Database.drop(database.name)
  }
}

const main = async () => {
  const receiver = await startReceiver()
  const startLoad = loadAverage()
  try {
    if (phases.includes("throughput")) await throughput(receiver)
    if (phases.includes("latency")) await latency(receiver)
    if (phases.includes("backlog") && backlog > 0) await drain(receiver)
  } finally {
    receiver.close()
  }
  results.emit({
    machine: { cpus: Os.cpus().length, node: process.version },
    load_average_start: startLoad,
    load_average_end: loadAverage()
  })
  results.write()
  console.log(`\n${perRound} deliveries per round, ${rounds} rounds (per round in brackets):`)
  for (const line of results.lines.filter((l) => l["workload"] === "throughput")) {
    const cpu = line["cpu_us_per_delivery"] as { total: number }
    const parts = [`${String(line["target"]).padEnd(24)} ${String(line["deliveries_per_s"]).padStart(6)}/s`]
    if (line["ratio_to_floor"] !== undefined)
      parts.push(
        `floor × ${String(line["ratio_to_floor"])} [${(line["ratio_to_floor_per_round"] as Array<number>).join(" ")}]`
      )
    if (line["ratio_to_graphile_worker_batched"] !== undefined)
      parts.push(
        `graphile-worker batched × ${String(line["ratio_to_graphile_worker_batched"])} ` +
          `[${(line["ratio_to_graphile_worker_batched_per_round"] as Array<number>).join(" ")}]`
      )
    parts.push(`${cpu.total} µs CPU, ${String(line["statements_per_delivery"])} statements per delivery`)
    console.log(parts.join("; "))
  }
  const measured = results.lines.find((l) => l["workload"] === "latency")
  if (measured !== undefined) {
    console.log(
      `latency at ${String(measured["achieved_sales_per_s"])} sales/s: p50 ${String(measured["p50_ms"])} ms, ` +
        `p99 ${String(measured["p99_ms"])} ms`
    )
  }
  const drained = results.lines.find((l) => l["workload"] === "backlog")
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
