/**
 * `/ready`'s database checks on PostgreSQL (`Server.layerReadiness`): the store's read and the write
 * check take the pool's idle connection in turn, so a check opens no connection while one is idle
 * (during a failover a new one can wait out a proxy's connect timeout while the pooled ones write).
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Readiness from "@cobro/http/Readiness"
import * as PgPool from "@cobro/store-pg/PgPool"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Server from "../src/Server.js"
import * as Store from "../src/Store.js"
import * as Supervisor from "../src/Supervisor.js"
import * as ServerProcess from "./support/ServerProcess.js"

/**
 * Runs `body` with the server's `/ready` check on a fresh PostgreSQL database whose pool is left one
 * idle connection, counting from then on the connections the pool opens and hands out; `store` wraps
 * the event store.
 */
const withOneIdleConnection = <A, E>(
  body: (given: {
    readonly check: Readiness.Readiness["Type"]["check"]
    readonly pool: PgPool.PgPool["Type"]
    readonly opened: () => number
    readonly acquired: () => number
  }) => Effect.Effect<A, E>,
  store: Layer.Layer<EventStore.EventStore, never, EventStore.EventStore> = Layer.effect(
    EventStore.EventStore,
    EventStore.EventStore
  )
) =>
  Effect.gen(function* () {
    const url = yield* ServerProcess.postgresDatabase
    const database = PostgresClient.layer({
      url: Redacted.make(url),
      applicationName: "cobro",
      maxConnections: Server.defaultPoolSize
    })
    return yield* Effect.gen(function* () {
      const pool = yield* PgPool.PgPool
      const { check } = yield* Readiness.Readiness
      const counter = yield* Effect.promise(async () => {
        await pool.query("SELECT 1")
        const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()))
        clients.forEach((client, i) => client.release(i === 0 ? undefined : true))
        let opened = 0
        let acquired = 0
        pool.on("connect", () => opened++)
        pool.on("acquire", () => acquired++)
        return { opened: () => opened, acquired: () => acquired }
      })
      expect(pool.totalCount).toBe(1)
      return yield* body({ check, pool, ...counter })
    }).pipe(
      Effect.provide(
        Server.layerReadiness.pipe(
          Layer.provide(store),
          Layer.provideMerge(Store.layerEventStore),
          Layer.provideMerge(database),
          Layer.provide(Supervisor.layer())
        )
      )
    )
  }).pipe(Effect.scoped)

describe("/ready on PostgreSQL", () => {
  it.live(
    "with one idle connection in the pool, a check opens no other: the store's read and the write check take it in turn",
    () =>
      withOneIdleConnection(({ check, opened, pool }) =>
        Effect.gen(function* () {
          for (let i = 0; i < 5; i++) yield* check
          expect(opened()).toBe(0)
          expect(pool.totalCount).toBe(1)
        })
      )
  )

  it.live(
    "a store that does not answer answers for both database reasons at once, and the write check takes no connection",
    () =>
      withOneIdleConnection(
        ({ acquired, check, opened }) =>
          Effect.gen(function* () {
            const result = yield* Effect.flip(check)
            expect(result).toBeInstanceOf(Readiness.NotReady)
            expect((result as Readiness.NotReady).reasons).toEqual([Readiness.STORE_DOWN, Server.READ_ONLY])
            // The write check did not run: no connection opened or handed out.
            expect(opened()).toBe(0)
            expect(acquired()).toBe(0)
          }),
        Layer.effect(
          EventStore.EventStore,
          Effect.map(EventStore.EventStore, (store) => ({
            ...store,
            readAll: () => Effect.dieMessage("Connection terminated unexpectedly")
          }))
        )
      )
  )
})
