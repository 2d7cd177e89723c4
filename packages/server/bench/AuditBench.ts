/**
 * `npm run bench -- audit [--events N] [--rounds R] [--only walks,tree,proofs,offline]
 * [--tree-seconds S] [--samples K]`: the audit tools and the log's Merkle tree, on the PostgreSQL of
 * `DATABASE_URL` (or the default). `--events` (default `AUDIT_BENCH_EVENTS`, else 1,000,000) sizes
 * every generated log; `--rounds` (default 3) the alternating rounds of `tree` and `offline`. Prints
 * JSON lines, then a summary table with the targets; writes the lines to `bench/results/audit.json`.
 *
 * - **walks**: `cobro audit verify` and `cobro audit rebuild` over a generated log of N events and a
 *   tenth of it, against a floor: a plain `pg` server-side cursor reading the same rows in the same
 *   order. Each phase runs in its own process so that its peak memory (max RSS) is its own.
 * - **tree**: the store bench's W1 × 8 (8 writers, each appending one event to a new stream, 50
 *   appends each, the same event) repeated back to back for `--tree-seconds` (default 10) per round,
 *   (a) alone and (b) with `PgTransparencyLog.run` (the server's worker, its defaults) running in the
 *   same process and pool; an unmeasured warm-up round, then rounds a b, b a, ... Also the CPU per
 *   append of this process and of the database's PostgreSQL processes, the worker's own time in
 *   `extendOnce` per event (from its spans), and afterwards that the tree holds every event and
 *   the worker's latest checkpoint verifies against the tree's root.
 * - **proofs**: N events bulk-inserted (`generate_series`, fake chain hashes), the tree built by
 *   `PgTransparencyLog.extend`; then checkpoint signing (`Checkpoint.signWith` alone, and
 *   `PgTransparencyLog.sign` end to end), and `--samples` (default 1,000) inclusion proofs of random
 *   events and consistency proofs between random sizes (RFC 9162): every inclusion proof and
 *   one consistency proof in ten verified against `rootAt`, a failure ends the bench.
 * - **offline**: an export file of N events with real hash chains (10,000 streams, the events of
 *   real terminal, link and online payments as templates) and a checkpoint of it; `OfflineVerify
 *   .verifyFile` against the floor, a streaming read that `JSON.parse`s every line, and a raw read of
 *   the lines, in rotating order.
 *
 * The walks' log: 1 stream in 5 is a merchant's (created, both integrations activated, a terminal
 * bound and enabled: the events the `api_keys` read model writes on), made by the real use cases once
 * and copied with fresh ids and key hashes; the others are 5-event streams no read model reads.
 * Rows are inserted in batches with their hash chain computed by `HashChain`, as the append does.
 */
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as EventStore from "@cobro/domain/EventStore"
import * as Aggregate from "@cobro/domain/Aggregate"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as Fixtures from "@cobro/domain/testing/WebhookFixtures"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as Export from "@cobro/store-pg/Export"
import * as HashChain from "@cobro/store-pg/HashChain"
import * as MerkleTree from "@cobro/store-pg/MerkleTree"
import * as Migrations from "@cobro/store-pg/Migrations"
import * as OfflineVerify from "@cobro/store-pg/OfflineVerify"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgTransparencyLog from "@cobro/store-pg/PgTransparencyLog"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Projection from "@cobro/store-pg/Projection"
import * as Verify from "@cobro/store-pg/Verify"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import * as Cpu from "../../../bench/Cpu.js"
import * as Database from "../../../bench/Database.js"
import * as JsonLines from "../../../bench/JsonLines.js"
import * as Percentile from "../../../bench/Percentile.js"
import * as Ratio from "../../../bench/Ratio.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as SpanClock from "../../../bench/SpanClock.js"
import * as BenchEvent from "../../store-pg/bench/BenchEvent.js"
import * as Ids from "../src/Ids.js"
import * as NodeKeyVault from "../src/NodeKeyVault.js"
import * as Store from "../src/Store.js"

