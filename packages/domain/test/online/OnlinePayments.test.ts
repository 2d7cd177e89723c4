import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Bogota from "@cobro/domain/Bogota"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import { RefundId } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import {
  attemptInput,
  challengeUrl,
  details,
  givenIntent,
  otherMerchant,
  production,
  ref,
  sandbox
} from "../fixtures/Online.js"
import { atT0, failure, freshly, givenMerchant, MER_1, MER_2, ports, T0 } from "../fixtures/Scenario.js"

/** Milliseconds of a Bogotá wall-clock time on November `day`, 2026 (UTC−05:00). */
const bogota = (day: number, hour: number, minute = 0, second = 0, ms = 0) =>
  Date.UTC(2026, 10, day, hour + 5, minute, second, ms)

/** A card attempt with the cardholder's name, installments and payer. */
const card = (referenceId: string, overrides: Partial<OnlinePayments.AttemptInput> = {}) =>
  attemptInput(referenceId, {
    cardholderName: Option.some("ANA GOMEZ"),
    installments: Option.some(1),
    payer: Option.some({ personType: "NATURAL_PERSON", name: "Ana" }),
    ...overrides
  })

const handleMerchant = CommandHandler.make(Merchant.Merchant)

/** Runs a scenario on a fresh store at T0 (Bogotá 10:00), with the accounts MER_1 and MER_2 open. */
const scenario = freshly(
  ports,
  atT0(Effect.all([givenMerchant(MER_1, {}, "Tienda"), givenMerchant(MER_2, {}, "Tienda")]))
)

/** Disables the account of MER_1 (an operator's call). */
const disableMerchant = handleMerchant(
  sandbox.merchantId,
  new Merchant.DisableMerchant({ now: DateTime.unsafeMake(T0) })
).pipe(Effect.orDie)

/** Given an intent of `total` and a card attempt on it. */
const givenAttempt = (total: number, scope = sandbox, referenceId = "order-1") =>
  Effect.zipRight(givenIntent(total, scope, referenceId), OnlinePayments.attempt(scope, card(referenceId)))

const advance = (ms: number) => TestClock.adjust(ms)

