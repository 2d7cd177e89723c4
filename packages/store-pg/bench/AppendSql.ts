/**
 * A side measurement for `docs/benchmarks.md`: the append's SQL alone, called with plain `pg` (no
 * Effect), 8 concurrent writers appending one event to a new stream, against the raw insert of the
 * store benchmark, in alternating rounds on one fresh database. `npx tsx packages/store-pg/bench/AppendSql.ts`
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as HashChain from "../src/HashChain.js"
import * as Migrations from "../src/Migrations.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const writers = Number(process.env["WRITERS"] ?? 8)
const ops = Number(process.env["OPS"] ?? 250)
const rounds = Number(process.env["ROUNDS"] ?? 3)
const only = process.env["ONLY"]?.split(",")

const withDatabase = (name: string) => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const payload = { _tag: "BenchEvent", amount: 1, note: "a bench event of modest size" }
const metadata = { requestId: "bench" }

const appendParams = (stream: string, expected: string) => {
  const eventId = randomUUID()
  const recordedAt = new Date()
  const [before, after] = HashChain.canonicalEventAround({
    streamId: stream,
    eventId,
    type: "BenchEvent",
    schemaVersion: 1,
    data: payload,
    metadata,
    recordedAt
  })
  return [
    stream,
    expected,
    0,
    recordedAt.toISOString(),
    [eventId],
    ["BenchEvent"],
    [1],
    [JSON.stringify(payload)],
    [JSON.stringify(metadata)],
    [before],
    [after],
    false
  ]
}

const variants: Record<string, (pool: Pg.Pool, stream: string) => Promise<unknown>> = {
  raw: (pool, stream) =>
    pool.query(
      "INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [stream, 1, randomUUID(), "BenchEvent", 1, JSON.stringify(payload), JSON.stringify(metadata)]
    ),
  cobro_append: (pool, stream) =>
    pool.query(
      "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)",
      appendParams(stream, "NoStream")
    ),
  cobro_append_any: (pool, stream) =>
    pool.query(
      "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)",
      appendParams(stream, "Any")
    ),
  // Emmett's protocol: BEGIN, the function, COMMIT on one pooled connection.
  cobro_append_txn: async (pool, stream) => {
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      await client.query(
        "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)",
        appendParams(stream, "NoStream")
      )
      await client.query("COMMIT")
    } finally {
      client.release()
    }
  }
}

const extraVariants = (
  process.env["EXTRA"] === undefined ? {} : await import(process.env["EXTRA"]).then((m) => m.variants)
) as Record<string, (pool: Pg.Pool, stream: string) => Promise<unknown>>
Object.assign(variants, extraVariants)

const main = async () => {
  const admin = new Pg.Client({ connectionString: baseUrl })
  await admin.connect()
  const database = `cobro_sql_${randomBytes(4).toString("hex")}`
  await admin.query(`CREATE DATABASE ${database}`)
  const url = withDatabase(database)
  try {
    await Effect.runPromise(
      Effect.scoped(
        Effect.provide(
          Effect.flatMap(SqlClient.SqlClient, () => Migrations.run),
          PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 })
        )
      )
    )
    const pool = new Pg.Pool({ connectionString: url, max: 10 })
    pool.on("error", () => {})
    await pool.query(`CREATE TABLE raw_events (
      global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
      event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
      metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`)
    if (process.env["SETUP"] !== undefined) {
      const setup = await import(process.env["SETUP"])
      await setup.setup(pool)
    }
    const names = Object.keys(variants).filter((name) => only === undefined || only.includes(name))
    for (const name of names) for (let i = 0; i < 30; i++) await variants[name]!(pool, `warm-${name}-${i}`)
    const results: Record<string, Array<number>> = {}
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const tag = randomBytes(3).toString("hex")
        const start = performance.now()
        await Promise.all(
          Array.from({ length: writers }, async (_, w) => {
            for (let i = 0; i < ops; i++) await variants[name]!(pool, `s-${tag}-${w}-${i}`)
          })
        )
        const perSecond = Math.round((writers * ops) / ((performance.now() - start) / 1000))
        ;(results[name] ??= []).push(perSecond)
      }
    }
    for (const name of names) {
      const ratios = results[name]!.map((v, i) => (v / results["raw"]![i]!).toFixed(2))
      console.log(`${name.padEnd(22)} ${results[name]!.join(" / ").padEnd(24)} vs raw: ${ratios.join(" / ")}`)
    }
    await pool.end()
  } finally {
    for (let i = 0; i < 50; i++) {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database}`)
        break
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    await admin.end()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
