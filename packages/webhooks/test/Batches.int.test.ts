/**
 * The notifier and the dispatcher writing in batches over PGlite and a real PostgreSQL (issue 5,
 * webhooks throughput): the notifier as a batch consumer of the log schedules what each event plans,
 * with one `appendBatch` per batch read, and falls back inside the consumer's transaction; a
 * dispatcher round records attempts answered together in shared transactions and gives its claims
 * back in one statement.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as Notifications from "@cobro/domain/Notifications"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as Projection from "@cobro/store-pg/Projection"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as Subscription from "@cobro/store-pg/Subscription"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Databases from "../../store-pg/test/support/Databases.js"
import * as Eventually from "../../store-pg/test/support/Eventually.js"
import * as Dispatcher from "../src/Dispatcher.js"
import * as Notifier from "../src/Notifier.js"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import { scheduledByAnother } from "./support/LogSteps.js"
import * as R from "./support/Receiver.js"
import * as TestServices from "./support/Services.js"

const withDatabase = (database: Layer.Layer<Databases.StoreServices>) =>
  Layer.mergeAll(PgDeliveryQueue.layer, TestServices.transport, IdGenerator.layerSequential).pipe(
    Layer.provideMerge(database)
  )

/** The store in context with its `appendBatch` calls counted (and whether each failed). */
const countingBatches = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const batches: Array<{ items: number; failed: boolean }> = []
    const result = yield* Effect.updateService(body, EventStore.EventStore, (store) => ({
      ...store,
      appendBatch: (items: ReadonlyArray<EventStore.BatchAppend>) =>
        store.appendBatch(items).pipe(
          Effect.tapBoth({
            onFailure: () => Effect.sync(() => batches.push({ items: items.length, failed: true })),
            onSuccess: () => Effect.sync(() => batches.push({ items: items.length, failed: false }))
          })
        )
    }))
    return { result, batches }
  })

/** What the log holds for each delivery stream named. */
const streamsOf = (streamIds: ReadonlyArray<string>) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.forEach(streamIds, (streamId) =>
      Effect.map(store.readStream(streamId), (events) =>
        events.map((e) => ({
          streamId,
          eventId: e.eventId,
          type: e.type,
          data: e.data,
          metadata: e.metadata
        }))
      )
    )
  )

/** The deliveries the per-event path plans for the raising events of the log: the oracle. */
const planned = (events: ReadonlyArray<EventStore.LoggedEvent>) =>
  Effect.map(
    Effect.forEach(events.filter(Notifications.mayRaise), (event) =>
      Effect.map(Notifications.planFor(event), (plan) =>
        Option.flatMap(plan, Either.getRight).pipe(
          Option.map((command) => Notifications.scheduleAppend(event, command))
        )
      )
    ),
    (plans) => plans.flatMap((p) => (Option.isSome(p) ? [p.value] : []))
  )

