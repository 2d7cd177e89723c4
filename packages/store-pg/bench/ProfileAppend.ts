// Temporary: W1 x 8 against cobro only, for `node --cpu-prof`.
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = "postgres://postgres@127.0.0.1:5432/test"
const main = async () => {
  const admin = new Pg.Client({ connectionString: baseUrl })
  await admin.connect()
  const database = `cobro_prof_${randomBytes(4).toString("hex")}`
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(baseUrl)
  url.pathname = `/${database}`
  const runtime = ManagedRuntime.make(
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url.toString()), maxConnections: 10 }))
    )
  )
  const store = await runtime.runPromise(EventStore.EventStore)
  const pool = new Pg.Pool({ connectionString: url.toString(), max: 10 })
  await pool.query(`CREATE TABLE raw_events (
    global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
    event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
    metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`)
  const rawAppend = (stream: string) => pool.query(
        `INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
        [stream, 1, randomUUID(), "BenchEvent", 1, JSON.stringify({ _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }), '{"requestId":"bench"}'])
  const cobroAppend = (stream: string) =>
    runtime.runPromise(
      Effect.asVoid(
        store.append(
          stream,
          [{ eventId: randomUUID(), type: "BenchEvent", schemaVersion: 1, data: { _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }, metadata: { requestId: "bench" } }],
          EventStore.ExpectedVersion.NoStream()
        )
      )
    )
  const append = process.env["MODE"] === "raw" ? rawAppend : cobroAppend
  for (let i = 0; i < 50; i++) await append(`warm-${i}`)
  const ops = Number(process.env["OPS"] ?? 500)
  const start = performance.now()
  await Promise.all(Array.from({ length: 8 }, async (_, w) => { for (let i = 0; i < ops; i++) await append(`s-${w}-${i}`) }))
  console.log("ev/s", Math.round((8 * ops) / ((performance.now() - start) / 1000)))
  await pool.end()
  await runtime.dispose()
  await new Promise((r) => setTimeout(r, 300))
  await admin.query(`DROP DATABASE ${database} WITH (FORCE)`)
  await admin.end()
}
main()
