/**
 * Trace context with the durable intents (issue 34; brief, "Exactly once at the edge"): a webhook
 * delivery scheduled, or a terminal push claimed, inside a recorded span keeps that span's W3C
 * traceparent beside its queue row (never in the events), whichever append path wrote it; nothing
 * outside a span or with tracing off. The queue's claim and the pusher's read hand it back. On
 * PGlite and PostgreSQL.
 */
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import * as EventStore from "@cobro/domain/EventStore"
import { IntegrationId, MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as Notifications from "@cobro/domain/Notifications"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as PgDeliveryQueue from "../src/PgDeliveryQueue.js"
import * as ReadModels from "../src/ReadModels.js"
import * as TraceContext from "../src/TraceContext.js"
import * as Databases from "./support/Databases.js"
import * as Fixtures from "./support/Fixtures.js"
import { storeSuite } from "./support/StoreTest.js"

const encodeDelivery = Schema.encodeSync(WebhookDelivery.Event)

/** A delivery's schedule, due a second ago, as the outbox appends it (one event, a new stream). */
const scheduled = (notificationId: NotificationId, now: DateTime.Utc) => {
  const event = new WebhookDelivery.DeliveryScheduled({
    notificationId,
    merchantId: MerchantId.make("MER_TRACE"),
    url: "https://merchant.example/hook",
    type: "SALE_APPROVED",
    subject: TransactionId.make(`TRX_${notificationId.slice(0, 8)}`),
    body: '{"ok":true}',
    signingKey: "EMPTY",
    sandbox: false,
    dueAt: DateTime.subtract(now, { seconds: 1 }),
    createdAt: now
  })
  const append: EventStore.BatchAppend = {
    streamId: Notifications.deliveryStreamOf(notificationId),
    events: [
      {
        eventId: randomUUID(),
        type: event._tag,
        schemaVersion: 1,
        data: encodeDelivery(event),
        metadata: {}
      }
    ],
    expected: EventStore.ExpectedVersion.NoStream()
  }
  return append
}

/** A new notification id and its schedule. */
const newDelivery = Effect.map(DateTime.now, (now) => scheduled(NotificationId.make(randomUUID()), now))

/** The stored traceparent of a delivery stream's row (`null`: none). */
const storedFor = (streamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ traceparent: string | null }>`
        SELECT traceparent FROM cobro_rm_webhook_deliveries WHERE stream_id = ${streamId}`,
      (rows) => {
        expect(rows).toHaveLength(1)
        return rows[0]!.traceparent
      }
    )
  )

/** The traceparent of the span running now (the test's `request` span). */
const currentTraceparent = Effect.map(Effect.currentSpan, (span) => TraceContext.traceparentOf(span)!)

/**
 * The three ways an append reaches the database: alone (autocommit), as a batch, in a caller's
 * transaction, whose own span (`@effect/sql`'s) is the one active at the append: a child of the
 * request's, so in its trace.
 */
const paths: ReadonlyArray<
  readonly [
    string,
    (
      append: EventStore.BatchAppend
    ) => Effect.Effect<unknown, unknown, EventStore.EventStore | SqlClient.SqlClient>,
    { readonly spanOfItsOwn: boolean }
  ]
> = [
  [
    "one event to a new stream",
    (a) => Effect.flatMap(EventStore.EventStore, (store) => store.append(a.streamId, a.events, a.expected)),
    { spanOfItsOwn: false }
  ],
  [
    "a batch with the outcome's stream",
    (a) =>
      Effect.flatMap(EventStore.EventStore, (store) =>
        store.appendBatch([
          a,
          {
            streamId: `Other-${randomUUID()}`,
            events: [{ eventId: randomUUID(), type: "Noted", schemaVersion: 1, data: {}, metadata: {} }],
            expected: EventStore.ExpectedVersion.NoStream()
          }
        ])
      ),
    { spanOfItsOwn: false }
  ],
  [
    "inside a caller's transaction",
    (a) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.flatMap(EventStore.EventStore, (store) => store.append(a.streamId, a.events, a.expected))
        )
      ),
    { spanOfItsOwn: true }
  ]
]

/** A traceparent's trace id. */
const traceIdOf = (traceparent: string | null) => traceparent?.split("-")[1]

const checkout = (integrationId: IntegrationId, at: DateTime.Utc) =>
  Fixtures.checkoutCreated({ integrationId, merchantId: "MER_TRACE", sandbox: false, createdAt: at })

