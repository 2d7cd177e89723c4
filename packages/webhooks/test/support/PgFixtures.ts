/**
 * A throwaway PostgreSQL database for the dispatcher-process suites (issue 5, Tests): the store on
 * it, the tables the dispatcher reads created before any process starts, approved sales whose
 * notifications the processes' notifier schedules, and the log's view of every delivery.
 */
import * as DeliveryAdmin from "@cobro/domain/DeliveryAdmin"
import type * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { NotificationId } from "@cobro/domain/Ids"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Projection from "@cobro/store-pg/Projection"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Databases from "../../../store-pg/test/support/Databases.js"
import * as F from "@cobro/domain/testing/WebhookFixtures"

/** A fresh database on the local PostgreSQL server (fails loudly if none answers), dropped with the scope. */
export const database = Databases.postgresDatabase

/** Random ids (unique across processes), as the server's `Ids.layerRandom`. */
const RandomIds = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix: string) => Effect.sync(() => prefix + randomBytes(12).toString("hex")),
  uuid: Effect.sync(() => randomUUID())
})

/** The migrated store on `url`, with the dispatcher's tables (created here, before any process races to). */
export const store = (
  url: string
): Layer.Layer<EventStore.EventStore | SqlClient.SqlClient | IdGenerator.IdGenerator> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      for (const projection of ReadModels.all) yield* Projection.setup(projection)
      yield* PgDeliveryQueue.setup
    })
  ).pipe(
    Layer.provideMerge(PgEventStore.layerMigrated),
    Layer.provideMerge(RandomIds),
    Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(url), maxConnections: 8 })),
    Layer.orDie
  )

/** The merchant of these suites: production webhook `url`, test webhook `url?mode=test`. */
export const MERCHANT = "MER_CRASH"
/** Its production secret key (the test vault opens `sealed:1`); sandbox notifications use "". */
export const PRODUCTION_SECRET = "secret-1"

/** Whether sale `n` is a sandbox (test-key) sale: one in four. */
export const isSandbox = (n: number) => n % 4 === 0

/** The merchant and `count` approved terminal card sales `TRX_1`…`TRX_<count>`, appended through the deciders. */
export const seed = (receiverUrl: string, count: number) =>
  Effect.gen(function* () {
    yield* F.merchant(MERCHANT, { production: receiverUrl, test: `${receiverUrl}?mode=test` })
    yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i + 1),
      (n) => F.approvedSale({ merchantId: MERCHANT, n, sandbox: isSandbox(n) }),
      { concurrency: 8, discard: true }
    )
  })

/** How many deliveries the read model holds, and how many of them are delivered. */
export const deliveryCounts = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ total: string; delivered: string }>`
    SELECT count(*)::text AS total, count(*) FILTER (WHERE status = 'DELIVERED')::text AS delivered
    FROM cobro_rm_webhook_deliveries`
).pipe(
  Effect.map((rows) => ({ total: Number(rows[0]!.total), delivered: Number(rows[0]!.delivered) })),
  Effect.orDie
)

/** Every scheduled delivery as the log's WebhookDelivery stream tells it. */
export const deliveriesInLog = Effect.gen(function* () {
  const scheduled = yield* F.eventsOfType("DeliveryScheduled")
  return yield* Effect.forEach(
    scheduled,
    (event) =>
      DeliveryAdmin.listAttempts(
        NotificationId.make((event.data as { notificationId: string }).notificationId)
      ).pipe(Effect.orDie),
    { concurrency: 8 }
  )
})