describe("OnlinePayments", () => {
  describe("C1–C3 intents", () => {
    it.effect("C1 creates an ACTIVE intent in the key's merchant and mode", () =>
      scenario(function* () {
        const intent = yield* OnlinePayments.createIntent(sandbox, {
          referenceId: ref("order-1"),
          details: details(10_000),
          deviceFingerprint: Option.some({ ip: "10.0.0.1" })
        })
        expect(intent._tag).toBe("ACTIVE")
        expect(intent.intent).toMatchObject({ merchantId: "MER_1", sandbox: true, referenceId: "order-1" })
        expect(DateTime.toEpochMillis(intent.intent.createdAt)).toBe(T0)
        expect(Option.isNone(intent.transactionId)).toBe(true)
      })
    )

    it.effect("C1: a duplicate reference_id of the same merchant and mode is a conflict (409)", () =>
      scenario(function* () {
        const create = givenIntent(10_000)
        yield* create
        expect(yield* failure(create)).toMatchObject({
          _tag: "IntentAlreadyExists",
          referenceId: "order-1"
        })
      })
    )

    it.effect("C1: the same reference_id in the other mode or of another merchant is another intent", () =>
      scenario(function* () {
        for (const scope of [sandbox, production, otherMerchant]) {
          const intent = yield* givenIntent(10_000, scope)
          expect(intent.intent).toMatchObject({ merchantId: scope.merchantId, sandbox: scope.sandbox })
        }
      })
    )

    it.effect("C2 reads the intent; another merchant's or mode's reference is not found (404)", () =>
      scenario(function* () {
        yield* givenIntent(10_000)
        const read = yield* OnlinePayments.readIntent(sandbox, ref("order-1"))
        expect(read.details.amount.total).toBe(10_000)
        expect(yield* failure(OnlinePayments.readIntent(production, ref("order-1")))).toMatchObject({
          _tag: "IntentNotFound"
        })
        expect(yield* failure(OnlinePayments.readIntent(otherMerchant, ref("order-1")))).toMatchObject({
          _tag: "IntentNotFound"
        })
      })
    )

    it.effect("C3 replaces the whole body of an unpaid intent", () =>
      scenario(function* () {
        yield* givenIntent(10_000)
        const updated = yield* OnlinePayments.updateIntent(sandbox, {
          referenceId: ref("order-1"),
          details: details(12_000, { description: Option.none() })
        })
        expect(updated.details.amount.total).toBe(12_000)
        expect(Option.isNone(updated.details.description)).toBe(true)
      })
    )

    it.effect("C3: an unknown reference is not found (404)", () =>
      scenario(function* () {
        const error = yield* failure(
          OnlinePayments.updateIntent(sandbox, { referenceId: ref("nope"), details: details(1) })
        )
        expect(error._tag).toBe("IntentNotFound")
      })
    )

    it.effect("C3: a paid intent cannot be updated (IntentAlreadyPaid, 409)", () =>
      scenario(function* () {
        yield* givenAttempt(555040)
        const error = yield* failure(
          OnlinePayments.updateIntent(sandbox, { referenceId: ref("order-1"), details: details(1) })
        )
        expect(error).toMatchObject({ _tag: "IntentAlreadyPaid", referenceId: "order-1" })
      })
    )

    it.effect("C3: while a challenge is pending the amount cannot change (409), other fields can", () =>
      scenario(function* () {
        yield* givenAttempt(555020)
        const error = yield* failure(
          OnlinePayments.updateIntent(sandbox, { referenceId: ref("order-1"), details: details(1) })
        )
        expect(error._tag).toBe("IntentAmountLocked")
        const updated = yield* OnlinePayments.updateIntent(sandbox, {
          referenceId: ref("order-1"),
          details: details(555020, { description: Option.some("changed") })
        })
        expect(updated._tag).toBe("PROCESSING")
        expect(updated.details.description).toEqual(Option.some("changed"))
      })
    )
  })

  describe("C4 attempts and the sandbox amounts", () => {
    const cases: ReadonlyArray<[number, Payment.Status, PaymentIntent.Status, boolean | undefined]> = [
      [555001, "APPROVED", "PAID", true],
      [555002, "REJECTED", "ACTIVE", undefined],
      [555040, "APPROVED", "PAID", false],
      [555042, "REJECTED", "ACTIVE", undefined],
      [10_000, "APPROVED", "PAID", false]
    ]
    for (const [total, paymentStatus, intentStatus, threeDs] of cases) {
      it.effect(`sandbox ${total}: the payment is ${paymentStatus} and the intent ${intentStatus}`, () =>
        scenario(function* () {
          const result = yield* givenAttempt(total)
          expect(result.transactionId).toMatch(/^TRX_/)
          expect(Option.isNone(result.redirect)).toBe(true)
          const payment = yield* OnlinePayments.readPayment(sandbox, ref("order-1"))
          expect(Payment.status(payment)).toBe(paymentStatus)
          expect(Option.map(payment.approval, (a) => a.threeDs)).toEqual(Option.fromNullable(threeDs))
          const intent = yield* OnlinePayments.readIntent(sandbox, ref("order-1"))
          expect(intent._tag).toBe(intentStatus)
          expect(intent.transactionId).toEqual(Option.some(result.transactionId))
        })
      )
    }

    it.effect("sandbox 555020: a 3DS challenge, RUNNING with next_actions to Cobro's challenge page", () =>
      scenario(function* () {
        const result = yield* givenAttempt(555020)
        const redirect = Option.getOrThrow(result.redirect)
        expect(redirect.kind).toBe("ThreeDsChallenge")
        expect(redirect.nextAction).toEqual({
          redirectUrl: challengeUrl(result.transactionId, redirect.token),
          redirectMethod: "GET"
        })
        const payment = yield* OnlinePayments.readPayment(sandbox, ref("order-1"))
        expect(Payment.status(payment)).toBe("RUNNING")
        expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("PROCESSING")
      })
    )

    it.effect("the sandbox amounts have no effect in production: 555002 and 555020 are approved", () =>
      scenario(function* () {
        yield* givenAttempt(555002, production, "p-1")
        yield* givenAttempt(555020, production, "p-2")
        for (const r of ["p-1", "p-2"]) {
          expect(Payment.status(yield* OnlinePayments.readPayment(production, ref(r)))).toBe("APPROVED")
        }
      })
    )

    it.effect("C4: the card is kept masked, first 6 and last 4 digits", () =>
      scenario(function* () {
        yield* givenAttempt(555040)
        const payment = yield* OnlinePayments.readPayment(sandbox, ref("order-1"))
        expect(Option.map(payment.payment.card, (c) => c.maskedPan)).toEqual(Option.some("411111******1111"))
      })
    )

    it.effect("C4: an attempt on an unknown reference is not found (404)", () =>
      scenario(function* () {
        expect((yield* failure(OnlinePayments.attempt(sandbox, card("nope"))))._tag).toBe("IntentNotFound")
        yield* givenIntent(10_000, otherMerchant, "theirs")
        expect((yield* failure(OnlinePayments.attempt(sandbox, card("theirs"))))._tag).toBe("IntentNotFound")
      })
    )

    it.effect("C4: a card method needs card_number (400), and nothing is recorded", () =>
      scenario(function* () {
        yield* givenIntent(10_000)
        const error = yield* failure(
          OnlinePayments.attempt(sandbox, card("order-1", { cardNumber: Option.none() }))
        )
        expect(error).toMatchObject({ _tag: "InvalidAttempt", field: "payment_method.card_number" })
        expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("ACTIVE")
      })
    )

    it.effect("C4: an intent paid, or with an attempt running, takes no new attempt (409)", () =>
      scenario(function* () {
        yield* givenAttempt(555020)
        const running = yield* failure(OnlinePayments.attempt(sandbox, card("order-1")))
        expect(running).toMatchObject({ _tag: "IntentNotInState", status: "PROCESSING" })
        yield* givenAttempt(555040, sandbox, "order-2")
        const paid = yield* failure(OnlinePayments.attempt(sandbox, card("order-2")))
        expect(paid).toMatchObject({ _tag: "IntentNotInState", status: "PAID" })
      })
    )

    it.effect("C4: after a rejected attempt the intent can be attempted again; C5 reads the new one", () =>
      scenario(function* () {
        const first = yield* givenAttempt(555042)
        yield* OnlinePayments.updateIntent(sandbox, {
          referenceId: ref("order-1"),
          details: details(10_000)
        })
        const second = yield* OnlinePayments.attempt(sandbox, card("order-1"))
        expect(second.transactionId).not.toBe(first.transactionId)
        const payment = yield* OnlinePayments.readPayment(sandbox, ref("order-1"))
        expect(payment.payment.transactionId).toBe(second.transactionId)
        expect(Payment.status(payment)).toBe("APPROVED")
      })
    )

    it.effect("C4: PSE needs the intent's callback_url; with it, a bank redirect to Cobro's page", () =>
      scenario(function* () {
        yield* givenIntent(10_000, sandbox, "order-1", { callbackUrl: Option.none() })
        const pse = card("order-1", { paymentMethod: "PSE", cardNumber: Option.none() })
        expect((yield* failure(OnlinePayments.attempt(sandbox, pse)))._tag).toBe("CallbackUrlRequired")
        yield* OnlinePayments.updateIntent(sandbox, {
          referenceId: ref("order-1"),
          details: details(10_000)
        })
        const result = yield* OnlinePayments.attempt(sandbox, pse)
        expect(Option.map(result.redirect, (r) => r.kind)).toEqual(Option.some("BankRedirect"))
      })
    )
  })

  describe("the 3DS challenge page", () => {
    const challenged = Effect.gen(function* () {
      const result = yield* givenAttempt(555020)
      return { transactionId: result.transactionId, token: Option.getOrThrow(result.redirect).token }
    })

    it.effect("an approved challenge makes the payment APPROVED with 3DS and the intent PAID", () =>
      scenario(function* () {
        const { token, transactionId } = yield* challenged
        const page = yield* OnlinePayments.readChallenge({ transactionId, token })
        expect(page.payment._tag).toBe("CHALLENGE")
        const done = yield* OnlinePayments.completeChallenge({ transactionId, token, approve: true })
        expect(done.callbackUrl).toEqual(Option.some("https://shop.example/back"))
        expect(done.redirectMethod).toBe("GET")
        const payment = yield* OnlinePayments.readPayment(sandbox, ref("order-1"))
        expect(Payment.status(payment)).toBe("APPROVED")
        expect(Option.map(payment.approval, (a) => a.threeDs)).toEqual(Option.some(true))
        expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("PAID")
      })
    )

    it.effect("a declined challenge makes the payment REJECTED and the intent ACTIVE again", () =>
      scenario(function* () {
        const { token, transactionId } = yield* challenged
        yield* OnlinePayments.completeChallenge({ transactionId, token, approve: false })
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("REJECTED")
        expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("ACTIVE")
      })
    )

    it.effect("the challenge page needs the payment's token", () =>
      scenario(function* () {
        const { transactionId } = yield* challenged
        for (const token of ["", "00000000-0000-4000-8000-00000000ffff", "x"]) {
          const error = yield* failure(
            OnlinePayments.completeChallenge({ transactionId, token, approve: true })
          )
          expect(error._tag).toBe("ChallengeNotFound")
        }
        const unknown = yield* failure(
          OnlinePayments.readChallenge({
            transactionId: "TRX_999",
            token: "00000000-0000-4000-8000-000000000001"
          })
        )
        expect(unknown._tag).toBe("ChallengeNotFound")
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("RUNNING")
      })
    )

    it.effect("a reloaded approval changes nothing; a decline after it is refused", () =>
      scenario(function* () {
        const { token, transactionId } = yield* challenged
        yield* OnlinePayments.completeChallenge({ transactionId, token, approve: true })
        yield* OnlinePayments.completeChallenge({ transactionId, token, approve: true })
        const error = yield* failure(
          OnlinePayments.completeChallenge({ transactionId, token, approve: false })
        )
        expect(error._tag).toBe("PaymentNotInState")
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("APPROVED")
      })
    )
  })

  describe("C5, C6 reads", () => {
    it.effect("C5: an intent without an attempt has no payment (404)", () =>
      scenario(function* () {
        yield* givenIntent(10_000)
        expect((yield* failure(OnlinePayments.readPayment(sandbox, ref("order-1"))))._tag).toBe(
          "PaymentNotFound"
        )
        expect((yield* failure(OnlinePayments.readPayment(sandbox, ref("nope"))))._tag).toBe(
          "PaymentNotFound"
        )
      })
    )

    it.effect("C6: a fixed list of Colombian PSE banks with unique codes", () =>
      Effect.gen(function* () {
        const banks = yield* OnlinePayments.banks()
        expect(banks.length).toBeGreaterThan(10)
        expect(new Set(banks.map((b) => b.code)).size).toBe(banks.length)
        expect(banks.map((b) => b.name)).toContain("BANCOLOMBIA")
      })
    )
  })

  describe("a disabled merchant account (M1, L6)", () => {
    it.effect(
      "C1: a disabled account cannot create an intent (MerchantNotInState, 403); nothing is recorded",
      () =>
        scenario(function* () {
          yield* disableMerchant
          for (const scope of [sandbox, production]) {
            const error = yield* failure(givenIntent(10_000, scope))
            expect(error).toMatchObject({
              _tag: "MerchantNotInState",
              status: "DISABLED",
              command: "CreateIntent"
            })
            expect(yield* failure(OnlinePayments.readIntent(scope, ref("order-1")))).toMatchObject({
              _tag: "IntentNotFound"
            })
          }
          // Another merchant's account is not affected.
          const other = yield* givenIntent(10_000, otherMerchant)
          expect(other._tag).toBe("ACTIVE")
        })
    )

    it.effect("C4: a disabled account cannot attempt an intent made before (403); nothing is recorded", () =>
      scenario(function* () {
        yield* givenIntent(10_000)
        yield* disableMerchant
        const store = yield* EventStore.EventStore
        const before = (yield* store.readAll({ limit: 1_000_000 })).length
        const error = yield* failure(OnlinePayments.attempt(sandbox, card("order-1")))
        expect(error).toMatchObject({
          _tag: "MerchantNotInState",
          status: "DISABLED",
          command: "StartPayment"
        })
        expect((yield* store.readAll({ limit: 1_000_000 })).length).toBe(before)
        const intent = yield* OnlinePayments.readIntent(sandbox, ref("order-1"))
        expect(intent._tag).toBe("ACTIVE")
        expect(Option.isNone(intent.transactionId)).toBe(true)
      })
    )

    it.effect("a disabled account is enabled again: C1 and C4 work as before", () =>
      scenario(function* () {
        yield* disableMerchant
        yield* handleMerchant(
          sandbox.merchantId,
          new Merchant.EnableMerchant({ now: DateTime.unsafeMake(T0) })
        )
        const { payment } = yield* givenAttempt(555040)
        expect(Payment.status(payment)).toBe("APPROVED")
      })
    )

    it.effect(
      "a disabled account still reads, updates, voids and refunds, and a challenge under way completes",
      () =>
        scenario(function* () {
          const approved = yield* givenAttempt(555040)
          yield* givenAttempt(555040, sandbox, "order-2")
          const challenged = yield* givenAttempt(555020, sandbox, "order-3")
          yield* givenIntent(10_000, sandbox, "order-4")
          yield* disableMerchant
          expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("PAID")
          expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("APPROVED")
          const updated = yield* OnlinePayments.updateIntent(sandbox, {
            referenceId: ref("order-4"),
            details: details(12_000)
          })
          expect(updated.details.amount.total).toBe(12_000)
          const voided = yield* OnlinePayments.voidPayment(sandbox, approved.transactionId)
          expect(Payment.status(voided)).toBe("VOIDED")
          const second = yield* OnlinePayments.readPayment(sandbox, ref("order-2"))
          const refund = yield* OnlinePayments.requestRefund(sandbox, {
            referenceId: ref("order-2"),
            transactionId: second.payment.transactionId,
            reason: "returned"
          })
          expect(refund._tag).toBe("PROCESSING")
          const token = Option.getOrThrow(challenged.redirect).token
          const completed = yield* OnlinePayments.completeChallenge({
            transactionId: challenged.transactionId,
            token,
            approve: true
          })
          expect(completed.intent._tag).toBe("PAID")
        })
    )
  })

  describe("C7 void", () => {
    it.effect("C7: an approved card payment is voided before 21:00 Bogotá the same day", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        yield* TestClock.setTime(bogota(21, 20, 59, 59, 999))
        const voided = yield* OnlinePayments.voidPayment(sandbox, transactionId)
        expect(Payment.status(voided)).toBe("VOIDED")
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("VOIDED")
        expect((yield* OnlinePayments.readIntent(sandbox, ref("order-1")))._tag).toBe("PAID")
      })
    )

    it.effect("C7: a void at 21:00 Bogotá is refused (409): a refund is the remedy", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        yield* TestClock.setTime(bogota(21, 21))
        const error = yield* failure(OnlinePayments.voidPayment(sandbox, transactionId))
        expect(error).toMatchObject({ _tag: "PaymentCannotBeVoided", reason: "WindowClosed" })
        yield* OnlinePayments.requestRefund(sandbox, {
          referenceId: ref("order-1"),
          transactionId,
          reason: ""
        })
      })
    )

    it.effect("C7: only APPROVED card payments, once (409)", () =>
      scenario(function* () {
        const rejected = yield* givenAttempt(555042, sandbox, "r")
        expect(yield* failure(OnlinePayments.voidPayment(sandbox, rejected.transactionId))).toMatchObject({
          reason: "NotApproved"
        })
        const challenge = yield* givenAttempt(555020, sandbox, "c")
        expect(yield* failure(OnlinePayments.voidPayment(sandbox, challenge.transactionId))).toMatchObject({
          reason: "NotApproved"
        })
        const approved = yield* givenAttempt(555040, sandbox, "a")
        yield* OnlinePayments.voidPayment(sandbox, approved.transactionId)
        expect(yield* failure(OnlinePayments.voidPayment(sandbox, approved.transactionId))).toMatchObject({
          reason: "AlreadyVoided"
        })
        yield* givenIntent(10_000, sandbox, "pse")
        const pse = yield* OnlinePayments.attempt(
          sandbox,
          card("pse", { paymentMethod: "PSE", cardNumber: Option.none() })
        )
        const token = Option.getOrThrow(pse.redirect).token
        yield* OnlinePayments.completeChallenge({ transactionId: pse.transactionId, token, approve: true })
        expect(yield* failure(OnlinePayments.voidPayment(sandbox, pse.transactionId))).toMatchObject({
          reason: "NotCard"
        })
      })
    )

    it.effect(
      "C7: an unknown, malformed, or another merchant's or mode's transaction is not found (404)",
      () =>
        scenario(function* () {
          const { transactionId } = yield* givenAttempt(555040)
          for (const [scope, id] of [
            [sandbox, "TRX_404"],
            [sandbox, "not a transaction"],
            [otherMerchant, transactionId],
            [production, transactionId]
          ] as const) {
            expect((yield* failure(OnlinePayments.voidPayment(scope, id)))._tag).toBe("PaymentNotFound")
          }
          expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("APPROVED")
        })
    )

    type VoidAt =
      { readonly _tag: "delay"; readonly ms: number } | { readonly _tag: "edge"; readonly edge: string }
    it.effect.prop(
      "C7 through the use case: voidable iff the same Bogotá day as the approval and before 21:00",
      [
        FastCheck.integer({ min: 0, max: 86_400_000 - 1 }),
        FastCheck.oneof(
          FastCheck.integer({ min: 0, max: 2 * 86_400_000 }).map((ms): VoidAt => ({ _tag: "delay", ms })),
          FastCheck.constantFrom("20:59:59.999", "21:00:00.000", "next midnight").map((edge): VoidAt => ({
            _tag: "edge",
            edge
          }))
        )
      ],
      ([approvedAtOfDay, at]) =>
        scenario(function* () {
          const approvedAt = bogota(21, 0) + approvedAtOfDay
          const cutoff = bogota(21, 21)
          yield* TestClock.setTime(approvedAt)
          const { transactionId } = yield* givenAttempt(555040)
          const voidAt =
            at._tag === "delay"
              ? approvedAt + at.ms
              : Math.max(
                  approvedAt,
                  at.edge === "20:59:59.999"
                    ? cutoff - 1
                    : at.edge === "21:00:00.000"
                      ? cutoff
                      : bogota(22, 0)
                )
          yield* TestClock.setTime(voidAt)
          const result = yield* Effect.either(OnlinePayments.voidPayment(sandbox, transactionId))
          expect(Either.isRight(result)).toBe(voidAt < cutoff)
          expect(voidAt < cutoff).toBe(
            Bogota.isWithinVoidWindow(DateTime.unsafeMake(approvedAt), DateTime.unsafeMake(voidAt))
          )
          if (Either.isLeft(result)) expect(result.left).toMatchObject({ reason: "WindowClosed" })
        }),
      { fastCheck: { numRuns: 50 }, timeout: 60_000 }
    )
  })

  describe("C8, C9 refunds and their review", () => {
    const refund = (transactionId: string, referenceId = "order-1") =>
      OnlinePayments.requestRefund(sandbox, {
        referenceId: ref(referenceId),
        transactionId,
        reason: "customer"
      })

    it.effect("C8: a refund is PROCESSING, for the whole captured amount", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        const requested = yield* refund(transactionId)
        expect(requested._tag).toBe("PROCESSING")
        expect(requested.refund).toMatchObject({ transactionId, amount: 555040, reason: "customer" })
        const status = yield* OnlinePayments.refundStatus(sandbox, transactionId)
        expect(status._tag).toBe("PROCESSING")
        expect(Option.isNone(status.dateApplied)).toBe(true)
        // The payment stays APPROVED while the refund is under review.
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("APPROVED")
      })
    )

    it.effect("C8: the transaction must be the payment of reference_id in the scope (404)", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        expect((yield* failure(refund(transactionId, "other-order")))._tag).toBe("PaymentNotFound")
        expect((yield* failure(refund("TRX_404")))._tag).toBe("PaymentNotFound")
        const theirs = yield* failure(
          OnlinePayments.requestRefund(otherMerchant, {
            referenceId: ref("order-1"),
            transactionId,
            reason: ""
          })
        )
        expect(theirs._tag).toBe("PaymentNotFound")
      })
    )

    it.effect("C8: a refund cannot be requested twice, of a rejected or a voided payment (409)", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        yield* refund(transactionId)
        expect(yield* failure(refund(transactionId))).toMatchObject({
          _tag: "RefundCannotBeRequested",
          reason: "RefundInProgress"
        })
        const rejected = yield* givenAttempt(555002, sandbox, "r")
        expect(yield* failure(refund(rejected.transactionId, "r"))).toMatchObject({ reason: "NotApproved" })
        const voided = yield* givenAttempt(555040, sandbox, "v")
        yield* OnlinePayments.voidPayment(sandbox, voided.transactionId)
        expect(yield* failure(refund(voided.transactionId, "v"))).toMatchObject({ reason: "Voided" })
      })
    )

    it.effect("C9: a transaction without a refund has no refund status (404)", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        expect((yield* failure(OnlinePayments.refundStatus(sandbox, transactionId)))._tag).toBe(
          "RefundNotFound"
        )
        expect((yield* failure(OnlinePayments.refundStatus(production, transactionId)))._tag).toBe(
          "PaymentNotFound"
        )
      })
    )

    it.effect(
      `the sandbox approves a refund ${OnlinePayments.SANDBOX_REFUND_REVIEW_SECONDS} seconds after its request, with date_applied then`,
      () =>
        scenario(function* () {
          const { transactionId } = yield* givenAttempt(555040)
          yield* refund(transactionId)
          yield* advance(OnlinePayments.SANDBOX_REFUND_REVIEW_SECONDS * 1000 - 1)
          expect((yield* OnlinePayments.refundStatus(sandbox, transactionId))._tag).toBe("PROCESSING")
          yield* advance(10 * 60_000)
          const status = yield* OnlinePayments.refundStatus(sandbox, transactionId)
          expect(status._tag).toBe("APPROVED")
          expect(Option.map(status.dateApplied, DateTime.toEpochMillis)).toEqual(
            Option.some(T0 + OnlinePayments.SANDBOX_REFUND_REVIEW_SECONDS * 1000)
          )
          expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("REFUNDED")
          expect(yield* failure(refund(transactionId))).toMatchObject({ reason: "AlreadyRefunded" })
        })
    )

    it.effect("a production refund stays PROCESSING until the service's review", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(10_000, production)
        yield* OnlinePayments.requestRefund(production, {
          referenceId: ref("order-1"),
          transactionId,
          reason: ""
        })
        yield* advance(7 * 86_400_000)
        expect((yield* OnlinePayments.refundStatus(production, transactionId))._tag).toBe("PROCESSING")
        const reviewed = yield* OnlinePayments.reviewRefund({ transactionId, outcome: "APPROVED" })
        expect(reviewed._tag).toBe("APPROVED")
        const status = yield* OnlinePayments.refundStatus(production, transactionId)
        expect(Option.map(status.dateApplied, DateTime.toEpochMillis)).toEqual(
          Option.some(T0 + 7 * 86_400_000)
        )
        expect(Payment.status(yield* OnlinePayments.readPayment(production, ref("order-1")))).toBe("REFUNDED")
      })
    )

    it.effect("a rejected review leaves the payment APPROVED and a new refund can be requested", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        const first = yield* refund(transactionId)
        yield* OnlinePayments.reviewRefund({ transactionId, outcome: "REJECTED" })
        expect((yield* OnlinePayments.refundStatus(sandbox, transactionId))._tag).toBe("REJECTED")
        expect(Payment.status(yield* OnlinePayments.readPayment(sandbox, ref("order-1")))).toBe("APPROVED")
        const second = yield* refund(transactionId)
        expect(second.refund.refundId).not.toBe(first.refund.refundId)
        expect((yield* OnlinePayments.refundStatus(sandbox, transactionId))._tag).toBe("PROCESSING")
      })
    )

    it.effect("a review is final: the same outcome again changes nothing, the other one is refused", () =>
      scenario(function* () {
        const { transactionId } = yield* givenAttempt(555040)
        yield* refund(transactionId)
        yield* OnlinePayments.reviewRefund({ transactionId, outcome: "APPROVED" })
        yield* OnlinePayments.reviewRefund({ transactionId, outcome: "APPROVED" })
        const error = yield* failure(OnlinePayments.reviewRefund({ transactionId, outcome: "REJECTED" }))
        expect(error._tag).toBe("RefundAlreadyReviewed")
        expect(
          (yield* failure(OnlinePayments.reviewRefund({ transactionId: "TRX_9", outcome: "APPROVED" })))._tag
        ).toBe("PaymentNotFound")
      })
    )

    it.effect(
      "a refund request whose Refund stream was never written (an older version's crash) reads whole, and the read writes nothing",
      () =>
        scenario(function* () {
          const { transactionId } = yield* givenAttempt(555040)
          // Only the payment's half of the request was recorded.
          yield* CommandHandler.make(Payment.Payment)(
            transactionId,
            new Payment.RequestRefund({
              refundId: RefundId.make("RFD_lost"),
              reason: "customer",
              now: DateTime.unsafeMake(T0)
            })
          )
          const status = yield* OnlinePayments.refundStatus(sandbox, transactionId)
          expect(status._tag).toBe("PROCESSING")
          expect(status.refund).toMatchObject({ refundId: "RFD_lost", transactionId, amount: 555040 })
          const store = yield* EventStore.EventStore
          expect(yield* store.readStream("Refund-RFD_lost")).toHaveLength(0)
          // The next command on the payment writes the missing stream with its own decision.
          yield* OnlinePayments.reviewRefund({ transactionId, outcome: "REJECTED" })
          expect((yield* store.readStream("Refund-RFD_lost")).map((e) => e.type)).toEqual([
            "RefundRequested",
            "RefundRejected"
          ])
        })
    )

    type Step =
      | { readonly _tag: "refund" }
      | { readonly _tag: "review"; readonly outcome: "APPROVED" | "REJECTED" }
      | { readonly _tag: "void" }
      | { readonly _tag: "advance"; readonly seconds: number }
    const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
      FastCheck.constant({ _tag: "refund" as const }),
      FastCheck.constantFrom("APPROVED" as const, "REJECTED" as const).map((outcome) => ({
        _tag: "review" as const,
        outcome
      })),
      FastCheck.constant({ _tag: "void" as const }),
      FastCheck.integer({ min: 1, max: 120 }).map((seconds) => ({ _tag: "advance" as const, seconds }))
    )

    it.effect.prop(
      "refunds never exceed the captured amount, whatever the requests, reviews, voids and delays",
      [FastCheck.boolean(), FastCheck.array(step, { maxLength: 15 })],
      ([inSandbox, steps]) =>
        scenario(function* () {
          const scope = inSandbox ? sandbox : production
          const { transactionId } = yield* givenAttempt(555040, scope)
          for (const s of steps) {
            if (s._tag === "refund") {
              yield* Effect.either(
                OnlinePayments.requestRefund(scope, {
                  referenceId: ref("order-1"),
                  transactionId,
                  reason: ""
                })
              )
            } else if (s._tag === "review") {
              yield* Effect.either(OnlinePayments.reviewRefund({ transactionId, outcome: s.outcome }))
            } else if (s._tag === "void") {
              yield* Effect.either(OnlinePayments.voidPayment(scope, transactionId))
            } else {
              yield* advance(s.seconds * 1000)
            }
          }
          const store = yield* EventStore.EventStore
          const log = yield* store.readStream(`Payment-${transactionId}`)
          const refunded = log
            .filter((e) => e.type === "PaymentRefunded")
            .reduce((sum, e) => sum + (e.data as { amount: number }).amount, 0)
          const voided = log.some((e) => e.type === "PaymentVoided")
          expect(refunded).toBeLessThanOrEqual(555040)
          // Money goes back at most once: by one approved refund or by the void, never both.
          expect(refunded > 0 && voided).toBe(false)
          const payment = yield* OnlinePayments.readPayment(scope, ref("order-1"))
          // Reads write nothing: a sandbox review that fell due shows REFUNDED before it is recorded.
          expect((yield* store.readStream(`Payment-${transactionId}`)).length).toBe(log.length)
          const shown = Payment.status(payment)
          if (voided) expect(shown).toBe("VOIDED")
          else if (refunded > 0) expect(shown).toBe("REFUNDED")
          // Not recorded yet: production waits for a review; the sandbox's may have fallen due.
          else expect(shown === "APPROVED" || (inSandbox && shown === "REFUNDED")).toBe(true)
        }),
      { fastCheck: { numRuns: 50 }, timeout: 60_000 }
    )
  })
})