/** A fresh consumer name per test: each starts at the log's beginning, and replays what others scheduled. */
let consumers = 0
const consumerName = () => `webhooks:notifier:batch-test-${++consumers}`

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  layer(withDatabase(database), { excludeTestServices: true, timeout: 120_000 })(
    `webhooks in batches on ${name}`,
    (it) => {
      it.scoped(
        "the notifier as a batch consumer schedules what each event plans, one appendBatch per batch read",
        () =>
          Effect.gen(function* () {
            yield* F.merchant("MER_B1", {
              production: "https://merchant.example/b1",
              test: "https://t.example/b1"
            })
            yield* F.merchant("MER_B2", { keyBase: 10 })
            for (let n = 1; n <= 9; n++) {
              yield* F.approvedSale({
                merchantId: n % 3 === 0 ? "MER_B2" : "MER_B1",
                n: 700 + n,
                sandbox: n % 4 === 0
              })
            }
            yield* F.linkPayment({ merchantId: "MER_B1", n: 720 }, "paid")
            yield* F.onlinePayment({ merchantId: "MER_B2", n: 721 }, ["reject"])
            yield* Eventually.logVisible
            const handle = yield* Notifier.makeBatchHandler()
            const consumer = Subscription.makeBatch(consumerName(), handle)
            const { batches } = yield* countingBatches(Subscription.catchUp(consumer, { batchSize: 30 }))
            yield* Eventually.logVisible
            const expected = yield* planned(yield* F.allEvents)
            expect(expected.length).toBeGreaterThanOrEqual(11)
            const streams = yield* streamsOf(expected.map((e) => e.streamId))
            expect(streams).toEqual(
              expected.map((append) =>
                append.events.map((e) => ({
                  streamId: append.streamId,
                  eventId: e.eventId,
                  type: e.type,
                  data: e.data,
                  metadata: e.metadata
                }))
              )
            )
            // Several notifications per appendBatch, none failed (the suite's earlier deliveries re-append as no-ops).
            expect(batches.length).toBeGreaterThan(0)
            expect(batches.every((b) => !b.failed)).toBe(true)
            expect(batches.some((b) => b.items > 1)).toBe(true)
          })
      )

      it.scoped(
        "inside the consumer's transaction, a batch with one delivery scheduled already falls back: the others are scheduled, the checkpoint saved",
        () =>
          Effect.gen(function* () {
            yield* F.merchant("MER_B3", { production: "https://merchant.example/b3", keyBase: 20 })
            for (let n = 1; n <= 5; n++) yield* F.approvedSale({ merchantId: "MER_B3", n: 800 + n })
            yield* Eventually.logVisible
            const sales = (yield* F.eventsOfType("SaleApproved")).filter((e) =>
              (e.streamId as string).endsWith("INT_803")
            )
            // Another notifier scheduled TRX_803's delivery already, with an event id of its own.
            const otherId = "00000000-0000-4000-8000-00000000ffff"
            yield* scheduledByAnother(sales[0]!, otherId)
            yield* Eventually.logVisible
            const consumer = Subscription.makeBatch(consumerName(), yield* Notifier.makeBatchHandler())
            const { result, batches } = yield* countingBatches(
              Subscription.catchUp(consumer, { batchSize: 10_000 })
            )
            expect(result).toBeGreaterThan(0)
            // One batch read; it failed on the pre-scheduled stream and each delivery went alone.
            expect(batches.filter((b) => b.failed)).toHaveLength(1)
            const checkpoint = yield* Subscription.checkpoint(consumer.name)
            const all = yield* F.allEvents
            expect(checkpoint.globalPosition).toBeGreaterThanOrEqual(
              all.filter((e) => e.streamId.startsWith("TerminalCheckout-")).at(-1)!.globalPosition
            )
            yield* Eventually.logVisible
            const mine = (yield* F.eventsOfType("SaleApproved")).filter((e) =>
              [801, 802, 803, 804, 805].some((n) => e.streamId.endsWith(`INT_${n}`))
            )
            const streams = yield* streamsOf(
              mine.map((e) => Notifications.deliveryStreamOf(Notifications.notificationIdOf(e.eventId)))
            )
            expect(streams.map((s) => s.map((e) => e.type))).toEqual(
              Array.from({ length: 5 }, () => ["DeliveryScheduled"])
            )
            expect(streams.flat().filter((e) => e.eventId === otherId)).toHaveLength(1)
          })
      )

      it.scoped(
        "a dispatcher round records attempts answered together in shared transactions, each record ending its claim's lease",
        () =>
          Effect.gen(function* () {
            const rx = yield* R.receiver({ tls: true })
            // Every answer held until one instant: the attempts complete together.
            let release: number | undefined
            rx.answer = () => {
              const now = Date.now()
              release ??= now + 400
              return { status: 200, delayMs: Math.max(0, release - now) }
            }
            yield* F.merchant("MER_B4", { production: rx.url, keyBase: 30 })
            for (let n = 1; n <= 20; n++) yield* F.approvedSale({ merchantId: "MER_B4", n: 900 + n })
            yield* Eventually.logVisible
            yield* Subscription.catchUp(
              Subscription.makeBatch(consumerName(), yield* Notifier.makeBatchHandler())
            )
            yield* Eventually.logVisible
            for (const projection of ReadModels.asynchronous) yield* Projection.catchUp(projection)
            const sql = yield* SqlClient.SqlClient
            const streams = (yield* F.eventsOfType("SaleApproved"))
              .filter((e) => /INT_9\d\d$/.test(e.streamId))
              .map((e) => Notifications.deliveryStreamOf(Notifications.notificationIdOf(e.eventId)))
            expect(streams).toHaveLength(20)
            // Earlier tests' deliveries (fake URLs) may be due too: a big batch takes them all.
            const { batches } = yield* countingBatches(
              Dispatcher.runOnce({ owner: "batch-dispatcher", batchSize: 1_000, concurrency: 64 })
            )
            expect(rx.received).toHaveLength(20)
            const rows = yield* sql<{ stream_id: string; type: string; transaction_id: string }>`
              SELECT stream_id, type, transaction_id::text AS transaction_id FROM cobro_events
              WHERE stream_id IN ${sql.in(streams)} AND type IN ('AttemptSucceeded', 'AttemptFailed')`
            expect(rows.map((r) => r.type).sort()).toEqual(
              Array.from({ length: 20 }, () => "AttemptSucceeded")
            )
            expect(new Set(rows.map((r) => r.stream_id)).size).toBe(20)
            // Fewer commits than attempts: attempts answered during an append share the next one. (PGlite
            // runs a statement synchronously in this process: no answer is read while an append runs.)
            if (name === "PostgreSQL") {
              expect(new Set(rows.map((r) => r.transaction_id)).size).toBeLessThan(20)
              expect(batches.length).toBeLessThan(20)
            }
            expect(batches.reduce((n, b) => n + b.items, 0)).toBeGreaterThanOrEqual(20)
            expect(batches.every((b) => !b.failed)).toBe(true)
            // Each lease ended by its attempt's record, with no release: the row stays, at the version
            // it was claimed at, behind its stream's.
            const leases = yield* sql<{ owner: string; live: boolean }>`
              SELECT l.owner, l.claimed_version = d.version AS live
              FROM cobro_webhook_leases l JOIN cobro_rm_webhook_deliveries d USING (stream_id)
              WHERE l.stream_id IN ${sql.in(streams)}`
            expect(leases).toEqual(
              Array.from({ length: 20 }, () => ({ owner: "batch-dispatcher", live: false }))
            )
          })
      )
    }
  )
}
