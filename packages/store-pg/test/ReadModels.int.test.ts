/** The spec's read models, maintained from domain events and rebuilt from the log (on PGlite). */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as Refund from "@cobro/domain/Refund"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const toNew = <E extends { readonly _tag: string }, I>(
  aggregate: { readonly Event: Schema.Schema<E, I> },
  event: E
) => ({
  eventId: randomUUID(),
  type: event._tag,
  schemaVersion: 1,
  data: Schema.encodeSync(aggregate.Event)(event),
  metadata: {}
})

layer(Databases.pglite, { excludeTestServices: true })("read models", (it) => {
  it.effect("C9: refunds are found by the transaction they refund", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const sql = yield* SqlClient.SqlClient
      const requested = (refundId: string, iso: string) =>
        new Refund.RefundRequested({
          refundId: refundId as Refund.RefundRequested["refundId"],
          merchantId: "MER_1" as Refund.RefundRequested["merchantId"],
          sandbox: true,
          transactionId: "TRX_1" as Refund.RefundRequested["transactionId"],
          referenceId: "order-1" as Refund.RefundRequested["referenceId"],
          amount: 1000 as Refund.RefundRequested["amount"],
          reason: "customer asked",
          requestedAt: at(iso)
        })
      for (const [id, iso] of [
        ["RFD_1", "2024-01-01T10:00:00Z"],
        ["RFD_2", "2024-01-02T10:00:00Z"]
      ] as const) {
        yield* store.append(
          Aggregate.streamId(Refund.Refund, id),
          [toNew(Refund.Refund, requested(id, iso))],
          EventStore.ExpectedVersion.NoStream()
        )
      }
      yield* Projection.catchUp(ReadModels.refundsByTransaction)
      const rows = yield* sql<{ refund_id: string }>`
        SELECT refund_id FROM cobro_rm_refunds_by_transaction WHERE transaction_id = 'TRX_1' ORDER BY requested_at`
      expect(rows.map((r) => r.refund_id)).toEqual(["RFD_1", "RFD_2"])
      yield* Projection.rebuild(ReadModels.refundsByTransaction)
      expect(
        yield* sql`SELECT refund_id FROM cobro_rm_refunds_by_transaction WHERE transaction_id = 'TRX_1' ORDER BY requested_at`
      ).toEqual(rows)
    })
  )

  it.effect(
    "A4 with is_external_reference=true: the last notification of each payment sent with that reference",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const reference = `order-${randomUUID().slice(0, 8)}`
        const schedule = (subject: string, type: string, ref: string | undefined, iso: string) =>
          store.append(
            Aggregate.streamId(WebhookDelivery.WebhookDelivery, randomUUID()),
            [
              toNew(
                WebhookDelivery.WebhookDelivery,
                new WebhookDelivery.DeliveryScheduled({
                  notificationId: randomUUID() as WebhookDelivery.DeliveryScheduled["notificationId"],
                  merchantId: "MER_1" as WebhookDelivery.DeliveryScheduled["merchantId"],
                  url: "https://merchant.example/hook",
                  type: type as WebhookDelivery.DeliveryScheduled["type"],
                  subject: subject as WebhookDelivery.DeliveryScheduled["subject"],
                  body: JSON.stringify({
                    type,
                    subject,
                    time: 1704103200000000000,
                    data: { payment_id: subject, metadata: ref === undefined ? {} : { reference: ref } }
                  }),
                  signingKey: "EMPTY",
                  sandbox: true,
                  dueAt: at(iso),
                  createdAt: at(iso)
                })
              )
            ],
            EventStore.ExpectedVersion.NoStream()
          )
        // Two payments share the reference; the first is rejected, then voided: its last one wins.
        yield* schedule("TRX_R1", "SALE_APPROVED", reference, "2024-01-01T10:00:00Z")
        yield* schedule("TRX_R2", "SALE_REJECTED", reference, "2024-01-01T10:01:00Z")
        yield* schedule("TRX_R1", "VOID_APPROVED", reference, "2024-01-01T10:02:00Z")
        yield* schedule("TRX_R3", "SALE_APPROVED", `${reference}-other`, "2024-01-01T10:03:00Z")
        yield* schedule("TRX_R4", "SALE_APPROVED", undefined, "2024-01-01T10:04:00Z")
        yield* Projection.catchUp(ReadModels.lastNotificationByReference)
        const byReference = () =>
          sql<{ subject: string; type: string }>`
            SELECT subject, type FROM cobro_rm_last_notification_by_reference
            WHERE merchant_id = 'MER_1' AND sandbox AND reference = ${reference}
            ORDER BY created_at DESC LIMIT 10`
        const found = yield* byReference()
        expect(found).toEqual([
          { subject: "TRX_R1", type: "VOID_APPROVED" },
          { subject: "TRX_R2", type: "SALE_REJECTED" }
        ])
        expect(
          yield* sql`SELECT subject FROM cobro_rm_last_notification_by_reference WHERE subject = 'TRX_R4'`
        ).toEqual([])
        yield* Projection.rebuild(ReadModels.lastNotificationByReference)
        expect(yield* byReference()).toEqual(found)
      })
  )

  it.effect("webhook deliveries are due at their schedule, and not once delivered", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const sql = yield* SqlClient.SqlClient
      const stream = Aggregate.streamId(WebhookDelivery.WebhookDelivery, randomUUID())
      const scheduled = new WebhookDelivery.DeliveryScheduled({
        notificationId: randomUUID() as WebhookDelivery.DeliveryScheduled["notificationId"],
        merchantId: "MER_1" as WebhookDelivery.DeliveryScheduled["merchantId"],
        url: "https://merchant.example/hook",
        type: "SALE_APPROVED",
        subject: "TRX_9" as WebhookDelivery.DeliveryScheduled["subject"],
        body: "{}",
        signingKey: "EMPTY",
        sandbox: true,
        dueAt: at("2024-01-01T10:00:00Z"),
        createdAt: at("2024-01-01T10:00:00Z")
      })
      yield* store.append(
        stream,
        [toNew(WebhookDelivery.WebhookDelivery, scheduled)],
        EventStore.ExpectedVersion.NoStream()
      )
      yield* Projection.catchUp(ReadModels.webhookDeliveries)
      yield* Projection.catchUp(ReadModels.lastNotification)
      const due = () =>
        sql<{ status: string; due_at: Date | null }>`
          SELECT status, due_at FROM cobro_rm_webhook_deliveries WHERE stream_id = ${stream}`
      expect(yield* due()).toEqual([{ status: "PENDING", due_at: new Date("2024-01-01T10:00:00Z") }])
      expect(
        yield* sql`SELECT subject, type FROM cobro_rm_last_notification WHERE subject = 'TRX_9'`
      ).toEqual([{ subject: "TRX_9", type: "SALE_APPROVED" }])
      const failed = new WebhookDelivery.AttemptFailed({
        attempt: 1 as WebhookDelivery.AttemptFailed["attempt"],
        at: at("2024-01-01T10:00:01Z"),
        outcome: { _tag: "Failed", reason: "timeout" } as WebhookDelivery.AttemptFailed["outcome"],
        latencyMs: 30000 as WebhookDelivery.AttemptFailed["latencyMs"],
        nextDueAt: Option.some(at("2024-01-01T10:05:01Z"))
      })
      const encodedFailed = Schema.encodeEither(WebhookDelivery.Event)(failed)
      if (encodedFailed._tag === "Right") {
        yield* store.append(
          stream,
          [
            {
              eventId: randomUUID(),
              type: failed._tag,
              schemaVersion: 1,
              data: encodedFailed.right,
              metadata: {}
            }
          ],
          EventStore.ExpectedVersion.Exact({ version: 1 })
        )
        yield* Projection.catchUp(ReadModels.webhookDeliveries)
        expect(yield* due()).toEqual([{ status: "PENDING", due_at: new Date("2024-01-01T10:05:01Z") }])
      }
      const succeeded = new WebhookDelivery.AttemptSucceeded({
        attempt: 2 as WebhookDelivery.AttemptSucceeded["attempt"],
        at: at("2024-01-01T10:05:02Z"),
        statusCode: 200,
        snippet: "ok" as WebhookDelivery.AttemptSucceeded["snippet"],
        latencyMs: 12 as WebhookDelivery.AttemptSucceeded["latencyMs"]
      })
      yield* store.append(
        stream,
        [toNew(WebhookDelivery.WebhookDelivery, succeeded)],
        EventStore.ExpectedVersion.Exact({ version: 2 })
      )
      yield* Projection.catchUp(ReadModels.webhookDeliveries)
      expect(yield* due()).toEqual([{ status: "DELIVERED", due_at: null }])
      yield* Projection.rebuild(ReadModels.webhookDeliveries)
      expect(yield* due()).toEqual([{ status: "DELIVERED", due_at: null }])
    })
  )
})
