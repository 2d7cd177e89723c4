/**
 * The local hand-off (`LogNotifications.announce`): an append this process commits wakes its own
 * consumers (the webhook dispatcher among them) at once, without waiting for the NOTIFY's round trip
 * through the database, which other processes still get. On real PostgreSQL.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as LogNotifications from "../src/LogNotifications.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as Databases from "./support/Databases.js"
import { event, streamId } from "./support/StoreContract.js"

describe("local wake-ups on PostgreSQL", () => {
  it.scopedLive(
    "an autocommit append announces each stream it wrote to this process as soon as it has committed",
    () =>
      Effect.gen(function* () {
        const url = yield* Databases.postgresDatabase
        const announced: Array<string> = []
        // The event store over a LogNotifications that only records what it is told: no NOTIFY involved.
        const services = yield* Layer.build(
          PgEventStore.layerMigrated.pipe(
            Layer.provideMerge(
              Layer.succeed(LogNotifications.LogNotifications, {
                appended: Stream.never,
                announced: Stream.never,
                announce: (id) => {
                  announced.push(id)
                }
              })
            ),
            Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 4 }))
          )
        )
        const store = Context.get(services, EventStore.EventStore)
        const one = streamId()
        yield* store.append(one, [event("Tested")], EventStore.ExpectedVersion.NoStream())
        expect(announced).toEqual([one])
        const [a, b] = [streamId(), streamId()]
        yield* store.appendBatch([
          { streamId: a, events: [event("Tested")], expected: EventStore.ExpectedVersion.NoStream() },
          { streamId: b, events: [event("Tested")], expected: EventStore.ExpectedVersion.NoStream() }
        ])
        // Each stream of a batch.
        expect(announced).toEqual([one, a, b])
        // A refused append announces nothing.
        yield* Effect.either(store.append(one, [event("Tested")], EventStore.ExpectedVersion.NoStream()))
        expect(announced).toEqual([one, a, b])
      }).pipe(Effect.orDie)
  )

  it.scopedLive("what this process announces reaches its consumers of announced appends", () =>
    Effect.gen(function* () {
      const url = yield* Databases.postgresDatabase
      const notifications = Context.get(
        yield* Layer.build(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 4 })),
        LogNotifications.LogNotifications
      )
      const received = yield* Effect.fork(Stream.runCollect(Stream.take(notifications.announced, 2)))
      yield* Effect.sleep("100 millis")
      notifications.announce("Stream-1")
      notifications.announce("Stream-2")
      const values = Chunk.toReadonlyArray(yield* Fiber.join(received).pipe(Effect.timeout("5 seconds")))
      expect(values).toEqual(["Stream-1", "Stream-2"])
    }).pipe(Effect.orDie)
  )
})
