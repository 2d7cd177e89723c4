/**
 * `npm run bench -- store`: Cobro's event store against a raw `pg` insert into an equivalent plain
 * table (the floor) and emmett-postgresql, on the PostgreSQL of `DATABASE_URL` (or the default).
 * Prints JSON lines and writes them to `bench/results/store.json`.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { getPostgreSQLEventStore, readMessagesBatch } from "@event-driven-io/emmett-postgresql"
import { dumbo } from "@event-driven-io/dumbo"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"

const baseUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const withDatabase = (name: string) => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}
const admin = async (statement: string) => {
  const client = new Pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * Drops a bench database once the closed pools' sessions are gone. Forcing it at once would kill
 * sessions that a pool is still closing, and their unhandled `error` would end the run.
 */
const dropDatabase = async (name: string) => {
  for (let i = 0; i < 50; i++) {
    try {
      return await admin(`DROP DATABASE IF EXISTS ${name}`)
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

/** What each store must do for the workloads. */
interface Subject {
  readonly name: string
  append(stream: string, count: number, expectedVersion: number | "new"): Promise<void>
  readStream(stream: string): Promise<number>
  /** Reads the whole log in order, a page at a time; returns the events read and each page's latency. */
  readAll(): Promise<{ events: number; pages: Array<number> }>
  close(): Promise<void>
}

const payload = (i: number) => ({ _tag: "BenchEvent", amount: i, note: "a bench event of modest size" })

const cobro = async (url: string): Promise<Subject> => {
  const runtime = ManagedRuntime.make(
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
    )
  )
  const store = await runtime.runPromise(EventStore.EventStore)
  const events = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      eventId: randomUUID(),
      type: "BenchEvent",
      schemaVersion: 1,
      data: payload(i),
      metadata: { requestId: "bench" }
    }))
  return {
    name: "cobro",
    append: (stream, count, expected) =>
      runtime.runPromise(
        Effect.asVoid(
          store.append(
            stream,
            events(count),
            expected === "new"
              ? EventStore.ExpectedVersion.NoStream()
              : EventStore.ExpectedVersion.Exact({ version: expected })
          )
        )
      ),
    readStream: (stream) => runtime.runPromise(Effect.map(store.readStream(stream), (read) => read.length)),
    readAll: async () => {
      const pages: Array<number> = []
      let after = EventStore.Start
      let total = 0
      while (true) {
        const start = performance.now()
        const page = await runtime.runPromise(store.readAll({ after, limit: 1000 }))
        pages.push(performance.now() - start)
        if (page.length === 0) return { events: total, pages }
        total += page.length
        after = page[page.length - 1]!.checkpoint
      }
    },
    close: () => runtime.dispose()
  }
}

const raw = async (url: string): Promise<Subject> => {
  const pool = new Pg.Pool({ connectionString: url, max: 10 })
  // Idle clients still closing when the database is dropped (WITH FORCE) must not crash the run.
  pool.on("error", () => {})
  await pool.query(`CREATE TABLE raw_events (
    global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
    event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
    metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`)
  return {
    name: "raw-pg",
    append: async (stream, count, expected) => {
      const base = expected === "new" ? 0 : expected
      const values: Array<unknown> = []
      const rows = Array.from({ length: count }, (_, i) => {
        values.push(
          stream,
          base + i + 1,
          randomUUID(),
          "BenchEvent",
          1,
          JSON.stringify(payload(i)),
          '{"requestId":"bench"}'
        )
        const o = i * 7
        return `($${o + 1}, $${o + 2}, $${o + 3}, $${o + 4}, $${o + 5}, $${o + 6}, $${o + 7})`
      })
      await pool.query(
        `INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ${rows.join(",")}`,
        values
      )
    },
    readStream: async (stream) =>
      (await pool.query("SELECT * FROM raw_events WHERE stream_id = $1 ORDER BY stream_version", [stream]))
        .rows.length,
    readAll: async () => {
      const pages: Array<number> = []
      let after = "0"
      let total = 0
      while (true) {
        const start = performance.now()
        const { rows } = await pool.query(
          "SELECT * FROM raw_events WHERE global_position > $1 ORDER BY global_position LIMIT 1000",
          [after]
        )
        pages.push(performance.now() - start)
        if (rows.length === 0) return { events: total, pages }
        total += rows.length
        after = rows[rows.length - 1].global_position
      }
    },
    close: () => pool.end()
  }
}

