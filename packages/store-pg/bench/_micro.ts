import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Pg from "pg"
import * as HashChain from "../src/HashChain.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = "postgres://postgres@127.0.0.1:5432/test"
const data = { _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }
const main = async () => {
  const admin = new Pg.Client({ connectionString: baseUrl }); await admin.connect()
  const database = `cobro_micro_${randomBytes(4).toString("hex")}`
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(baseUrl); url.pathname = `/${database}`
  const runtime = ManagedRuntime.make(PgEventStore.layerMigrated.pipe(Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url.toString()), maxConnections: 10 }))))
  const store = await runtime.runPromise(EventStore.EventStore)
  const sql = await runtime.runPromise(SqlClient.SqlClient)
  const pool = new Pg.Pool({ connectionString: url.toString(), max: 10 })
  const stmt = "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)"
  const params = () => {
    const stream = `s-${randomUUID()}`
    const eventId = randomUUID()
    const recordedAt = new Date()
    const metadata = { requestId: "bench" }
    const [before, after] = HashChain.canonicalEventAround({ streamId: stream, eventId, type: "BenchEvent", schemaVersion: 1, data, metadata, recordedAt })
    return [stream, "NoStream", 0, recordedAt.toISOString(), [eventId], ["BenchEvent"], [1], [JSON.stringify(data)], [JSON.stringify(metadata)], [before], [after], false]
  }
  const cases: Record<string, () => Promise<unknown>> = {
    "pg cobro_append": () => pool.query(stmt, params()),
    "sql.unsafe cobro_append": () => runtime.runPromise(sql.unsafe(stmt, params())),
    "sql.unsafe+span cobro_append": () => runtime.runPromise(Effect.withSpan(sql.unsafe(stmt, params()), "x")),
    "pg SELECT 1": () => pool.query("SELECT 1"),
    "runPromise(void)": () => runtime.runPromise(Effect.void),
    "runPromise(sql.unsafe SELECT 1)": () => runtime.runPromise(sql.unsafe("SELECT 1")),
    "runPromise(Effect.fn span + sql)": () => runtime.runPromise(Effect.withSpan(sql.unsafe("SELECT 1"), "x")),
    "store.append NoStream": () => runtime.runPromise(store.append(`s-${randomUUID()}`, [{ eventId: randomUUID(), type: "BenchEvent", schemaVersion: 1, data, metadata: { requestId: "bench" } }], EventStore.ExpectedVersion.NoStream())),
  }
  const n = Number(process.env["N"] ?? 2000)
  for (let round = 0; round < 2; round++) for (const [name, f] of Object.entries(cases).filter(([k]) => process.env["CASE"] === undefined || k.startsWith(process.env["CASE"]!))) {
    for (let i = 0; i < 200; i++) await f()
    const c0 = process.cpuUsage(); const t0 = performance.now()
    for (let i = 0; i < n; i++) await f()
    const c = process.cpuUsage(c0); const t = performance.now() - t0
    console.log(`${name.padEnd(36)} cpu ${((c.user + c.system) / n).toFixed(0).padStart(5)} us/op   wall ${(1000 * t / n).toFixed(0).padStart(5)} us/op`)
  }
  await pool.end(); await runtime.dispose()
  await new Promise((r) => setTimeout(r, 200))
  await admin.query(`DROP DATABASE ${database} WITH (FORCE)`); await admin.end()
}
main()
