/**
 * A side measurement for `docs/benchmarks.md`: CPU time per append, client (this Node process) and
 * server (the backends of its database and the server's background processes, `Cpu.snapshot`), for
 * W1 with 8 writers. CPU per operation holds up
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
import { randomBytes } from "node:crypto"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as Settings from "../../../bench/Settings.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as BenchEvent from "./BenchEvent.js"

const modes = Settings.list("MODE", "raw,cobro,pgfn,emmett")
const ops = Settings.number("OPS", 400)
const writers = Settings.number("WRITERS", 8)
const batchSize = Settings.number("BATCH", 100)

/** How to append (one call: `perCall` events, to streams named after `stream`), and how to close. */
const makeAppend = async (
  mode: string,
  url: string
): Promise<[(stream: string) => Promise<unknown>, () => Promise<void>, perCall?: number]> => {
  switch (mode) {
    case "raw": {
      const pool = new Pg.Pool({ connectionString: url, max: 10 })
      await pool.query(BenchEvent.rawTable)
      return [(stream) => pool.query(BenchEvent.rawInsert(stream)), () => pool.end()]
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
              store.append(stream, BenchEvent.newEvents(1), EventStore.ExpectedVersion.NoStream())
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
                  events: BenchEvent.newEvents(1),
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
      const run = ({ text, values }: BenchEvent.Statement) =>
        mode === "pgfn"
          ? pool.query(text, values)
          : mode === "reserved"
            ? runtime.runPromise(conns[next++ % 8]!.execute(text, values, undefined))
            : runtime.runPromise(sql.unsafe(text, values))
      return [
        (stream) => run(BenchEvent.cobroAppend(stream)),
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
          store.appendToStream(
            stream,
            [{ type: BenchEvent.type, data: BenchEvent.data(1), metadata: BenchEvent.metadata }],
            { expectedStreamVersion: "STREAM_DOES_NOT_EXIST" }
          ),
        () => store.close()
      ]
    }
  }
  throw new Error(`unknown mode ${mode}`)
}

const main = async () => {
  for (const mode of modes) {
    const database = await Database.create("append-cost")
    const [append, close, perCall = 1] = await makeAppend(mode, database.url)
    const tag = randomBytes(3).toString("hex")
    for (let i = 0; i < 50; i += perCall) await append(`warm-${tag}-${i}`)
    const before = Cpu.snapshot(database.name)
    const start = performance.now()
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < ops; i += perCall) await append(`s-${tag}-${w}-${i}`)
      })
    )
    const seconds = (performance.now() - start) / 1000
    const used = Cpu.used(before, Cpu.snapshot(database.name))
    const n = writers * Math.ceil(ops / perCall) * perCall
    console.log(
      JSON.stringify({
        mode,
        per_s: Math.round(n / seconds),
        client_us: Math.round(used.nodeUs / n),
        client_user_us: Math.round(used.nodeUserUs / n),
        server_us: Math.round(used.postgresUs / n)
      })
    )
    if (mode === "cobro" || mode === "batch") {
      const check = new Pg.Client({ connectionString: database.url })
      await check.connect()
      const { rows } = await check.query(
        "SELECT count(*)::float / count(DISTINCT transaction_id) AS r FROM cobro_events WHERE stream_id LIKE $1",
        [`s-${tag}-%`]
      )
      await check.end()
      console.log(`  events per transaction: ${Number(Number(rows[0].r).toFixed(2))}`)
    }
    await close()
    await Database.drop(database.name)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