const argv = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? argv[at + 1] : undefined
}
const numberFlag = (name: string, fallback: number) => {
  const value = flag(name)
  const n = value === undefined ? fallback : Number(value.replaceAll("_", ""))
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name}: a positive number, not ${value}`)
  return n
}

const totalEvents = Math.round(numberFlag("events", Number(process.env["AUDIT_BENCH_EVENTS"] ?? 1_000_000)))
const rounds = Math.round(numberFlag("rounds", 3))
const treeSeconds = numberFlag("tree-seconds", 10)
const samples = Math.round(numberFlag("samples", 1000))
const parts = new Set((flag("only") ?? "walks,tree,proofs,offline").split(","))
const self = fileURLToPath(import.meta.url)
const root = Path.resolve(Path.dirname(self), "..", "..", "..")

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
// Shared helpers of the tree, proofs and offline parts
// ---------------------------------------------------------------------------------------------

/** One row of the summary table. */
interface SummaryRow {
  readonly measurement: string
  readonly figure: string
  readonly target: string
  readonly met: "met" | "missed" | "—"
}

const results = JsonLines.make<Record<string, unknown>>("audit")
const summary: Array<SummaryRow> = []

const emit = (row: Record<string, unknown>) => results.emit({ suite: "audit", ...row })

const round2 = (n: number) => Math.round(n * 100) / 100
const round3 = (n: number) => Math.round(n * 1000) / 1000
const thousands = (n: number) => Math.round(n).toLocaleString("en-US")

// ---------------------------------------------------------------------------------------------
// tree: W1 × 8 without and with the tree's worker
// ---------------------------------------------------------------------------------------------

/** W1 × 8 as the store bench runs it: 8 concurrent writers, each 50 appends of one event to a new stream. */
const W1_WRITERS = 8
const W1_PER_WRITER = 50

const treeCost = async () => {
  const database = await Database.create("audit-tree")
  // The store bench's Cobro subject: the store's pool of 10, nobody listening.
  const runtime = ManagedRuntime.make(
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(database.url), maxConnections: 10 }))
    )
  )
  try {
    const store = await runtime.runPromise(EventStore.EventStore)
    const append = (stream: string) =>
      runtime.runPromise(
        Effect.asVoid(store.append(stream, BenchEvent.newEvents(1), EventStore.ExpectedVersion.NoStream()))
      )
    const tag = randomBytes(3).toString("hex")
    const id = (...parts: Array<unknown>) => `bench-${tag}-${parts.join("-")}`
    const signer = Checkpoint.signer(new Uint8Array(randomBytes(32)), "cobro.bench/audit-tree")
    const clock = SpanClock.make()
    const countEvents = () =>
      runtime
        .runPromise(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM cobro_events`
          )
        )
        .then((rows) => Number(rows[0]!.n))
    /** Extends the tree until it holds every event (another transaction of the cluster may hold xmin back). */
    const catchUp = async () => {
      const target = await countEvents()
      for (let i = 0; i < 300; i++) {
        const size = await runtime.runPromise(PgTransparencyLog.extend())
        if (size >= target) return size
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error(`the tree did not catch up with the log's ${target} events in 30 s`)
    }

    // Warm-up, as the store bench: connections, prepared plans, JIT; then one unmeasured unit.
    for (let i = 0; i < 50; i++) await append(id("warm", i))
    const unit = (label: string, latencies: Array<number>) =>
      Promise.all(
        Array.from({ length: W1_WRITERS }, async (_, w) => {
          for (let i = 0; i < W1_PER_WRITER; i++) {
            const t = performance.now()
            await append(id(label, w, i))
            latencies.push(performance.now() - t)
          }
        })
      )
    await unit("warm-unit", [])

    type Mode = "a" | "b"
    const tallies = { a: new Rounds.Tally(), b: new Rounds.Tally() }
    const tree = { added: 0, appended: 0, extendMs: 0, extendCalls: 0, signMs: 0, signs: 0 }
    // Round -1 warms both modes up (the worker's code, the tree tables' first pages, the first
    // autovacuum of a fresh database) and is not counted; then the rounds alternate a b, b a, ...
    for (let round = -1; round < rounds; round++) {
      const warm = round < 0
      const duration = warm ? Math.min(3, treeSeconds) : treeSeconds
      for (const mode of Rounds.rotate<Mode>(["a", "b"], round)) {
        // Both modes start alike: the tree holding every event so far, as a running server's would.
        const sizeBefore = await catchUp()
        clock.reset()
        const worker =
          mode === "b"
            ? runtime.runFork(Effect.withTracer(PgTransparencyLog.run({ signer }), clock.tracer))
            : undefined
        const tally = tallies[mode]
        const cpuBefore = Cpu.snapshot(database.name)
        const start = performance.now()
        let events = 0
        let units = 0
        while (performance.now() - start < duration * 1000) {
          await unit(`${mode}-${round}-${units++}`, warm ? [] : tally.latencies)
          events += W1_WRITERS * W1_PER_WRITER
        }
        const seconds = (performance.now() - start) / 1000
        const used = Cpu.used(cpuBefore, Cpu.snapshot(database.name))
        if (worker !== undefined) await runtime.runPromise(Fiber.interrupt(worker))
        if (warm) continue
        tally.add(events, seconds, used)
        const row: Record<string, unknown> = {
          part: "tree",
          workload: "W1 x 8",
          mode: mode === "a" ? "without tree" : "with tree worker",
          round,
          events,
          seconds: round2(seconds),
          events_per_s: Math.round(events / seconds)
        }
        if (mode === "b") {
          const sizeAfter = await runtime.runPromise(PgTransparencyLog.treeSize)
          const extend = clock.take("PgTransparencyLog.extendOnce")
          const sign = clock.take("PgTransparencyLog.sign")
          const added = sizeAfter - sizeBefore
          if (added === 0) throw new Error(`the worker placed no leaf in round ${round}`)
          tree.added += added
          tree.appended += events
          tree.extendMs += extend.ms
          tree.extendCalls += extend.count
          tree.signMs += sign.ms
          tree.signs += sign.count
          Object.assign(row, {
            tree_leaves_added: added,
            extend_once_calls: extend.count,
            extend_once_ms: round2(extend.ms),
            extend_once_us_per_event: added === 0 ? null : round2((extend.ms * 1000) / added),
            checkpoints_signed: sign.count,
            sign_ms: round2(sign.ms)
          })
        }
        emit(row)
      }
    }

    // The work was done: every event in the tree after a last extend, and the worker's checkpoints verify.
    const events = await countEvents()
    const size = await catchUp()
    if (size !== events) throw new Error(`the tree holds ${size} leaves, the log ${events} events`)
    // How far apart the worker signed (default: every 10,000 events); gaps across a round without
    // the worker are larger, the tree having been extended without signing.
    const signedSizes = await runtime
      .runPromise(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<{
              size: string
            }>`SELECT tree_size::text AS size FROM cobro_tree_checkpoints ORDER BY tree_size`
        )
      )
      .then((rows) => rows.map((r) => Number(r.size)))
    const gaps = Percentile.sorted(signedSizes.slice(1).map((size, i) => size - signedSizes[i]!))
    const latest = await runtime.runPromise(PgTransparencyLog.latestCheckpoint)
    const opened = Option.map(latest, (c) =>
      Checkpoint.openWithVerifierKey(c.note, Checkpoint.verifierKeyOf(signer))
    )
    if (Option.isNone(opened) || opened.value === undefined)
      throw new Error("the worker signed no verifiable checkpoint")
    const signedRoot = await runtime.runPromise(PgTransparencyLog.rootAt(opened.value.size))
    if (!MerkleTree.equals(signedRoot, opened.value.root))
      throw new Error("the latest checkpoint's root is not the tree's")
    // The worker's cadence, checked (not a target): within a round (10 s, under `every`'s 60 s) it
    // signs once `everyEvents` have joined, so no two checkpoints are closer; and `latestCheckpoint`
    // is the largest signed.
    const largest = signedSizes[signedSizes.length - 1] ?? 0
    const cadenceHolds =
      (gaps[0] ?? Infinity) >= PgTransparencyLog.defaults.everyEvents && opened.value.size === largest
    if (!cadenceHolds) {
      console.error(
        `tree: the worker signed checkpoints ${gaps[0]} events apart (default every ${PgTransparencyLog.defaults.everyEvents}) ` +
          `and latestCheckpoint is ${opened.value.size}, the largest signed ${largest}`
      )
    }

    const rate = (mode: Mode) => Math.round(tallies[mode].rate())
    const cpuPerEvent = (mode: Mode) => tallies[mode].cpuPerOperation()
    const ratio = rate("b") / rate("a")
    const perRound = Ratio.perRound(tallies.b.perRound, tallies.a.perRound)
    const extendUsPerEvent = (tree.extendMs * 1000) / Math.max(1, tree.added)
    const latency = (mode: Mode) => ({
      p50_ms: tallies[mode].latencyMs(50),
      p99_ms: tallies[mode].latencyMs(99)
    })
    emit({
      part: "tree",
      workload: "W1 x 8",
      rounds,
      round_seconds: treeSeconds,
      without_tree_events_per_s: rate("a"),
      with_tree_events_per_s: rate("b"),
      ratio_with_to_without: round3(ratio),
      per_round_ratios: perRound,
      without_tree_latency: latency("a"),
      with_tree_latency: latency("b"),
      cpu_us_per_event_without: { node: cpuPerEvent("a").node, postgres: cpuPerEvent("a").postgres },
      cpu_us_per_event_with: { node: cpuPerEvent("b").node, postgres: cpuPerEvent("b").postgres },
      tree_leaves_added_by_worker: tree.added,
      events_appended_with_worker: tree.appended,
      extend_once_calls: tree.extendCalls,
      extend_once_us_per_event: round2(extendUsPerEvent),
      extend_once_share_of_wall_time: round3(tree.extendMs / 1000 / tallies.b.seconds),
      checkpoints_signed: tree.signs,
      checkpoint_gap_events: {
        min: gaps[0] ?? null,
        median: Percentile.of(gaps, 50),
        max: gaps[gaps.length - 1] ?? null
      },
      sign_ms_mean: tree.signs === 0 ? null : round2(tree.signMs / tree.signs),
      latest_checkpoint_size: opened.value.size,
      largest_checkpoint_size: largest,
      final_tree_size: size,
      log_events: events
    })
    summary.push(
      {
        measurement: `tree: W1 × 8 with the tree worker / without (${rounds}+${rounds} rounds of ${treeSeconds} s)`,
        figure: `${round3(ratio)} (${thousands(rate("b"))} vs ${thousands(rate("a"))} appends/s; per round ${perRound}); CPU per append: Node ${cpuPerEvent("b").node} vs ${cpuPerEvent("a").node} µs, PostgreSQL ${cpuPerEvent("b").postgres} vs ${cpuPerEvent("a").postgres} µs`,
        target: "≥ 0.90 (tree costs ≤ 10 %)",
        met: ratio >= 0.9 ? "met" : "missed"
      },
      {
        measurement: "tree: the worker's extendOnce, wall time per event",
        figure: `${round2(extendUsPerEvent)} µs (${tree.extendCalls} calls placed ${thousands(tree.added)} of the ${thousands(tree.appended)} events of its rounds; ${tree.signs} checkpoints, ${round2(tree.signMs / Math.max(1, tree.signs))} ms each); tree = log after a final extend (${thousands(size)})`,
        target: "reported",
        met: "—"
      },
      {
        measurement: "tree: the worker's cadence (check)",
        figure: `checkpoints ${thousands(gaps[0] ?? 0)} to ${thousands(gaps[gaps.length - 1] ?? 0)} events apart (median ${thousands(Percentile.of(gaps, 50))}); latestCheckpoint ${thousands(opened.value.size)}, the largest signed ${thousands(largest)}`,
        target: `≥ ${thousands(PgTransparencyLog.defaults.everyEvents)} apart; latest = largest`,
        met: cadenceHolds ? "met" : "missed"
      }
    )
  } finally {
    await runtime.dispose().catch(() => {})
    await Database.drop(database.name)
  }
}

