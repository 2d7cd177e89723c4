import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { cardAttempt, intent } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
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

/** The payment-button key of the mode of a new {@link merchant}. */
const buttonKey = (mode: "test" | "production") => Effect.map(merchant(), (m) => m.button[mode])

/** Creates an intent and attempts it with a card; returns the attempt's reply. */
const paid = (key: string, reference: string, total: number) =>
  Effect.gen(function* () {
    expect((yield* Calls.createIntent(key, intent(reference, total))).status).toBe(201)
    const attempt = yield* Calls.attempt(key, cardAttempt(reference))
    expect(attempt.status).toBe(201)
    return attempt
  })

const transactionOf = (reply: TestApp.Reply): string =>
  reply.json.transaction_id ?? reply.json.payload.transaction_id

/** Follows a 3DS challenge through Cobro's page: GET it, then POST the decision. */
const decide = (attempt: TestApp.Reply, decision: "approve" | "decline") =>
  Effect.gen(function* () {
    const path = Calls.challengePath(attempt)
    expect((yield* TestApp.send("GET", path)).status).toBe(200)
    return yield* Calls.decide(path, decision)
  })

/** What the payment's C5 and the intent's C2 read. */
const statuses = (key: string, reference: string) =>
  Effect.all([Calls.readPayment(key, reference), Calls.readIntent(key, reference)]).pipe(
    Effect.map(([payment, intent]) => [payment.json.status, intent.json.status])
  )

const MERCHANT_DISABLED = {
  payload: {},
  errors: [{ code: "MerchantDisabled", message: "the merchant account is disabled: it cannot take payments" }]
}

