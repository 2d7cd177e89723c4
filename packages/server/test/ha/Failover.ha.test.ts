/**
 * Cobro on a real highly-available PostgreSQL cluster (`scripts/ha/cluster.mjs`: etcd, two Patroni
 * members in synchronous mode, HAProxy to the primary, pgbouncer in transaction mode) through three
 * faults under steady write load (A3, B2, C1 then C4, each with an `Idempotency-Key`, retried with
 * the same key): a switchover, a `kill -9` of the primary's postmaster, and a SIGTERM of the
 * primary's Patroni. Nothing a 2xx answered is lost, no key makes two resources, every error is
 * an envelope (503 with `Retry-After` while the database cannot take writes), every webhook is
 * delivered, `/ready` follows the writes, and `cobro audit verify` passes. Once with the server on
 * HAProxy, once through pgbouncer. Run by `npm run test:ha` (not by `npm test`).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Cli from "../support/CliProcess.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as Cluster from "./Cluster.js"
import * as Load from "./Load.js"
import * as WatchedServer from "./WatchedServer.js"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Load before each fault, and how long it runs on after it before the cluster must be whole again. */
const beforeFaultMillis = 4_000
const afterFaultMillis = 17_000
/** `/ready` must follow the writes within this much (brief: "within ~1 s"). */
const readySlackMillis = 1_000

type FaultName = "switchover" | "killPostmaster" | "stopPatroni"
const faults: ReadonlyArray<FaultName> = ["switchover", "killPostmaster", "stopPatroni"]

let cluster: Cluster.Cluster | undefined
let module: Awaited<ReturnType<typeof Cluster.load>>
let scope: Scope.CloseableScope
let hook: { url: string; received: Array<ServerProcess.Received> }

beforeAll(async () => {
  module = await Cluster.load()
  scope = Effect.runSync(Scope.make())
  hook = await Effect.runPromise(Scope.extend(ServerProcess.webhookReceiver, scope))
  cluster = await module.up()
  // Should the run end without afterAll (killed, timed out), no daemon outlives it.
  const started = cluster
  process.once("exit", () => module.killNow(started))
}, 240_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (cluster !== undefined) await module.down(cluster)
}, 60_000)

interface FaultWindow {
  readonly name: FaultName
  readonly fault: Cluster.Fault
  readonly healthy: { primary: string; standby: string; millis: number }
  /** From the fault to Patroni naming the other member primary (null: not within the window). */
  readonly promotedAfterMillis: number | null
  /** Until the next fault (or the end of the load). */
  end: number
}

/**
 * What each fault cost, and what the assertions about `/ready` found. The outage starts with the
 * first failed write after the fault; it ends with the first write that succeeds among those *sent*
 * after that failure (a request sent before the fault may still succeed late: A3 waits for its
 * terminal). `/ready` must answer 503 within 1 s of the first failure. After it, each side of the
 * recovery is judged by requests *sent* a second or more after the other side turned: a `/ready` sent
 * 1 s after the recovering write ended answers 200 (a check sent just before the recovery may wait
 * out its own timeout, `Readiness.TIMEOUT`, and answer 503 late), and every write sent 1 s or more
 * after that 200 (while `/ready` stays 200) is served: no 5xx, no missing answer (a write sent before
 * it may fail: it can be waiting out its connection timeout).
 */
