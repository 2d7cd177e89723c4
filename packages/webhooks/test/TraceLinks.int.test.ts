/**
 * A webhook attempt carries the id of what caused it (issue 34): the delivery scheduled with a sale's
 * outcome keeps the traceparent of the span that scheduled it, the dispatcher's span of the attempt
 * links to it, and the POST to the merchant's endpoint (a real local HTTPS server) carries the
 * attempt's own `traceparent`. With tracing off, nothing is kept and no header is sent. On PGlite and
 * a real PostgreSQL, with a tracer that records its spans.
 */
import * as IdGenerator from "@cobro/domain/IdGenerator"
import type { NotificationId } from "@cobro/domain/Ids"
import * as Notifications from "@cobro/domain/Notifications"
import * as Outbox from "@cobro/domain/Outbox"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Databases from "../../store-pg/test/support/Databases.js"
import * as Dispatcher from "../src/Dispatcher.js"
import * as R from "./support/Receiver.js"
import * as TestServices from "./support/Services.js"
import * as RecordingTracer from "./support/RecordingTracer.js"

const withDatabase = (database: Layer.Layer<Databases.StoreServices>) =>
  Layer.mergeAll(
    PgDeliveryQueue.layer,
    TestServices.transport,
    IdGenerator.layerSequential,
    // A sale's outcome schedules its delivery in the same commit, as the server does.
    Layer.succeed(Outbox.Outbox, Notifications.outbox)
  ).pipe(Layer.provideMerge(database))

const config: Dispatcher.Config = { owner: "trace-dispatcher" }

const W3C = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/

/** A traceparent's trace id. */
const traceIdOf = (traceparent: string | null | undefined) => traceparent?.split("-")[1]

/** Merchant `merchantId` with its production webhook at `url`, and its approved sale `n`. */
const sale = (merchantId: string, url: string, n: number) =>
  Effect.zipRight(
    F.merchant(merchantId, { production: url, keyBase: n * 10 }),
    F.approvedSale({ merchantId, n })
  )

/** The merchant's one delivery as the queue keeps it: its notification id and stored traceparent. */
const deliveryOf = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ notification_id: string; traceparent: string | null }>`
        SELECT notification_id::text AS notification_id, traceparent
        FROM cobro_rm_webhook_deliveries WHERE merchant_id = ${merchantId}`,
      (rows) => {
        expect(rows).toHaveLength(1)
        return {
          notificationId: rows[0]!.notification_id as NotificationId,
          traceparent: rows[0]!.traceparent
        }
      }
    )
  )

/** The `traceparent` header of each POST the receiver got, in turn (`undefined` where none was sent). */
const traceparentsSent = (rx: { readonly received: ReadonlyArray<R.Received> }) =>
  rx.received.map((request) => request.headers["traceparent"])

