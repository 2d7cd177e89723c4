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
import { performance } from "node:perf_hooks"
import * as Pg from "pg"
import * as Database from "../../../bench/Database.js"
import * as JsonLines from "../../../bench/JsonLines.js"
import * as Ratio from "../../../bench/Ratio.js"
import * as Rounds from "../../../bench/Rounds.js"
import * as Settings from "../../../bench/Settings.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as BenchEvent from "./BenchEvent.js"

/** What each store must do for the workloads. */
interface Subject {
  readonly name: string
  append(stream: string, count: number, expectedVersion: number | "new"): Promise<void>
  readStream(stream: string): Promise<number>
  /** Reads the whole log in order, a page at a time; returns the events read and each page's latency. */
  readAll(): Promise<{ events: number; pages: Array<number> }>
  close(): Promise<void>
}

const cobro = async (url: string): Promise<Subject> => {
  const runtime = ManagedRuntime.make(
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
    )
  )
  const store = await runtime.runPromise(EventStore.EventStore)
  return {
    name: "cobro",
    append: (stream, count, expected) =>
      runtime.runPromise(
        Effect.asVoid(
          store.append(
            stream,
            BenchEvent.newEvents(count),
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
  await pool.query(BenchEvent.rawTable)
  const metadata = JSON.stringify(BenchEvent.metadata)
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
          BenchEvent.type,
          1,
          JSON.stringify(BenchEvent.data(i)),
          metadata
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
          type: BenchEvent.type,
          data: BenchEvent.data(i),
          metadata: BenchEvent.metadata
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

/** `writers` concurrent loops of `opsPerWriter` operations; adds their events, time and latencies to `tally`. */
const measure = async (
  tally: Rounds.Tally,
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
  tally.add(writers * opsPerWriter * eventsPerOp, (performance.now() - start) / 1000)
}

/** A workload: what one round does against one store (`round` keeps stream ids apart). */
interface Workload {
  readonly name: string
  readonly writers: number
  run(
    subject: Subject,
    id: (...parts: Array<unknown>) => string,
    round: number,
    tally: Rounds.Tally
  ): Promise<void>
}

/** `writers` writers, each appending `perWriter` times `events` events to a new stream. */
const toNewStreams = (
  name: string,
  label: string,
  writers: number,
  perWriter: number,
  events: number
): Workload => ({
  name,
  writers,
  run: (subject, id, round, tally) =>
    measure(tally, writers, perWriter, events, (w, i) =>
      subject.append(id(label, round, w, i), events, "new")
    )
})

const rounds = Settings.number("BENCH_ROUNDS", 6)
const w4PerWriter = 30
const w4Streams = 8 * w4PerWriter

const workloads: ReadonlyArray<Workload> = [
  toNewStreams("W1", "w1a", 1, 200, 1),
  toNewStreams("W1", "w1b", 8, 50, 1),
  toNewStreams("W3", "w3", 1, 100, 10),
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
      tally.latencies.push(...pages)
      tally.add(events, (performance.now() - start) / 1000)
    }
  }
]

interface Target {
  readonly subject: Subject
  readonly database: Database.Database
  readonly id: (...parts: Array<unknown>) => string
}

const main = async () => {
  const makers: Array<[string, (url: string) => Promise<Subject>]> = [
    ["raw-pg", raw],
    ["cobro", cobro],
    ["emmett", emmett]
  ]
  // Every store is set up first, each on its own database; then each workload runs round by round,
  // every store once per round (`Rounds.run`).
  const targets: Array<Target> = []
  try {
    for (const [name, make] of makers) {
      const database = await Database.create(name)
      try {
        const subject = await make(database.url)
        const tag = randomBytes(3).toString("hex")
        targets.push({ subject, database, id: (...parts) => `bench-${tag}-${parts.join("-")}` })
      } catch (error) {
        console.error(`${name}: failed: ${String(error)}`)
        await Database.drop(database.name)
      }
    }
    for (const { subject, id } of targets) {
      // Warm-up: connections, prepared plans, JIT. Then W4's streams of 20 events, for every round.
      for (let i = 0; i < 50; i++) await subject.append(id("warm", i), 1, "new")
      for (let round = 0; round < rounds; round++) {
        for (let s = 0; s < w4Streams; s++) await subject.append(id("w4", round, s), 20, "new")
      }
    }
    const results = JsonLines.make<Result>("store")
    const perRound = new Map<string, ReadonlyArray<number>>()
    const key = (r: Result) => `${r.store} ${r.workload} ${r.writers}`
    for (const workload of workloads) {
      const tallies = new Map(targets.map((target) => [target, new Rounds.Tally()]))
      await Rounds.run(rounds, targets, (target, round) =>
        workload.run(target.subject, target.id, round, tallies.get(target)!)
      )
      for (const [{ subject }, tally] of tallies) {
        const result: Result = {
          store: subject.name,
          workload: workload.name,
          writers: workload.writers,
          events_per_s: Math.round(tally.rate()),
          p50_ms: tally.latencyMs(50),
          p99_ms: tally.latencyMs(99)
        }
        results.emit(result)
        perRound.set(key(result), tally.perRound)
      }
    }
    results.write()
    console.log(
      `\nratios (events/s over ${rounds} rounds; per round in brackets): cobro/raw-pg, cobro/emmett`
    )
    for (const r of results.lines.filter((r) => r.store === "cobro")) {
      const ratio = (store: string) => {
        const other = results.lines.find((o) => key(o) === key({ ...r, store }))
        if (other === undefined) return "n/a"
        return Ratio.describe(
          (r.events_per_s / other.events_per_s).toFixed(2),
          perRound.get(key(r))!,
          perRound.get(key(other))!
        )
      }
      console.log(`${r.workload} writers=${r.writers}: ${ratio("raw-pg")}  ${ratio("emmett")}`)
    }
  } finally {
    for (const { subject, database } of targets) {
      await subject.close().catch(() => {})
      await Database.drop(database.name)
    }
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