describe("online payments (C) through the handler", () => {
  describe("C1–C3 intents", () => {
    it.live(
      "C1 answers 201 with the intent, creation_date, status ACTIVE and test",
      TestApp.given(merchant(), function* (m) {
        const reply = yield* Calls.createIntent(
          m.button.test,
          intent("order-1", 119000, {
            metadata: { key: "order", value: "1" },
            customer: { name: "Ana", billing_address: { city: "Bogotá", postal_code: "110111" } },
            device_fingerprint: { ip: "10.0.0.1", java_enabled: false, color_depth: 24 }
          })
        )
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

    it.live(
      "C1: a duplicate reference_id is 409; a body without amount is 400 and stores nothing",
      TestApp.given(buttonKey("test"), function* (key) {
        yield* Calls.createIntent(key, intent("order-1", 1000))
        const duplicate = yield* Calls.createIntent(key, intent("order-1", 2000))
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
        const [invalid, malformed] = yield* TestApp.storesNothing(
          Effect.all([Calls.createIntent(key, { reference_id: "order-2" }), Calls.createIntent(key, "{")])
        )
        expect(invalid.status).toBe(400)
        expect(invalid.json.errors[0]).toMatchObject({ code: "ValidationError", field: "amount" })
        expect(malformed.status).toBe(400)
      })
    )

    it.live(
      "C2 reads the intent (200) with service_transaction_id once attempted; unknown is 404 PaymentNotFound",
      TestApp.given(buttonKey("test"), function* (key) {
        const attempt = yield* paid(key, "order-1", 555040)
        const read = yield* Calls.readIntent(key, "order-1")
        expect(read.status).toBe(200)
        expect(read.json).toMatchObject({
          reference_id: "order-1",
          status: "PAID",
          test: true,
          service_transaction_id: attempt.json.transaction_id
        })
        TestApp.expectError(yield* Calls.readIntent(key, "nope"), 404, "PaymentNotFound")
      })
    )

    it.live(
      "C3 replaces the intent (200); unknown is 404; a paid intent is 409 IntentAlreadyPaid",
      TestApp.given(buttonKey("test"), function* (key) {
        yield* Calls.createIntent(key, intent("order-1", 1000))
        const updated = yield* Calls.updateIntent(key, {
          reference_id: "order-1",
          amount: { currency: "COP", total_amount: 555040 }
        })
        expect(updated.status).toBe(200)
        expect(updated.json.amount.total_amount).toBe(555040)
        expect(updated.json.description).toBeUndefined()
        expect(updated.json.callback_url).toBeUndefined()
        TestApp.expectError(yield* Calls.updateIntent(key, intent("nope", 1)), 404, "PaymentNotFound")
        yield* Calls.attempt(key, cardAttempt("order-1"))
        TestApp.expectError(yield* Calls.updateIntent(key, intent("order-1", 1)), 409, "IntentAlreadyPaid")
      })
    )

    it.live(
      "C3: while a challenge is pending the amount is locked (409 IntentAmountLocked)",
      TestApp.given(buttonKey("test"), function* (key) {
        yield* paid(key, "order-1", 555020)
        const reply = yield* Calls.updateIntent(key, intent("order-1", 1))
        expect(reply.status).toBe(409)
        expect(reply.json.errors[0]).toMatchObject({ code: "IntentAmountLocked", field: "amount" })
      })
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
      it.live(
        `sandbox ${amount}: C4 answers 201 RUNNING without next_actions, C5 reads ${status}`,
        TestApp.given(buttonKey("test"), function* (key) {
          const attempt = yield* paid(key, "order-1", amount)
          expect(attempt.json).toEqual({
            transaction_id: expect.stringMatching(/^TRX_/),
            status: "RUNNING"
          })
          const read = yield* Calls.readPayment(key, "order-1")
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
    }

    it.live(
      "sandbox 555020: the enveloped 3DS response with next_actions to Cobro's challenge page",
      TestApp.given(buttonKey("test"), function* (key) {
        const { payload, errors } = (yield* paid(key, "order-1", 555020)).json
        expect(errors).toEqual([])
        expect(payload).toMatchObject({ status: "running", status_detail: "pending_challenge" })
        expect(payload.next_actions.redirect_method).toBe("GET")
        expect(payload.next_actions.redirect_url).toMatch(
          new RegExp(`/challenge/3ds/${payload.transaction_id}/${payload.uuid_token}$`)
        )
        expect((yield* Calls.readPayment(key, "order-1")).json.status).toBe("RUNNING")
      })
    )

    for (const [title, decision, payment, intentStatus] of [
      [
        "sandbox 555020 approved on the challenge page: 303 to callback_url, C5 APPROVED, intent PAID",
        "approve",
        "APPROVED",
        "PAID"
      ],
      [
        "sandbox 555020 declined on the challenge page: 303 to callback_url, C5 REJECTED, intent ACTIVE",
        "decline",
        "REJECTED",
        "ACTIVE"
      ]
    ] as const) {
      it.live(
        title,
        TestApp.given(buttonKey("test"), function* (key) {
          const done = yield* decide(yield* paid(key, "order-1", 555020), decision)
          expect(done.status).toBe(303)
          expect(done.headers.location).toBe("https://shop.example/back")
          expect(yield* statuses(key, "order-1")).toEqual([payment, intentStatus])
        })
      )
    }

    it.live(
      "C4: unknown reference 404; a card without card_number 400; a second attempt while one runs 409",
      TestApp.given(buttonKey("test"), function* (key) {
        TestApp.expectError(yield* Calls.attempt(key, cardAttempt("nope")), 404, "PaymentNotFound")
        yield* Calls.createIntent(key, intent("order-1", 555020))
        const noCard = yield* Calls.attempt(key, {
          reference_id: "order-1",
          payment_method: { name: "CREDIT_CARD" }
        })
        expect(noCard.status).toBe(400)
        expect(noCard.json.errors[0]).toMatchObject({ field: "payment_method.card_number" })
        const badCard = yield* Calls.attempt(key, {
          reference_id: "order-1",
          payment_method: { name: "CREDIT_CARD", card_number: "41x1" }
        })
        expect(badCard.status).toBe(400)
        yield* Calls.attempt(key, cardAttempt("order-1"))
        TestApp.expectError(yield* Calls.attempt(key, cardAttempt("order-1")), 409, "IntentNotInState")
      })
    )

    it.live(
      "C4 PSE: 400 without the intent's callback_url; with it, the bare response with next_actions",
      TestApp.given(buttonKey("test"), function* (key) {
        yield* Calls.createIntent(key, {
          reference_id: "order-1",
          amount: { currency: "COP", total_amount: 50000 }
        })
        const pse = { reference_id: "order-1", payment_method: { name: "PSE" } }
        const refused = yield* Calls.attempt(key, pse)
        expect(refused.status).toBe(400)
        expect(refused.json.errors[0]).toMatchObject({
          code: "CallbackUrlRequired",
          field: "callback_url"
        })
        yield* Calls.updateIntent(key, intent("order-1", 50000))
        const attempt = yield* Calls.attempt(key, pse)
        expect(attempt.status).toBe(201)
        expect(attempt.json).toMatchObject({
          status: "RUNNING",
          next_actions: { redirect_method: "GET" }
        })
      })
    )

    it.live(
      "C5: an intent without an attempt, or an unknown reference, is 404 PaymentNotFound",
      TestApp.given(buttonKey("test"), function* (key) {
        yield* Calls.createIntent(key, intent("order-1", 1000))
        for (const reference of ["order-1", "nope"]) {
          TestApp.expectError(yield* Calls.readPayment(key, reference), 404, "PaymentNotFound")
        }
      })
    )

    it.live(
      "C6: 200 with payload.banks[] of bank_code and bank_name",
      TestApp.given(merchant(), function* (m) {
        const reply = yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
        expect(reply.status).toBe(200)
        expect(reply.json.errors).toEqual([])
        expect(reply.json.payload.banks).toContainEqual({ bank_code: "1007", bank_name: "BANCOLOMBIA" })
      })
    )
  })

  describe("C7 void", () => {
    it.live(
      "C7: 204 inside the window; 409 at 21:00 Bogotá on the virtual clock; 404 unknown",
      TestApp.given(buttonKey("test"), function* (key) {
        const time = yield* TestClock.VirtualTime
        const first = transactionOf(yield* paid(key, "order-1", 555040))
        const second = transactionOf(yield* paid(key, "order-2", 555040))
        yield* time.advance((10 * 60 + 59) * 60_000 + 59_999) // 20:59:59.999 Bogotá
        const inside = yield* Calls.voidPayment(key, first)
        expect(inside.status).toBe(204)
        expect(inside.text).toBe("")
        expect((yield* Calls.readPayment(key, "order-1")).json.status).toBe("VOIDED")
        yield* time.advance(1) // 21:00:00.000 Bogotá
        TestApp.expectError(yield* Calls.voidPayment(key, second), 409, "PaymentCannotBeVoided")
        expect((yield* Calls.voidPayment(key, first)).status).toBe(409)
        TestApp.expectError(yield* Calls.voidPayment(key, "TRX_404"), 404, "PaymentNotFound")
        const invalid = yield* TestApp.send("POST", "/v1/payment/void", { key, body: {} })
        expect(invalid.status).toBe(400)
      })
    )

    it.live(
      "C7: a rejected payment cannot be voided (409)",
      TestApp.given(buttonKey("test"), function* (key) {
        const rejected = yield* paid(key, "order-1", 555042)
        expect((yield* Calls.voidPayment(key, transactionOf(rejected))).status).toBe(409)
      })
    )
  })

  describe("C8, C9 refunds and the review", () => {
    const review = (transaction_id: string, outcome: string) =>
      TestApp.admin("POST", `/admin/v1/refunds/${transaction_id}/review`, { outcome })

    it.live(
      "C8 204, C9 PROCESSING with date_applied null, approved by the sandbox 60 s later",
      TestApp.given(buttonKey("test"), function* (key) {
        const time = yield* TestClock.VirtualTime
        const transaction_id = transactionOf(yield* paid(key, "order-1", 555040))
        TestApp.expectError(yield* Calls.refundStatus(key, transaction_id), 404, "PaymentNotFound")
        const requested = yield* Calls.requestRefund(key, {
          reference_id: "order-1",
          transaction_id,
          reason: "customer request"
        })
        expect(requested.status).toBe(204)
        const processing = yield* Calls.refundStatus(key, transaction_id)
        expect(processing.status).toBe(200)
        expect(processing.json).toEqual({
          payload: { transaction_id, status: "PROCESSING", date_applied: null },
          errors: []
        })
        TestApp.expectError(
          yield* Calls.requestRefund(key, { reference_id: "order-1", transaction_id }),
          409,
          "RefundCannotBeRequested"
        )
        yield* time.advance(60_000)
        expect((yield* Calls.refundStatus(key, transaction_id)).json.payload).toEqual({
          transaction_id,
          status: "APPROVED",
          date_applied: "2026-11-21T10:01:00.000-05:00"
        })
        expect((yield* Calls.readPayment(key, "order-1")).json.status).toBe("REFUNDED")
      })
    )

    it.live(
      "C8: 404 for another reference or an unknown transaction; 409 for a rejected payment",
      TestApp.given(buttonKey("test"), function* (key) {
        const approved = transactionOf(yield* paid(key, "order-1", 555040))
        const rejected = transactionOf(yield* paid(key, "order-2", 555042))
        for (const [reference_id, transaction_id, status] of [
          ["order-2", approved, 404],
          ["order-1", "TRX_404", 404],
          ["order-2", rejected, 409]
        ] as const) {
          expect((yield* Calls.requestRefund(key, { reference_id, transaction_id })).status).toBe(status)
        }
        const invalid = yield* Calls.requestRefund(key, { transaction_id: approved })
        expect(invalid.status).toBe(400)
        expect(invalid.json.errors[0].field).toBe("reference_id")
      })
    )

    it.live(
      "production refunds wait for the admin review: REJECTED, then a new request, then APPROVED",
      TestApp.given(buttonKey("production"), function* (key) {
        const time = yield* TestClock.VirtualTime
        const transaction_id = transactionOf(yield* paid(key, "order-1", 555002))
        yield* Calls.requestRefund(key, { reference_id: "order-1", transaction_id })
        yield* time.advance(3_600_000)
        expect((yield* Calls.refundStatus(key, transaction_id)).json.payload.status).toBe("PROCESSING")
        const unauthorized = yield* TestApp.send("POST", `/admin/v1/refunds/${transaction_id}/review`, {
          body: { outcome: "REJECTED" }
        })
        expect(unauthorized.status).toBe(401)
        const rejected = yield* review(transaction_id, "REJECTED")
        expect(rejected.status).toBe(200)
        expect(rejected.json).toMatchObject({ transaction_id, status: "REJECTED" })
        expect((yield* review(transaction_id, "APPROVED")).status).toBe(409)
        expect((yield* Calls.readPayment(key, "order-1")).json.status).toBe("APPROVED")
        const again = yield* Calls.requestRefund(key, { reference_id: "order-1", transaction_id })
        expect(again.status).toBe(204)
        expect((yield* review(transaction_id, "APPROVED")).json).toMatchObject({
          status: "APPROVED",
          date_applied: "2026-11-21T11:00:00.000-05:00"
        })
        expect((yield* Calls.readPayment(key, "order-1")).json.status).toBe("REFUNDED")
        expect((yield* review("TRX_404", "APPROVED")).status).toBe(404)
      })
    )
  })

  describe("keys and isolation", () => {
    it.live(
      "another merchant's reference or transaction is 404; a production key cannot see test data",
      TestApp.fresh(function* () {
        const a = yield* merchant("A")
        const b = yield* merchant("B")
        const transaction_id = transactionOf(yield* paid(a.button.test, "order-1", 555040))
        for (const key of [b.button.test, a.button.production]) {
          for (const read of [
            Calls.readIntent(key, "order-1"),
            Calls.readPayment(key, "order-1"),
            Calls.refundStatus(key, transaction_id)
          ]) {
            TestApp.expectError(yield* read, 404, "PaymentNotFound")
          }
          expect((yield* Calls.voidPayment(key, transaction_id)).status).toBe(404)
          const refund = yield* Calls.requestRefund(key, { reference_id: "order-1", transaction_id })
          expect(refund.status).toBe(404)
          expect((yield* Calls.attempt(key, cardAttempt("order-1"))).status).toBe(404)
        }
        // The same reference is free in the other mode and for another merchant.
        for (const key of [a.button.production, b.button.test]) {
          expect((yield* Calls.createIntent(key, intent("order-1", 1))).status).toBe(201)
        }
        expect((yield* Calls.readPayment(a.button.test, "order-1")).json.status).toBe("APPROVED")
      })
    )

    it.live(
      "C endpoints need the payment-button key: none is 401, the terminal API key is 403",
      TestApp.given(merchant(), function* (m) {
        yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.terminal.test })
        expect((yield* TestApp.send("GET", "/v1/payment/pse/banks")).status).toBe(401)
        TestApp.expectError(yield* Calls.createIntent(m.terminal.test, intent("o", 1)), 403, "Forbidden")
      })
    )
  })
  describe("a disabled merchant account (M1, L6)", () => {
    it.live(
      "C1 and C4 of a disabled account are 403 MerchantDisabled in the envelope and store nothing",
      TestApp.given(merchant(), function* (m) {
        const other = yield* merchant("Other shop")
        const keys = [m.button.test, m.button.production]
        for (const key of keys) {
          expect((yield* Calls.createIntent(key, intent("order-1", 555040))).status).toBe(201)
        }
        yield* TestApp.disable(m.merchantId)
        yield* TestApp.storesNothing(
          Effect.forEach(keys, (key) =>
            Effect.gen(function* () {
              for (const refused of [
                Calls.createIntent(key, intent("order-2", 1000)),
                Calls.attempt(key, cardAttempt("order-1")),
                Calls.attempt(key, { reference_id: "order-1", payment_method: { name: "PSE" } })
              ]) {
                const reply = yield* refused
                expect(reply.status).toBe(403)
                expect(reply.json).toEqual(MERCHANT_DISABLED)
              }
            })
          )
        )
        // A malformed body is still the client's 400, and another merchant is not affected.
        expect((yield* Calls.createIntent(m.button.test, { reference_id: "order-3" })).status).toBe(400)
        const unaffected = yield* paid(other.button.test, "order-1", 555040)
        expect(unaffected.status).toBe(201)
      })
    )

    it.live(
      "a disabled account still answers C2, C3, C5, C6, C7, C8 and C9, and a challenge under way completes",
      TestApp.given(merchant(), function* (m) {
        const key = m.button.test
        const first = transactionOf(yield* paid(key, "order-1", 555040))
        const second = transactionOf(yield* paid(key, "order-2", 555040))
        const challenge = yield* paid(key, "order-3", 555020)
        yield* Calls.createIntent(key, intent("order-4", 1000))
        yield* TestApp.disable(m.merchantId)
        const c2 = yield* Calls.readIntent(key, "order-1")
        expect([c2.status, c2.json.status]).toEqual([200, "PAID"])
        const c3 = yield* Calls.updateIntent(key, intent("order-4", 2000))
        expect([c3.status, c3.json.amount.total_amount]).toEqual([200, 2000])
        expect((yield* Calls.readPayment(key, "order-1")).status).toBe(200)
        expect((yield* TestApp.send("GET", "/v1/payment/pse/banks", { key })).status).toBe(200)
        expect((yield* Calls.voidPayment(key, first)).status).toBe(204)
        const c8 = yield* Calls.requestRefund(key, {
          reference_id: "order-2",
          transaction_id: second,
          reason: "returned"
        })
        expect(c8.status).toBe(204)
        const c9 = yield* Calls.refundStatus(key, second)
        expect([c9.status, c9.json.payload.status]).toEqual([200, "PROCESSING"])
        expect((yield* decide(challenge, "approve")).status).toBe(303)
        expect((yield* Calls.readPayment(key, "order-3")).json.status).toBe("APPROVED")
      })
    )
  })
})