// ---------------------------------------------------------------------------------------------
// proofs: a tree of N events built by extend; checkpoint signing; inclusion and consistency proofs
// ---------------------------------------------------------------------------------------------

const proofs = async () => {
  const database = await Database.create("audit-proofs")
  const runtime = ManagedRuntime.make(
    PostgresClient.layer({ url: Redacted.make(database.url), maxConnections: 4 })
  )
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)
  const sql = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
    run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text, params)))
  try {
    await run(Migrations.run)
    // The log: N rows in a few statements, their chain hashes fake (the tree only reads `hash`).
    const insertStarted = performance.now()
    const chunk = 250_000
    for (let from = 0; from < totalEvents; from += chunk) {
      await sql(
        `INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
           recorded_at, prev_hash, hash)
         SELECT 'Bench-' || (i / 100), i % 100 + 1, md5(i::text)::uuid, 'BenchRecorded', 1,
           jsonb_build_object('_tag', 'BenchRecorded', 'n', i), '{"requestId":"bench"}'::jsonb,
           timestamptz '2026-01-01' + i * interval '1 millisecond', '', encode(sha256(i::text::bytea), 'hex')
         FROM generate_series($1::bigint, $2::bigint) AS i`,
        [from, Math.min(totalEvents, from + chunk) - 1]
      )
    }
    await sql("VACUUM ANALYZE cobro_events")
    const insertSeconds = (performance.now() - insertStarted) / 1000
    console.error(`proofs: ${totalEvents} rows inserted in ${insertSeconds.toFixed(1)} s`)

    // The tree, built by extend (batches of DEFAULT_BATCH, one transaction each), timed.
    let buildMs = 0
    let size = 0
    const cpuBefore = Cpu.snapshot(database.name)
    for (let attempt = 0; size < totalEvents && attempt < 300; attempt++) {
      const t = performance.now()
      size = await run(PgTransparencyLog.extend())
      buildMs += performance.now() - t
      if (size < totalEvents) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const buildCpu = Cpu.used(cpuBefore, Cpu.snapshot(database.name))
    if (size !== totalEvents) throw new Error(`the tree holds ${size} of ${totalEvents} events`)
    const buildRate = totalEvents / (buildMs / 1000)
    const buildCpuPerEvent = {
      node: round2(buildCpu.nodeUs / totalEvents),
      postgres: round2(buildCpu.postgresUs / totalEvents)
    }
    emit({
      part: "proofs",
      phase: "build tree (PgTransparencyLog.extend)",
      events: totalEvents,
      batch: PgTransparencyLog.DEFAULT_BATCH,
      seconds: round2(buildMs / 1000),
      events_per_s: Math.round(buildRate),
      cpu_us_per_event: buildCpuPerEvent,
      insert_seconds: round2(insertSeconds)
    })
    const root = await run(PgTransparencyLog.rootAt(size))

    // Signing: the note alone, then PgTransparencyLog.sign end to end (each a fresh row).
    const signer = Checkpoint.signer(new Uint8Array(randomBytes(32)), "cobro.bench/audit-proofs")
    const checkpoint = { origin: signer.origin, size, root }
    for (let i = 0; i < 200; i++) Checkpoint.signWith(signer, checkpoint)
    const noteTimes: Array<number> = []
    const noteStarted = performance.now()
    for (let i = 0; i < 5000 && (i < 200 || performance.now() - noteStarted < 2000); i++) {
      const t = performance.now()
      Checkpoint.signWith(signer, checkpoint)
      noteTimes.push((performance.now() - t) * 1000)
    }
    const signTimes: Array<number> = []
    for (let i = 0; i < 55; i++) {
      await sql("DELETE FROM cobro_tree_checkpoints")
      const t = performance.now()
      const signed = await run(PgTransparencyLog.sign(signer, { catchUp: false }))
      if (i >= 5) signTimes.push(performance.now() - t)
      const opened = Checkpoint.openWithVerifierKey(signed.note, Checkpoint.verifierKeyOf(signer))
      if (opened === undefined || opened.size !== size || !MerkleTree.equals(opened.root, root)) {
        throw new Error("PgTransparencyLog.sign signed something else than the tree")
      }
    }
    const notes = Percentile.sorted(noteTimes)
    const signs = Percentile.sorted(signTimes)
    const noteMedian = Percentile.of(notes, 50)
    const signMedian = Percentile.of(signs, 50)
    emit({
      part: "proofs",
      phase: "Checkpoint.signWith (the key made once, as the server signs)",
      iterations: notes.length,
      median_us: round2(noteMedian),
      mean_us: round2(notes.reduce((s, v) => s + v, 0) / notes.length),
      p99_us: round2(Percentile.of(notes, 99))
    })
    emit({
      part: "proofs",
      phase: "PgTransparencyLog.sign (catchUp: false)",
      tree_size: size,
      iterations: signs.length,
      median_ms: round2(signMedian),
      p99_ms: round2(Percentile.of(signs, 99)),
      max_ms: round2(signs[signs.length - 1] ?? 0)
    })

    // Inclusion proofs of random events in the whole tree, each verified against rootAt(size).
    const positions = Array.from({ length: samples }, () => 1 + Math.floor(Math.random() * totalEvents))
    const ids = await sql<{ event_id: string; global_position: string }>(
      "SELECT event_id::text AS event_id, global_position::text AS global_position FROM cobro_events WHERE global_position = ANY($1::bigint[])",
      [positions.map(String)]
    )
    const byPosition = new Map(ids.map((r) => [r.global_position, r.event_id]))
    for (let i = 0; i < 50; i++)
      await run(PgTransparencyLog.inclusionProof(byPosition.get(String(positions[i]))!, size))
    const inclusionTimes: Array<number> = []
    const inclusionSizes: Array<number> = []
    for (const position of positions) {
      const eventId = byPosition.get(String(position))!
      const t = performance.now()
      const proof = await run(PgTransparencyLog.inclusionProof(eventId, size))
      inclusionTimes.push(performance.now() - t)
      inclusionSizes.push(proof.hashes.length)
      const leaf = PgTransparencyLog.leafOf(proof.eventHash)
      if (!MerkleTree.verifyInclusion(proof.leafIndex, size, leaf, proof.hashes, root)) {
        throw new Error(`the inclusion proof of ${eventId} (leaf ${proof.leafIndex}) does not verify`)
      }
    }

    // Consistency proofs between random sizes; a sample verified against rootAt of both sizes.
    const pairs = Array.from({ length: samples }, () => {
      const a = 1 + Math.floor(Math.random() * size)
      const b = 1 + Math.floor(Math.random() * size)
      return [Math.min(a, b), Math.max(a, b)] as const
    })
    const consistencyTimes: Array<number> = []
    const consistencySizes: Array<number> = []
    let verified = 0
    for (const [i, [from, to]] of pairs.entries()) {
      const t = performance.now()
      const proof = await run(PgTransparencyLog.consistencyProof(from, to))
      consistencyTimes.push(performance.now() - t)
      consistencySizes.push(proof.hashes.length)
      if (i % 10 === 0 || i < 20) {
        const [first, second] = await Promise.all([
          run(PgTransparencyLog.rootAt(from)),
          run(PgTransparencyLog.rootAt(to))
        ])
        if (!MerkleTree.verifyConsistency(from, to, first, second, proof.hashes)) {
          throw new Error(`the consistency proof from ${from} to ${to} does not verify`)
        }
        verified++
      }
    }
    const describeProofs = (
      phase: string,
      times: ReadonlyArray<number>,
      sizes: ReadonlyArray<number>,
      checked: number
    ) => {
      const t = Percentile.sorted(times)
      const s = Percentile.sorted(sizes)
      const row = {
        part: "proofs",
        phase,
        tree_size: size,
        proofs: times.length,
        verified: checked,
        median_ms: round3(Percentile.of(t, 50)),
        p99_ms: round3(Percentile.of(t, 99)),
        hashes_median: Percentile.of(s, 50),
        hashes_max: s[s.length - 1] ?? 0,
        bytes_median: Percentile.of(s, 50) * 32
      }
      emit(row)
      return row
    }
    const inclusion = describeProofs(
      "inclusion proof (random events)",
      inclusionTimes,
      inclusionSizes,
      samples
    )
    const consistency = describeProofs(
      "consistency proof (random sizes)",
      consistencyTimes,
      consistencySizes,
      verified
    )
    summary.push(
      {
        measurement: `proofs: tree built by extend from ${thousands(size)} rows`,
        figure: `${thousands(buildRate)} events/s (${round2(buildMs / 1000)} s; CPU per event: Node ${buildCpuPerEvent.node} µs, PostgreSQL ${buildCpuPerEvent.postgres} µs; rows inserted in ${round2(insertSeconds)} s)`,
        target: "reported",
        met: "—"
      },
      {
        measurement: "signing: Checkpoint.signWith alone",
        figure: `${round2(noteMedian)} µs median (${notes.length} iterations)`,
        target: "reported",
        met: "—"
      },
      {
        measurement: `signing: PgTransparencyLog.sign end to end at ${thousands(size)}`,
        figure: `${round2(signMedian)} ms median, p99 ${round2(Percentile.of(signs, 99))} ms (${signs.length})`,
        target: "reported",
        met: "—"
      },
      {
        measurement: `proofs: inclusion at ${thousands(size)} (${samples} random events, all verified)`,
        figure: `median ${inclusion.median_ms} ms, p99 ${inclusion.p99_ms} ms; ${inclusion.hashes_median} hashes (${inclusion.bytes_median} B), max ${inclusion.hashes_max}`,
        target: `~${Math.ceil(Math.log2(size))} hashes`,
        met: inclusion.hashes_max <= Math.ceil(Math.log2(size)) ? "met" : "missed"
      },
      {
        measurement: `proofs: consistency at ${thousands(size)} (${samples} random pairs, ${verified} verified)`,
        figure: `median ${consistency.median_ms} ms, p99 ${consistency.p99_ms} ms; ${consistency.hashes_median} hashes (${consistency.bytes_median} B), max ${consistency.hashes_max}`,
        target: "reported",
        met: "—"
      }
    )
  } finally {
    await runtime.dispose().catch(() => {})
    await Database.drop(database.name)
  }
}

