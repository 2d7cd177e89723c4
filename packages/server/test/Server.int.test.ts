/**
 * `npm start` end to end: the real server process on PGlite and on PostgreSQL, its health and
 * readiness, its banner, a graceful stop on SIGTERM and SIGINT, and its data across restarts.
 */
import * as EventStore from "@cobro/domain/EventStore"
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

/** Opens the PGlite folder the server used (the server stopped: PGlite is single-process). */
const onPglite = <A, E>(dataDir: string, effect: Effect.Effect<A, E, EventStore.EventStore>) =>
  effect.pipe(
    Effect.provide(PgEventStore.layerMigrated.pipe(Layer.provide(PgliteClient.layer({ dataDir })))),
    Effect.orDie
  )

const onPostgres = <A, E>(url: string, effect: Effect.Effect<A, E, EventStore.EventStore>) =>
  effect.pipe(
    Effect.provide(
      PgEventStore.layerMigrated.pipe(
        Layer.provide(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 2 }))
      )
    ),
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

describe("server on PGlite (DATA_DIR)", () => {
  it.scopedLive(
    "npm start serves GET /health and GET /ready with 200, and prints the base URL, docs and admin token",
    () =>
      Effect.gen(function* () {
        const dir = yield* ServerProcess.tempDir
        const server = yield* ServerProcess.start({ DATA_DIR: Path.join(dir, "data") })
        yield* healthy(server)
        expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(server.output()).toContain(`docs         ${server.url}/docs`)
        expect(server.adminToken).toMatch(/^[A-Za-z0-9_-]{32}$/)
        expect(server.output()).toContain(`PGlite in ${Path.join(dir, "data")}`)
        const unknown = yield* ServerProcess.call(server, "GET", "/no/such/path")
        expect(unknown.status).toBe(404)
        expect(unknown.json.errors.length).toBe(1)
        yield* stopsGracefully(server)
      })
  )

  it.scopedLive(
    "SIGTERM and SIGINT stop the server promptly with status 0, and the data survives a restart",
    () =>
      Effect.gen(function* () {
        const dir = yield* ServerProcess.tempDir
        const dataDir = Path.join(dir, "data")
        const env = { DATA_DIR: dataDir, ADMIN_TOKEN: "test-admin-token", COBRO_CLOCK: "virtual" }
        const first = yield* ServerProcess.start(env)
        expect(first.output()).toContain("admin token  from ADMIN_TOKEN")
        expect(first.output()).not.toContain("test-admin-token")
        expect(first.output()).toContain("sealing key  " + Path.join(dataDir, "sealing-key") + " (created)")
        yield* healthy(first)
        yield* stopsGracefully(first, "SIGTERM")
        // Between runs, an event written to the folder the server migrated.
        const id = "00000000-0000-4000-8000-0000000000aa"
        yield* onPglite(
          dataDir,
          Effect.flatMap(EventStore.EventStore, (store) =>
            store.append("ServerTest-1", [event(id)], EventStore.ExpectedVersion.NoStream())
          )
        )
        const second = yield* ServerProcess.start(env)
        expect(second.output()).toContain("sealing key  " + Path.join(dataDir, "sealing-key") + "\n")
        yield* healthy(second)
        yield* stopsGracefully(second, "SIGINT")
        const kept = yield* onPglite(
          dataDir,
          Effect.flatMap(EventStore.EventStore, (store) => store.readStream("ServerTest-1"))
        )
        expect(kept.map((e) => e.eventId)).toStrictEqual([id])
      })
  )

  it.scopedLive("an invalid configuration refuses to start with a sentence and status 1", () =>
    Effect.gen(function* () {
      const dir = yield* ServerProcess.tempDir
      const badKey = yield* ServerProcess.runToExit({ DATA_DIR: dir, COBRO_SEALING_KEY: "not-a-key" })
      expect(badKey.code).toBe(1)
      expect(badKey.output).toContain("Cobro cannot start: COBRO_SEALING_KEY must be 32 bytes")
      const badPort = yield* ServerProcess.runToExit({ DATA_DIR: dir, PORT: "eighty" })
      expect(badPort.code).toBe(1)
      expect(badPort.output).toContain("Cobro cannot start: invalid configuration")
    })
  )
})

describe("server on PostgreSQL (DATABASE_URL)", () => {
  it.scopedLive(
    "with DATABASE_URL and no COBRO_SEALING_KEY the server refuses to start (nodes must share the key)",
    () =>
      Effect.gen(function* () {
        const url = yield* ServerProcess.postgresDatabase
        const result = yield* ServerProcess.runToExit({ DATABASE_URL: url })
        expect(result.code).toBe(1)
        expect(result.output).toContain("COBRO_SEALING_KEY is required with DATABASE_URL")
      })
  )

  it.scopedLive(
    "a node whose COBRO_SEALING_KEY differs from the one the database was first used with refuses to start",
    () =>
      Effect.gen(function* () {
        const url = yield* ServerProcess.postgresDatabase
        const first = yield* ServerProcess.start({
          DATABASE_URL: url,
          COBRO_SEALING_KEY: ServerProcess.newSealingKey()
        })
        yield* stopsGracefully(first)
        const other = yield* ServerProcess.runToExit({
          DATABASE_URL: url,
          COBRO_SEALING_KEY: ServerProcess.newSealingKey()
        })
        expect(other.code).toBe(1)
        expect(other.output).toContain(
          "Cobro cannot start: this database's secret keys are sealed with the sealing key of id"
        )
      })
  )

  it.scopedLive(
    "npm start on PostgreSQL serves /health and /ready, stops on SIGTERM with 0, and keeps the data",
    () =>
      Effect.gen(function* () {
        const url = yield* ServerProcess.postgresDatabase
        const env = { DATABASE_URL: url, COBRO_SEALING_KEY: ServerProcess.newSealingKey() }
        const first = yield* ServerProcess.start(env)
        expect(first.output()).toContain("PostgreSQL at postgres://")
        expect(first.output()).toContain("sealing key  from COBRO_SEALING_KEY")
        yield* healthy(first)
        yield* stopsGracefully(first)
        const id = "00000000-0000-4000-8000-0000000000bb"
        yield* onPostgres(
          url,
          Effect.flatMap(EventStore.EventStore, (store) =>
            store.append("ServerTest-2", [event(id)], EventStore.ExpectedVersion.NoStream())
          )
        )
        const second = yield* ServerProcess.start(env)
        yield* healthy(second)
        yield* stopsGracefully(second)
        const kept = yield* onPostgres(
          url,
          Effect.flatMap(EventStore.EventStore, (store) => store.readStream("ServerTest-2"))
        )
        expect(kept.map((e) => e.eventId)).toStrictEqual([id])
      })
  )

  it.scopedLive(
    "two server processes start together on one PostgreSQL database (migrations race safely) and both serve",
    () =>
      Effect.gen(function* () {
        const url = yield* ServerProcess.postgresDatabase
        const env = { DATABASE_URL: url, COBRO_SEALING_KEY: ServerProcess.newSealingKey() }
        const [a, b] = yield* Effect.all([ServerProcess.start(env), ServerProcess.start(env)], {
          concurrency: 2
        })
        yield* healthy(a)
        yield* healthy(b)
        yield* Effect.all([stopsGracefully(a), stopsGracefully(b)], { concurrency: 2 })
      })
  )
})
