/**
 * `npm run bench -- audit`: `cobro audit verify` and `cobro audit rebuild` over a generated log of
 * AUDIT_BENCH_EVENTS events (default 1,000,000) and a tenth of it, on the PostgreSQL of
 * `DATABASE_URL` (or the default), against a floor: a plain `pg` server-side cursor reading the
 * same rows in the same order. Each phase runs in its own process so that its peak memory (max RSS)
 * is its own. Prints JSON lines and writes them to `bench/results/audit.json`.
 *
 * The log: 1 stream in 5 is a merchant's (created, both integrations activated, a terminal bound
 * and enabled: the events the `api_keys` read model writes on), made by the real use cases once
 * and copied with fresh ids and key hashes; the others are 5-event streams no read model reads.
 * Rows are inserted in batches with their hash chain computed by `HashChain`, as the append does.
 */
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as EventStore from "@cobro/domain/EventStore"
import * as Aggregate from "@cobro/domain/Aggregate"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as HashChain from "@cobro/store-pg/HashChain"
import * as Migrations from "@cobro/store-pg/Migrations"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Projection from "@cobro/store-pg/Projection"
import * as Verify from "@cobro/store-pg/Verify"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import * as Ids from "../src/Ids.js"
import * as NodeKeyVault from "../src/NodeKeyVault.js"
import * as Store from "../src/Store.js"

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const totalEvents = Number(process.env["AUDIT_BENCH_EVENTS"] ?? 1_000_000)
const self = fileURLToPath(import.meta.url)
const root = Path.resolve(Path.dirname(self), "..", "..", "..")

const withDatabase = (name: string) => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const onServer = async (statement: string) => {
  const client = new Pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

// ---------------------------------------------------------------------------------------------
// The generated log
// ---------------------------------------------------------------------------------------------

interface Template {
  readonly type: string
  readonly schemaVersion: number
  readonly text: string
  readonly metadata: unknown
}

/** A merchant's first five events, as the real use cases write them. */
const merchantTemplate = (): Promise<{
  merchantId: string
  hashes: Array<string>
  events: Array<Template>
}> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const created = yield* MerchantAdmin.createMerchant("Bench", { actor: "bench" })
      yield* MerchantAdmin.bindTerminal(
        created.merchantId,
        { model: "SMART_PRO", serial: TerminalSerial.make("SP-1"), name: "Caja" },
        { actor: "bench" }
      )
      yield* MerchantAdmin.setTerminalApiEnabled(created.merchantId, TerminalSerial.make("SP-1"), true, {
        actor: "bench"
      })
      const store = yield* EventStore.EventStore
      const events = yield* store.readStream(Aggregate.streamId(Merchant.Merchant, created.merchantId))
      const state = yield* MerchantAdmin.getMerchant(created.merchantId)
      return {
        merchantId: created.merchantId as string,
        hashes: [...Merchant.identityKeyHashes(state)] as Array<string>,
        events: events.map((e) => ({
          type: e.type,
          schemaVersion: e.schemaVersion,
          text: JSON.stringify(e.data),
          metadata: e.metadata
        }))
      }
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          InMemoryEventStore.layer,
          Ids.layerRandom,
          NodeKeyVault.layer(Redacted.make(randomBytes(32)))
        )
      )
    )
  )

const hex = (text: string) => createHash("sha256").update(text).digest("hex")

