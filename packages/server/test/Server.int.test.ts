/**
 * `npm start` end to end: the real server process on PGlite and on PostgreSQL, its health and
 * readiness, its banner, a graceful stop on SIGTERM and SIGINT, and its data across restarts.
 * Slow by design: each test starts real processes, and the first starts run PGlite's initdb on purpose.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgliteClient from "@cobro/store-pg/PgliteClient"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Path from "node:path"
import * as ServerProcess from "./support/ServerProcess.js"

/** A graceful stop must not take longer than this (the machine may be loaded). */
const promptMillis = 15_000

const event = (id: string): EventStore.NewEvent => ({
  eventId: id,
  type: "ServerTestEvent",
  schemaVersion: 1,
  data: { kept: true },
  metadata: {}
})

/** The log of the PGlite folder the server used, opened by the test (the server stopped: PGlite is single-process). */
const pgliteLog = (dataDir: string) =>
  PgEventStore.layerMigrated.pipe(Layer.provide(PgliteClient.layer({ dataDir })))

/** The log of the server's PostgreSQL database, opened by the test. */
const postgresLog = (url: string) =>
  PgEventStore.layerMigrated.pipe(
    Layer.provide(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 }))
  )

type Log = ReturnType<typeof pgliteLog> | ReturnType<typeof postgresLog>

/** Writes one event, `id`, to the new stream `streamId` of the log. */
const writeEvent = (log: Log, streamId: string, id: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    store.append(streamId, [event(id)], EventStore.ExpectedVersion.NoStream())
  ).pipe(Effect.provide(log), Effect.orDie)

/** The ids of the events of the stream `streamId` of the log. */
const eventIds = (log: Log, streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => store.readStream(streamId)).pipe(
    Effect.map((events) => events.map((e) => e.eventId)),
    Effect.provide(log),
    Effect.orDie
  )

const healthy = (server: ServerProcess.RunningServer) =>
  Effect.gen(function* () {
    const health = yield* ServerProcess.call(server, "GET", "/health")
    expect(health.status).toBe(200)
    const ready = yield* ServerProcess.call(server, "GET", "/ready")
    expect(ready.status).toBe(200)
  })

const stopsGracefully = (server: ServerProcess.RunningServer, signal: NodeJS.Signals = "SIGTERM") =>
  Effect.gen(function* () {
    const stopped = yield* Effect.promise(() => server.stop(signal))
    expect(stopped.code, server.output()).toBe(0)
    expect(stopped.millis).toBeLessThan(promptMillis)
    expect(server.output()).toContain("Cobro stopped.")
  })

/** Runs the server with `env` to its exit: it refuses to start, with status 1 and `message`. */
const refusesToStart = (env: Record<string, string>, message: string) =>
  Effect.gen(function* () {
    const result = yield* ServerProcess.runToExit(env)
    expect(result.code, result.output).toBe(1)
    expect(result.output).toContain(message)
  })

describe("server on PGlite (DATA_DIR)", () => {
  it.scopedLive(
    "npm start serves GET /health and GET /ready with 200, and prints the base URL, docs and admin token",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.pgliteEnv
      const server = yield* ServerProcess.start(env)
      yield* healthy(server)
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(server.output()).toContain(`docs         ${server.url}/docs`)
      expect(server.adminToken).toMatch(/^[A-Za-z0-9_-]{32}$/)
      expect(server.output()).toContain(`PGlite in ${env.DATA_DIR}`)
      const unknown = yield* ServerProcess.call(server, "GET", "/no/such/path")
      expect(unknown.status).toBe(404)
      expect(unknown.json.errors.length).toBe(1)
      yield* stopsGracefully(server)
    })
  )

  it.scopedLive(
    "SIGTERM and SIGINT stop the server promptly with status 0, and the data survives a restart",
    Effect.fnUntraced(function* () {
      const env = {
        ...(yield* ServerProcess.pgliteEnv),
        ADMIN_TOKEN: "test-admin-token",
        COBRO_CLOCK: "virtual"
      }
      const dataDir = env.DATA_DIR
      const first = yield* ServerProcess.start(env)
      expect(first.output()).toContain("admin token  from ADMIN_TOKEN")
      expect(first.output()).not.toContain("test-admin-token")
      expect(first.output()).toContain("sealing key  " + Path.join(dataDir, "sealing-key") + " (created)")
      yield* healthy(first)
      yield* stopsGracefully(first, "SIGTERM")
      // Between runs, an event written to the folder the server migrated.
      const id = "00000000-0000-4000-8000-0000000000aa"
      yield* writeEvent(pgliteLog(dataDir), "ServerTest-1", id)
      const second = yield* ServerProcess.start(env)
      expect(second.output()).toContain("sealing key  " + Path.join(dataDir, "sealing-key") + "\n")
      yield* healthy(second)
      yield* stopsGracefully(second, "SIGINT")
      expect(yield* eventIds(pgliteLog(dataDir), "ServerTest-1")).toStrictEqual([id])
    })
  )

  it.scopedLive(
    "the server signs checkpoints of its log with the key it prints: GET /audit/v1/checkpoints/latest opens with it and covers the events written",
    Effect.fnUntraced(function* () {
      const { DATA_DIR: dataDir } = yield* ServerProcess.pgliteEnv
      const server = yield* ServerProcess.start({
        DATA_DIR: dataDir,
        COBRO_CHECKPOINT_EVERY_SECONDS: "0.2"
      })
      expect(server.output()).toContain("log key      " + Path.join(dataDir, "checkpoint-key") + " (created)")
      const key = /public key {3}(\S+)/.exec(server.output())?.[1] ?? ""
      expect(Checkpoint.parseVerifierKey(key)).toBeDefined()
      const served = yield* ServerProcess.call(server, "GET", "/audit/v1/public-key")
      expect(served.text).toBe(`${key}\n`)
      const created = yield* ServerProcess.call(server, "POST", "/admin/v1/merchants", {
        headers: { authorization: `Bearer ${server.adminToken}` },
        body: { name: "Checkpointed" }
      })
      expect(created.status).toBe(201)
      // The worker takes the settled events in every second and signs when 0.2 s have passed.
      let checkpoint: Checkpoint.Checkpoint | undefined
      for (let tries = 0; tries < 100 && checkpoint === undefined; tries++) {
        const latest = yield* ServerProcess.call(server, "GET", "/audit/v1/checkpoints/latest")
        if (latest.status === 200) checkpoint = Checkpoint.openWithVerifierKey(latest.text, key)
        if (checkpoint === undefined) yield* Effect.sleep("100 millis")
      }
      expect(checkpoint, "a checkpoint signed by the printed key").toBeDefined()
      expect(checkpoint!.size).toBeGreaterThan(0)
      yield* stopsGracefully(server)
    })
  )

  it.scopedLive(
    "an invalid configuration refuses to start with a sentence and status 1",
    Effect.fnUntraced(function* () {
      const dir = yield* ServerProcess.tempDir
      yield* refusesToStart(
        { DATA_DIR: dir, COBRO_SEALING_KEY: "not-a-key" },
        "Cobro cannot start: COBRO_SEALING_KEY must be 32 bytes"
      )
      yield* refusesToStart({ DATA_DIR: dir, PORT: "eighty" }, "Cobro cannot start: invalid configuration")
    })
  )
})

