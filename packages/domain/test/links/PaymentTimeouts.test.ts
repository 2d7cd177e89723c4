/**
 * Payments abandoned at the payer's step (a 3DS challenge, the bank of PSE, a wallet): the pure
 * timeout decision of the Payment and PaymentLink deciders (`ExpirePayment`), and the timeout
 * sweeper's steps `LinkPayments.expirePayment` and `OnlinePayments.expirePayment` over the in-memory
 * store, with the payer's late decision answered "expired".
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { fold } from "@cobro/domain/Decider"
import { IntentReference, PaymentLinkId, TransactionId } from "@cobro/domain/Ids"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import { amount } from "@cobro/domain/Money"
import * as Notifications from "@cobro/domain/Notifications"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { cardPaymentOn, closeLink, expectPaysAgain, linkStatus } from "../fixtures/Links.js"
import { attemptInput, givenIntent, ref, sandbox } from "../fixtures/Online.js"
import {
  atT0,
  CARD,
  failure,
  freshly,
  givenMerchant,
  MER_1,
  MINUTE,
  offering,
  ports,
  T0
} from "../fixtures/Scenario.js"
import { DeciderSpec } from "../support/DeciderSpec.js"

const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * MINUTE)
const TIMEOUT = Payment.ABANDONED_PAYMENT_TIMEOUT
const trx1 = TransactionId.make("TRX_1")
const trx2 = TransactionId.make("TRX_2")

describe("the timeout of an abandoned payment", () => {
  it("is 15 minutes: EMV 3-D Secure 2's usual default for an authentication", () => {
    expect(Duration.toMinutes(Payment.ABANDONED_PAYMENT_TIMEOUT)).toBe(15)
  })
})

// ---------------------------------------------------------------------------------------------
// Payment (pure)
// ---------------------------------------------------------------------------------------------

describe("Payment: ExpirePayment", () => {
  const spec = DeciderSpec.for(Payment.Payment)
  const startedEvents = (paymentMethod = "CREDIT_CARD") =>
    Either.getOrThrow(
      Payment.decide(
        new Payment.StartPayment({
          transactionId: trx1,
          merchantId: MER_1,
          sandbox: true,
          referenceId: IntentReference.make("order-1"),
          amount: new PaymentIntent.IntentAmount({
            currency: "COP",
            total: amount(555_020),
            tip: amount(0),
            taxes: []
          }),
          paymentMethod,
          card: Option.none(),
          payer: Option.none(),
          metadata: Option.none(),
          deviceFingerprint: Option.none(),
          now: at(0)
        }),
        Payment.initialState
      )
    )
  const challenged = new Payment.PaymentChallengeRequired({
    nextAction: { redirectUrl: "https://cobro.example/challenge/3ds/TRX_1/t", redirectMethod: "GET" },
    at: at(0)
  })
  const expire = (minutes: number, timeout: Duration.Duration = TIMEOUT) =>
    new Payment.ExpirePayment({ timeout, now: at(minutes) })
  const expiredEvent = (minutes: number, reason: string) =>
    new Payment.PaymentRejected({ reason, at: at(minutes), expired: true })

  it("a 3DS challenge left for the timeout expires: rejected by the sweeper, C5 reads REJECTED", () => {
    spec
      .given([...startedEvents(), challenged])
      .when(expire(15))
      .then([
        expiredEvent(15, "Expired: the cardholder did not complete the 3DS challenge within 15 minutes")
      ])
    const state = fold(Payment.Payment, [...startedEvents(), challenged, expiredEvent(15, "x")])
    if (state._tag === "Initial") throw new Error("no payment")
    expect(state._tag).toBe("EXPIRED")
    expect(Payment.status(state)).toBe("REJECTED")
  })

  it("a PSE payment left at the bank expires with the bank's reason", () => {
    spec
      .given([...startedEvents("PSE"), challenged])
      .when(expire(20))
      .then([
        expiredEvent(20, "Expired: the cardholder did not complete the payment at the bank within 15 minutes")
      ])
  })

  it("a payment never decided (a crash before the acquirer answered) expires too", () => {
    spec
      .given(startedEvents())
      .when(expire(15))
      .then([expiredEvent(15, "Expired: the payment was not decided within 15 minutes")])
  })

  it("a payment cannot be expired before its attempt plus the timeout; the deadline itself is due", () => {
    spec
      .given([...startedEvents(), challenged])
      .when(new Payment.ExpirePayment({ timeout: TIMEOUT, now: DateTime.unsafeMake(T0 + 15 * MINUTE - 1) }))
      .thenFails("PaymentNotOverdue", { transactionId: trx1, deadline: at(15) })
    spec
      .given([...startedEvents(), challenged])
      .when(expire(15))
      .then([
        expiredEvent(15, "Expired: the cardholder did not complete the 3DS challenge within 15 minutes")
      ])
  })

  it("an expired payment expired again changes nothing", () => {
    spec
      .given([...startedEvents(), challenged, expiredEvent(15, "x")])
      .when(expire(40))
      .thenNothing()
  })

  it("a late decision on an expired payment is refused: PaymentExpired, whatever it is", () => {
    const given = [...startedEvents(), challenged, expiredEvent(15, "x")]
    for (const result of [
      { _tag: "Approved", approvalNumber: "123456" } as const,
      { _tag: "Declined", reason: "The cardholder declined the challenge" } as const
    ]) {
      spec
        .given(given)
        .when(new Payment.CompleteChallenge({ result, now: at(16) }))
        .thenFails("PaymentExpired", { transactionId: trx1, expiredAt: at(15) })
    }
    spec
      .given(given)
      .when(new Payment.ApprovePayment({ approvalNumber: "1", threeDs: false, now: at(16) }))
      .thenFails("PaymentExpired")
  })

  it("a decided payment is not expired: an approval or a rejection stands", () => {
    spec
      .given([
        ...startedEvents(),
        challenged,
        new Payment.PaymentApproved({ approvalNumber: "1", threeDs: true, at: at(3) })
      ])
      .when(expire(30))
      .thenFails("PaymentNotInState", { state: "APPROVED" })
    spec
      .given([...startedEvents(), challenged, new Payment.PaymentRejected({ reason: "declined", at: at(3) })])
      .when(expire(30))
      .thenFails("PaymentNotInState", { state: "REJECTED" })
  })

  it("an expired card payment can be neither voided nor refunded", () => {
    const given = [...startedEvents(), challenged, expiredEvent(15, "x")]
    spec
      .given(given)
      .when(new Payment.VoidPayment({ now: at(16) }))
      .thenFails("PaymentCannotBeVoided", { reason: "NotApproved" })
  })

  it.prop(
    "ExpirePayment is accepted exactly when the payment waits (RUNNING, CHALLENGE) and now ≥ attempt + timeout",
    [
      FastCheck.integer({ min: 0, max: 90 }),
      FastCheck.integer({ min: 1, max: 60 }),
      FastCheck.boolean(),
      FastCheck.constantFrom("none", "approved", "rejected")
    ],
    ([now, timeout, challenge, decided]) => {
      const events: Array<Payment.Event> = [...startedEvents(), ...(challenge ? [challenged] : [])]
      if (decided === "approved")
        events.push(new Payment.PaymentApproved({ approvalNumber: "1", threeDs: false, at: at(0) }))
      if (decided === "rejected") events.push(new Payment.PaymentRejected({ reason: "r", at: at(0) }))
      const state = fold(Payment.Payment, events)
      const result = Payment.decide(expire(now, Duration.minutes(timeout)), state)
      const due = decided === "none" && now >= timeout
      expect(Either.isRight(result) && result.right.length === 1).toBe(due)
      expect(Payment.isAbandoned(state, Duration.minutes(timeout), at(now))).toBe(due)
      if (Either.isRight(result)) {
        const after = fold(Payment.Payment, result.right, state)
        if (after._tag === "Initial") throw new Error("no payment")
        expect([after._tag, Payment.status(after)]).toEqual(["EXPIRED", "REJECTED"])
      }
    }
  )

  it("the expiry is notified as any rejection: SALE_REJECTED", () => {
    const events = [...startedEvents(), challenged, expiredEvent(15, "x")]
    const notice = Notifications.paymentNotice(fold(Payment.Payment, events), events[events.length - 1]!)
    expect(Option.map(notice, (n) => n.type)).toEqual(Option.some("SALE_REJECTED"))
  })
})

// ---------------------------------------------------------------------------------------------
// PaymentLink (pure)
// ---------------------------------------------------------------------------------------------

describe("PaymentLink: ExpirePayment", () => {
  const spec = DeciderSpec.for(PaymentLink.PaymentLink)
  const nanosAt = (minutes: number) => BigInt(T0 + minutes * MINUTE) * 1_000_000n
  const created = (expiresAt: Option.Option<bigint> = Option.some(nanosAt(120))) =>
    new PaymentLink.LinkCreated({
      linkId: PaymentLinkId.make("LNK_1"),
      merchantId: MER_1,
      sandbox: true,
      amountType: "CLOSE",
      amount: Option.some(
        new PaymentLink.LinkAmount({ currency: "COP", total: amount(555_020), tip: amount(0), taxes: [] })
      ),
      reference: "order-1",
      description: Option.none(),
      expiresAt,
      callbackUrl: Option.none(),
      paymentMethods: ["CREDIT_CARD", "PSE"],
      payerEmail: Option.none(),
      imageUrl: Option.none(),
      createdAt: at(0)
    })
  const started = (minutes = 10, transactionId = trx1) =>
    new PaymentLink.LinkPaymentStarted({
      transactionId,
      paymentMethod: "PSE",
      amount: amount(555_020),
      at: at(minutes)
    })
  const expire = (minutes: number, transactionId = trx1, timeout: Duration.Duration = TIMEOUT) =>
    new PaymentLink.ExpirePayment({ transactionId, timeout, now: at(minutes) })

  it("a payment under way for the timeout fails: the link is ACTIVE again, the failure marked expired", () => {
    spec
      .given([created(), started(10)])
      .when(expire(25))
      .then([new PaymentLink.LinkPaymentFailed({ transactionId: trx1, at: at(25), expired: true })])
    const state = fold(PaymentLink.PaymentLink, [
      created(),
      started(10),
      new PaymentLink.LinkPaymentFailed({ transactionId: trx1, at: at(25), expired: true })
    ])
    expect(state._tag).toBe("ACTIVE")
  })

  it("a link that expired while its payment was abandoned becomes REJECTED, the rejection marked expired", () => {
    spec
      .given([created(Option.some(nanosAt(20))), started(10)])
      .when(expire(25))
      .then([new PaymentLink.LinkRejected({ transactionId: trx1, at: at(25), expired: true })])
  })

  it("not before the payment's start plus the timeout (the deadline itself is due)", () => {
    spec
      .given([created(), started(10)])
      .when(
        new PaymentLink.ExpirePayment({
          transactionId: trx1,
          timeout: TIMEOUT,
          now: DateTime.unsafeMake(T0 + 25 * MINUTE - 1)
        })
      )
      .thenFails("LinkPaymentNotOverdue", { transactionId: trx1 })
    expect(
      PaymentLink.paymentDeadline(fold(PaymentLink.PaymentLink, [created(), started(10)]), TIMEOUT)
    ).toEqual(Option.some(at(25)))
  })

  it("only the payment under way: another transaction is unknown, a link not PROCESSING refuses", () => {
    spec
      .given([created(), started(10)])
      .when(expire(40, trx2))
      .thenFails("UnknownLinkTransaction")
    spec
      .given([created(), started(10), new PaymentLink.LinkPaid({ transactionId: trx1, at: at(12) })])
      .when(expire(40))
      .thenFails("LinkNotInState", { status: "PAID" })
    spec
      .given([created(), started(10), new PaymentLink.LinkPaymentFailed({ transactionId: trx1, at: at(12) })])
      .when(expire(40))
      .thenFails("LinkNotInState", { status: "ACTIVE" })
  })

  it.prop(
    "ExpirePayment fails the payment exactly when now ≥ its start + timeout; ACTIVE or REJECTED as the link's expiry says",
    [
      FastCheck.integer({ min: 0, max: 60 }),
      FastCheck.integer({ min: 0, max: 180 }),
      FastCheck.integer({ min: 1, max: 60 }),
      FastCheck.option(FastCheck.integer({ min: 61, max: 200 }), { nil: undefined })
    ],
    ([start, now, timeout, expiry]) => {
      const state = fold(PaymentLink.PaymentLink, [
        created(expiry === undefined ? Option.none() : Option.some(nanosAt(expiry))),
        started(start)
      ])
      const result = PaymentLink.decide(expire(now, trx1, Duration.minutes(timeout)), state)
      const due = now >= start + timeout
      expect(Either.isRight(result)).toBe(due)
      expect(PaymentLink.isPaymentOverdue(state, Duration.minutes(timeout), at(now))).toBe(due)
      if (Either.isRight(result)) {
        const after = fold(PaymentLink.PaymentLink, result.right, state)
        expect(after._tag).toBe(expiry !== undefined && now >= expiry ? "REJECTED" : "ACTIVE")
        expect(result.right.every((e) => "expired" in e && e.expired === true)).toBe(true)
      }
    }
  )

  it("the expired payment is notified as any failed link payment: SALE_REJECTED", () => {
    const events = [
      created(),
      started(10),
      new PaymentLink.LinkPaymentFailed({ transactionId: trx1, at: at(25), expired: true })
    ]
    const notice = Notifications.linkNotice(fold(PaymentLink.PaymentLink, events), events[2]!)
    expect(Option.map(notice, (n) => n.type)).toEqual(Option.some("SALE_REJECTED"))
  })
})

// ---------------------------------------------------------------------------------------------
// The sweeper's steps over the store
// ---------------------------------------------------------------------------------------------

const scenario = freshly(ports, atT0(givenMerchant(MER_1, offering("CREDIT_CARD", "PSE", "WALLET_A"))))

describe("LinkPayments.expirePayment", () => {
  it.effect(
    "a 3DS challenge abandoned on the checkout page (555020): after the timeout the link is ACTIVE and payable; a late approval is LinkPaymentExpired",
    () =>
      scenario(function* () {
        const { id, payment: paying } = yield* cardPaymentOn(555_020)
        expect(paying.outcome).toEqual({ _tag: "Pending", step: Option.some("ThreeDsChallenge") })

        // Before the timeout the sweeper's step leaves it waiting.
        yield* TestClock.adjust(15 * MINUTE - 1)
        expect((yield* LinkPayments.expirePayment(id, paying.transactionId))._tag).toBe("PROCESSING")

        yield* TestClock.adjust(1)
        const after = yield* LinkPayments.expirePayment(id, paying.transactionId)
        expect(after._tag).toBe("ACTIVE")
        expect(yield* linkStatus(id)).toBe("ACTIVE")
        expect((yield* LinkPayments.transaction(id, paying.transactionId)).outcome).toEqual({
          _tag: "Expired"
        })

        // The payer comes back and decides: told it expired, whatever the decision; nothing changes.
        for (const decision of ["approve", "decline"] as const) {
          expect(yield* failure(LinkPayments.decide(id, paying.transactionId, decision))).toMatchObject({
            _tag: "LinkPaymentExpired",
            transactionId: paying.transactionId
          })
        }
        expect(yield* linkStatus(id)).toBe("ACTIVE")

        // Running the step again records nothing more.
        yield* LinkPayments.expirePayment(id, paying.transactionId)
        const { events } = yield* CommandHandler.load(PaymentLink.PaymentLink)(id)
        expect(events.map((e) => e._tag)).toEqual(["LinkCreated", "LinkPaymentStarted", "LinkPaymentFailed"])

        // The link is payable again.
        yield* expectPaysAgain(id, paying.transactionId)
      })
  )

  it.effect("a PSE payment decided before the timeout is left as it is by the sweeper", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      const paying = yield* LinkPayments.pay(id, { paymentMethod: "PSE" })
      yield* LinkPayments.decide(id, paying.transactionId, "approve")
      yield* TestClock.adjust(60 * MINUTE)
      expect((yield* LinkPayments.expirePayment(id, paying.transactionId))._tag).toBe("PAID")
      const { events } = yield* CommandHandler.load(PaymentLink.PaymentLink)(id)
      expect(events.map((e) => e._tag)).toEqual(["LinkCreated", "LinkPaymentStarted", "LinkPaid"])
    })
  )

  it.effect("a wallet payment abandoned past the link's own expiration: REJECTED, the outcome Expired", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000, {
        expiration_date: (BigInt(T0 + 5 * MINUTE) * 1_000_000n).toString()
      })
      const paying = yield* LinkPayments.pay(id, { paymentMethod: "WALLET_A" })
      yield* TestClock.adjust(20 * MINUTE)
      expect((yield* LinkPayments.expirePayment(id, paying.transactionId))._tag).toBe("REJECTED")
      expect((yield* LinkPayments.transaction(id, paying.transactionId)).outcome._tag).toBe("Expired")
    })
  )

  it.effect("a configured timeout is honoured: 30 minutes leaves a 20-minute-old payment alone", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      const paying = yield* LinkPayments.pay(id, { paymentMethod: "PSE" })
      yield* TestClock.adjust(20 * MINUTE)
      expect((yield* LinkPayments.expirePayment(id, paying.transactionId, Duration.minutes(30)))._tag).toBe(
        "PROCESSING"
      )
      expect((yield* LinkPayments.expirePayment(id, paying.transactionId))._tag).toBe("ACTIVE")
    })
  )
})

describe("OnlinePayments.expirePayment", () => {
  const scope = sandbox
  const reference = ref("order-1")
  const attempt = (total: number, paymentMethod = "CREDIT_CARD") =>
    Effect.zipRight(
      givenIntent(total, scope, "order-1", { description: Option.none() }),
      OnlinePayments.attempt(
        scope,
        attemptInput("order-1", {
          paymentMethod,
          cardNumber: paymentMethod === "PSE" ? Option.none() : Option.some(CARD)
        })
      )
    )
  const tokenOf = (result: OnlinePayments.AttemptResult) => Option.getOrThrow(result.redirect).token

  it.effect(
    "an abandoned 3DS challenge (555020) expires after the timeout: C5 REJECTED, the intent ACTIVE and attemptable; a late decision is PaymentExpired",
    () =>
      scenario(function* () {
        const attempted = yield* attempt(555_020)
        const trx = attempted.transactionId
        yield* TestClock.adjust(15 * MINUTE - 1)
        const early = yield* OnlinePayments.expirePayment(trx)
        expect([early.payment._tag, Option.map(early.intent, (i) => i._tag)]).toEqual([
          "CHALLENGE",
          Option.some("PROCESSING")
        ])

        yield* TestClock.adjust(1)
        const expired = yield* OnlinePayments.expirePayment(trx)
        expect(expired.payment._tag).toBe("EXPIRED")
        expect(Option.map(expired.intent, (i) => i._tag)).toEqual(Option.some("ACTIVE"))
        const c5 = yield* OnlinePayments.readPayment(scope, reference)
        expect(Payment.status(c5)).toBe("REJECTED")
        expect(c5.rejectionReason).toEqual(
          Option.some("Expired: the cardholder did not complete the 3DS challenge within 15 minutes")
        )

        // The cardholder comes back: the page still opens (showing the outcome); a decision is refused.
        const page = yield* OnlinePayments.readChallenge({ transactionId: trx, token: tokenOf(attempted) })
        expect(page.payment._tag).toBe("EXPIRED")
        for (const approve of [true, false]) {
          expect(
            yield* failure(
              OnlinePayments.completeChallenge({ transactionId: trx, token: tokenOf(attempted), approve })
            )
          ).toMatchObject({ _tag: "PaymentExpired", transactionId: trx })
        }
        expect(Payment.status(yield* OnlinePayments.readPayment(scope, reference))).toBe("REJECTED")

        // Once more: nothing is recorded twice.
        yield* OnlinePayments.expirePayment(trx)
        const { events } = yield* CommandHandler.load(Payment.Payment)(trx)
        expect(events.map((e) => e._tag)).toEqual([
          "PaymentStarted",
          "PaymentChallengeRequired",
          "PaymentRejected"
        ])

        // The intent takes a new attempt.
        const again = yield* OnlinePayments.attempt(scope, attemptInput("order-1"))
        expect(again.transactionId).not.toBe(trx)
      })
  )

  it.effect("a PSE bank redirect abandoned expires the same way, with the bank's reason", () =>
    scenario(function* () {
      const attempted = yield* attempt(80_000, "PSE")
      yield* TestClock.adjust(16 * MINUTE)
      const expired = yield* OnlinePayments.expirePayment(attempted.transactionId)
      expect([expired.payment._tag, Payment.status(expired.payment)]).toEqual(["EXPIRED", "REJECTED"])
      expect(expired.payment.rejectionReason).toEqual(
        Option.some("Expired: the cardholder did not complete the payment at the bank within 15 minutes")
      )
    })
  )

  it.effect("a challenge decided before the timeout stays decided", () =>
    scenario(function* () {
      const attempted = yield* attempt(555_020)
      yield* OnlinePayments.completeChallenge({
        transactionId: attempted.transactionId,
        token: tokenOf(attempted),
        approve: true
      })
      yield* TestClock.adjust(60 * MINUTE)
      const after = yield* OnlinePayments.expirePayment(attempted.transactionId)
      expect([after.payment._tag, Option.map(after.intent, (i) => i._tag)]).toEqual([
        "APPROVED",
        Option.some("PAID")
      ])
    })
  )

  it.effect("an intent a crash left PROCESSING after its payment's decision is brought in line (O9)", () =>
    scenario(function* () {
      const attempted = yield* attempt(555_020)
      // The challenge's outcome recorded on the payment only, as if the process died before the intent.
      yield* CommandHandler.make(Payment.Payment)(
        attempted.transactionId,
        new Payment.CompleteChallenge({
          result: { _tag: "Approved", approvalNumber: "123456" },
          now: DateTime.unsafeMake(T0 + MINUTE)
        })
      )
      const stuck = yield* OnlinePayments.readIntent(scope, reference)
      expect(stuck._tag).toBe("PROCESSING")
      yield* TestClock.adjust(15 * MINUTE)
      const after = yield* OnlinePayments.expirePayment(attempted.transactionId)
      expect(after.payment._tag).toBe("APPROVED")
      expect((yield* OnlinePayments.readIntent(scope, reference))._tag).toBe("PAID")
    })
  )
})
