/**
 * The peer of `npm run bench -- webhooks`: what a Node team would build instead of Cobro's webhook
 * dispatcher, with graphile-worker (a PostgreSQL job queue). One job per notification, queued in bulk
 * (`addJobs`, payload `{ body }`); one task, `deliver`, that signs the body with the spec's recipe (hex
 * HMAC-SHA256 over the Base64 of the raw bytes, as `Floor.ts`) and POSTs it with `undici`; an answer
 * other than 200 throws, and graphile-worker retries the job later (its backoff), which counts as a
 * failure. Each notification is a row (the job) before it is sent, deleted by graphile-worker once its
 * task has succeeded; attempts are not recorded apart (a failed job keeps only `attempts` and
 * `last_error`), so it keeps fewer records than Cobro or the durable floor.
 *
 * Two variants: graphile-worker as it comes (each worker fetches and completes its own jobs, one
 * statement each), and `batched`, with the batching the library documents for high throughput
 * (a local queue of jobs locked in bulk, completions and failures written in batches).
 */
import { EventEmitter } from "node:events"
import { performance } from "node:perf_hooks"
import {
  Logger,
  makeWorkerUtils,
  run,
  runMigrations,
  type TaskList,
  type WorkerEventMap,
  type WorkerEvents
} from "graphile-worker"
import { Pool } from "undici"
import * as Floor from "./Floor.js"

/** A logger that drops everything (a failed job is logged as an error; failures are counted instead). */
const silent = new Logger(() => () => {})

/** Installs graphile-worker's schema (`graphile_worker`) in the database at `connectionString`. */
export const setup = (connectionString: string): Promise<void> =>
  runMigrations({ connectionString, logger: silent })

/** The bench's two targets from this module: graphile-worker as it comes, and with its batching on. */
export const variants = [
  { name: "graphile-worker", batched: false },
  { name: "graphile-worker-batched", batched: true }
] as const
export type Variant = (typeof variants)[number]["name"]

export interface RoundOptions {
  /** A database holding graphile-worker's schema ({@link setup}), with no jobs queued. */
  readonly connectionString: string
  readonly url: string
  readonly ca: string
  readonly bodies: ReadonlyArray<string>
  readonly secret: string
  /** Jobs run at once by the runner (its `concurrency`; the dispatcher's 32). */
  readonly concurrency: number
  /** With graphile-worker's batching: local queue, batched completions and failures. */
  readonly batched: boolean
  /** Called once every job is done, before the runner and its connections stop (to read their CPU). */
  readonly onDrained?: () => void
}

/** Jobs queued per `addJobs` call (one statement each). */
const CHUNK = 1000

/**
 * Graphile-worker's batching, as documented on `GraphileConfig.WorkerOptions` in 0.17.3
 * (`node_modules/graphile-worker/dist/index.d.ts`, and https://worker.graphile.org/docs/performance#batching):
 * `localQueue.size` (jobs the pool fetches and locks at once, served to its workers without a round
 * trip; default -1, off), `completeJobBatchDelay` and `failJobBatchDelay` (milliseconds to wait for
 * more completions or failures to write in one statement; default -1, off; "even setting this to
 * `0` can be impactful"). They are preset options only (`preset.worker`), with no legacy equivalent.
 */
const batching: GraphileConfig.Preset = {
  worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 }
}

/** The jobs left: graphile-worker's table is `_private_jobs` (since schema 000016; `jobs` is a view on it). */
const pending = `SELECT count(*)::int AS n FROM graphile_worker._private_jobs`

/**
 * One round over `bodies`: the runner started and listening (untimed); then, timed, every body queued
 * as a job and every job's task done and its job deleted. Returns the seconds, and the attempts that
 * failed (thrown by the task, retried by graphile-worker after its backoff, within the round).
 */
export const round = async (options: RoundOptions): Promise<{ seconds: number; failed: number }> => {
  const { bodies, connectionString } = options
  const target = new URL(options.url)
  const http = new Pool(target.origin, { connections: 64, pipelining: 1, connect: { ca: options.ca } })
  let delivered = 0
  let failed = 0
  let allDelivered: () => void = () => {}
  const everyDelivery = new Promise<void>((resolve) => (allDelivered = resolve))
  const taskList: TaskList = {
    deliver: async (payload) => {
      try {
        const body = Buffer.from((payload as { body: string }).body, "utf8")
        const status = await Floor.signAndPost(http, target.pathname, body, options.secret, "graphile-worker")
        if (status !== 200) throw new Error(`graphile-worker: status ${status}`)
      } catch (error) {
        failed++
        throw error
      }
      if (++delivered === bodies.length) allDelivered()
    }
  }
  const utils = await makeWorkerUtils({ connectionString, logger: silent })
  const events: WorkerEvents = new EventEmitter()
  const listening = new Promise<WorkerEventMap["pool:listen:success"]>((resolve) =>
    events.once("pool:listen:success", resolve)
  )
  const runner = await run({
    connectionString,
    taskList,
    concurrency: options.concurrency,
    // The documented advice for the pool: "`10` or `concurrentJobs + 2`, whichever is larger".
    maxPoolSize: Math.max(10, options.concurrency + 2),
    noHandleSignals: true,
    logger: silent,
    events,
    ...(options.batched ? { preset: batching } : {})
  }).catch(async (error: unknown) => {
    await utils.release()
    await http.close()
    throw error
  })
  let timer: NodeJS.Timeout | undefined
  // A job that keeps failing is retried for hours: fail the round, never hang.
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`graphile-worker: ${delivered} of ${bodies.length} delivered after 300 s`)),
      300_000
    )
  })
  try {
    // Ready once its LISTEN is done: the event comes just before it is sent on that client, and
    // this query is answered after it.
    const { client } = await Promise.race([listening, stalled])
    await client.query("SELECT 1")
    const start = performance.now()
    for (let from = 0; from < bodies.length; from += CHUNK) {
      await utils.addJobs(
        bodies.slice(from, from + CHUNK).map((body) => ({ identifier: "deliver", payload: { body } }))
      )
    }
    await Promise.race([everyDelivery, stalled])
    // Each task done; its job is deleted once graphile-worker has recorded the completion.
    while ((await utils.withPgClient((pg) => pg.query<{ n: number }>(pending))).rows[0]!.n > 0) {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 5)), stalled])
    }
    const seconds = (performance.now() - start) / 1000
    // Before the runner stops: its connections' server processes end with it, and their CPU with them.
    options.onDrained?.()
    return { seconds, failed }
  } finally {
    clearTimeout(timer)
    await runner.stop()
    await utils.release()
    await http.close()
  }
}
