/**
 * Issue 34 from an operator's side: a real Prometheus (Debian's, installed by
 * `scripts/ensure-prometheus.mjs`, npm test's pretest) scrapes a real server's `GET /metrics` every
 * second while the test makes A3 sales whose webhooks fail; Prometheus's query API must show what the
 * test caused. `promtool` checks the exposition as served and the alert rules of docs/operations.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "./support/ServerProcess.js"

const PROMETHEUS = "/usr/bin/prometheus"
const PROMTOOL = "/usr/bin/promtool"
const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const ALERT_RULES = Path.join(root, "docs", "prometheus-alerts.yml")
const OPERATIONS = Path.join(root, "docs", "operations.md")
const DASHBOARD = Path.join(root, "docs", "grafana-dashboard.json")

/** The A3 sales the test makes: each is one request counted, one approval, one notification. */
const SALES = 3
const SERIAL = "SN-PROM"
/** How long Prometheus may take to show what the test caused (a scrape a second, a loaded machine). */
const DEADLINE_MILLIS = 60_000
const POLL_MILLIS = 200

let scope: Scope.CloseableScope | undefined
let server: ServerProcess.RunningServer | undefined
let receiver: FailingReceiver | undefined
let prometheus:
  { readonly url: string; readonly child: ChildProcess; readonly output: () => string } | undefined
let dir = ""

/** A merchant's webhook endpoint that answers every notification 500, so that deliveries stay queued. */
interface FailingReceiver {
  readonly url: string
  /** The notifications' ids (`id` of the body), one per attempt. */
  readonly attempts: Array<string>
  readonly close: () => Promise<void>
}

const failingReceiver = (): Promise<FailingReceiver> =>
  new Promise((resolve) => {
    const attempts: Array<string> = []
    const http = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        try {
          attempts.push(String(JSON.parse(body).id))
        } catch {
          attempts.push("")
        }
        res.writeHead(500, { "content-type": "text/plain" }).end("down for the test")
      })
    })
    http.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(http.address() as Net.AddressInfo).port}/hook`,
        attempts,
        close: () => new Promise<void>((done) => http.close(() => done()))
      })
    )
  })

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** Fails (never skips) when the executables are missing, saying what installs them. */
const requireExecutables = () => {
  const missing = [PROMETHEUS, PROMTOOL].filter((file) => !Fs.existsSync(file))
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(" and ")} missing: run \`node scripts/ensure-prometheus.mjs\` (npm test's pretest), which installs Debian's prometheus package.`
    )
  }
}