const emmett = async (url: string): Promise<Subject> => {
  const store = getPostgreSQLEventStore(url)
  await store.schema.migrate()
  const reader = dumbo({ connectionString: url })
  return {
    name: "emmett",
    append: async (stream, count, expected) => {
      await store.appendToStream(
        stream,
        Array.from({ length: count }, (_, i) => ({
          type: "BenchEvent",
          data: payload(i),
          metadata: { requestId: "bench" }
        })),
        { expectedStreamVersion: expected === "new" ? "STREAM_DOES_NOT_EXIST" : BigInt(expected) }
      )
    },
    readStream: async (stream) => (await store.readStream(stream)).events.length,
    readAll: async () => {
      const pages: Array<number> = []
      let after = 0n
      let total = 0
      while (true) {
        const start = performance.now()
        const batch = await readMessagesBatch(reader.execute, { after, batchSize: 1000 })
        pages.push(performance.now() - start)
        if (batch.messages.length === 0) return { events: total, pages }
        total += batch.messages.length
        after = batch.currentGlobalPosition
      }
    },
    close: async () => {
      await reader.close()
      await store.close()
    }
  }
}

interface Result {
  readonly store: string
  readonly workload: string
  readonly writers: number
  readonly events_per_s: number
  readonly p50_ms: number
  readonly p99_ms: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** One store's share of a workload: events, seconds and latencies summed over the rounds. */
interface Tally {
  events: number
  seconds: number
  latencies: Array<number>
  perRound: Array<number>
}

/** `writers` concurrent loops of `opsPerWriter` operations; adds its events, time and latencies to `tally`. */
const measure = async (
  tally: Tally,
  writers: number,
  opsPerWriter: number,
  eventsPerOp: number,
  op: (writer: number, i: number) => Promise<void>
) => {
  const start = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < opsPerWriter; i++) {
        const t = performance.now()
        await op(w, i)
        tally.latencies.push(performance.now() - t)
      }
    })
  )
  const seconds = (performance.now() - start) / 1000
  const events = writers * opsPerWriter * eventsPerOp
  tally.events += events
  tally.seconds += seconds
  tally.perRound.push(Math.round(events / seconds))
}

/** A workload: what one round does against one store (`round` keeps stream ids apart). */
interface Workload {
  readonly name: string
  readonly writers: number
  run(subject: Subject, id: (...parts: Array<unknown>) => string, round: number, tally: Tally): Promise<void>
}

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 6)
const w4PerWriter = 30
const w4Streams = 8 * w4PerWriter

const workloads: ReadonlyArray<Workload> = [
  {
    name: "W1",
    writers: 1,
    run: (subject, id, round, tally) =>
      measure(tally, 1, 200, 1, (w, i) => subject.append(id("w1a", round, w, i), 1, "new"))
  },
  {
    name: "W1",
    writers: 8,
    run: (subject, id, round, tally) =>
      measure(tally, 8, 50, 1, (w, i) => subject.append(id("w1b", round, w, i), 1, "new"))
  },
  {
    name: "W3",
    writers: 1,
    run: (subject, id, round, tally) =>
      measure(tally, 1, 100, 10, (w, i) => subject.append(id("w3", round, w, i), 10, "new"))
  },
  {
    name: "W4",
    writers: 8,
    run: (subject, id, round, tally) =>
      measure(tally, 8, w4PerWriter, 1, async (w, i) => {
        const stream = id("w4", round, w * w4PerWriter + i)
        const version = await subject.readStream(stream)
        await subject.append(stream, 1, version)
      })
  },
  {
    name: "W5",
    writers: 1,
    run: async (subject, _id, _round, tally) => {
      const start = performance.now()
      const { events, pages } = await subject.readAll()
      const seconds = (performance.now() - start) / 1000
      tally.events += events
      tally.seconds += seconds
      tally.latencies.push(...pages)
      tally.perRound.push(Math.round(events / seconds))
    }
  }
]

