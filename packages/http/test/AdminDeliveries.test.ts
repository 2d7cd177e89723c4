/**
 * The admin endpoints of webhook deliveries (issue 5: "an admin call lists a notification's
 * attempts and re-sends it on demand"), through the real handler on a socket.
 */
import { describe, expect, it } from "@effect/vitest"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"

const deliveries = CommandHandler.make(WebhookDelivery.WebhookDelivery)

const T0 = DateTime.unsafeMake("2026-11-21T15:00:00Z")
const at = (seconds: number) => DateTime.unsafeMake(DateTime.toEpochMillis(T0) + seconds * 1000)

const NOTIFICATION = NotificationId.make("0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d41")
const attemptsPath = (id: string) => `/admin/v1/notifications/${id}/attempts`
const resendPath = (id: string) => `/admin/v1/notifications/${id}/resend`

/** Re-sending the notification is refused with the 409 `code`, and nothing is stored. */
const resendRefused = (code: string) =>
  Effect.map(TestApp.storesNothing(TestApp.admin("POST", resendPath(NOTIFICATION)), code), (reply) =>
    TestApp.expectError(reply, 409, code)
  )

/** A merchant (with a test webhook unless `webhook: false`) and a sandbox notification scheduled to it. */
const scheduled = (options: { readonly webhook?: boolean } = {}) =>
  Effect.gen(function* () {
    const merchant = yield* TestApp.createMerchant()
    if (options.webhook !== false) {
      yield* TestApp.setTestWebhook(merchant.merchantId, "http://merchant.example/hooks/test")
    }
    yield* deliveries(
      NOTIFICATION,
      new WebhookDelivery.ScheduleDelivery({
        notificationId: NOTIFICATION,
        merchantId: MerchantId.make(merchant.merchantId),
        url: "http://merchant.example/hooks/old",
        type: "SALE_APPROVED",
        subject: TransactionId.make("TRX_1"),
        body: '{"id":"0b6f3c1e-6d1a-4c1f-9a53-2f1c8a0e7d41"}',
        signingKey: { integration: "terminal_api", mode: "test" },
        sandbox: true,
        now: T0
      })
    )
    return merchant
  })

const record = (attempt: number, result: WebhookDelivery.AttemptResult, seconds: number, latencyMs = 120) =>
  deliveries(
    NOTIFICATION,
    new WebhookDelivery.RecordAttempt({ attempt, result, latencyMs, now: at(seconds) })
  )

/** A {@link scheduled} notification, delivered: its first attempt answered 200 "ok" a second later. */
const delivered = (options: { readonly webhook?: boolean } = {}) =>
  Effect.tap(scheduled(options), () => record(1, { _tag: "Answered", statusCode: 200, snippet: "ok" }, 1))