const measure = (mode: string, window: FaultWindow, recorder: Load.Recorder) => {
  const at = window.fault.at
  const writes = recorder.exchanges.filter((e) => e.end >= at && e.end < window.end)
  const failed = writes.filter((e) => !Load.ok(e))
  const firstFailed = [...failed].sort((a, b) => a.end - b.end)[0]
  const firstOk = writes
    .filter((e) => Load.ok(e) && e.start >= (firstFailed === undefined ? at : firstFailed.end))
    .sort((a, b) => a.end - b.end)[0]
  const lastFailed = [...failed].sort((a, b) => b.end - a.end)[0]
  const ready = recorder.ready.filter((r) => r.at >= at - 500 && r.at < window.end)
  const readyNot200 = ready.find((r) => r.status !== 200)
  const readyDown = ready.find((r) => r.status === 503)
  const readyUp =
    readyNot200 === undefined ? undefined : ready.find((r) => r.at > readyNot200.at && r.status === 200)
  const readyTimeouts = ready.filter((r) => r.status === 0).length
  const figures = {
    mode,
    fault: window.fault.fault,
    primary: window.fault.primary,
    newPrimary: window.healthy.primary,
    unavailableSeconds:
      firstFailed === undefined || firstOk === undefined ? 0 : (firstOk.end - firstFailed.end) / 1000,
    failedRequests: failed.length,
    failedKeys: new Set(failed.map((e) => e.key)).size,
    failedByStatus: Object.fromEntries(
      [...new Set(failed.map((e) => e.status))].map((s) => [s, failed.filter((e) => e.status === s).length])
    ),
    firstFailedAfterFaultMs: firstFailed === undefined ? null : firstFailed.end - at,
    lastFailedAfterFaultMs: lastFailed === undefined ? null : lastFailed.end - at,
    firstOkAfterFaultMs: firstOk === undefined ? null : firstOk.end - at,
    readyNot200AfterFaultMs: readyNot200 === undefined ? null : readyNot200.at - at,
    ready503AfterFaultMs: readyDown === undefined ? null : readyDown.at - at,
    ready200AfterFaultMs: readyUp === undefined ? null : readyUp.at - at,
    readyTimeouts,
    maxLatencyMs: writes.reduce((max, e) => Math.max(max, e.end - e.start), 0),
    // The longest a key of the window took from its first attempt to its final answer (retries included).
    longestKeyMs: recorder.outcomes
      .filter((o) => o.exchanges.some((e) => e.end >= at && e.end < window.end))
      .reduce((max, o) => Math.max(max, (o.final ?? o.exchanges.at(-1)!).end - o.exchanges[0]!.start), 0),
    writes: writes.length,
    newPrimaryAfterFaultMs: window.promotedAfterMillis,
    healthyAfterFaultMs: window.healthy.millis
  }
  const problems: Array<string> = []
  const after = (t: number | undefined) => (t === undefined ? "never" : `${t - at} ms after the fault`)
  if (firstFailed !== undefined) {
    if (readyDown === undefined || readyDown.at > firstFailed.end + readySlackMillis)
      problems.push(
        `${window.name}: the first write failed ${firstFailed.end - at} ms after the fault (${firstFailed.status}) but /ready answered 503 ${after(readyDown?.at)} (first not 200: ${readyNot200?.status} ${after(readyNot200?.at)})`
      )
    if (firstOk === undefined) problems.push(`${window.name}: no write succeeded after the first failure`)
    else if (readyUp === undefined || readyUp.sent > firstOk.end + readySlackMillis)
      problems.push(
        `${window.name}: the first write sent after the first failure that succeeded ran from ${firstOk.start - at} to ${firstOk.end - at} ms after the fault but the first /ready to answer 200 again was sent ${after(readyUp?.sent)}`
      )
    if (readyUp !== undefined) {
      const readyAgainDown = ready.find((r) => r.at > readyUp.at && r.status !== 200)?.at ?? window.end
      // Unserved: a 5xx or no answer. A 4xx is the service's answer (a 409 for a key whose request
      // from before the outage still holds it, or took effect and lost its answer, SV-31).
      const failedOnceReady = failed.filter(
        (e) =>
          e.start >= readyUp.at + readySlackMillis &&
          e.start < readyAgainDown &&
          (e.status === 0 || e.status >= 500)
      )
      if (failedOnceReady.length > 0)
        problems.push(
          `${window.name}: /ready answered 200 ${after(readyUp.at)}, but writes sent a second or more after it were not served: ${failedOnceReady
            .slice(0, 10)
            .map((e) => `${e.kind} sent ${e.start - at} ms, ${e.status} at ${e.end - at} ms`)
            .join("; ")}`
        )
    }
  }
  return { figures, problems }
}

