/**
 * A side measurement for `docs/benchmarks.md`: CPU time per append, client (this Node process) and
 * server (every `postgres` process, from /proc), for W1 with 8 writers. CPU per operation holds up
 * better than events/s on a shared machine. `MODE=raw|cobro|batch|pgfn|emmett OPS=500 npx tsx
 * packages/store-pg/bench/AppendCost.ts`. `batch`: the same one-event appends to new streams, `BATCH`
 * (default 100) per `appendBatch` call; its figures are per event, like the others.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import { getPostgreSQLEventStore } from "@event-driven-io/emmett-postgresql"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as HashChain from "../src/HashChain.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const modes = (process.env["MODE"] ?? "raw,cobro,pgfn,emmett").split(",")
const ops = Number(process.env["OPS"] ?? 400)
const writers = Number(process.env["WRITERS"] ?? 8)
const data = { _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }
const metadata = { requestId: "bench" }
const ticks = 100 // USER_HZ
const batchSize = Number(process.env["BATCH"] ?? 100)

/** CPU seconds used so far by the backends of `database` and by the server's background processes. */
const serverCpu = (database: string) => {
  let total = 0
  for (const pid of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      const close = stat.lastIndexOf(")")
      const comm = stat.slice(stat.indexOf("(") + 1, close)
      if (comm !== "postgres") continue
      const title = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
      // Backends ("postgres: 15/main: user database 127.0.0.1(port) ..."): only ours. Background
      // processes (WAL writer, checkpointer) count, whoever made them work.
      const backend = /\(\d+\)|\[local\]/.test(title)
      if (backend && !title.includes(` ${database} `)) continue
      const fields = stat.slice(close + 2).split(" ")
      total += (Number(fields[11]) + Number(fields[12])) / ticks
    } catch {
      // gone
    }
  }
  return total
}

/** How to append (one call: `perCall` events, to streams named after `stream`), and how to close. */
const makeAppend = async (
  mode: string,
  url: string
): Promise<[(stream: string) => Promise<unknown>, () => Promise<void>, perCall?: number]> => {
  switch (mode) {
    case "raw": {
      const pool = new Pg.Pool({ connectionString: url, max: 10 })
      await pool.query(`CREATE TABLE raw_events (
        global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
        event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
        metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`)
      return [
        (stream) =>
          pool.query(
            "INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [stream, 1, randomUUID(), "BenchEvent", 1, JSON.stringify(data), JSON.stringify(metadata)]
          ),
        () => pool.end()
      ]
    }
    case "cobro":
    case "batch":
    case "effsql":
    case "reserved":
    case "pgfn": {
      const runtime = ManagedRuntime.make(
        PgEventStore.layerMigrated.pipe(
          Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
        )
      )
      const store = await runtime.runPromise(EventStore.EventStore)
      if (mode === "cobro") {
        return [
          (stream) =>
            runtime.runPromise(
              store.append(
                stream,
                [{ eventId: randomUUID(), type: "BenchEvent", schemaVersion: 1, data, metadata }],
                EventStore.ExpectedVersion.NoStream()
              )
            ),
          () => runtime.dispose()
        ]
      }
      if (mode === "batch") {
        return [
          (stream) =>
            runtime.runPromise(
              store.appendBatch(
                Array.from({ length: batchSize }, (_, k) => ({
                  streamId: `${stream}-${k}`,
                  events: [{ eventId: randomUUID(), type: "BenchEvent", schemaVersion: 1, data, metadata }],
                  expected: EventStore.ExpectedVersion.NoStream()
                }))
              )
            ),
          () => runtime.dispose(),
          batchSize
        ]
      }
      const sql = await runtime.runPromise(SqlClient.SqlClient)
      const pool = new Pg.Pool({ connectionString: url, max: 10 })
      const scope = await runtime.runPromise(Scope.make())
      const conns =
        mode === "reserved"
          ? await runtime.runPromise(
              Effect.all(Array.from({ length: 8 }, () => Scope.extend(sql.reserve, scope)))
            )
          : []
      let next = 0
      const run = (text: string, params: ReadonlyArray<unknown>) =>
        mode === "pgfn"
          ? pool.query(text, params as Array<unknown>)
          : mode === "reserved"
            ? runtime.runPromise(conns[next++ % 8]!.execute(text, params, undefined))
            : runtime.runPromise(sql.unsafe(text, params))
      return [
        (stream) => {
          const eventId = randomUUID()
          const recordedAt = new Date()
          const [before, after] = HashChain.canonicalEventAround({
            streamId: stream,
            eventId,
            type: "BenchEvent",
            schemaVersion: 1,
            data,
            metadata,
            recordedAt
          })
          return run(
            "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)",
            [
              stream,
              "NoStream",
              0,
              recordedAt.toISOString(),
              [eventId],
              ["BenchEvent"],
              [1],
              [JSON.stringify(data)],
              [JSON.stringify(metadata)],
              [before],
              [after],
              false
            ]
          )
        },
        async () => {
          await runtime.runPromise(Scope.close(scope, Exit.void))
          await pool.end()
          await runtime.dispose()
        }
      ]
    }
    case "emmett": {
      const store = getPostgreSQLEventStore(url)
      await store.schema.migrate()
      return [
        (stream) =>
          store.appendToStream(stream, [{ type: "BenchEvent", data, metadata }], {
            expectedStreamVersion: "STREAM_DOES_NOT_EXIST"
          }),
        () => store.close()
      ]
    }
  }
  throw new Error(`unknown mode ${mode}`)
}

const main = async () => {
  const admin = new Pg.Client({ connectionString: baseUrl })
  await admin.connect()
  for (const mode of modes) {
    const database = `cobro_cost_${randomBytes(4).toString("hex")}`
    await admin.query(`CREATE DATABASE ${database}`)
    const url = new URL(baseUrl)
    url.pathname = `/${database}`
    const [append, close, perCall = 1] = await makeAppend(mode, url.toString())
    const tag = randomBytes(3).toString("hex")
    for (let i = 0; i < 50; i += perCall) await append(`warm-${tag}-${i}`)
    const client0 = process.cpuUsage()
    const server0 = serverCpu(database)
    const start = performance.now()
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < ops; i += perCall) await append(`s-${tag}-${w}-${i}`)
      })
    )
    const seconds = (performance.now() - start) / 1000
    const client = process.cpuUsage(client0)
    const server = serverCpu(database) - server0
    const n = writers * Math.ceil(ops / perCall) * perCall
    console.log(
      JSON.stringify({
        mode,
        per_s: Math.round(n / seconds),
        client_us: Math.round((client.user + client.system) / n),
        client_user_us: Math.round(client.user / n),
        server_us: Math.round((server * 1e6) / n)
      })
    )
    let perTransaction: number | undefined
    if (mode === "cobro" || mode === "batch") {
      const check = new Pg.Client({ connectionString: url.toString() })
      await check.connect()
      const { rows } = await check.query(
        "SELECT count(*)::float / count(DISTINCT transaction_id) AS r FROM cobro_events WHERE stream_id LIKE $1",
        [`s-${tag}-%`]
      )
      perTransaction = Number(Number(rows[0].r).toFixed(2))
      await check.end()
    }
    if (perTransaction !== undefined) console.log(`  events per transaction: ${perTransaction}`)
    await close()
    await new Promise((resolve) => setTimeout(resolve, 200))
    await admin.query(`DROP DATABASE ${database} WITH (FORCE)`)
  }
  await admin.end()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