/** Inserts `total` events with valid hash chains and stream heads, in batches of one statement each. */
const generate = async (url: string, total: number) => {
  const template = await merchantTemplate()
  const client = new Pg.Client({ connectionString: url })
  await client.connect()
  const batch = 10_000
  const started = performance.now()
  const base = Date.parse("2026-01-01T00:00:00.000Z")
  let written = 0
  let streamIndex = 0
  try {
    while (written < total) {
      const cols = {
        stream: [] as Array<string>,
        version: [] as Array<number>,
        id: [] as Array<string>,
        type: [] as Array<string>,
        schema: [] as Array<number>,
        data: [] as Array<string>,
        metadata: [] as Array<string>,
        at: [] as Array<string>,
        prev: [] as Array<string>,
        hash: [] as Array<string>
      }
      const heads: Array<[string, number, string]> = []
      while (cols.stream.length < batch && written + cols.stream.length < total) {
        const n = streamIndex++
        const merchant = n % 5 === 0
        const merchantId = `MER_bench${n}`
        const streamId = merchant ? `Merchant-${merchantId}` : `Bench-${n}`
        const length = Math.min(5, total - written - cols.stream.length)
        let prev = HashChain.genesis
        for (let v = 1; v <= length; v++) {
          let type: string
          let schemaVersion = 1
          let text: string
          let metadata: unknown = { actor: "bench" }
          if (merchant) {
            const t = template.events[v - 1]!
            type = t.type
            schemaVersion = t.schemaVersion
            metadata = t.metadata
            text = t.text.replaceAll(template.merchantId, merchantId)
            for (const h of template.hashes) text = text.replaceAll(h, hex(`${n}:${h}`))
          } else {
            type = "BenchRecorded"
            text = JSON.stringify({ _tag: "BenchRecorded", n, v, note: "an event no read model reads" })
          }
          const recordedAt = new Date(base + written + cols.stream.length)
          const eventId = randomUUID()
          const data = JSON.parse(text)
          const hash = HashChain.hashEvent(prev, {
            streamId,
            streamVersion: v,
            eventId,
            type,
            schemaVersion,
            data,
            metadata: HashChain.normalizeJson(metadata),
            recordedAt
          })
          cols.stream.push(streamId)
          cols.version.push(v)
          cols.id.push(eventId)
          cols.type.push(type)
          cols.schema.push(schemaVersion)
          cols.data.push(text)
          cols.metadata.push(JSON.stringify(metadata))
          cols.at.push(recordedAt.toISOString())
          cols.prev.push(prev)
          cols.hash.push(hash)
          prev = hash
        }
        heads.push([streamId, length, prev])
      }
      await client.query("BEGIN")
      await client.query(
        `INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
           recorded_at, prev_hash, hash)
         SELECT * FROM unnest($1::text[], $2::int[], $3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[],
           $8::timestamptz[], $9::text[], $10::text[])`,
        [
          cols.stream,
          cols.version,
          cols.id,
          cols.type,
          cols.schema,
          cols.data,
          cols.metadata,
          cols.at,
          cols.prev,
          cols.hash
        ]
      )
      await client.query(
        `INSERT INTO cobro_streams (stream_id, version, last_hash)
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[])`,
        [heads.map((h) => h[0]), heads.map((h) => h[1]), heads.map((h) => h[2])]
      )
      await client.query("COMMIT")
      written += cols.stream.length
    }
    await client.query("VACUUM ANALYZE cobro_events")
    await client.query("VACUUM ANALYZE cobro_streams")
  } finally {
    await client.end()
  }
  return { events: written, seconds: (performance.now() - started) / 1000 }
}

// ---------------------------------------------------------------------------------------------
// Phases, each in its own process
// ---------------------------------------------------------------------------------------------

interface PhaseResult {
  readonly phase: string
  readonly events: number
  readonly seconds: number
  readonly events_per_s: number
  /** Resident memory when the phase began (the runtime and modules loaded), MB. */
  readonly base_rss_mb: number
  /** The process's peak resident memory, MB. */
  readonly peak_rss_mb: number
  /** The highest heap in use sampled during the phase, MB. */
  readonly peak_heap_mb: number
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

/** A plain `pg` server-side cursor over the rows, `FETCH 1000` at a time, nothing done with them. */
const floor = async (url: string, order: string): Promise<number> => {
  const client = new Pg.Client({ connectionString: url })
  await client.connect()
  let rows = 0
  try {
    await client.query("BEGIN")
    await client.query(
      `DECLARE audit_floor NO SCROLL CURSOR FOR SELECT global_position, stream_id, stream_version, event_id, type,
         schema_version, data, metadata, recorded_at, transaction_id::text AS transaction_xid, prev_hash, hash
       FROM cobro_events ORDER BY ${order}`
    )
    while (true) {
      const page = await client.query("FETCH 1000 FROM audit_floor")
      rows += page.rowCount ?? 0
      if ((page.rowCount ?? 0) < 1000) break
    }
    await client.query("COMMIT")
  } finally {
    await client.end()
  }
  return rows
}

const runPhase = async (phase: string, url: string): Promise<PhaseResult> => {
  const baseRss = process.memoryUsage().rss
  let peakHeap = process.memoryUsage().heapUsed
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
  }, 20)
  const started = performance.now()
  let events: number
  const layer = PgEventStore.layer.pipe(
    Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 3 }))
  )
  switch (phase) {
    case "floor-stream-order":
      events = await floor(url, "stream_id, stream_version")
      break
    case "floor-commit-order":
      events = await floor(url, "transaction_id, global_position")
      break
    case "verify":
      events = await Effect.runPromise(
        Effect.flatMap(Verify.verifyWith(), (report) =>
          report.breaks.length === 0 && report.checkpoints.length === 0
            ? Effect.succeed(report.events)
            : Effect.die(
                new Error(`the generated log does not verify: ${JSON.stringify(report.breaks.slice(0, 3))}`)
              )
        ).pipe(Effect.provide(layer))
      )
      break
    case "rebuild":
      events = await Effect.runPromise(
        Projection.rebuildAll(Store.projections).pipe(Effect.provide(layer)) as Effect.Effect<number>
      )
      break
    default:
      throw new Error(`unknown phase ${phase}`)
  }
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
  return {
    phase,
    events,
    seconds: Math.round(seconds * 100) / 100,
    events_per_s: Math.round(events / seconds),
    base_rss_mb: mb(baseRss),
    peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
    peak_heap_mb: mb(peakHeap)
  }
}

