/**
 * Log consumers on a real PostgreSQL server whose connections are terminated under them
 * (`pg_terminate_backend`, issue 17): they log the loss and go on, without a restart.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as Subscription from "../src/Subscription.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { event } from "./support/Fixtures.js"

const { Exact, NoStream } = EventStore.ExpectedVersion

/** A store on a fresh database, an admin connection of the test's own to it, and the log lines. */
const setup = Effect.gen(function* () {
  const url = yield* Databases.postgresDatabase
  const context = yield* Layer.build(
    PgEventStore.layerMigrated.pipe(
      Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 8 })),
      Layer.orDie
    )
  )
  const admin = yield* Databases.databaseClient(url)
  const sql = (text: string) => Effect.promise(() => admin.query(text))
  /** Terminates every connection to the database but the admin's own; how many. */
  const terminateAll = Effect.map(
    sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`),
    (result) => result.rowCount ?? 0
  )
  const logs: Array<string> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ cause, logLevel, message }) => {
      logs.push(`${logLevel.label} ${String(message)} ${JSON.stringify(String(cause))}`)
    })
  )
  return { context, sql, terminateAll, logs, logger }
})

/**
 * A moment for the pool to take in the end of its idle connections: a statement sent on one whose
 * end has not been read yet fails (a request's 500, not the consumers' concern here).
 */
const settle = Effect.sleep("200 millis")

const seeing = (seen: Array<string>, streamId: string) =>
  Subscription.make(`seen_${randomUUID().slice(0, 8)}`, (e) =>
    Effect.sync(() => {
      if (e.streamId === streamId) seen.push(e.type)
    })
  )

describe("log consumers when PostgreSQL drops their connections", () => {
  it.scopedLive(
    "a running group whose page read loses its connection logs why and catches up without a restart",
    () =>
      Effect.gen(function* () {
        const { context, logger, logs, sql, terminateAll } = yield* setup
        const test = Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const id = `loss-${randomUUID()}`
          const seen: Array<string> = []
          const fiber = yield* Effect.fork(
            Subscription.runAll([seeing(seen, id)], { pollInterval: "50 millis" })
          )
          yield* store.append(id, [event("Before")], NoStream())
          yield* Eventually.eventually(
            "the event before the loss",
            Effect.sync(() => [...seen]),
            (s) => s.length === 1
          )
          // Hold the log so that the group's next page read is in flight, then cut every connection.
          yield* sql("BEGIN")
          yield* sql("LOCK TABLE cobro_events IN ACCESS EXCLUSIVE MODE")
          yield* Eventually.eventually(
            "a page read waiting on the lock",
            Effect.map(
              sql(`SELECT count(*)::int AS n FROM pg_stat_activity
                   WHERE datname = current_database() AND wait_event_type = 'Lock'`),
              (result) => result.rows[0].n as number
            ),
            (n) => n > 0
          )
          expect(yield* terminateAll).toBeGreaterThan(0)
          yield* sql("ROLLBACK")
          yield* settle
          yield* store.append(id, [event("After")], Exact({ version: 1 }))
          yield* Eventually.eventually(
            (s: Array<string>) => `the event after the loss; the group saw ${JSON.stringify(s)}`,
            Effect.sync(() => [...seen]),
            (s) => s.length === 2
          )
          expect(seen).toEqual(["Before", "After"])
          expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
          yield* Fiber.interrupt(fiber)
          const warned = logs.filter((line) => line.includes("reading the log failed"))
          expect(warned.length, logs.join("\n")).toBeGreaterThan(0)
          expect(warned[0]).toMatch(/^WARN /)
          expect(warned[0]).toContain("terminating connection due to administrator command")
        })
        yield* test.pipe(Effect.provide(context), Effect.provide(logger))
      }),
    60_000
  )

  it.scopedLive(
    "after its LISTEN connection is terminated, a subscription wakes on appends again within seconds, not at its poll",
    () =>
      Effect.gen(function* () {
        const { context, logger, logs, terminateAll } = yield* setup
        const test = Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const id = `listen-${randomUUID()}`
          const seen: Array<string> = []
          // Only a wake-up can bring an event before this poll.
          const fiber = yield* Effect.fork(Subscription.run(seeing(seen, id), { pollInterval: "60 seconds" }))
          yield* Effect.sleep("300 millis")
          expect(yield* terminateAll).toBeGreaterThan(0)
          yield* settle
          const woke = event("Woke")
          yield* store.append(id, [woke], NoStream())
          yield* Eventually.eventsVisible([woke.eventId])
          // A wake-up may come while an open transaction elsewhere on the cluster still hides the
          // event from catch-up reads; each further append wakes the subscription again.
          for (let i = 0; i < 200 && seen.length === 0; i++) {
            if (i % 20 === 10) yield* store.append(`nudge-${randomUUID()}`, [event("Nudge")], NoStream())
            yield* Effect.sleep("50 millis")
          }
          yield* Fiber.interrupt(fiber)
          expect(seen, logs.join("\n")).toEqual(["Woke"])
          const lost = logs.filter((line) => line.includes("LISTEN cobro_events lost"))
          expect(lost.length, logs.join("\n")).toBeGreaterThan(0)
          expect(lost[0]).toContain("terminating connection due to administrator command")
        })
        yield* test.pipe(Effect.provide(context), Effect.provide(logger))
      }),
    60_000
  )
})