describe("admin API: webhook deliveries", () => {
  it.live(
    "GET /admin/v1/notifications/{id}/attempts lists the notification (id, merchant, subject, type, status) with no attempt yet",
    TestApp.fresh(function* () {
      const merchant = yield* scheduled()
      const reply = yield* TestApp.admin("GET", attemptsPath(NOTIFICATION))
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        notification_id: NOTIFICATION,
        merchant_id: merchant.merchantId,
        subject: "TRX_1",
        type: "SALE_APPROVED",
        status: "PENDING",
        sandbox: true,
        url: "http://merchant.example/hooks/old",
        next_due_at: "2026-11-21T15:00:00.000Z",
        attempts: []
      })
    })
  )

  it.live(
    "each attempt is listed in order: time ISO 8601, status code or error, latency ms, response snippet",
    TestApp.fresh(function* () {
      yield* scheduled()
      yield* record(1, { _tag: "Failed", reason: "connection refused" }, 1, 35)
      yield* record(2, { _tag: "Answered", statusCode: 500, snippet: "oops" }, 900, 210)
      yield* record(3, { _tag: "Answered", statusCode: 200, snippet: "ok" }, 3600, 80)
      const reply = yield* TestApp.admin("GET", attemptsPath(NOTIFICATION))
      expect(reply.status).toBe(200)
      expect(reply.json.status).toBe("DELIVERED")
      expect(reply.json.next_due_at).toBeNull()
      expect(reply.json.attempts).toEqual([
        {
          attempt: 1,
          time: "2026-11-21T15:00:01.000Z",
          delivered: false,
          status_code: null,
          error: "connection refused",
          latency_ms: 35,
          response_snippet: null
        },
        {
          attempt: 2,
          time: "2026-11-21T15:15:00.000Z",
          delivered: false,
          status_code: 500,
          error: null,
          latency_ms: 210,
          response_snippet: "oops"
        },
        {
          attempt: 3,
          time: "2026-11-21T16:00:00.000Z",
          delivered: true,
          status_code: 200,
          error: null,
          latency_ms: 80,
          response_snippet: "ok"
        }
      ])
    })
  )

  it.live(
    "POST /admin/v1/notifications/{id}/resend re-sends a DELIVERED notification: 202, PENDING, same id, due now, to the webhook registered now",
    TestApp.fresh(function* () {
      yield* delivered()
      const before = yield* TestApp.logSize
      const reply = yield* TestApp.admin("POST", resendPath(NOTIFICATION))
      expect(reply.status).toBe(202)
      expect(reply.json).toMatchObject({
        notification_id: NOTIFICATION,
        status: "PENDING",
        url: "http://merchant.example/hooks/test",
        next_due_at: "2026-11-21T15:00:00.000Z"
      })
      expect(reply.json.attempts).toHaveLength(1)
      expect(yield* TestApp.logSize).toBe(before + 1)
      const listed = yield* TestApp.admin("GET", attemptsPath(NOTIFICATION))
      expect(listed.json.status).toBe("PENDING")
    })
  )

  it.live(
    "an EXHAUSTED notification can be re-sent: 202 PENDING",
    TestApp.fresh(function* () {
      yield* scheduled()
      const offsets = [0, 900, 3600, 4 * 3600, 8 * 3600, 24 * 3600]
      for (const [i, seconds] of offsets.entries()) {
        yield* record(i + 1, { _tag: "Answered", statusCode: 503, snippet: "busy" }, seconds)
      }
      expect((yield* TestApp.admin("GET", attemptsPath(NOTIFICATION))).json.status).toBe("EXHAUSTED")
      const reply = yield* TestApp.admin("POST", resendPath(NOTIFICATION))
      expect(reply.status).toBe(202)
      expect(reply.json.status).toBe("PENDING")
      expect(reply.json.attempts).toHaveLength(6)
    })
  )

  it.live(
    "a PENDING notification cannot be re-sent: 409 DeliveryNotInState, nothing stored",
    TestApp.fresh(function* () {
      yield* scheduled()
      yield* resendRefused("DeliveryNotInState")
    })
  )

  it.live(
    "re-sending when the merchant has no webhook registered is 409 NoWebhookRegistered",
    TestApp.fresh(function* () {
      yield* delivered({ webhook: false })
      yield* resendRefused("NoWebhookRegistered")
    })
  )

  it.live(
    "an unknown or malformed notification id is 404 NotificationNotFound (list and resend)",
    TestApp.fresh(function* () {
      for (const id of ["5d1e8a51-3b1c-4f57-8f5e-2b9d1c0a7e33", "not-a-uuid"]) {
        for (const reply of [
          yield* TestApp.admin("GET", attemptsPath(id)),
          yield* TestApp.admin("POST", resendPath(id))
        ]) {
          TestApp.expectError(reply, 404, "NotificationNotFound")
        }
      }
      expect(yield* TestApp.logSize).toBe(0)
    })
  )

  it.live(
    "delivery admin calls without the Bearer ADMIN_TOKEN are 401 in the envelope",
    TestApp.fresh(function* () {
      yield* delivered()
      const before = yield* TestApp.logSize
      for (const reply of [
        yield* TestApp.send("GET", attemptsPath(NOTIFICATION)),
        yield* TestApp.send("POST", resendPath(NOTIFICATION)),
        yield* TestApp.send("POST", resendPath(NOTIFICATION), { headers: { authorization: "Bearer nope" } })
      ]) {
        TestApp.expectError(reply, 401, "Unauthorized")
      }
      expect(yield* TestApp.logSize).toBe(before)
    })
  )
})