/** Starts Prometheus scraping `target` (host:port) at /metrics every second; resolves once it is ready. */
const startPrometheus = async (target: string) => {
  const port = await ServerProcess.freePort()
  const config = Path.join(dir, "prometheus.yml")
  Fs.writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      "  - job_name: cobro",
      "    metrics_path: /metrics",
      "    static_configs:",
      `      - targets: ["${target}"]`,
      ""
    ].join("\n")
  )
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${Path.join(dir, "tsdb")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn"
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  prometheus = { url, child, output: () => output }
  const deadline = Date.now() + DEADLINE_MILLIS
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Prometheus exited (code ${child.exitCode}, signal ${child.signalCode}):\n${output}`)
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.status === 200,
      () => false
    )
    if (ready) return
    if (Date.now() > deadline)
      throw new Error(`Prometheus was not ready within ${DEADLINE_MILLIS} ms:\n${output}`)
    await sleep(POLL_MILLIS)
  }
}

/** One instant query through Prometheus's HTTP API: the first series' value, undefined for none. */
const query = async (promql: string): Promise<number | undefined> => {
  const response = await fetch(`${prometheus!.url}/api/v1/query?query=${encodeURIComponent(promql)}`)
  const body: any = await response.json()
  if (body.status !== "success") throw new Error(`${promql}: ${response.status} ${JSON.stringify(body)}`)
  const result: ReadonlyArray<{ value: [number, string] }> = body.data.result
  return result.length === 0 ? undefined : Number(result[0]!.value[1])
}

/** What a failed wait prints: the scrape's health and the exposition's lines of `metric`. */
const diagnosis = async (metric: string) => {
  const targets: any = await fetch(`${prometheus!.url}/api/v1/targets`).then(
    (response) => response.json(),
    (error) => ({ error: String(error) })
  )
  const health = (targets?.data?.activeTargets ?? []).map(
    (t: any) => `${t.scrapeUrl} ${t.health} ${t.lastError}`
  )
  const exposition = await fetch(`${server!.url}/metrics`).then(
    async (response) => `${response.status}\n${await response.text()}`,
    (error) => String(error)
  )
  const lines = exposition.split("\n").filter((line) => line.includes(metric) || /^\d{3}$/.test(line))
  return `targets: ${JSON.stringify(health)}\n/metrics lines with ${metric}:\n${lines.join("\n")}\nPrometheus:\n${prometheus!.output()}`
}

/** Polls `promql` every 200 ms until `done` holds of its value; fails with a diagnosis after the deadline. */
const eventually = async (promql: string, metric: string, done: (value: number | undefined) => boolean) => {
  const deadline = Date.now() + DEADLINE_MILLIS
  for (;;) {
    const value = await query(promql)
    if (done(value)) return value
    if (Date.now() > deadline) {
      throw new Error(`after ${DEADLINE_MILLIS} ms, ${promql} is ${value}\n${await diagnosis(metric)}`)
    }
    await sleep(POLL_MILLIS)
  }
}

/** Waits until `promql` is `value` (`SALES`: one for each sale the setup made). */
const reaches = async (promql: string, metric: string, value: number) => {
  expect(await eventually(promql, metric, (answer) => answer === value)).toBe(value)
}

/** The queries of docs/operations.md's Observability section: its promql blocks, an indented line continuing the one above. */
const documentedQueries = (): ReadonlyArray<string> => {
  const text = Fs.readFileSync(OPERATIONS, "utf8")
  const section = text.slice(text.indexOf("## Observability"))
  const queries: Array<string> = []
  for (const [, block] of section.matchAll(/```promql\n([\s\S]*?)```/g)) {
    for (const line of block!.split("\n")) {
      if (line.trim() === "") continue
      if (/^\s/.test(line) && queries.length > 0) queries[queries.length - 1] += `\n${line}`
      else queries.push(line)
    }
  }
  return queries
}

/** The queries of docs/grafana-dashboard.json's panels. */
const dashboardQueries = (): ReadonlyArray<string> =>
  JSON.parse(Fs.readFileSync(DASHBOARD, "utf8")).panels.flatMap((panel: any) =>
    (panel.targets ?? []).map((target: any) => String(target.expr))
  )

/** The `expr` of each rule in a rules file's text: the rest of its line, or the `|` block under it. */
const expressionsIn = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  const indent = (line: string) => line.length - line.trimStart().length
  const expressions: Array<string> = []
  lines.forEach((line, i) => {
    const match = /^(\s*)expr:\s*(.*)$/.exec(line)
    if (match === null) return
    if (match[2] !== "|") return void expressions.push(match[2]!)
    const block: Array<string> = []
    for (let j = i + 1; j < lines.length && indent(lines[j]!) > match[1]!.length; j++) block.push(lines[j]!)
    expressions.push(block.join("\n"))
  })
  return expressions
}

/** The rules' expressions of docs/prometheus-alerts.yml. */
const ruleExpressions = () => expressionsIn(Fs.readFileSync(ALERT_RULES, "utf8"))

/** The rules' expressions of the yaml block under docs/operations.md's "### Alerts". */
const documentedRuleExpressions = () => {
  const text = Fs.readFileSync(OPERATIONS, "utf8")
  const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(text.indexOf("### Alerts")))
  return expressionsIn(block?.[1] ?? "")
}

/** The Cobro metrics a query names (label matchers and `by (…)` lists left out). */
const metricsNamed = (promql: string): ReadonlyArray<string> =>
  promql
    .replace(/\{[^}]*\}/g, "")
    .replace(/\b(?:by|without)\s*\([^)]*\)/g, "")
    .match(/\b(?:cobro|http_server|db_client)_[a-z_]+\b/g) ?? []

/** Counters that appear in the exposition with their first count, which this test does not cause. */
const NOT_YET_COUNTED = ["cobro_links_total", "cobro_payments_total", "cobro_idempotency_conflicts_total"]

const oneLine = (promql: string) => promql.replace(/\s+/g, " ").trim()

/**
 * `promtool test rules` cases for `rules` (made-up series every 15 s, two nodes): every alert fires on
 * its fault, the database's gauges once per deployment; the stalled signing not before 5 minutes
 * without a checkpoint; a healthy deployment fires nothing.
 */
const alertUnitTests = (rules: string) => {
  const a = 'job="cobro",instance="a:8080"'
  /** A checkpoint a minute under steady load: the unsigned events grow for 45 s, then drop to the few since. */
  const checkpointEveryMinute = (samples: number) =>
    Array.from({ length: samples }, (_, i) => (i % 4 === 3 ? 3 : ((i % 4) + 1) * 20)).join(" ")
  const series = (name: string, values: string) => `      - series: '${name}'\n        values: '${values}'`
  const requests = (status: string, values: string) =>
    series(
      `http_server_request_duration_seconds_count{${a},http_route="/payments/app-checkout",http_request_method="POST",http_response_status_code="${status}"}`,
      values
    )
  const firing = (at: string, alerts: ReadonlyArray<Record<string, string>>) =>
    [
      '      - expr: ALERTS{alertstate="firing"}',
      `        eval_time: ${at}`,
      alerts.length === 0 ? "        exp_samples: []" : "        exp_samples:",
      ...alerts.map((labels) => {
        const all = Object.entries({ alertstate: "firing", ...labels }).map(([k, v]) => `${k}="${v}"`)
        return `          - labels: 'ALERTS{${all.join(",")}}'\n            value: 1`
      })
    ].join("\n")
  const faults = [
    { alertname: "CobroDown", instance: "a:8080", job: "cobro", severity: "page" },
    { alertname: "CobroWebhookQueueStuck", job: "cobro", severity: "page" },
    {
      alertname: "CobroWorkerDown",
      instance: "a:8080",
      job: "cobro",
      severity: "page",
      worker: "Webhook dispatcher"
    },
    { alertname: "CobroWorkerLagGrowing", job: "cobro", severity: "warn", worker: "Log checkpoints" },
    { alertname: "CobroHighErrorRatio", job: "cobro", severity: "page" },
    { alertname: "CobroDatabasePoolWaiting", instance: "a:8080", job: "cobro", severity: "warn" }
  ]
  const stalled = { alertname: "CobroCheckpointSigningStalled", job: "cobro", severity: "warn" }
  return [
    "rule_files:",
    `  - ${JSON.stringify(rules)}`,
    "evaluation_interval: 15s",
    "tests:",
    "  - interval: 15s",
    "    input_series:",
    series(`up{${a}}`, "1x8 0x60"),
    series('up{job="cobro",instance="b:8080"}', "1x68"),
    series(`cobro_webhook_oldest_due_age_seconds{${a}}`, "0x4 0+15x60"),
    series('cobro_webhook_oldest_due_age_seconds{job="cobro",instance="b:8080"}', "0x4 0+15x60"),
    series(`cobro_worker_up{${a},worker="Webhook dispatcher"}`, "1x4 0x60"),
    series(`cobro_worker_up{${a},worker="Link expiry"}`, "1x64"),
    series(`cobro_worker_lag_events{${a},worker="Log checkpoints"}`, "0x4 0+10x60"),
    requests("201", "0+100x64"),
    requests("503", "0+2x64"),
    // The last checkpoint at 2m45s: from there the count only grows.
    series(`cobro_log_unsigned_events{${a}}`, `${checkpointEveryMinute(12)} 5+20x52`),
    series(`db_client_connections_pending_requests{${a}}`, "0x4 3x60"),
    "    promql_expr_test:",
    firing("7m", faults),
    firing("8m", [...faults, stalled]),
    "  - interval: 15s",
    "    input_series:",
    series(`up{${a}}`, "1x120"),
    series(`cobro_webhook_oldest_due_age_seconds{${a}}`, "0x20 0+15x8 0x90"),
    series(`cobro_worker_up{${a},worker="Webhook dispatcher"}`, "1x20 0x3 1x96"),
    series(`cobro_worker_lag_events{${a},worker="Log checkpoints"}`, "0x20 400 200 0x98"),
    requests("201", "0+200x120"),
    requests("503", "0+1x120"),
    series(`cobro_log_unsigned_events{${a}}`, checkpointEveryMinute(120)),
    series(`db_client_connections_pending_requests{${a}}`, "0x20 2 0x99"),
    "    promql_expr_test:",
    ...["5m", "10m", "20m", "29m"].map((at) => firing(at, [])),
    ""
  ].join("\n")
}

/** promtool with `args` (and `input` on stdin): its exit code and everything it printed. */
const promtool = (args: ReadonlyArray<string>, input?: string) => {
  const result = spawnSync(PROMTOOL, args, { input, encoding: "utf8", timeout: 30_000 })
  return { code: result.status, output: `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}` }
}

beforeAll(async () => {
  requireExecutables()
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-prometheus-"))
  scope = Effect.runSync(Scope.make())
  receiver = await failingReceiver()
  const database = await Effect.runPromise(Scope.extend(ServerProcess.postgresEnv, scope))
  server = await ServerProcess.startProcess({ ...database, COBRO_DEV_WEBHOOKS: "1" })
  const { keys } = await Effect.runPromise(
    ServerProcess.merchantWithTerminal(server, {
      name: "Tienda Métrica",
      serial: SERIAL,
      webhook: { url: receiver.url, mode: "test" }
    })
  )
  const terminalKey: string = keys.terminal_api.test.identity_key
  for (let i = 1; i <= SALES; i++) {
    const sale = await Effect.runPromise(
      ServerProcess.withKey(
        server,
        terminalKey,
        "POST",
        "/payments/app-checkout",
        ServerProcess.terminalSale(SERIAL, `order-metrics-${i}`)
      )
    )
    expect(sale.status, sale.text).toBe(201)
  }
  await startPrometheus(new URL(server.url).host)
})

afterAll(async () => {
  if (prometheus !== undefined) {
    const { child } = prometheus
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      await exited
      clearTimeout(timer)
    }
  }
  if (server !== undefined) await server.stop()
  if (receiver !== undefined) await receiver.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dir !== "") Fs.rmSync(dir, { recursive: true, force: true })
})

describe("Prometheus scrapes GET /metrics (issue 34)", () => {
  it(`${SALES} A3 sales answered 201 are ${SALES} POST /payments/app-checkout requests with status 201 in http_server_request_duration_seconds_count`, async () => {
    await reaches(`up{job="cobro"}`, "up", 1)
    await reaches(
      'sum(http_server_request_duration_seconds_count{http_route="/payments/app-checkout",http_request_method="POST",http_response_status_code="201"})',
      "http_server_request_duration_seconds_count",
      SALES
    )
    // The simulated terminal approves each sale (auto_approve is the sandbox's default).
    await reaches('sum(cobro_sales_total{outcome="approved"})', "cobro_sales_total", SALES)
  })

  it(`each approved sale is one SALE_APPROVED notification to the one webhook; answered 500, all ${SALES} stay queued in cobro_webhook_queue_depth (the next retry is 15 minutes away)`, async () => {
    await reaches("sum(cobro_webhook_queue_depth)", "cobro_webhook_queue_depth", SALES)
    // Each delivery was tried once and failed; none is due again for 15 minutes.
    await reaches(
      'sum(cobro_webhook_deliveries_total{outcome="failed"})',
      "cobro_webhook_deliveries_total",
      SALES
    )
    expect(new Set(receiver!.attempts).size).toBe(SALES)
    await reaches("max(cobro_webhook_oldest_due_age_seconds)", "cobro_webhook_oldest_due_age_seconds", 0)
  })

  it("promtool check metrics accepts the exposition GET /metrics serves", async () => {
    const response = await fetch(`${server!.url}/metrics`)
    const text = await response.text()
    expect(response.status, text).toBe(200)
    const checked = promtool(["check", "metrics"], text)
    expect(checked.code, `promtool check metrics:\n${checked.output}\n--- /metrics ---\n${text}`).toBe(0)
  })

  it("the dashboard's queries are the Observability section's, and Prometheus accepts each of them", async () => {
    const documented = documentedQueries().map(oneLine)
    const panels = dashboardQueries().map(oneLine)
    expect(documented.length).toBeGreaterThan(0)
    expect([...new Set(panels)].sort()).toStrictEqual([...new Set(documented)].sort())
    for (const promql of documented) {
      const response = await fetch(`${prometheus!.url}/api/v1/query?query=${encodeURIComponent(promql)}`)
      const body: any = await response.json()
      expect(body.status, `${promql}: ${JSON.stringify(body)}`).toBe("success")
    }
  })

  it("every metric the Observability section's queries and the alert rules name is served by GET /metrics (the links', payments' and idempotency conflicts' counters appear with their first count)", async () => {
    const exposition = await (await fetch(`${server!.url}/metrics`)).text()
    const served = new Set(
      exposition
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0])
    )
    const named = new Set([...documentedQueries(), ...ruleExpressions()].flatMap(metricsNamed))
    expect(named.size).toBeGreaterThan(10)
    const missing = [...named].filter((name) => !served.has(name) && !NOT_YET_COUNTED.includes(name))
    expect(missing, exposition).toStrictEqual([])
  })

  it("an idle server has no request waiting for a pool connection (else CobroDatabasePoolWaiting would fire for ever)", async () => {
    await reaches("max(db_client_connections_pending_requests)", "db_client_connections_pending_requests", 0)
  })

  it("promtool check rules accepts docs/prometheus-alerts.yml, and docs/operations.md shows its rules", () => {
    const checked = promtool(["check", "rules", ALERT_RULES])
    expect(checked.code, `promtool check rules ${ALERT_RULES}:\n${checked.output}`).toBe(0)
    expect(documentedRuleExpressions().map(oneLine)).toStrictEqual(ruleExpressions().map(oneLine))
  })

  it("each alert fires on its fault (the database's gauges once per deployment), signing stalled only after 5 minutes without a checkpoint, and a healthy deployment fires none (promtool test rules)", () => {
    const file = Path.join(dir, "alerts.test.yml")
    Fs.writeFileSync(file, alertUnitTests(ALERT_RULES))
    const tested = promtool(["test", "rules", file])
    expect(tested.code, `promtool test rules:\n${tested.output}`).toBe(0)
  })
})