/** Appends checkout events at the stream's current version. */
const recordCheckout = (integrationId: IntegrationId, events: ReadonlyArray<TerminalCheckout.Event>) =>
  Fixtures.recordEvents(`TerminalCheckout-${integrationId}`, events.map(Fixtures.checkoutEvent))

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  storeSuite(PgDeliveryQueue.layer.pipe(Layer.provideMerge(database)), 60_000)(name, (it) => {
    for (const [path, append, { spanOfItsOwn }] of paths) {
      it.effect(`a delivery scheduled inside a span keeps the span's traceparent (${path})`, () =>
        Effect.gen(function* () {
          const delivery = yield* newDelivery
          const traceparent = yield* Effect.withSpan(
            Effect.zipLeft(currentTraceparent, append(delivery)),
            "request"
          )
          expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
          const stored = yield* storedFor(delivery.streamId)
          if (spanOfItsOwn) {
            expect(stored).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
            expect(traceIdOf(stored)).toBe(traceIdOf(traceparent))
          } else expect(stored).toBe(traceparent)
        })
      )

      it.effect(`a delivery scheduled outside a span or with tracing off keeps none (${path})`, () =>
        Effect.gen(function* () {
          if (!spanOfItsOwn) {
            const outside = yield* newDelivery
            yield* append(outside)
            expect(yield* storedFor(outside.streamId)).toBeNull()
          }
          const off = yield* newDelivery
          yield* append(off).pipe(Effect.withSpan("request"), Effect.withTracerEnabled(false))
          expect(yield* storedFor(off.streamId)).toBeNull()
        })
      )
    }

    it.effect("an untraced append after a traced one on the same connection inherits nothing", () =>
      Effect.gen(function* () {
        const traced = yield* newDelivery
        const store = yield* EventStore.EventStore
        yield* store.appendBatch([traced]).pipe(Effect.withSpan("request"))
        const after = yield* newDelivery
        yield* store.appendBatch([after])
        expect(yield* storedFor(traced.streamId)).not.toBeNull()
        expect(yield* storedFor(after.streamId)).toBeNull()
      })
    )

    it.effect("the events stay as appended: the traceparent is not in their data nor metadata", () =>
      Effect.gen(function* () {
        const delivery = yield* newDelivery
        yield* Effect.withSpan(append0(delivery), "request")
        const stored = yield* Effect.flatMap(EventStore.EventStore, (store) =>
          store.readStream(delivery.streamId)
        )
        expect(stored.map((e) => ({ data: e.data, metadata: e.metadata }))).toEqual(
          delivery.events.map((e) => ({ data: e.data, metadata: e.metadata }))
        )
        expect(JSON.stringify(stored.map((e) => [e.data, e.metadata]))).not.toContain("traceparent")
      })
    )

    it.effect("a claim hands back the traceparent of what scheduled the delivery", () =>
      Effect.gen(function* () {
        const traced = yield* newDelivery
        const untraced = yield* newDelivery
        const traceparent = yield* Effect.withSpan(
          Effect.zipLeft(currentTraceparent, append0(traced)),
          "request"
        )
        yield* append0(untraced)
        const queue = yield* DeliveryQueue.DeliveryQueue
        const claims = yield* queue.claim({
          now: yield* DateTime.now,
          limit: 10_000,
          lease: Duration.minutes(5),
          owner: `trace-${randomUUID()}`
        })
        const byStream = new Map(claims.map((c) => [Notifications.deliveryStreamOf(c.notificationId), c]))
        expect(byStream.get(traced.streamId)?.traceparent).toBe(traceparent)
        expect(byStream.get(untraced.streamId)?.traceparent).toBeUndefined()
      })
    )

    it.effect(
      "a push claimed inside a span keeps its traceparent, and a claim again (the pusher's) keeps the first",
      () =>
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const traced = IntegrationId.make(`INT_${randomUUID().slice(0, 8)}`)
          const untraced = IntegrationId.make(`INT_${randomUUID().slice(0, 8)}`)
          const traceparent = yield* Effect.withSpan(
            Effect.zipLeft(
              currentTraceparent,
              recordCheckout(traced, [
                checkout(traced, now),
                new TerminalCheckout.PushAttempted({ attempt: 1, at: now })
              ])
            ),
            "request"
          )
          yield* recordCheckout(untraced, [
            checkout(untraced, now),
            new TerminalCheckout.PushAttempted({ attempt: 1, at: now })
          ])
          // The pusher claims again, in a span of its own: the row keeps the request's.
          yield* recordCheckout(traced, [new TerminalCheckout.PushAttempted({ attempt: 2, at: now })]).pipe(
            Effect.withSpan("pusher")
          )
          const due = yield* ReadModels.duePushClaims({ claimedBefore: now, limit: 10_000 })
          const byId = new Map(due.map((d) => [d.integrationId, d.traceparent]))
          expect(byId.get(traced)).toBe(traceparent)
          expect(byId.has(untraced)).toBe(true)
          expect(byId.get(untraced)).toBeUndefined()
        })
    )
  })

/** The first path: one event to a new stream, outside a transaction. */
const append0 = paths[0]![1]

describe("trace context with the durable intents", () => {
  suite("on PGlite", Databases.pglite)
  suite("on PostgreSQL", Databases.postgres)
})
