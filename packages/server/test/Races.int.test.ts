/**
 * Requests that race on one resource, sent at once to a real server process on real PostgreSQL (PGlite's
 * single connection would serialize them and hide the races): an intent update against an attempt,
 * refunds against each other and against reads.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "./support/ServerProcess.js"

const admin = ServerProcess.asAdmin
const withKey = ServerProcess.withKey

/** C1: an intent `reference` of `amount` COP. */
const createIntent = (server: ServerProcess.RunningServer, key: string, reference: string, amount: number) =>
  withKey(server, key, "POST", "/v1/payment-intent", ServerProcess.onlineIntent(reference, amount))

/** A server on a fresh PostgreSQL database, and a merchant's test payment-button key. */
const serverWithMerchant = Effect.gen(function* () {
  const server = yield* ServerProcess.start(yield* ServerProcess.postgresEnv)
  const created = yield* admin(server, "POST", "/admin/v1/merchants", { name: "Tienda" })
  expect(created.status, created.text).toBe(201)
  const key: string = created.json.keys.payment_button.test.identity_key
  return { server, key }
})

describe("races on real PostgreSQL", () => {
  it.scopedLive(
    "an intent update racing an attempt: the payment carries the amount of the intent version it was started on",
    Effect.fnUntraced(function* () {
      const { server, key } = yield* serverWithMerchant
      for (let round = 0; round < 10; round++) {
        const reference = `race-${round}`
        const created = yield* createIntent(server, key, reference, 1000)
        expect(created.status, created.text).toBe(201)
        const [update, attempt] = yield* Effect.all(
          [
            withKey(server, key, "PUT", "/v1/payment-intent", ServerProcess.onlineIntent(reference, 900000)),
            withKey(server, key, "POST", "/v1/payment", ServerProcess.cardAttempt(reference))
          ],
          { concurrency: 2 }
        )
        expect(attempt.status, attempt.text).toBe(201)
        // The update either committed first (200) or came after the attempt and was refused (409).
        expect([200, 409], update.text).toContain(update.status)
        const read = yield* withKey(server, key, "GET", `/v1/payment-intent/${reference}`)
        const payment = yield* withKey(server, key, "GET", `/v1/payment/${reference}`)
        expect(read.status, read.text).toBe(200)
        expect(payment.status, payment.text).toBe(200)
        expect(read.json.status).toBe("PAID")
        expect(payment.json.status).toBe("APPROVED")
        const intentTotal = read.json.amount.total_amount
        expect(payment.json.amount.total_amount, `round ${round}`).toBe(intentTotal)
        expect(intentTotal).toBe(update.status === 200 ? 900000 : 1000)
      }
    }),
    120_000
  )

  it.scopedLive(
    "concurrent refunds of one payment: exactly one 204, the others 409; reads racing them never fail",
    Effect.fnUntraced(function* () {
      const { server, key } = yield* serverWithMerchant
      for (let round = 0; round < 3; round++) {
        const reference = `refund-${round}`
        yield* createIntent(server, key, reference, 50000)
        const attempt = yield* withKey(
          server,
          key,
          "POST",
          "/v1/payment",
          ServerProcess.cardAttempt(reference)
        )
        expect(attempt.status, attempt.text).toBe(201)
        const transactionId: string = attempt.json.transaction_id ?? attempt.json.payload.transaction_id
        const refund = withKey(server, key, "POST", "/v1/payment/refund", {
          reference_id: reference,
          transaction_id: transactionId,
          reason: "customer"
        })
        const reads = [
          withKey(server, key, "GET", `/v1/payment/refund/${transactionId}`),
          withKey(server, key, "GET", `/v1/payment/${reference}`)
        ]
        const replies = yield* Effect.all([refund, refund, refund, refund, refund, ...reads, ...reads], {
          concurrency: "unbounded"
        })
        const refunds = replies.slice(0, 5).map((r) => r.status)
        expect(
          refunds.filter((s) => s === 204),
          JSON.stringify(refunds)
        ).toHaveLength(1)
        expect(
          refunds.filter((s) => s === 409),
          JSON.stringify(refunds)
        ).toHaveLength(4)
        for (const read of replies.slice(5)) expect([200, 404], read.text).toContain(read.status)
        const status = yield* withKey(server, key, "GET", `/v1/payment/refund/${transactionId}`)
        expect(status.status, status.text).toBe(200)
        expect(status.json.payload?.status ?? status.json.status).toBe("PROCESSING")
      }
    }),
    120_000
  )
})
