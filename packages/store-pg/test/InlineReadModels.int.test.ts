/**
 * The read models written with their events (`InlineReadModels`): rebuilt beside concurrent appends
 * and an unrelated long transaction without losing or doubling an event, installed over a database
 * of an earlier version (whose runners had not caught up) by migration 8, and tolerant of a
 * notification body that names no reference. On PGlite and on a real PostgreSQL server.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as InlineReadModels from "../src/InlineReadModels.js"
import * as Migrations from "../src/Migrations.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const encode = Schema.encodeSync(WebhookDelivery.Event)
const at = (seconds: number) => DateTime.unsafeMake(Date.UTC(2026, 10, 26) + seconds * 1000)

const toNew = (event: WebhookDelivery.Event, body?: string): EventStore.NewEvent => ({
  eventId: randomUUID(),
  type: event._tag,
  schemaVersion: 1,
  data: body === undefined ? encode(event) : { ...(encode(event) as object), body },
  metadata: {}
})

const scheduled = (run: string, subject: number, body = "{}") =>
  new WebhookDelivery.DeliveryScheduled({
    notificationId: randomUUID() as never,
    merchantId: "MER_inline" as never,
    url: "https://merchant.example/hook",
    type: "SALE_APPROVED",
    subject: `TRX_${run}x${subject}` as never,
    body,
    signingKey: "EMPTY",
    sandbox: true,
    dueAt: at(0),
    createdAt: at(0)
  })

const failed = (attempt: number) =>
  new WebhookDelivery.AttemptFailed({
    attempt: attempt as never,
    at: at(attempt),
    outcome: { _tag: "Failed", reason: "refused" } as never,
    latencyMs: 1 as never,
    nextDueAt: Option.some(at(attempt + 900))
  })

const succeeded = (attempt: number) =>
  new WebhookDelivery.AttemptSucceeded({
    attempt: attempt as never,
    at: at(attempt),
    statusCode: 200,
    snippet: "ok" as never,
    latencyMs: 2 as never
  })

const deliveryRows = (run: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ stream_id: string; status: string; attempts: number; version: number }>`
      SELECT stream_id, status, attempts, version FROM cobro_rm_webhook_deliveries
      WHERE subject LIKE ${`TRX_${run}x%`} ORDER BY stream_id`
  ).pipe(Effect.orDie)

/**
 * One writer: a delivery scheduled, then `failures` failed attempts and a successful one, each its
 * own append. Returns the row the read model must hold for it.
 */