// ---------------------------------------------------------------------------------------------
// offline: verifying an export file against a checkpoint, against reading it
// ---------------------------------------------------------------------------------------------

/** The events of real payments, as the deciders write them: the export's templates. */
const paymentTemplates = (): Promise<
  Array<{ type: string; schemaVersion: number; data: unknown; canonicalData: string; canonicalAfter: string }>
> =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* Fixtures.merchant("MER_1", { production: "https://shop.example.com/hooks/cobro" })
      yield* Fixtures.approvedSale({ merchantId: "MER_1", n: 1 })
      yield* Fixtures.approvedSale({ merchantId: "MER_1", n: 2 })
      yield* Fixtures.checkoutOutcome(2, "void")
      yield* Fixtures.linkPayment({ merchantId: "MER_1", n: 3 }, "paid")
      yield* Fixtures.onlinePayment({ merchantId: "MER_1", n: 4 }, ["approve"])
      return yield* Fixtures.allEvents
    }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
  ).then((events) =>
    events.map((e) => {
      const data = HashChain.normalizeJson(e.data)
      return {
        type: e.type,
        schemaVersion: e.schemaVersion,
        data,
        canonicalData: HashChain.canonicalJson(data),
        canonicalAfter: `,"type":${JSON.stringify(e.type)}}`
      }
    })
  )