describe("server on PostgreSQL (DATABASE_URL)", () => {
  it.scopedLive(
    "with DATABASE_URL and no COBRO_SEALING_KEY the server refuses to start (nodes must share the key)",
    Effect.fnUntraced(function* () {
      const url = yield* ServerProcess.postgresDatabase
      yield* refusesToStart({ DATABASE_URL: url }, "COBRO_SEALING_KEY is required with DATABASE_URL")
    })
  )

  it.scopedLive(
    "a node whose COBRO_SEALING_KEY differs from the one the database was first used with refuses to start",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      yield* stopsGracefully(yield* ServerProcess.start(env))
      yield* refusesToStart(
        { ...env, ...ServerProcess.postgresKeys() },
        "Cobro cannot start: this database's secret keys are sealed with the sealing key of id"
      )
    })
  )

  it.scopedLive(
    "a node whose checkpoint key differs from the log's refuses to start: auditors would reject what it signs",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      yield* stopsGracefully(yield* ServerProcess.start(env))
      const { COBRO_CHECKPOINT_KEY: _, ...withoutCheckpointKey } = env
      yield* refusesToStart(withoutCheckpointKey, "COBRO_CHECKPOINT_KEY is required with DATABASE_URL")
      yield* refusesToStart(
        { ...env, COBRO_CHECKPOINT_KEY: ServerProcess.postgresKeys().COBRO_CHECKPOINT_KEY },
        "Cobro cannot start: this log's checkpoints are signed with the key"
      )
      yield* refusesToStart(
        { ...env, COBRO_LOG_ORIGIN: "another.example/log" },
        "this log's checkpoints are signed with the key"
      )
    })
  )

  it.scopedLive(
    "npm start on PostgreSQL serves /health and /ready, stops on SIGTERM with 0, and keeps the data",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      const first = yield* ServerProcess.start(env)
      expect(first.output()).toContain("PostgreSQL at postgres://")
      expect(first.output()).toContain("sealing key  from COBRO_SEALING_KEY")
      yield* healthy(first)
      yield* stopsGracefully(first)
      const id = "00000000-0000-4000-8000-0000000000bb"
      yield* writeEvent(postgresLog(env.DATABASE_URL), "ServerTest-2", id)
      const second = yield* ServerProcess.start(env)
      yield* healthy(second)
      yield* stopsGracefully(second)
      expect(yield* eventIds(postgresLog(env.DATABASE_URL), "ServerTest-2")).toStrictEqual([id])
    })
  )

  it.scopedLive(
    "two server processes start together on one PostgreSQL database (migrations race safely) and both serve",
    Effect.fnUntraced(function* () {
      const env = yield* ServerProcess.postgresEnv
      const [a, b] = yield* Effect.all([ServerProcess.start(env), ServerProcess.start(env)], {
        concurrency: 2
      })
      yield* healthy(a)
      yield* healthy(b)
      yield* Effect.all([stopsGracefully(a), stopsGracefully(b)], { concurrency: 2 })
    })
  )
})
