import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

/** A merchant whose payment-button keys answer (one warm-up read each; see the report). */
const merchant = (name?: string) =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchant(name)
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.production })
    return m
  })

const intent = (reference_id: string, total_amount: number, extra: Record<string, unknown> = {}) => ({
  reference_id,
  amount: { currency: "COP", total_amount },
  description: "Order",
  callback_url: "https://shop.example/back",
  ...extra
})

const cardAttempt = (reference_id: string, extra: Record<string, unknown> = {}) => ({
  reference_id,
  payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
  payment_method: {
    name: "CREDIT_CARD",
    card_number: "4111111111111111",
    cardholder_name: "ANA GOMEZ",
    expiration_month: "12",
    expiration_year: "2030",
    installments: 1,
    cvc: "123"
  },
  ...extra
})

/** Creates an intent and attempts it with a card; returns the attempt's reply. */
const paid = (key: string, reference: string, total: number) =>
  Effect.gen(function* () {
    const created = yield* TestApp.send("POST", "/v1/payment-intent", { key, body: intent(reference, total) })
    expect(created.status).toBe(201)
    const attempt = yield* TestApp.send("POST", "/v1/payment", { key, body: cardAttempt(reference) })
    expect(attempt.status).toBe(201)
    return attempt
  })

const transactionOf = (reply: TestApp.Reply): string =>
  reply.json.transaction_id ?? reply.json.payload.transaction_id

