/**
 * The gauges an on-call reads first, sampled from the database and the process when metrics are
 * read (a scrape of `/metrics`, an OTLP export): the webhook queue's depth and the age of its oldest
 * due delivery, the terminal pushes not yet answered, each worker's state and how far behind the
 * log's head it is, the events no signed checkpoint covers yet, and the pool's connections.
 */
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgPool from "@cobro/store-pg/PgPool"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Supervisor from "./Supervisor.js"
import * as TerminalPusher from "./TerminalPusher.js"

/** Deliveries neither delivered nor abandoned. */
export const webhookQueueDepth = Metric.gauge("cobro.webhook.queue.depth", {
  description: "Webhook deliveries not yet delivered nor abandoned."
})

/** Now minus the due time of the oldest delivery that is due; 0 when none is. */
export const webhookOldestDueAge: Metric.Metric.Gauge<number> = Metric.gauge("cobro.webhook.oldest_due.age", {
  description: "Age of the oldest webhook delivery that is due, in seconds (0 when none is)."
}).pipe(Metric.tagged("unit", "s"))

/** Terminal checkouts whose push the terminal has not answered. */
export const terminalPushesPending = Metric.gauge("cobro.terminal.pushes.pending", {
  description: "Terminal checkouts whose push the terminal has not answered yet."
})

/** 1 while a background worker runs, 0 while it is down (failing and restarting). */
export const workerUp = Metric.gauge("cobro.worker.up", {
  description: "1 while the background worker runs, 0 while it is down."
})

/** The log's head position minus a log follower's position. */
export const workerLag = Metric.gauge("cobro.worker.lag_events", {
  description: "The log's head position minus the position the worker has reached."
})

/** Events of the log that no signed checkpoint covers yet. */
export const unsignedEvents = Metric.gauge("cobro.log.unsigned_events", {
  description: "Events of the log not yet covered by a signed checkpoint."
})

/**
 * The pool's connections by `state` (`used`, `idle`): OpenTelemetry's `db.client.connections.usage`
 * (its earlier name: the current `db.client.connection.count` reads in Prometheus as a histogram's
 * `_count`, which `promtool check metrics` refuses).
 */
export const poolConnections = Metric.gauge("db.client.connections.usage", {
  description: "Connections of the database pool, by state."
})

/** OpenTelemetry's `db.client.connections.pending_requests`: requests waiting for a connection. */
export const poolPending = Metric.gauge("db.client.connections.pending_requests", {
  description: "Requests waiting for a connection of the database pool."
})

const usedConnections = Metric.tagged(poolConnections, "state", "used")
const idleConnections = Metric.tagged(poolConnections, "state", "idle")

/** The Merkle tree's worker, named as the supervisor names it. */
export const TREE_WORKER = "Log checkpoints"

const set = (gauge: Metric.Metric.Gauge<number>, value: number) =>
  Effect.sync(() => gauge.unsafeUpdate(value, []))

const byWorker = new Map<
  string,
  { readonly up: Metric.Metric.Gauge<number>; readonly lag: Metric.Metric.Gauge<number> }
>()

const gaugesOf = (worker: string) => {
  let gauges = byWorker.get(worker)
  if (gauges === undefined) {
    gauges = {
      up: Metric.tagged(workerUp, "worker", worker),
      lag: Metric.tagged(workerLag, "worker", worker)
    }
    byWorker.set(worker, gauges)
  }
  return gauges
}

/** Each log follower's distance from the head: the read models' runners and the Merkle tree. */
const lags = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ readonly name: string; readonly lag: string }>`
    WITH head AS (SELECT coalesce(max(global_position), 0) AS position FROM cobro_events)
    SELECT c.name, (head.position - c.global_position)::text AS lag FROM cobro_checkpoints c, head
    UNION ALL
    SELECT ${TREE_WORKER}, (head.position - t.global_position)::text FROM cobro_tree_head t, head`
)

/**
 * The events past the last signed checkpoint: the tree's size plus the events it has not taken in
 * yet, minus the largest tree signed.
 */
const unsigned = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ readonly unsigned: string }>`
    SELECT (t.size
      + (SELECT count(*) FROM cobro_events e WHERE e.global_position > t.global_position)
      - coalesce((SELECT max(tree_size) FROM cobro_tree_checkpoints), 0))::text AS unsigned
    FROM cobro_tree_head t`
)

/** A gauge whose source fails is left as it was, and the failure logged: a scrape still answers. */
const sampled = <E, R>(name: string, effect: Effect.Effect<unknown, E, R>) =>
  Effect.catchAllCause(effect, (cause) => Effect.logWarning(`metrics: ${name} could not be sampled`, cause))

/** The pool's connections, read before the sampling's own statements take any. */
const samplePool = (pool: Option.Option<PgPool.PgPool["Type"]>) =>
  Effect.sync(() => {
    if (Option.isNone(pool)) return
    usedConnections.unsafeUpdate(pool.value.totalCount - pool.value.idleCount, [])
    idleConnections.unsafeUpdate(pool.value.idleCount, [])
    poolPending.unsafeUpdate(pool.value.waitingCount, [])
  })

/** Reads every gauge's source and sets it. */
export const sample: Effect.Effect<void, never, SqlClient.SqlClient | Supervisor.Supervisor> = Effect.gen(
  function* () {
    const supervisor = yield* Supervisor.Supervisor
    yield* samplePool(yield* Effect.serviceOption(PgPool.PgPool))
    yield* Effect.all(
      [
        sampled(
          "the webhook queue",
          Effect.flatMap(PgDeliveryQueue.backlog, (backlog) =>
            Effect.zipRight(
              set(webhookQueueDepth, backlog.depth),
              set(webhookOldestDueAge, backlog.oldestDueAgeSeconds)
            )
          )
        ),
        sampled(
          "the terminal pushes",
          Effect.flatMap(TerminalPusher.pendingPushes, (pending) => set(terminalPushesPending, pending))
        ),
        sampled(
          "the workers' lag",
          Effect.flatMap(lags, (rows) =>
            Effect.sync(() => {
              for (const row of rows) gaugesOf(row.name).lag.unsafeUpdate(Number(row.lag), [])
            })
          )
        ),
        sampled(
          "the unsigned events",
          Effect.flatMap(unsigned, (rows) => set(unsignedEvents, Number(rows[0]?.unsigned ?? 0)))
        ),
        Effect.flatMap(supervisor.health, (workers) =>
          Effect.sync(() => {
            for (const worker of workers) {
              gaugesOf(worker.name).up.unsafeUpdate(Option.isNone(worker.downSince) ? 1 : 0, [])
            }
          })
        )
      ],
      { concurrency: "unbounded", discard: true }
    )
  }
)
