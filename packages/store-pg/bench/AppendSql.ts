/**
 * A side measurement for `docs/benchmarks.md`: the append's SQL alone, called with plain `pg` (no
 * Effect), 8 concurrent writers appending one event to a new stream, in alternating rounds on one
 * fresh database; events/s, and CPU per append of this client and of the server (backends of the
 * database plus background processes, from /proc). `cte_named` and `events_only` are experiments,
 * not store code. `ONLY=raw,cobro_append_new ROUNDS=4 npx tsx packages/store-pg/bench/AppendSql.ts`
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as HashChain from "../src/HashChain.js"
import * as Migrations from "../src/Migrations.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const writers = 8
const ops = Number(process.env["OPS"] ?? 250)
const rounds = Number(process.env["ROUNDS"] ?? 3)
const data = { _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }
const metadata = { requestId: "bench" }
const serverCpu = (database: string) => {
  let total = 0
  for (const pid of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      const close = stat.lastIndexOf(")")
      if (stat.slice(stat.indexOf("(") + 1, close) !== "postgres") continue
      const title = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
      if (/\(\d+\)|\[local\]/.test(title) && !title.includes(` ${database} `)) continue
      const f = stat.slice(close + 2).split(" ")
      total += (Number(f[11]) + Number(f[12])) / 100
    } catch {}
  }
  return total
}
const ev = (stream: string) => {
  const eventId = randomUUID()
  const recordedAt = new Date()
  const fields = {
    streamId: stream,
    eventId,
    type: "BenchEvent",
    schemaVersion: 1,
    data,
    metadata,
    recordedAt
  }
  return { eventId, recordedAt, fields }
}
const setupSql = `CREATE TABLE y_events (LIKE cobro_events INCLUDING ALL)`
const cte = `WITH head AS (
  INSERT INTO cobro_streams (stream_id, version, last_hash) VALUES ($1, 1, $8) ON CONFLICT (stream_id) DO NOTHING RETURNING version
), ins AS (
  INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at, prev_hash, hash)
  SELECT $1, 1, $2::uuid, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz, '', $8 FROM head RETURNING global_position
) SELECT (SELECT global_position FROM ins) AS position`

const variants: Record<string, (pool: Pg.Pool, stream: string) => Promise<unknown>> = {
  raw: (pool, stream) =>
    pool.query(
      "INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [stream, 1, randomUUID(), "BenchEvent", 1, JSON.stringify(data), JSON.stringify(metadata)]
    ),
  cobro_append: (pool, stream) => {
    const { eventId, recordedAt, fields } = ev(stream)
    const [before, after] = HashChain.canonicalEventAround(fields)
    return pool.query(
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
  cobro_append_new: (pool, stream) => {
    const { eventId, recordedAt, fields } = ev(stream)
    const [before, after] = HashChain.canonicalEventAround(fields)
    return pool.query(
      "SELECT cobro_append_new($1, $2::uuid, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz, $8, $9) AS position",
      [
        stream,
        eventId,
        "BenchEvent",
        1,
        JSON.stringify(data),
        JSON.stringify(metadata),
        recordedAt.toISOString(),
        before,
        after
      ]
    )
  },
  cte_named: (pool, stream) => {
    const { eventId, recordedAt, fields } = ev(stream)
    return pool.query({
      name: "cte_new",
      text: cte,
      values: [
        stream,
        eventId,
        "BenchEvent",
        1,
        JSON.stringify(data),
        JSON.stringify(metadata),
        recordedAt.toISOString(),
        HashChain.hashEvent("", { ...fields, streamVersion: 1 })
      ]
    })
  },
  events_only: (pool, stream) => {
    const { eventId, recordedAt, fields } = ev(stream)
    return pool.query(
      "INSERT INTO y_events (stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at, prev_hash, hash) VALUES ($1, 1, $2, $3, $4, $5, $6, $7, '', $8) RETURNING global_position",
      [
        stream,
        eventId,
        "BenchEvent",
        1,
        JSON.stringify(data),
        JSON.stringify(metadata),
        recordedAt.toISOString(),
        HashChain.hashEvent("", { ...fields, streamVersion: 1 })
      ]
    )
  }
}

const main = async () => {
  const admin = new Pg.Client({ connectionString: baseUrl })
  await admin.connect()
  const database = `cobro_var_${randomBytes(4).toString("hex")}`
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(baseUrl)
  url.pathname = `/${database}`
  await Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Migrations.run,
        PostgresClient.layer({ url: Redacted.make(url.toString()), maxConnections: 2 })
      )
    )
  )
  const pool = new Pg.Pool({ connectionString: url.toString(), max: 10 })
  pool.on("error", () => {})
  await pool.query(`CREATE TABLE raw_events (
      global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
      event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
      metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`)
  await pool.query(setupSql)
  const names = Object.keys(variants).filter(
    (n) => process.env["ONLY"] === undefined || process.env["ONLY"].split(",").includes(n)
  )
  for (const name of names)
    for (let i = 0; i < 30; i++) await variants[name]!(pool, `warm-${name}-${i}-${randomUUID()}`)
  const acc: Record<string, { n: number; s: number; c: number; sv: number; rates: Array<number> }> = {}
  for (let r = 0; r < rounds; r++)
    for (const name of names) {
      const tag = randomBytes(3).toString("hex")
      const c0 = process.cpuUsage()
      const s0 = serverCpu(database)
      const t0 = performance.now()
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < ops; i++) await variants[name]!(pool, `s-${tag}-${w}-${i}`)
        })
      )
      const t = (performance.now() - t0) / 1000
      const c = process.cpuUsage(c0)
      const sv = serverCpu(database) - s0
      const a = (acc[name] ??= { n: 0, s: 0, c: 0, sv: 0, rates: [] })
      a.n += writers * ops
      a.s += t
      a.c += c.user + c.system
      a.sv += sv * 1e6
      a.rates.push(Math.round((writers * ops) / t))
    }
  for (const name of names) {
    const a = acc[name]!
    const raw = acc["raw"]
    console.log(
      `${name.padEnd(16)} ${String(Math.round(a.n / a.s)).padStart(6)}/s (${a.rates.join(",")})  ratio ${raw ? (a.n / a.s / (raw.n / raw.s)).toFixed(2) : "-"}  client ${Math.round(a.c / a.n)}us  server ${Math.round(a.sv / a.n)}us`
    )
  }
  await pool.end()
  await admin.query(`DROP DATABASE ${database} WITH (FORCE)`)
  await admin.end()
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