const scenario = async (mode: "direct" | "pgbouncer") => {
  const ha = cluster!
  // From a whole cluster (a scenario before may have ended in the middle of a fault).
  await module.waitHealthy(ha, { timeoutMillis: 120_000 })
  const database = `cobro_ha_${mode}_${randomBytes(4).toString("hex")}`
  module.sql(ha.ports.haproxy, `CREATE DATABASE ${database}`)
  const directUrl = Cluster.withDatabase(ha.directUrl, database)
  const keys = ServerProcess.postgresKeys()
  const env: Record<string, string> = {
    ...keys,
    COBRO_DEV_WEBHOOKS: "1",
    ADMIN_TOKEN: `ha-admin-${randomBytes(8).toString("hex")}`,
    COBRO_WORKER_DOWN_BOUND: "5 seconds",
    ...(mode === "direct"
      ? { DATABASE_URL: directUrl }
      : {
          DATABASE_URL: Cluster.withDatabase(ha.bouncerUrl, database),
          DATABASE_LISTEN_URL: directUrl,
          DATABASE_POOL_MODE: "transaction"
        })
  }
  const server = await WatchedServer.start(env)
  const recorder: Load.Recorder = { exchanges: [], outcomes: [], ready: [] }
  try {
    const serial = `SN-HA-${mode.toUpperCase()}`
    const merchant = await Effect.runPromise(
      ServerProcess.merchantWithTerminal(server, {
        name: `Tienda HA ${mode}`,
        serial,
        methods: { terminal: { POS: true }, link: { CREDIT_CARD: { min: 1000, max: 5000000 } } },
        webhook: { url: hook.url, mode: "test" }
      })
    )
    const terminalKey: string = merchant.keys.terminal_api.test.identity_key
    const buttonKey: string = merchant.keys.payment_button.test.identity_key

    // The load: three sellers (A3), two link makers (B2), two online shops (C1 then C4), a prober
    // (B2): about 30 writes/s on 2 cores.
    let running = true
    // The load stops if the server process dies (a crash is a failure of its own, reported below).
    const isRunning = () => running && server.alive()
    const pause = () => sleep(250)
    const seller = async (n: number) => {
      for (let i = 0; running; i++) {
        const reference = `${mode}-a3-${n}-${i}`
        await Load.write(recorder, server, isRunning, {
          kind: "A3",
          apiKey: terminalKey,
          path: "/payments/app-checkout",
          body: ServerProcess.terminalSale(serial, reference),
          reference
        })
        await pause()
      }
    }
    const linkMaker = async (n: number) => {
      for (let i = 0; running; i++) {
        const reference = `${mode}-b2-${n}-${i}`
        await Load.write(recorder, server, isRunning, {
          kind: "B2",
          apiKey: buttonKey,
          path: "/online/link/v1",
          body: { amount_type: "CLOSE", amount: { total_amount: 50_000 }, reference },
          reference
        })
        await pause()
      }
    }
    const shop = async (n: number) => {
      for (let i = 0; running; i++) {
        const reference = `${mode}-c-${n}-${i}`
        const intent = await Load.write(recorder, server, isRunning, {
          kind: "C1",
          apiKey: buttonKey,
          path: "/v1/payment-intent",
          body: ServerProcess.onlineIntent(reference, 50_000),
          reference
        })
        if (intent.final !== undefined && Load.ok(intent.final))
          await Load.write(recorder, server, isRunning, {
            kind: "C4",
            apiKey: buttonKey,
            path: "/v1/payment",
            body: ServerProcess.cardAttempt(reference),
            reference
          })
        await pause()
      }
    }
    // A link every 500 ms whatever the others are waiting on: the clients above can all be inside
    // requests that wait out a connection timeout, and `/ready`'s 200 is checked against the writes
    // sent after it.
    const prober = async () => {
      const probes: Array<Promise<unknown>> = []
      for (let i = 0; running; i++) {
        const reference = `${mode}-probe-${i}`
        probes.push(
          Load.write(recorder, server, isRunning, {
            kind: "B2",
            apiKey: buttonKey,
            path: "/online/link/v1",
            body: { amount_type: "CLOSE", amount: { total_amount: 50_000 }, reference },
            reference
          })
        )
        await sleep(500)
      }
      await Promise.all(probes)
    }
    const load = Promise.all([
      ...[1, 2, 3].map(seller),
      ...[1, 2].map(linkMaker),
      ...[1, 2].map(shop),
      prober(),
      Load.pollReady(recorder, server, isRunning)
    ])

    const windows: Array<FaultWindow> = []
    try {
      for (const name of faults) {
        await sleep(beforeFaultMillis)
        if (!server.alive()) break
        const fault = await module[name](ha)
        if (windows.length > 0) windows[windows.length - 1]!.end = fault.at
        // When Patroni names another primary (polled while the load runs on).
        const promoted = (async () => {
          while (Date.now() - fault.at < afterFaultMillis) {
            const now = await module.primary(ha).catch(() => undefined)
            if (now !== undefined && now.name !== fault.primary) return Date.now() - fault.at
            await sleep(100)
          }
          return null
        })()
        await sleep(afterFaultMillis)
        const healthy = await module.waitHealthy(ha, { timeoutMillis: 120_000 })
        windows.push({
          name,
          fault,
          healthy: { ...healthy, millis: Date.now() - fault.at },
          promotedAfterMillis: await promoted,
          end: Infinity
        })
      }
      await sleep(beforeFaultMillis)
    } finally {
      running = false
      await load
    }

    const figures = windows.map((window) => measure(mode, window, recorder))
    for (const { figures: line } of figures) console.log(JSON.stringify(line))
    if (process.env["COBRO_HA_REPORT_DIR"] !== undefined) {
      Fs.mkdirSync(process.env["COBRO_HA_REPORT_DIR"], { recursive: true })
      Fs.writeFileSync(
        Path.join(process.env["COBRO_HA_REPORT_DIR"], `failover-${mode}.json`),
        JSON.stringify({ windows, figures, recorder, serverOutput: server.output() }, null, 1)
      )
    }

    // The server process lived through the faults (a crash is not an outage it recovers from).
    const crashed = server.exit()
    expect(
      crashed,
      `the server process exited during the faults (${windows.length} of ${faults.length} injected). Its last output:\n${server.output().slice(-4000)}`
    ).toBeUndefined()

    // Every key ends with a 2xx (a definite 4xx would be a request refused for the failover). A
    // route whose answer cannot be made again from its resource (C1, C4; SV-31) may end with 409
    // IdempotencyKeyUnanswered when its commit's answer was lost: its one resource is counted below.
    const recoverable = (kind: Load.Exchange["kind"]) => kind === "A3" || kind === "B2"
    const unfinished = recorder.outcomes
      .filter(
        (o) =>
          o.final === undefined || !(Load.ok(o.final) || (!recoverable(o.kind) && Load.unanswered(o.final)))
      )
      .map(
        (o) =>
          `${o.kind} ${o.reference}: ${o.final === undefined ? "no final answer" : `${o.final.status} ${o.final.body.slice(0, 200)}`}`
      )
    expect.soft(unfinished, "keys that did not end with a 2xx").toEqual([])

    // Every non-2xx answer is the endpoint's JSON envelope; a 5xx is a 503 with Retry-After (A3: AP001 allowed).
    const badErrors = recorder.exchanges.flatMap(Load.envelopeProblems)
    expect.soft(badErrors.slice(0, 20), `${badErrors.length} error answers not in the envelope`).toEqual([])

    // A retried key is answered with the same id each time.
    const twoIds = recorder.outcomes.flatMap((o) => {
      const ids = new Set(o.exchanges.filter(Load.ok).map(Load.resourceId))
      return ids.size > 1 || ids.has(undefined) ? [`${o.kind} ${o.reference}: ${[...ids].join(", ")}`] : []
    })
    expect.soft(twoIds, "keys answered with different ids").toEqual([])

    // Per key exactly one resource: the log holds one creation per key that got a 2xx, or whose
    // retry was answered 409 IdempotencyKeyUnanswered ("took effect", flagged above all the same).
    const succeeded = recorder.outcomes.filter((o) => o.final !== undefined && Load.ok(o.final))
    const tookEffect = recorder.outcomes.filter(
      (o) => o.final !== undefined && (Load.ok(o.final) || Load.unanswered(o.final))
    )
    const count = (kind: Load.Exchange["kind"]) => tookEffect.filter((o) => o.kind === kind).length
    const created = Object.fromEntries(
      module
        .sql(
          ha.ports.haproxy,
          `SELECT type, count(*) FROM cobro_events WHERE type IN ('CheckoutCreated', 'LinkCreated', 'IntentCreated', 'PaymentStarted') GROUP BY type`,
          database
        )
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.split("|"))
        .map(([type, n]) => [type, Number(n)])
    )
    expect.soft(created, "creations in the log, one per key that took effect").toEqual({
      CheckoutCreated: count("A3"),
      LinkCreated: count("B2"),
      IntentCreated: count("C1"),
      PaymentStarted: count("C4")
    })

    // Every 2xx's resource reads back through the API.
    const unreadable: Array<string> = []
    for (const outcome of succeeded) {
      const id = Load.resourceId(outcome.final!)
      const path =
        outcome.kind === "A3"
          ? `/payments/webhook/notifications/${outcome.reference}?is_external_reference=true`
          : outcome.kind === "B2"
            ? `/online/link/v1/${id}`
            : outcome.kind === "C1"
              ? `/v1/payment-intent/${outcome.reference}`
              : `/v1/payment/${outcome.reference}`
      const read = await Effect.runPromise(
        ServerProcess.withKey(server, outcome.kind === "A3" ? terminalKey : buttonKey, "GET", path)
      )
      if (read.status !== 200)
        unreadable.push(
          `${outcome.kind} ${outcome.reference} ${path}: ${read.status} ${read.text.slice(0, 200)}`
        )
      else if (
        outcome.kind === "C4" &&
        (read.json?.transaction_id ?? read.json?.payload?.transaction_id) !== id
      )
        unreadable.push(`C4 ${outcome.reference}: answered ${id}, reads ${read.text.slice(0, 200)}`)
    }
    expect
      .soft(unreadable.slice(0, 20), `${unreadable.length} of ${succeeded.length} resources not readable`)
      .toEqual([])

    // Every sale's webhook is delivered: SALE_APPROVED for each A3 and each card payment.
    const expected = succeeded
      .filter((o) => o.kind === "A3" || o.kind === "C4")
      .map((o) => ({ reference: o.reference, id: Load.resourceId(o.final!) }))
    const missing = () => {
      const bodies = hook.received.map((r) => {
        try {
          return JSON.parse(r.body)
        } catch {
          return {}
        }
      })
      return expected.filter(
        (e) =>
          !bodies.some(
            (b) =>
              b?.type === "SALE_APPROVED" &&
              (b?.data?.metadata?.reference === e.reference ||
                (e.id !== undefined && b?.data?.payment_id === e.id))
          )
      )
    }
    const stillMissing = await Effect.runPromise(
      ServerProcess.within(
        90_000,
        (m) => `${m.length} webhooks missing`,
        Effect.sync(missing),
        (m) => m.length === 0
      ).pipe(Effect.catchAllDefect(() => Effect.sync(missing)))
    )
    expect
      .soft(
        stillMissing.slice(0, 20).map((m) => m.reference),
        `${stillMissing.length} of ${expected.length} sales' webhooks not delivered`
      )
      .toEqual([])

    // /ready went 503 within ~1 s of the first failed write and back to 200 within ~1 s of writes succeeding.
    expect
      .soft(
        figures.flatMap((f) => f.problems),
        JSON.stringify(recorder.ready)
      )
      .toEqual([])

    // The log holds (hash chains, versions, checkpoints).
    const verified = await Effect.runPromise(
      Cli.run(["audit", "verify"], { DATABASE_URL: directUrl, ...keys })
    )
    expect.soft(verified.code, `${verified.stdout}\n${verified.stderr}`).toBe(0)
    expect(succeeded.length, "the load made resources").toBeGreaterThan(50)
  } finally {
    const stopped = await server.stop()
    if (stopped.code !== 0) console.log(`${mode}: the server exited ${stopped.code} ${stopped.signal}`)
  }
}

describe.sequential(
  "Cobro on a Patroni cluster through a switchover, a postmaster kill and a Patroni stop",
  () => {
    it(
      "on HAProxy: nothing answered is lost, errors are 503 envelopes, /ready follows, the log verifies",
      () => scenario("direct"),
      300_000
    )

    it("through pgbouncer (transaction pooling): the same", () => scenario("pgbouncer"), 300_000)
  }
)