/** The recorded attempt spans of a notification. */
const attemptsOf = (spans: ReadonlyArray<RecordingTracer.RecordedSpan>, notificationId: string) =>
  spans.filter(
    (s) => s.name === "Dispatcher.attempt" && s.attributes.get("cobro.delivery_id") === notificationId
  )

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  layer(withDatabase(database), { excludeTestServices: true, timeout: 120_000 })(
    `webhook attempts linked to their cause on ${name}`,
    (it) => {
      it.scoped(
        "a dispatched attempt's span links to the span that scheduled the delivery, and its POST carries the attempt's traceparent",
        () =>
          Effect.gen(function* () {
            const { spans, tracer } = RecordingTracer.make()
            const traced = RecordingTracer.withTracer(tracer)
            const rx = yield* R.receiver({ tls: true })
            yield* sale("MER_TL1", rx.url, 1).pipe(Effect.withSpan("request"), traced)
            const request = spans.find((s) => s.name === "request")!
            // Kept with the delivery: a span of the request's trace (the command's, within it).
            const delivery = yield* deliveryOf("MER_TL1")
            expect(delivery.traceparent).toMatch(W3C)
            expect(traceIdOf(delivery.traceparent)).toBe(request.traceId)
            expect(spans.map(RecordingTracer.traceparentOf)).toContain(delivery.traceparent)

            expect(yield* Dispatcher.runOnce(config).pipe(traced)).toBeGreaterThanOrEqual(1)
            const [attempt, ...others] = attemptsOf(spans, delivery.notificationId)
            expect(others).toEqual([])
            expect(attempt!.kind).toBe("client")
            expect(attempt!.ended).toBe(true)
            expect(attempt!.links.map((link) => RecordingTracer.traceparentOf(link.span))).toEqual([
              delivery.traceparent
            ])
            expect(Object.fromEntries(attempt!.attributes)).toMatchObject({
              "cobro.delivery_id": delivery.notificationId,
              "cobro.notification_type": "SALE_APPROVED",
              "cobro.attempt": 1,
              "http.response.status_code": 200
            })
            // A trace of its own (the dispatcher's), linked to the request's rather than inside it.
            expect(attempt!.traceId).not.toBe(request.traceId)
            expect(traceparentsSent(rx)).toEqual([RecordingTracer.traceparentOf(attempt!)])
          })
      )

      it.scoped(
        "with tracing off nothing is kept and no traceparent is sent; a delivery kept with none is attempted unlinked",
        () =>
          Effect.gen(function* () {
            const rx = yield* R.receiver({ tls: true })
            yield* sale("MER_TL2", rx.url, 2).pipe(
              Effect.withSpan("request"),
              Effect.withTracerEnabled(false)
            )
            const delivery = yield* deliveryOf("MER_TL2")
            expect(delivery.traceparent).toBeNull()
            yield* Dispatcher.runOnce(config).pipe(Effect.withTracerEnabled(false))
            expect(traceparentsSent(rx)).toEqual([undefined])

            // Tracing on at the dispatcher only: a span with no link, and its own traceparent sent.
            const { spans, tracer } = RecordingTracer.make()
            yield* sale("MER_TL3", rx.url, 3).pipe(Effect.withTracerEnabled(false))
            const unlinked = yield* deliveryOf("MER_TL3")
            expect(unlinked.traceparent).toBeNull()
            yield* Dispatcher.runOnce(config).pipe(RecordingTracer.withTracer(tracer))
            const [attempt] = attemptsOf(spans, unlinked.notificationId)
            expect(attempt!.links).toEqual([])
            expect(traceparentsSent(rx)).toEqual([undefined, RecordingTracer.traceparentOf(attempt!)])
          })
      )

      it.scoped(
        "Dispatcher.attempt is the attempt's span: linked to the traceparent given, its status code recorded, sent as the POST's traceparent",
        () =>
          Effect.gen(function* () {
            const { spans, tracer } = RecordingTracer.make()
            const rx = yield* R.receiver({ tls: true })
            rx.answer = () => ({ status: 503 })
            yield* sale("MER_TL4", rx.url, 4).pipe(
              Effect.withSpan("request"),
              RecordingTracer.withTracer(tracer)
            )
            const delivery = yield* deliveryOf("MER_TL4")
            const outcome = yield* Dispatcher.attempt(
              delivery.notificationId,
              config,
              undefined,
              delivery.traceparent!
            ).pipe(RecordingTracer.withTracer(tracer))
            expect(outcome).toMatchObject({ _tag: "Attempted", attempt: 1, status: "PENDING" })
            const [attempt, ...others] = attemptsOf(spans, delivery.notificationId)
            expect(others).toEqual([])
            expect(attempt!.links.map((link) => RecordingTracer.traceparentOf(link.span))).toEqual([
              delivery.traceparent
            ])
            expect(attempt!.attributes.get("http.response.status_code")).toBe(503)
            expect(attempt!.attributes.get("cobro.attempt")).toBe(1)
            expect(attempt!.ended).toBe(true)
            expect(traceparentsSent(rx)).toEqual([RecordingTracer.traceparentOf(attempt!)])
          })
      )
    }
  )
}
