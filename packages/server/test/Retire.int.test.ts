/**
 * `Store.retire`: the server schedules notifications with their outcomes, so the log's notifier only
 * catches up, once, what an earlier version left behind its checkpoint. On PGlite.
 */
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PgliteClient from "@cobro/store-pg/PgliteClient"
import * as Subscription from "@cobro/store-pg/Subscription"
import * as Notifier from "@cobro/webhooks/Notifier"
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "node:path"
import * as Store from "../src/Store.js"
import * as ServerProcess from "./support/ServerProcess.js"

const scheduled = Effect.map(F.allEvents, (events) => events.filter((e) => e.type === "DeliveryScheduled"))

const notifier = Effect.map(Notifier.makeBatchHandler(), (handleBatch) =>
  Subscription.makeBatch(Notifier.CONSUMER_NAME, handleBatch)
)

const savedCheckpoints = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string }>`SELECT name FROM cobro_checkpoints WHERE name = ${Notifier.CONSUMER_NAME}`
).pipe(Effect.orDie)

const onPglite = (dataDir: string) =>
  Layer.mergeAll(PgEventStore.layerMigrated, IdGenerator.layerSequential).pipe(
    Layer.provideMerge(PgliteClient.layer({ dataDir })),
    Layer.orDie
  )

describe("retiring the log's notifier", { timeout: 120_000 }, () => {
  it.effect(
    "a notifier checkpoint left by an earlier version is caught up once and deleted: the outcomes behind it are scheduled; without one nothing is read",
    () =>
      Effect.gen(function* () {
        const dataDir = Path.join(yield* ServerProcess.tempDir, "data")
        yield* Effect.gen(function* () {
          yield* F.setTime(0)
          yield* F.merchant("MER_1", { production: "https://shop.example/hooks" })
          // An earlier version's notifier saw the start of the log, not this sale.
          const consumer = yield* notifier
          yield* Subscription.catchUp(consumer)
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          expect(yield* scheduled).toEqual([])
          yield* Store.retire(consumer)
          expect((yield* scheduled).map((e) => e.metadata.causationId)).toHaveLength(1)
          expect(yield* savedCheckpoints).toEqual([])
          // Retired: a later outcome (which the outbox would schedule) is not looked for in the log.
          yield* F.approvedSale({ merchantId: "MER_1", n: 2 })
          yield* Store.retire(consumer)
          expect(yield* scheduled).toHaveLength(1)
          expect(yield* savedCheckpoints).toEqual([])
        }).pipe(Effect.provide(onPglite(dataDir)))
      }).pipe(Effect.scoped)
  )
})
