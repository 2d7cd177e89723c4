/**
 * The HTTP load generator of `npm run bench -- http`, in a process of its own so that the servers'
 * process CPU is theirs alone: {@link start} forks this module once per run, and each {@link Job}
 * (a closed loop of keep-alive connections, or an open loop at a fixed offered rate) is sent to it
 * over IPC and answered with an {@link Outcome}. Requests are built here (`HttpRequests`), with
 * undici.
 */
import { fork, type ChildProcess } from "node:child_process"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { Pool } from "undici"
import * as HttpRequests from "./HttpRequests.js"

export interface Job {
  readonly url: string
  readonly endpoint: HttpRequests.EndpointName
  readonly keys: HttpRequests.Keys
  /** The status every response must have; any other is a failure. */
  readonly expect: number
  /** Closed loop: connections, each with one request in flight. Open loop: A3 request _i_ uses terminal _i_ mod this. */
  readonly connections: number
  readonly seconds: number
  /** Requests per second offered whatever the responses' pace (open loop); a closed loop when absent. */
  readonly rate?: number | undefined
  /** B2: how many of the created links' ids to send back (B3 reads them). */
  readonly collectLinks?: number | undefined
}

export interface Outcome {
  readonly requests: number
  readonly seconds: number
  /** ms, each request's: every one, so that percentiles are exact. */
  readonly latencies: Float64Array
  readonly failures: number
  readonly firstFailure: string | undefined
  /** The ids of links B2 created, up to `collectLinks`. */
  readonly links: ReadonlyArray<string>
}

export interface LoadGenerator {
  readonly run: (job: Job) => Promise<Outcome>
  readonly close: () => Promise<void>
}

/** The argument that makes the forked module serve jobs instead of being a library. */
const SERVE = "--serve-load-jobs"

type Reply =
  { readonly id: number; readonly outcome: Outcome } | { readonly id: number; readonly error: string }

/** Forks the load generator; its jobs run one at a time, in the order sent. */
export const start = (): LoadGenerator => {
  const child: ChildProcess = fork(import.meta.filename, [SERVE], {
    execArgv: ["--import", "tsx"],
    // Structured clone: the latencies travel as a `Float64Array`, not as JSON text.
    serialization: "advanced",
    stdio: "inherit"
  })
  const pending = new Map<number, { resolve: (o: Outcome) => void; reject: (e: Error) => void }>()
  let next = 0
  const abandon = (error: Error) => {
    for (const { reject } of pending.values()) reject(error)
    pending.clear()
  }
  child.on("message", (reply: Reply) => {
    const waiting = pending.get(reply.id)
    pending.delete(reply.id)
    if ("error" in reply) waiting?.reject(new Error(`load generator: ${reply.error}`))
    else waiting?.resolve(reply.outcome)
  })
  child.on("exit", (code) => abandon(new Error(`load generator exited (${code})`)))
  child.on("error", abandon)
  return {
    run: (job) =>
      new Promise((resolve, reject) => {
        const id = next++
        pending.set(id, { resolve, reject })
        child.send({ id, job })
      }),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.disconnect()
      })
  }
}

// ---------------------------------------------------------------------------------------------
// The child: serves jobs
// ---------------------------------------------------------------------------------------------

/** Request numbers run on across jobs: references stay distinct for the whole run. */
let counter = 0

const send = async (pool: Pool, request: HttpRequests.Request) => {
  const { body, key, method, path } = request
  const response = await pool.request({
    method,
    path,
    headers:
      body === undefined
        ? { authorization: `x-api-key ${key}` }
        : { authorization: `x-api-key ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body })
  })
  return { status: response.statusCode, text: await response.body.text() }
}

const runJob = async (job: Job): Promise<Outcome> => {
  const latencies: Array<number> = []
  const links: Array<string> = []
  let failures = 0
  let firstFailure: string | undefined
  const answered = async (sending: Promise<{ status: number; text: string }>, since: number) => {
    try {
      const { status, text } = await sending
      latencies.push(performance.now() - since)
      if (status !== job.expect) {
        failures++
        firstFailure ??= `${status} ${text}`
      } else if (job.endpoint === "B2" && links.length < (job.collectLinks ?? 0)) {
        links.push(JSON.parse(text).payload.payment_link)
      }
    } catch (error) {
      latencies.push(performance.now() - since)
      failures++
      firstFailure ??= String(error)
    }
  }
  const open = job.rate !== undefined
  const pool = new Pool(job.url, {
    // An open loop opens a connection per request in flight: a slow server sees its queue grow.
    connections: open ? 256 : job.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000
  })
  const start = performance.now()
  let requests = 0
  try {
    if (job.rate !== undefined) {
      // Request _i_ is due at start + _i_/rate and its latency runs from then: a server that falls
      // behind sees its queueing counted (no coordinated omission).
      const rate = job.rate
      const total = Math.max(1, Math.round(rate * job.seconds))
      const inFlight: Array<Promise<void>> = []
      for (let i = 0; i < total; i++) {
        const due = start + (i * 1000) / rate
        const wait = due - performance.now()
        if (wait > 0) await sleep(wait)
        const request = HttpRequests.request(job.endpoint, job.keys, counter++, i % job.connections)
        inFlight.push(answered(send(pool, request), due))
      }
      await Promise.all(inFlight)
      requests = total
    } else {
      const end = start + job.seconds * 1000
      await Promise.all(
        Array.from({ length: job.connections }, async (_, worker) => {
          while (performance.now() < end) {
            const sent = performance.now()
            await answered(send(pool, HttpRequests.request(job.endpoint, job.keys, counter++, worker)), sent)
            requests++
          }
        })
      )
    }
  } finally {
    await pool.close()
  }
  return {
    requests,
    seconds: (performance.now() - start) / 1000,
    latencies: Float64Array.from(latencies),
    failures,
    firstFailure,
    links
  }
}

if (process.argv.includes(SERVE) && process.send !== undefined) {
  // One job at a time: a job's load is never shared with another's.
  let queue: Promise<void> = Promise.resolve()
  process.on("message", ({ id, job }: { id: number; job: Job }) => {
    queue = queue.then(() =>
      runJob(job).then(
        (outcome) => void process.send!({ id, outcome }),
        (error) => void process.send!({ id, error: String(error) })
      )
    )
  })
  // The parent disconnects when the run is over.
  process.on("disconnect", () => process.exit(0))
}