const inChild = (phase: string, url: string): PhaseResult => {
  const out = execFileSync(process.execPath, ["--import", "tsx", self, "--phase", phase, "--url", url], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20
  })
  return JSON.parse(out.trim().split("\n").pop()!) as PhaseResult
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const main = async () => {
  const sizes = [totalEvents, Math.max(1000, Math.round(totalEvents / 10))]
  const results: Array<Record<string, unknown>> = []
  for (const size of sizes) {
    const database = `cobro_bench_audit_${randomBytes(4).toString("hex")}`
    await onServer(`CREATE DATABASE ${database}`)
    const url = withDatabase(database)
    try {
      await Effect.runPromise(
        Migrations.run.pipe(
          Effect.zipRight(Effect.forEach(Store.projections, Projection.setup, { discard: true })),
          Effect.provide(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 })),
          Effect.orDie
        )
      )
      const generated = await generate(url, size)
      console.error(`generated ${generated.events} events in ${generated.seconds.toFixed(1)} s`)
      inChild("floor-stream-order", url) // warm-up: the table into the cache
      const phases = ["floor-stream-order", "verify", "floor-commit-order", "rebuild"].map((phase) => {
        const result = inChild(phase, url)
        console.error(JSON.stringify(result))
        return result
      })
      const by = (phase: string) => phases.find((p) => p.phase === phase)!
      for (const [phase, floorPhase] of [
        ["verify", "floor-stream-order"],
        ["rebuild", "floor-commit-order"]
      ] as const) {
        const p = by(phase)
        const f = by(floorPhase)
        const row = {
          suite: "audit",
          log_events: size,
          phase,
          events_per_s: p.events_per_s,
          floor: floorPhase,
          floor_events_per_s: f.events_per_s,
          ratio_to_floor: Math.round((p.events_per_s / f.events_per_s) * 1000) / 1000,
          seconds: p.seconds,
          peak_rss_mb: p.peak_rss_mb,
          base_rss_mb: p.base_rss_mb,
          peak_heap_mb: p.peak_heap_mb,
          floor_peak_rss_mb: f.peak_rss_mb
        }
        results.push(row)
        console.log(JSON.stringify(row))
      }
    } finally {
      await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
    }
  }
  const out = Path.join(root, "bench", "results", "audit.json")
  Fs.mkdirSync(Path.dirname(out), { recursive: true })
  Fs.writeFileSync(out, results.map((r) => JSON.stringify(r)).join("\n") + "\n")
  console.log(`\nwritten to ${Path.relative(root, out)}`)
}

const argv = process.argv.slice(2)
const phaseAt = argv.indexOf("--phase")
if (phaseAt >= 0) {
  const result = await runPhase(argv[phaseAt + 1]!, argv[argv.indexOf("--url") + 1]!)
  console.log(JSON.stringify(result))
  process.exit(0)
} else {
  await main()
}