/** Writes an export of `total` events over `streams` streams with real hash chains; its checkpoint. */
const writeExport = async (path: string, total: number, streams: number) => {
  const templates = await paymentTemplates()
  const signer = Checkpoint.signer(new Uint8Array(randomBytes(32)), "cobro.bench/audit-offline")
  const frontier = new MerkleTree.Frontier()
  const versions = new Int32Array(streams)
  const heads: Array<string> = Array.from({ length: streams }, () => HashChain.genesis)
  const base = Date.parse("2026-01-01T00:00:00.000Z")
  const fd = Fs.openSync(path, "w")
  let lines: Array<string> = []
  let pending = 0
  // A fixed xorshift: the same interleaving of streams on every run.
  let seed = 0x9e3779b9
  const next = () => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 0x100000000
  }
  try {
    for (let i = 0; i < total; i++) {
      const s = Math.floor(next() * streams)
      const streamVersion = ++versions[s]!
      const template = templates[(streamVersion - 1 + s) % templates.length]!
      const prevHash = heads[s]!
      const fields = {
        streamId: `TerminalCheckout-INT_${s}`,
        streamVersion,
        eventId: randomUUID(),
        type: template.type,
        schemaVersion: template.schemaVersion,
        data: template.data,
        metadata: { requestId: `req_${((i * 2654435761) >>> 0).toString(16).padStart(8, "0")}` },
        recordedAt: new Date(base + i)
      }
      // HashChain's canonical text with the template's data serialised once, not per event (the
      // generation would take as long as the verification); the verifier recomputes every hash with
      // `HashChain.hashEvent`, and the first events are checked against it here.
      const before =
        `{"data":${template.canonicalData},"eventId":${JSON.stringify(fields.eventId)},` +
        `"metadata":${HashChain.canonicalJson(fields.metadata)},"recordedAt":${JSON.stringify(fields.recordedAt.toISOString())},` +
        `"schemaVersion":${template.schemaVersion},"streamId":${JSON.stringify(fields.streamId)},"streamVersion":`
      const hash = HashChain.hashAround(prevHash, before, streamVersion, template.canonicalAfter)
      if (i < 1000 && hash !== HashChain.hashEvent(prevHash, fields)) {
        throw new Error("the export's hashes are not HashChain's")
      }
      heads[s] = hash
      frontier.push(PgTransparencyLog.leafOf(hash))
      const line = Export.toLine({ ...fields, globalPosition: BigInt(i + 1), prevHash, hash })
      lines.push(line)
      pending += line.length
      if (pending > 4 << 20) {
        Fs.writeSync(fd, lines.join("\n") + "\n")
        lines = []
        pending = 0
      }
    }
    if (lines.length > 0) Fs.writeSync(fd, lines.join("\n") + "\n")
  } finally {
    Fs.closeSync(fd)
  }
  const note = Checkpoint.signCheckpoint(
    { origin: signer.origin, size: total, root: frontier.root() },
    signer.origin,
    signer.seed
  )
  return { note, key: Checkpoint.verifierKeyOf(signer), types: templates.length }
}