const main = async () => {
  const makers: Array<[string, (url: string) => Promise<Subject>]> = [
    ["raw-pg", raw],
    ["cobro", cobro],
    ["emmett", emmett]
  ]
  // Every store is set up first, each on its own database; then each workload runs round by round,
  // every store once per round in a rotating order, so that a burst of load from elsewhere on the
  // machine falls on all of them alike rather than on whichever ran at that moment.
  const subjects: Array<{ subject: Subject; database: string; id: (...parts: Array<unknown>) => string }> = []
  try {
    for (const [name, make] of makers) {
      const database = `cobro_bench_${name.replace("-", "_")}_${randomBytes(4).toString("hex")}`
      await admin(`CREATE DATABASE ${database}`)
      try {
        const subject = await make(withDatabase(database))
        const tag = randomBytes(3).toString("hex")
        subjects.push({ subject, database, id: (...parts) => `bench-${tag}-${parts.join("-")}` })
      } catch (error) {
        console.error(`${name}: failed: ${String(error)}`)
        await dropDatabase(database)
      }
    }
    for (const { subject, id } of subjects) {
      // Warm-up: connections, prepared plans, JIT. Then W4's streams of 20 events, for every round.
      for (let i = 0; i < 50; i++) await subject.append(id("warm", i), 1, "new")
      for (let round = 0; round < rounds; round++) {
        for (let s = 0; s < w4Streams; s++) await subject.append(id("w4", round, s), 20, "new")
      }
    }
    const results: Array<Result> = []
    const perRound = new Map<string, Array<number>>()
    for (const workload of workloads) {
      const tallies = subjects.map((): Tally => ({ events: 0, seconds: 0, latencies: [], perRound: [] }))
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < subjects.length; k++) {
          const index = (k + round) % subjects.length
          const { subject, id } = subjects[index]!
          await workload.run(subject, id, round, tallies[index]!)
        }
      }
      subjects.forEach(({ subject }, index) => {
        const tally = tallies[index]!
        tally.latencies.sort((a, b) => a - b)
        const result: Result = {
          store: subject.name,
          workload: workload.name,
          writers: workload.writers,
          events_per_s: Math.round(tally.events / tally.seconds),
          p50_ms: Number(percentile(tally.latencies, 50).toFixed(2)),
          p99_ms: Number(percentile(tally.latencies, 99).toFixed(2))
        }
        results.push(result)
        perRound.set(`${subject.name} ${workload.name} ${workload.writers}`, tally.perRound)
        console.log(JSON.stringify(result))
      })
    }
    const out = Path.resolve(import.meta.dirname, "../../../bench/results/store.json")
    Fs.mkdirSync(Path.dirname(out), { recursive: true })
    Fs.writeFileSync(out, results.map((r) => JSON.stringify(r)).join("\n") + "\n")
    const find = (store: string, workload: string, writers: number) =>
      results.find((r) => r.store === store && r.workload === workload && r.writers === writers)
    const rounded = (store: string, r: Result) => perRound.get(`${store} ${r.workload} ${r.writers}`) ?? []
    console.log(
      `\nratios (events/s over ${rounds} rounds; per round in brackets): cobro/raw-pg, cobro/emmett`
    )
    for (const r of results.filter((r) => r.store === "cobro")) {
      const ratio = (store: string) => {
        const other = find(store, r.workload, r.writers)
        if (other === undefined) return "n/a"
        const mine = rounded("cobro", r)
        const theirs = rounded(store, other)
        const each = mine.map((v, i) => (v / (theirs[i] ?? NaN)).toFixed(2)).join(" ")
        return `${(r.events_per_s / other.events_per_s).toFixed(2)} [${each}]`
      }
      console.log(`${r.workload} writers=${r.writers}: ${ratio("raw-pg")}  ${ratio("emmett")}`)
    }
  } finally {
    for (const { subject, database } of subjects) {
      await subject.close().catch(() => {})
      await dropDatabase(database)
    }
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
