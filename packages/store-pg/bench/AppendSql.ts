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
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as Settings from "../../../bench/Settings.js"
import * as HashChain from "../src/HashChain.js"
import * as Migrations from "../src/Migrations.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as BenchEvent from "./BenchEvent.js"

const writers = 8
const ops = Settings.number("OPS", 250)
const rounds = Settings.number("ROUNDS", 3)
const setupSql = `CREATE TABLE y_events (LIKE cobro_events INCLUDING ALL)`
const cte = `WITH head AS (
  INSERT INTO cobro_streams (stream_id, version, last_hash) VALUES ($1, 1, $8) ON CONFLICT (stream_id) DO NOTHING RETURNING version
), ins AS (
  INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at, prev_hash, hash)
  SELECT $1, 1, $2::uuid, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz, '', $8 FROM head RETURNING global_position
) SELECT (SELECT global_position FROM ins) AS position`

type First = ReturnType<typeof BenchEvent.first>

/** The experiments' parameters $1 to $7: a new stream's first event, column by column. */
const columns = (event: First) => [
  event.streamId,
  event.eventId,
  event.type,
  event.schemaVersion,
  JSON.stringify(event.data),
  JSON.stringify(event.metadata),
  event.recordedAt.toISOString()
]

/** Its link in the hash chain, as the first of its stream. */
const firstHash = (event: First) => HashChain.hashEvent("", { ...event, streamVersion: 1 })

const variants: Record<string, (pool: Pg.Pool, stream: string) => Promise<unknown>> = {
  raw: (pool, stream) => pool.query(BenchEvent.rawInsert(stream)),
  cobro_append: (pool, stream) => pool.query(BenchEvent.cobroAppend(stream)),
  cobro_append_new: (pool, stream) => {
    const event = BenchEvent.first(stream)
    return pool.query(
      "SELECT cobro_append_new($1, $2::uuid, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz, $8, $9) AS position",
      [...columns(event), ...HashChain.canonicalEventAround(event)]
    )
  },
  cte_named: (pool, stream) => {
    const event = BenchEvent.first(stream)
    return pool.query({ name: "cte_new", text: cte, values: [...columns(event), firstHash(event)] })
  },
  events_only: (pool, stream) => {
    const event = BenchEvent.first(stream)
    return pool.query(
      "INSERT INTO y_events (stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at, prev_hash, hash) VALUES ($1, 1, $2, $3, $4, $5, $6, $7, '', $8) RETURNING global_position",
      [...columns(event), firstHash(event)]
    )
  }
}

const main = () =>
  Database.scoped("append-sql", async (database) => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.provide(
          Migrations.run,
          PostgresClient.layer({ url: Redacted.make(database.url), maxConnections: 2 })
        )
      )
    )
    const pool = new Pg.Pool({ connectionString: database.url, max: 10 })
    pool.on("error", () => {})
    try {
      await pool.query(BenchEvent.rawTable)
      await pool.query(setupSql)
      const only = Settings.list("ONLY", Object.keys(variants).join(","))
      const tallies = new Map(
        Object.keys(variants)
          .filter((name) => only.includes(name))
          .map((name) => [name, new Rounds.Tally()])
      )
      for (const name of tallies.keys())
        for (let i = 0; i < 30; i++) await variants[name]!(pool, `warm-${name}-${i}-${randomUUID()}`)
      for (let r = 0; r < rounds; r++)
        for (const [name, tally] of tallies) {
          const tag = randomBytes(3).toString("hex")
          const before = Cpu.snapshot(database.name)
          const start = performance.now()
          await Promise.all(
            Array.from({ length: writers }, async (_, w) => {
              for (let i = 0; i < ops; i++) await variants[name]!(pool, `s-${tag}-${w}-${i}`)
            })
          )
          const seconds = (performance.now() - start) / 1000
          tally.add(writers * ops, seconds, Cpu.used(before, Cpu.snapshot(database.name)))
        }
      const raw = tallies.get("raw")
      for (const [name, tally] of tallies) {
        const cpu = tally.cpuPerOperation()
        console.log(
          `${name.padEnd(16)} ${String(Math.round(tally.rate())).padStart(6)}/s (${tally.perRound.map(Math.round).join(",")})  ratio ${raw ? (tally.rate() / raw.rate()).toFixed(2) : "-"}  client ${cpu.node}us  server ${cpu.postgres}us`
        )
      }
    } finally {
      await pool.end()
    }
  })

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