const offline = async () => {
  const path = Path.join(Os.tmpdir(), `cobro-audit-bench-${randomBytes(4).toString("hex")}.jsonl`)
  try {
    const started = performance.now()
    const streams = Math.min(10_000, Math.max(1, Math.floor(totalEvents / 10)))
    const { note, key, types } = await writeExport(path, totalEvents, streams)
    const bytes = Fs.statSync(path).size
    console.error(
      `offline: wrote ${totalEvents} events (${(bytes / 1e6).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`
    )
    type Mode = "verify" | "read+parse" | "read"
    const modes: ReadonlyArray<Mode> = ["verify", "read+parse", "read"]
    const runMode = async (mode: Mode): Promise<number> => {
      switch (mode) {
        case "verify": {
          const report = await Effect.runPromise(OfflineVerify.verifyFile(path, note, key))
          if (report.problems.length > 0 || report.events !== totalEvents) {
            throw new Error(
              `the export does not verify: ${report.events} events, ${report.problems.slice(0, 3).map(OfflineVerify.describe).join("; ")}`
            )
          }
          return report.events
        }
        case "read+parse": {
          let events = 0
          for await (const line of OfflineVerify.linesOf(path)) {
            if (line === "") continue
            const parsed = JSON.parse(line) as { streamVersion: number }
            if (parsed.streamVersion > 0) events++
          }
          return events
        }
        case "read": {
          let events = 0
          for await (const line of OfflineVerify.linesOf(path)) if (line !== "") events++
          return events
        }
      }
    }
    const tallies = new Map(modes.map((mode) => [mode, new Rounds.Tally()]))
    await runMode("read") // the file into the page cache
    await Rounds.run(rounds, modes, async (mode, round) => {
      const t = performance.now()
      const events = await runMode(mode)
      const s = (performance.now() - t) / 1000
      if (events !== totalEvents) throw new Error(`${mode} read ${events} of ${totalEvents} events`)
      tallies.get(mode)!.add(events, s)
      emit({
        part: "offline",
        mode,
        round,
        events,
        seconds: round2(s),
        events_per_s: Math.round(events / s),
        mb_per_s: round2(bytes / 1e6 / s)
      })
    })
    const rate = (mode: Mode) => tallies.get(mode)!.rate()
    const perRound = (mode: Mode, floor: Mode) =>
      Ratio.perRound(tallies.get(mode)!.perRound, tallies.get(floor)!.perRound)
    const toParse = rate("verify") / rate("read+parse")
    const toRead = rate("verify") / rate("read")
    emit({
      part: "offline",
      events: totalEvents,
      streams,
      event_types: types,
      file_mb: round2(bytes / 1e6),
      bytes_per_event: Math.round(bytes / totalEvents),
      rounds,
      verify_events_per_s: Math.round(rate("verify")),
      verify_mb_per_s: round2((rate("verify") * bytes) / totalEvents / 1e6),
      read_parse_events_per_s: Math.round(rate("read+parse")),
      read_parse_mb_per_s: round2((rate("read+parse") * bytes) / totalEvents / 1e6),
      read_events_per_s: Math.round(rate("read")),
      read_mb_per_s: round2((rate("read") * bytes) / totalEvents / 1e6),
      ratio_verify_to_read_parse: round3(toParse),
      per_round_verify_to_read_parse: perRound("verify", "read+parse"),
      ratio_verify_to_read: round3(toRead)
    })
    const mbs = (mode: Mode) => `${round2((rate(mode) * bytes) / totalEvents / 1e6)} MB/s`
    summary.push(
      {
        measurement: `offline: verifyFile / streaming read + JSON.parse (${thousands(totalEvents)} events, ${(bytes / 1e6).toFixed(0)} MB, ${rounds} rounds)`,
        figure: `${round3(toParse)} (${thousands(rate("verify"))} vs ${thousands(rate("read+parse"))} events/s, ${mbs("verify")} vs ${mbs("read+parse")}; per round ${perRound("verify", "read+parse")})`,
        target: "≥ 0.5 of read + JSON.parse",
        met: toParse >= 0.5 ? "met" : "missed"
      },
      {
        measurement: "offline: verifyFile / raw read of the lines (no parse)",
        figure: `${round3(toRead)} (raw read ${thousands(rate("read"))} events/s, ${mbs("read")})`,
        target: "reported",
        met: "—"
      }
    )
  } finally {
    Fs.rmSync(path, { force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// walks: verify and rebuild against the cursor floor, at N events and a tenth of it
// ---------------------------------------------------------------------------------------------

const walks = async () => {
  const sizes = [totalEvents, Math.max(1000, Math.round(totalEvents / 10))]
  const rows: Array<Record<string, number | string>> = []
  for (const size of sizes) {
    const { name, url } = await Database.create("audit-walks")
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
          log_events: size,
          phase,
          events_per_s: p.events_per_s,
          floor: floorPhase,
          floor_events_per_s: f.events_per_s,
          ratio_to_floor: round3(p.events_per_s / f.events_per_s),
          seconds: p.seconds,
          peak_rss_mb: p.peak_rss_mb,
          base_rss_mb: p.base_rss_mb,
          peak_heap_mb: p.peak_heap_mb,
          floor_peak_rss_mb: f.peak_rss_mb
        }
        rows.push(row)
        emit(row)
      }
    } finally {
      await Database.drop(name)
    }
  }
  for (const phase of ["verify", "rebuild"]) {
    const [big, small] = sizes.map((size) =>
      rows.find((r) => r["phase"] === phase && r["log_events"] === size)!
    )
    const growth = Number(big!["peak_rss_mb"]) - Number(small!["peak_rss_mb"])
    const floorGrowth = Number(big!["floor_peak_rss_mb"]) - Number(small!["floor_peak_rss_mb"])
    summary.push({
      measurement: `walks: ${phase} at ${thousands(sizes[1]!)} → ${thousands(sizes[0]!)} events, ratio to the cursor floor`,
      figure: `${String(small!["ratio_to_floor"])} → ${String(big!["ratio_to_floor"])} (${thousands(Number(big!["events_per_s"]))} events/s); peak RSS ${growth >= 0 ? "+" : ""}${round2(growth)} MB (floor ${floorGrowth >= 0 ? "+" : ""}${round2(floorGrowth)} MB)`,
      target: "flat with the log (events/s and memory)",
      met: "—"
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const printSummary = () => {
  const header: SummaryRow = { measurement: "measurement", figure: "figure", target: "target", met: "—" }
  const rows = [header, ...summary]
  const width = (key: keyof SummaryRow) => Math.max(...rows.map((r) => r[key].length))
  const [m, f, t] = [width("measurement"), width("figure"), width("target")]
  const line = (r: SummaryRow, met: string) =>
    `${r.measurement.padEnd(m)} | ${r.figure.padEnd(f)} | ${r.target.padEnd(t)} | ${met}`
  console.log(
    `\nsummary (${thousands(totalEvents)} events, ${rounds} rounds; ${Os.cpus().length} cores, load ${Os.loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})`
  )
  console.log(line(header, "met?"))
  console.log(`${"-".repeat(m)}-+-${"-".repeat(f)}-+-${"-".repeat(t)}-+-------`)
  for (const r of summary) console.log(line(r, r.met))
}

const main = async () => {
  const started = performance.now()
  const known = ["walks", "tree", "proofs", "offline"]
  const unknown = [...parts].filter((p) => !known.includes(p))
  if (unknown.length > 0)
    throw new Error(`--only: unknown part ${unknown.join(", ")} (parts: ${known.join(", ")})`)
  const timings: Array<string> = []
  for (const [name, part] of [
    ["walks", walks],
    ["tree", treeCost],
    ["proofs", proofs],
    ["offline", offline]
  ] as const) {
    if (!parts.has(name)) continue
    const t = performance.now()
    await part()
    timings.push(`${name} ${((performance.now() - t) / 1000).toFixed(0)} s`)
  }
  const out = results.write()
  printSummary()
  console.log(
    `\nwritten to ${Path.relative(root, out)}; ${((performance.now() - started) / 1000).toFixed(0)} s in all (${timings.join(", ")})`
  )
}

const phaseAt = argv.indexOf("--phase")
if (phaseAt >= 0) {
  const result = await runPhase(argv[phaseAt + 1]!, argv[argv.indexOf("--url") + 1]!)
  console.log(JSON.stringify(result))
  process.exit(0)
} else {
  await main()
}