/** Follows a 3DS challenge through Cobro's page: GET it, then POST the decision. */
const decide = (attempt: TestApp.Reply, decision: "approve" | "decline") =>
  Effect.gen(function* () {
    const path = new URL(attempt.json.payload.next_actions.redirect_url).pathname
    const page = yield* TestApp.send("GET", path)
    expect(page.status).toBe(200)
    return yield* TestApp.send("POST", path, {
      body: `decision=${decision}`,
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
  })

const app = <A, E>(effect: Effect.Effect<A, E, any>) =>
  effect.pipe(Effect.provide(TestApp.layer())) as Effect.Effect<A, E>

/** Disables the merchant's account through the admin API (`PUT /admin/v1/merchants/{id}/status`). */
const disable = (merchantId: string) =>
  Effect.gen(function* () {
    const reply = yield* TestApp.admin("PUT", `/admin/v1/merchants/${merchantId}/status`, {
      status: "DISABLED"
    })
    expect(reply.status, reply.text).toBe(200)
  })

const MERCHANT_DISABLED = {
  payload: {},
  errors: [{ code: "MerchantDisabled", message: "the merchant account is disabled: it cannot take payments" }]
}

describe("online payments (C) through the handler", () => {
  describe("C1–C3 intents", () => {
    it.live("C1 answers 201 with the intent, creation_date, status ACTIVE and test", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const reply = yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 119000, {
              metadata: { key: "order", value: "1" },
              customer: { name: "Ana", billing_address: { city: "Bogotá", postal_code: "110111" } },
              device_fingerprint: { ip: "10.0.0.1", java_enabled: false, color_depth: 24 }
            })
          })
          expect(reply.status).toBe(201)
          expect(reply.json).toEqual({
            reference_id: "order-1",
            amount: { currency: "COP", total_amount: 119000, tip_amount: 0, taxes: [] },
            description: "Order",
            callback_url: "https://shop.example/back",
            metadata: { key: "order", value: "1" },
            customer: { name: "Ana", billing_address: { city: "Bogotá", postal_code: "110111" } },
            creation_date: "2026-11-21T10:00:00.000-05:00",
            status: "ACTIVE",
            test: true
          })
        })
      )
    )

    it.live("C1: a duplicate reference_id is 409; a body without amount is 400 and stores nothing", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 1000)
          })
          const duplicate = yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 2000)
          })
          expect(duplicate.status).toBe(409)
          expect(duplicate.json).toEqual({
            payload: {},
            errors: [
              {
                code: "IntentAlreadyExists",
                message: "a payment intent with reference_id order-1 exists already",
                field: "reference_id"
              }
            ]
          })
          const before = yield* TestApp.logSize
          const invalid = yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: { reference_id: "order-2" }
          })
          expect(invalid.status).toBe(400)
          expect(invalid.json.errors[0]).toMatchObject({ code: "ValidationError", field: "amount" })
          const malformed = yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: "{"
          })
          expect(malformed.status).toBe(400)
          expect(yield* TestApp.logSize).toBe(before)
        })
      )
    )

    it.live(
      "C2 reads the intent (200) with service_transaction_id once attempted; unknown is 404 PaymentNotFound",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const attempt = yield* paid(m.button.test, "order-1", 555040)
            const read = yield* TestApp.send("GET", "/v1/payment-intent/order-1", { key: m.button.test })
            expect(read.status).toBe(200)
            expect(read.json).toMatchObject({
              reference_id: "order-1",
              status: "PAID",
              test: true,
              service_transaction_id: attempt.json.transaction_id
            })
            const unknown = yield* TestApp.send("GET", "/v1/payment-intent/nope", { key: m.button.test })
            expect(unknown.status).toBe(404)
            expect(unknown.json.errors[0].code).toBe("PaymentNotFound")
          })
        )
    )

    it.live("C3 replaces the intent (200); unknown is 404; a paid intent is 409 IntentAlreadyPaid", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 1000)
          })
          const updated = yield* TestApp.send("PUT", "/v1/payment-intent", {
            key: m.button.test,
            body: { reference_id: "order-1", amount: { currency: "COP", total_amount: 555040 } }
          })
          expect(updated.status).toBe(200)
          expect(updated.json.amount.total_amount).toBe(555040)
          expect(updated.json.description).toBeUndefined()
          expect(updated.json.callback_url).toBeUndefined()
          const unknown = yield* TestApp.send("PUT", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("nope", 1)
          })
          expect(unknown.status).toBe(404)
          expect(unknown.json.errors[0].code).toBe("PaymentNotFound")
          yield* TestApp.send("POST", "/v1/payment", { key: m.button.test, body: cardAttempt("order-1") })
          const afterPaid = yield* TestApp.send("PUT", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 1)
          })
          expect(afterPaid.status).toBe(409)
          expect(afterPaid.json.errors[0].code).toBe("IntentAlreadyPaid")
        })
      )
    )

    it.live("C3: while a challenge is pending the amount is locked (409 IntentAmountLocked)", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          yield* paid(m.button.test, "order-1", 555020)
          const reply = yield* TestApp.send("PUT", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 1)
          })
          expect(reply.status).toBe(409)
          expect(reply.json.errors[0]).toMatchObject({ code: "IntentAmountLocked", field: "amount" })
        })
      )
    )
  })

  describe("C4, C5 and the sandbox amounts end to end", () => {
    const cases = [
      [555001, "APPROVED"],
      [555002, "REJECTED"],
      [555040, "APPROVED"],
      [555042, "REJECTED"]
    ] as const
    for (const [amount, status] of cases) {
      it.live(`sandbox ${amount}: C4 answers 201 RUNNING without next_actions, C5 reads ${status}`, () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const attempt = yield* paid(m.button.test, "order-1", amount)
            expect(attempt.json).toEqual({
              transaction_id: expect.stringMatching(/^TRX_/),
              status: "RUNNING"
            })
            const read = yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })
            expect(read.status).toBe(200)
            expect(read.json).toEqual({
              transaction_id: attempt.json.transaction_id,
              reference_id: "order-1",
              status,
              amount: { currency: "COP", total_amount: amount, tip_amount: 0, taxes: [] },
              payment_method: "CREDIT_CARD",
              payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
              attempt_date: "2026-11-21T10:00:00.000-05:00"
            })
          })
        )
      )
    }

    it.live("sandbox 555020: the enveloped 3DS response with next_actions to Cobro's challenge page", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const attempt = yield* paid(m.button.test, "order-1", 555020)
          const { payload, errors } = attempt.json
          expect(errors).toEqual([])
          expect(payload).toMatchObject({ status: "running", status_detail: "pending_challenge" })
          expect(payload.next_actions.redirect_method).toBe("GET")
          expect(payload.next_actions.redirect_url).toMatch(
            new RegExp(`/challenge/3ds/${payload.transaction_id}/${payload.uuid_token}$`)
          )
          const read = yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })
          expect(read.json.status).toBe("RUNNING")
        })
      )
    )

    it.live(
      "sandbox 555020 approved on the challenge page: 303 to callback_url, C5 APPROVED, intent PAID",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const attempt = yield* paid(m.button.test, "order-1", 555020)
            const done = yield* decide(attempt, "approve")
            expect(done.status).toBe(303)
            expect(done.headers.location).toBe("https://shop.example/back")
            const read = yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })
            expect(read.json.status).toBe("APPROVED")
            const intentRead = yield* TestApp.send("GET", "/v1/payment-intent/order-1", {
              key: m.button.test
            })
            expect(intentRead.json.status).toBe("PAID")
          })
        )
    )

    it.live(
      "sandbox 555020 declined on the challenge page: 303 to callback_url, C5 REJECTED, intent ACTIVE",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const attempt = yield* paid(m.button.test, "order-1", 555020)
            const done = yield* decide(attempt, "decline")
            expect(done.status).toBe(303)
            expect(done.headers.location).toBe("https://shop.example/back")
            const read = yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })
            expect(read.json.status).toBe("REJECTED")
            const intentRead = yield* TestApp.send("GET", "/v1/payment-intent/order-1", {
              key: m.button.test
            })
            expect(intentRead.json.status).toBe("ACTIVE")
          })
        )
    )

    it.live(
      "C4: unknown reference 404; a card without card_number 400; a second attempt while one runs 409",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const unknown = yield* TestApp.send("POST", "/v1/payment", {
              key: m.button.test,
              body: cardAttempt("nope")
            })
            expect(unknown.status).toBe(404)
            expect(unknown.json.errors[0].code).toBe("PaymentNotFound")
            yield* TestApp.send("POST", "/v1/payment-intent", {
              key: m.button.test,
              body: intent("order-1", 555020)
            })
            const noCard = yield* TestApp.send("POST", "/v1/payment", {
              key: m.button.test,
              body: { reference_id: "order-1", payment_method: { name: "CREDIT_CARD" } }
            })
            expect(noCard.status).toBe(400)
            expect(noCard.json.errors[0]).toMatchObject({ field: "payment_method.card_number" })
            const badCard = yield* TestApp.send("POST", "/v1/payment", {
              key: m.button.test,
              body: { reference_id: "order-1", payment_method: { name: "CREDIT_CARD", card_number: "41x1" } }
            })
            expect(badCard.status).toBe(400)
            yield* TestApp.send("POST", "/v1/payment", { key: m.button.test, body: cardAttempt("order-1") })
            const second = yield* TestApp.send("POST", "/v1/payment", {
              key: m.button.test,
              body: cardAttempt("order-1")
            })
            expect(second.status).toBe(409)
            expect(second.json.errors[0].code).toBe("IntentNotInState")
          })
        )
    )

    it.live(
      "C4 PSE: 400 without the intent's callback_url; with it, the bare response with next_actions",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            yield* TestApp.send("POST", "/v1/payment-intent", {
              key: m.button.test,
              body: { reference_id: "order-1", amount: { currency: "COP", total_amount: 50000 } }
            })
            const pse = { reference_id: "order-1", payment_method: { name: "PSE" } }
            const refused = yield* TestApp.send("POST", "/v1/payment", { key: m.button.test, body: pse })
            expect(refused.status).toBe(400)
            expect(refused.json.errors[0]).toMatchObject({
              code: "CallbackUrlRequired",
              field: "callback_url"
            })
            yield* TestApp.send("PUT", "/v1/payment-intent", {
              key: m.button.test,
              body: intent("order-1", 50000)
            })
            const attempt = yield* TestApp.send("POST", "/v1/payment", { key: m.button.test, body: pse })
            expect(attempt.status).toBe(201)
            expect(attempt.json).toMatchObject({
              status: "RUNNING",
              next_actions: { redirect_method: "GET" }
            })
          })
        )
    )

    it.live("C5: an intent without an attempt, or an unknown reference, is 404 PaymentNotFound", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.button.test,
            body: intent("order-1", 1000)
          })
          for (const path of ["/v1/payment/order-1", "/v1/payment/nope"]) {
            const reply = yield* TestApp.send("GET", path, { key: m.button.test })
            expect(reply.status).toBe(404)
            expect(reply.json.errors[0].code).toBe("PaymentNotFound")
          }
        })
      )
    )

    it.live("C6: 200 with payload.banks[] of bank_code and bank_name", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const reply = yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
          expect(reply.status).toBe(200)
          expect(reply.json.errors).toEqual([])
          expect(reply.json.payload.banks).toContainEqual({ bank_code: "1007", bank_name: "BANCOLOMBIA" })
        })
      )
    )
  })

  describe("C7 void", () => {
    it.live("C7: 204 inside the window; 409 at 21:00 Bogotá on the virtual clock; 404 unknown", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const time = yield* TestClock.VirtualTime
          const first = yield* paid(m.button.test, "order-1", 555040)
          const second = yield* paid(m.button.test, "order-2", 555040)
          yield* time.advance((10 * 60 + 59) * 60_000 + 59_999) // 20:59:59.999 Bogotá
          const inside = yield* TestApp.send("POST", "/v1/payment/void", {
            key: m.button.test,
            body: { transaction_id: transactionOf(first) }
          })
          expect(inside.status).toBe(204)
          expect(inside.text).toBe("")
          expect(
            (yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })).json.status
          ).toBe("VOIDED")
          yield* time.advance(1) // 21:00:00.000 Bogotá
          const outside = yield* TestApp.send("POST", "/v1/payment/void", {
            key: m.button.test,
            body: { transaction_id: transactionOf(second) }
          })
          expect(outside.status).toBe(409)
          expect(outside.json.errors[0].code).toBe("PaymentCannotBeVoided")
          const again = yield* TestApp.send("POST", "/v1/payment/void", {
            key: m.button.test,
            body: { transaction_id: transactionOf(first) }
          })
          expect(again.status).toBe(409)
          const unknown = yield* TestApp.send("POST", "/v1/payment/void", {
            key: m.button.test,
            body: { transaction_id: "TRX_404" }
          })
          expect(unknown.status).toBe(404)
          expect(unknown.json.errors[0].code).toBe("PaymentNotFound")
          const invalid = yield* TestApp.send("POST", "/v1/payment/void", { key: m.button.test, body: {} })
          expect(invalid.status).toBe(400)
        })
      )
    )

    it.live("C7: a rejected payment cannot be voided (409)", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const rejected = yield* paid(m.button.test, "order-1", 555042)
          const reply = yield* TestApp.send("POST", "/v1/payment/void", {
            key: m.button.test,
            body: { transaction_id: transactionOf(rejected) }
          })
          expect(reply.status).toBe(409)
        })
      )
    )
  })

  describe("C8, C9 refunds and the review", () => {
    it.live("C8 204, C9 PROCESSING with date_applied null, approved by the sandbox 60 s later", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const time = yield* TestClock.VirtualTime
          const attempt = yield* paid(m.button.test, "order-1", 555040)
          const transaction_id = transactionOf(attempt)
          const none = yield* TestApp.send("GET", `/v1/payment/refund/${transaction_id}`, {
            key: m.button.test
          })
          expect(none.status).toBe(404)
          expect(none.json.errors[0].code).toBe("PaymentNotFound")
          const requested = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { reference_id: "order-1", transaction_id, reason: "customer request" }
          })
          expect(requested.status).toBe(204)
          const processing = yield* TestApp.send("GET", `/v1/payment/refund/${transaction_id}`, {
            key: m.button.test
          })
          expect(processing.status).toBe(200)
          expect(processing.json).toEqual({
            payload: { transaction_id, status: "PROCESSING", date_applied: null },
            errors: []
          })
          const twice = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { reference_id: "order-1", transaction_id }
          })
          expect(twice.status).toBe(409)
          expect(twice.json.errors[0].code).toBe("RefundCannotBeRequested")
          yield* time.advance(60_000)
          const approved = yield* TestApp.send("GET", `/v1/payment/refund/${transaction_id}`, {
            key: m.button.test
          })
          expect(approved.json.payload).toEqual({
            transaction_id,
            status: "APPROVED",
            date_applied: "2026-11-21T10:01:00.000-05:00"
          })
          expect(
            (yield* TestApp.send("GET", "/v1/payment/order-1", { key: m.button.test })).json.status
          ).toBe("REFUNDED")
        })
      )
    )

    it.live("C8: 404 for another reference or an unknown transaction; 409 for a rejected payment", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const approved = yield* paid(m.button.test, "order-1", 555040)
          const rejected = yield* paid(m.button.test, "order-2", 555042)
          const wrongReference = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { reference_id: "order-2", transaction_id: transactionOf(approved) }
          })
          expect(wrongReference.status).toBe(404)
          const unknown = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { reference_id: "order-1", transaction_id: "TRX_404" }
          })
          expect(unknown.status).toBe(404)
          const notApproved = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { reference_id: "order-2", transaction_id: transactionOf(rejected) }
          })
          expect(notApproved.status).toBe(409)
          const invalid = yield* TestApp.send("POST", "/v1/payment/refund", {
            key: m.button.test,
            body: { transaction_id: transactionOf(approved) }
          })
          expect(invalid.status).toBe(400)
          expect(invalid.json.errors[0].field).toBe("reference_id")
        })
      )
    )

    it.live("production refunds wait for the admin review: REJECTED, then a new request, then APPROVED", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          const time = yield* TestClock.VirtualTime
          const key = m.button.production
          const attempt = yield* paid(key, "order-1", 555002)
          const transaction_id = transactionOf(attempt)
          yield* TestApp.send("POST", "/v1/payment/refund", {
            key,
            body: { reference_id: "order-1", transaction_id }
          })
          yield* time.advance(3_600_000)
          expect(
            (yield* TestApp.send("GET", `/v1/payment/refund/${transaction_id}`, { key })).json.payload.status
          ).toBe("PROCESSING")
          const unauthorized = yield* TestApp.send("POST", `/admin/v1/refunds/${transaction_id}/review`, {
            body: { outcome: "REJECTED" }
          })
          expect(unauthorized.status).toBe(401)
          const rejected = yield* TestApp.admin("POST", `/admin/v1/refunds/${transaction_id}/review`, {
            outcome: "REJECTED"
          })
          expect(rejected.status).toBe(200)
          expect(rejected.json).toMatchObject({ transaction_id, status: "REJECTED" })
          const contradicting = yield* TestApp.admin("POST", `/admin/v1/refunds/${transaction_id}/review`, {
            outcome: "APPROVED"
          })
          expect(contradicting.status).toBe(409)
          expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("APPROVED")
          const again = yield* TestApp.send("POST", "/v1/payment/refund", {
            key,
            body: { reference_id: "order-1", transaction_id }
          })
          expect(again.status).toBe(204)
          const approved = yield* TestApp.admin("POST", `/admin/v1/refunds/${transaction_id}/review`, {
            outcome: "APPROVED"
          })
          expect(approved.json).toMatchObject({
            status: "APPROVED",
            date_applied: "2026-11-21T11:00:00.000-05:00"
          })
          expect((yield* TestApp.send("GET", "/v1/payment/order-1", { key })).json.status).toBe("REFUNDED")
          const unknown = yield* TestApp.admin("POST", "/admin/v1/refunds/TRX_404/review", {
            outcome: "APPROVED"
          })
          expect(unknown.status).toBe(404)
        })
      )
    )
  })

  describe("keys and isolation", () => {
    it.live("another merchant's reference or transaction is 404; a production key cannot see test data", () =>
      app(
        Effect.gen(function* () {
          const a = yield* merchant("A")
          const b = yield* merchant("B")
          const attempt = yield* paid(a.button.test, "order-1", 555040)
          const transaction_id = transactionOf(attempt)
          for (const key of [b.button.test, a.button.production]) {
            for (const path of [
              "/v1/payment-intent/order-1",
              "/v1/payment/order-1",
              `/v1/payment/refund/${transaction_id}`
            ]) {
              const reply = yield* TestApp.send("GET", path, { key })
              expect(reply.status).toBe(404)
              expect(reply.json.errors[0].code).toBe("PaymentNotFound")
            }
            const voided = yield* TestApp.send("POST", "/v1/payment/void", { key, body: { transaction_id } })
            expect(voided.status).toBe(404)
            const refund = yield* TestApp.send("POST", "/v1/payment/refund", {
              key,
              body: { reference_id: "order-1", transaction_id }
            })
            expect(refund.status).toBe(404)
            const attemptOther = yield* TestApp.send("POST", "/v1/payment", {
              key,
              body: cardAttempt("order-1")
            })
            expect(attemptOther.status).toBe(404)
          }
          // The same reference is free in the other mode and for another merchant.
          expect(
            (yield* TestApp.send("POST", "/v1/payment-intent", {
              key: a.button.production,
              body: intent("order-1", 1)
            })).status
          ).toBe(201)
          expect(
            (yield* TestApp.send("POST", "/v1/payment-intent", {
              key: b.button.test,
              body: intent("order-1", 1)
            })).status
          ).toBe(201)
          expect(
            (yield* TestApp.send("GET", "/v1/payment/order-1", { key: a.button.test })).json.status
          ).toBe("APPROVED")
        })
      )
    )

    it.live("C endpoints need the payment-button key: none is 401, the terminal API key is 403", () =>
      app(
        Effect.gen(function* () {
          const m = yield* merchant()
          yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.terminal.test })
          const none = yield* TestApp.send("GET", "/v1/payment/pse/banks")
          expect(none.status).toBe(401)
          const terminal = yield* TestApp.send("POST", "/v1/payment-intent", {
            key: m.terminal.test,
            body: intent("o", 1)
          })
          expect(terminal.status).toBe(403)
          expect(terminal.json.errors[0].code).toBe("Forbidden")
        })
      )
    )
  })
  describe("a disabled merchant account (M1, L6)", () => {
    it.live(
      "C1 and C4 of a disabled account are 403 MerchantDisabled in the envelope and store nothing",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const other = yield* merchant("Other shop")
            for (const key of [m.button.test, m.button.production]) {
              const created = yield* TestApp.send("POST", "/v1/payment-intent", {
                key,
                body: intent("order-1", 555040)
              })
              expect(created.status).toBe(201)
            }
            yield* disable(m.merchantId)
            const before = yield* TestApp.logSize
            for (const key of [m.button.test, m.button.production]) {
              const c1 = yield* TestApp.send("POST", "/v1/payment-intent", {
                key,
                body: intent("order-2", 1000)
              })
              expect(c1.status).toBe(403)
              expect(c1.json).toEqual(MERCHANT_DISABLED)
              const c4 = yield* TestApp.send("POST", "/v1/payment", { key, body: cardAttempt("order-1") })
              expect(c4.status).toBe(403)
              expect(c4.json).toEqual(MERCHANT_DISABLED)
              const pse = yield* TestApp.send("POST", "/v1/payment", {
                key,
                body: { reference_id: "order-1", payment_method: { name: "PSE" } }
              })
              expect(pse.status).toBe(403)
              expect(pse.json).toEqual(MERCHANT_DISABLED)
            }
            expect(yield* TestApp.logSize).toBe(before)
            // A malformed body is still the client's 400, and another merchant is not affected.
            const invalid = yield* TestApp.send("POST", "/v1/payment-intent", {
              key: m.button.test,
              body: { reference_id: "order-3" }
            })
            expect(invalid.status).toBe(400)
            const unaffected = yield* paid(other.button.test, "order-1", 555040)
            expect(unaffected.status).toBe(201)
          })
        )
    )

    it.live(
      "a disabled account still answers C2, C3, C5, C6, C7, C8 and C9, and a challenge under way completes",
      () =>
        app(
          Effect.gen(function* () {
            const m = yield* merchant()
            const key = m.button.test
            const first = transactionOf(yield* paid(key, "order-1", 555040))
            const second = transactionOf(yield* paid(key, "order-2", 555040))
            const challenge = yield* paid(key, "order-3", 555020)
            yield* TestApp.send("POST", "/v1/payment-intent", { key, body: intent("order-4", 1000) })
            yield* disable(m.merchantId)
            const c2 = yield* TestApp.send("GET", "/v1/payment-intent/order-1", { key })
            expect(c2.status).toBe(200)
            expect(c2.json.status).toBe("PAID")
            const c3 = yield* TestApp.send("PUT", "/v1/payment-intent", {
              key,
              body: intent("order-4", 2000)
            })
            expect(c3.status).toBe(200)
            expect(c3.json.amount.total_amount).toBe(2000)
            const c5 = yield* TestApp.send("GET", "/v1/payment/order-1", { key })
            expect(c5.status).toBe(200)
            expect((yield* TestApp.send("GET", "/v1/payment/pse/banks", { key })).status).toBe(200)
            const c7 = yield* TestApp.send("POST", "/v1/payment/void", {
              key,
              body: { transaction_id: first }
            })
            expect(c7.status).toBe(204)
            const c8 = yield* TestApp.send("POST", "/v1/payment/refund", {
              key,
              body: { reference_id: "order-2", transaction_id: second, reason: "returned" }
            })
            expect(c8.status).toBe(204)
            const c9 = yield* TestApp.send("GET", `/v1/payment/refund/${second}`, { key })
            expect(c9.status).toBe(200)
            expect(c9.json.payload.status).toBe("PROCESSING")
            const done = yield* decide(challenge, "approve")
            expect(done.status).toBe(303)
            const read = yield* TestApp.send("GET", "/v1/payment/order-3", { key })
            expect(read.json.status).toBe("APPROVED")
          })
        )
    )
  })
})