const writer = (run: string, index: number, failures: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const stream = Aggregate.streamId(WebhookDelivery.WebhookDelivery, `${run}-${index}`)
    yield* store.append(stream, [toNew(scheduled(run, index))], EventStore.ExpectedVersion.NoStream())
    for (let attempt = 1; attempt <= failures + 1; attempt++) {
      const event = attempt <= failures ? failed(attempt) : succeeded(attempt)
      yield* store.append(stream, [toNew(event)], EventStore.ExpectedVersion.Exact({ version: attempt }))
    }
    return { stream_id: stream, status: "DELIVERED", attempts: failures + 1, version: failures + 2 }
  })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, options: { server: boolean }) =>
  storeSuite(database, "120 seconds")(name, (it) => {
    it.effect(
      "a rebuild beside concurrent appends (and a long unrelated transaction) loses and doubles no event of an inline read model",
      withStore(function* ({ sql }) {
        const run = randomUUID().replaceAll("-", "").slice(0, 10)
        // History before the rebuild, then writers racing it.
        const before = yield* Effect.forEach([0, 1, 2, 3, 4, 5], (i) => writer(run, i, 2))
        // On a server, another session's open transaction holds the snapshot's xmin back all along:
        // the rebuild's bounded pages stop below it, and its swap must still see every committed event.
        const started = yield* Deferred.make<void>()
        const done = yield* Deferred.make<void>()
        const holder = options.server
          ? yield* Effect.fork(
              sql.withTransaction(
                Effect.gen(function* () {
                  yield* sql`SELECT pg_current_xact_id()`
                  yield* Deferred.succeed(started, undefined)
                  yield* Deferred.await(done)
                })
              )
            )
          : undefined
        if (holder !== undefined) yield* Deferred.await(started)
        const racing = yield* Effect.fork(
          Effect.forEach(
            Array.from({ length: 24 }, (_, i) => 6 + i),
            (i) => writer(run, i, i % 4),
            { concurrency: 4 }
          )
        )
        const rebuilt = yield* Effect.fork(
          Projection.rebuildAll([ReadModels.webhookDeliveries, ReadModels.lastNotification], {
            batchSize: 4
          })
        )
        const during = yield* Fiber.join(racing)
        yield* Fiber.join(rebuilt)
        yield* Deferred.succeed(done, undefined)
        if (holder !== undefined) yield* Fiber.join(holder)
        const expected = [...before, ...during].sort((a, b) => (a.stream_id < b.stream_id ? -1 : 1))
        expect(yield* deliveryRows(run)).toEqual(expected)
        // The appends after the swap write the swapped-in tables.
        const after = yield* writer(run, 30, 1)
        expect((yield* deliveryRows(run)).find((row) => row.stream_id === after.stream_id)).toEqual(after)
        const notifications = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM cobro_rm_last_notification WHERE subject LIKE ${`TRX_${run}x%`}`
        expect(notifications[0]!.n).toBe(31)
        // No runner's checkpoint: nothing follows the log for them.
        expect(
          yield* sql`SELECT name FROM cobro_checkpoints WHERE name IN ('projection:webhook_deliveries', 'projection:last_notification')`
        ).toEqual([])
      })
    )

    it.effect(
      "a notification whose body is not a JSON object is appended, and names no reference (a body that is one does)",
      withStore(function* ({ store, sql }) {
        const run = randomUUID().replaceAll("-", "").slice(0, 10)
        const bodies = [
          "plain text",
          "[1, 2]",
          JSON.stringify({ data: { metadata: { reference: 7 } } }),
          JSON.stringify({ data: { metadata: { reference: `ref-${run}` } } })
        ]
        for (const [i, body] of bodies.entries()) {
          yield* store.append(
            Aggregate.streamId(WebhookDelivery.WebhookDelivery, `${run}-${i}`),
            [toNew(scheduled(run, i), body)],
            EventStore.ExpectedVersion.NoStream()
          )
        }
        expect(
          yield* sql`SELECT subject, reference FROM cobro_rm_last_notification_by_reference
              WHERE subject LIKE ${`TRX_${run}x%`}`
        ).toEqual([{ subject: `TRX_${run}x3`, reference: `ref-${run}` }])
        expect((yield* deliveryRows(run)).length).toBe(4)
      })
    )

    it.effect("refuses to run an inline read model as a runner, or to reset it", () =>
      Effect.gen(function* () {
        const runs: ReadonlyArray<
          Effect.Effect<unknown, never, SqlClient.SqlClient | EventStore.EventStore>
        > = [Projection.catchUp(ReadModels.webhookDeliveries), Projection.reset(ReadModels.apiKeys)]
        for (const run of runs) {
          const exit = yield* Effect.exit(run)
          expect(exit._tag).toBe("Failure")
        }
        expect(() => Projection.consumer(ReadModels.terminalCheckouts)).toThrow(/written with its events/)
      })
    )
  })

suite("inline read models on PGlite", Databases.pglite, { server: false })
suite("inline read models on PostgreSQL", Databases.postgres, { server: true })

const upgrade = (name: string, database: Layer.Layer<Databases.StoreServicesUnmigrated>) =>
  storeSuite(database, "120 seconds")(name, (it) => {
    it.effect(
      "migration 8 replaces the runners of an earlier version: the tables hold every event of the log once, and their checkpoints are gone",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* Databases.migrateTo(7)
          const run = randomUUID().replaceAll("-", "").slice(0, 10)
          // An earlier version's table, with the row its runner wrote for the first event only, and
          // its checkpoint there.
          yield* sql`CREATE TABLE cobro_rm_webhook_deliveries (stream_id text PRIMARY KEY, notification_id uuid NOT NULL,
            merchant_id text NOT NULL, subject text NOT NULL, status text NOT NULL, attempts integer NOT NULL,
            due_at timestamptz)`
          const before = yield* Effect.provide(
            Effect.forEach([0, 1], (i) => writer(run, i, 1)),
            PgEventStore.layer
          )
          yield* sql`INSERT INTO cobro_rm_webhook_deliveries VALUES (${before[0]!.stream_id}, ${randomUUID()},
            'MER_inline', ${`TRX_${run}x0`}, 'PENDING', 0, now())`
          const [first] = yield* sql<{ transaction_id: string; global_position: string }>`
            SELECT transaction_id::text, global_position::text FROM cobro_events ORDER BY global_position LIMIT 1`
          yield* sql`INSERT INTO cobro_checkpoints (name, transaction_id, global_position)
            VALUES ('projection:webhook_deliveries', ${first!.transaction_id}::xid8, ${first!.global_position}::bigint)`

          const ran = yield* Migrations.run
          // Migration 8 and those after it.
          expect(ran.map(([id]) => id).filter((id) => id <= 8)).toEqual([8])
          expect(yield* deliveryRows(run)).toEqual(before)
          expect(yield* sql`SELECT name FROM cobro_checkpoints WHERE name LIKE 'projection:%'`).toEqual([])
          // From now on, each append writes its row.
          const after = yield* Effect.provide(writer(run, 2, 0), PgEventStore.layer)
          expect(yield* deliveryRows(run)).toEqual([...before, after])
          // Every inline read model's function and trigger is installed.
          for (const { inline: model } of ReadModels.all) {
            if (model === undefined) continue
            const triggers =
              yield* sql`SELECT 1 FROM pg_trigger WHERE tgname = ${InlineReadModels.functionName(model)}`
            expect(triggers.length).toBe(1)
          }
        })
    )
  })

upgrade("upgrading to inline read models on PGlite", Databases.pgliteUnmigrated)
upgrade("upgrading to inline read models on PostgreSQL", Databases.postgresUnmigrated)
