import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { fold } from "@cobro/domain/Decider"
import { IntentReference, MerchantId, RefundId, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as Payment from "@cobro/domain/Payment"
import { IntentAmount } from "@cobro/domain/PaymentIntent"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR
/** An instant given as Bogotá wall-clock time (UTC−05:00). */
const bogota = (day: number, hour: number, minute = 0, second = 0, ms = 0) =>
  DateTime.unsafeMake(Date.UTC(2026, 10, day, hour + 5, minute, second, ms))
/** 2026-11-21 10:00 Bogotá (15:00 UTC), plus minutes. */
const T0 = bogota(21, 10)
const at = (minutes: number) => DateTime.unsafeMake(DateTime.toEpochMillis(T0) + minutes * 60_000)

const trx = TransactionId.make("TRX_1")
const rfd1 = RefundId.make("RFD_1")
const rfd2 = RefundId.make("RFD_2")
const total = 119_000

const start = (overrides: Partial<ConstructorParameters<typeof Payment.StartPayment>[0]> = {}) =>
  new Payment.StartPayment({
    transactionId: trx,
    merchantId: MerchantId.make("MER_1"),
    sandbox: true,
    referenceId: IntentReference.make("order-1"),
    amount: new IntentAmount({ currency: "COP", total: amount(total), tip: amount(0), taxes: [] }),
    paymentMethod: "CREDIT_CARD",
    card: Option.some({
      maskedPan: Payment.maskPan("4111111111111111"),
      cardholderName: "ANA",
      installments: 1
    }),
    payer: Option.some({ personType: "NATURAL_PERSON", name: "Ana", documentType: "CEDULA" }),
    metadata: Option.none(),
    deviceFingerprint: Option.none(),
    now: at(0),
    ...overrides
  })

/** What an attempt records: the command's payment, at its instant. */
const paymentStarted = (command = start()) =>
  new Payment.PaymentStarted({
    transactionId: trx,
    merchantId: command.merchantId,
    sandbox: true,
    referenceId: command.referenceId,
    amount: command.amount,
    paymentMethod: "CREDIT_CARD",
    card: command.card,
    payer: command.payer,
    metadata: Option.none(),
    deviceFingerprint: Option.none(),
    attemptedAt: at(0)
  })

// Histories, built from events (the given of each spec).
const started = (command = start()) => openedBy(Payment.Payment, command)
const approved = (when = at(1)) =>
  new Payment.PaymentApproved({ approvalNumber: "A1", threeDs: false, at: when })
/** The 3DS step of TRX_1, as the acquirer asks for it. */
const challengeAction = { redirectUrl: "https://3ds.example/c/TRX_1", redirectMethod: "POST" } as const
const challenged = () => new Payment.PaymentChallengeRequired({ nextAction: challengeAction, at: at(1) })
const refundRequested = (refundId = rfd1) =>
  new Payment.PaymentRefundRequested({ refundId, amount: amount(total), reason: "customer", at: at(10) })
const refunded = (refundId = rfd1) =>
  new Payment.PaymentRefunded({ refundId, amount: amount(total), at: at(20) })
const refundRejected = (refundId = rfd1) => new Payment.PaymentRefundRejected({ refundId, at: at(20) })
const rejected = (reason: string, minutes = 1) => new Payment.PaymentRejected({ reason, at: at(minutes) })
const voided = (when = at(5)) => new Payment.PaymentVoided({ at: when })
const approvedCard = (when = at(1)) => [...started(), approved(when)]
const inChallenge = () => [...started(), challenged()]
const voidedCard = () => [...approvedCard(), voided()]
const refundUnderReview = () => [...approvedCard(), refundRequested()]
const refundedCard = () => [...refundUnderReview(), refunded()]
const refundDenied = () => [...refundUnderReview(), refundRejected()]

// Commands, at an instant given in minutes after T0 (or as an instant).
const requireChallenge = (minutes: number) =>
  new Payment.RequireChallenge({ nextAction: challengeAction, now: at(minutes) })
const approve = (minutes: number) =>
  new Payment.ApprovePayment({ approvalNumber: "A1", threeDs: false, now: at(minutes) })
const reject = (reason: string, minutes: number) => new Payment.RejectPayment({ reason, now: at(minutes) })
const requestRefund = (refundId = rfd1, now = at(10)) =>
  new Payment.RequestRefund({ refundId, reason: "customer", now })
const review = (outcome: Payment.ReviewOutcome, refundId = rfd1, now = at(20)) =>
  new Payment.RecordRefundReview({ refundId, outcome, now })

const spec = DeciderSpec.for(Payment.Payment)

describe("Payment", () => {
  describe("sandboxOutcome", () => {
    it("555001 is approved by 3DS (frictionless)", () => {
      expect(Payment.sandboxOutcome(555001)).toEqual({ _tag: "Approved", threeDs: true })
    })
    it("555002 is rejected by 3DS", () => {
      expect(Payment.sandboxOutcome(555002)).toEqual({ _tag: "Rejected", by: "3DS" })
    })
    it("555020 is a 3DS challenge", () => {
      expect(Payment.sandboxOutcome(555020)).toEqual({ _tag: "ChallengeRequired" })
    })
    it("555040 is approved by the fraud engine with no 3DS", () => {
      expect(Payment.sandboxOutcome(555040)).toEqual({ _tag: "Approved", threeDs: false })
    })
    it("555042 is rejected by the fraud engine", () => {
      expect(Payment.sandboxOutcome(555042)).toEqual({ _tag: "Rejected", by: "FRAUD_ENGINE" })
    })
    it.prop(
      "any other sandbox amount is approved with no 3DS",
      [
        FastCheck.oneof(
          FastCheck.double({ min: 0, max: 1e12, noNaN: true }),
          FastCheck.constantFrom(0, 555000, 555003, 555021, 555041, 555043, 555001.5)
        )
      ],
      ([total]) => {
        FastCheck.pre(![555001, 555002, 555020, 555040, 555042].includes(total))
        expect(Payment.sandboxOutcome(total)).toEqual({ _tag: "Approved", threeDs: false })
      }
    )
    it("each sandbox outcome drives the payment to its state; a challenge reads as RUNNING", () => {
      const commandsFor = (outcome: Payment.SandboxOutcome): ReadonlyArray<Payment.Command> => {
        switch (outcome._tag) {
          case "Approved":
            return [
              new Payment.ApprovePayment({ approvalNumber: "A1", threeDs: outcome.threeDs, now: at(1) })
            ]
          case "Rejected":
            return [new Payment.RejectPayment({ reason: outcome.by, now: at(1) })]
          case "ChallengeRequired":
            return [
              new Payment.RequireChallenge({
                nextAction: { redirectUrl: "https://3ds.example", redirectMethod: "GET" },
                now: at(1)
              })
            ]
        }
      }
      const statusAfter = (sandboxTotal: number) => {
        let state = fold(Payment.Payment, started())
        for (const command of commandsFor(Payment.sandboxOutcome(sandboxTotal))) {
          state = fold(Payment.Payment, Either.getOrThrow(Payment.decide(command, state)), state)
        }
        return state._tag === "Initial" ? "Initial" : Payment.status(state)
      }
      expect([555001, 555002, 555020, 555040, 555042, 10_000].map(statusAfter)).toEqual([
        "APPROVED",
        "REJECTED",
        "RUNNING",
        "APPROVED",
        "REJECTED",
        "APPROVED"
      ])
    })
  })

  describe("StartPayment", () => {
    it("an attempt starts the payment RUNNING", () => {
      spec.given([]).when(start()).then(paymentStarted())
      const state = fold(Payment.Payment, started())
      expect(state._tag === "Initial" ? undefined : Payment.status(state)).toBe("RUNNING")
    })
    it("a transaction id is started once", () => {
      spec.given(started()).when(start()).thenFails(Payment.PaymentAlreadyExists, { transactionId: trx })
    })
    it("commands on an unknown transaction are not found (404 PaymentNotFound)", () => {
      spec
        .given([])
        .when(new Payment.VoidPayment({ now: at(1) }))
        .thenFails(Payment.PaymentNotFound)
      spec.given([]).when(requestRefund()).thenFails(Payment.PaymentNotFound)
    })
    it("the card number is kept masked: first 6 and last 4 digits", () => {
      expect(Payment.maskPan("4111 1111 1111 1111")).toBe("411111******1111")
      expect(Payment.maskPan("123")).toBe("***")
    })
    it("amounts are never negative: a negative total does not decode", () => {
      const encoded = Schema.encodeSync(Payment.StartPayment)(start())
      const negative = { ...encoded, amount: { ...encoded.amount, total: -1 } }
      expect(Either.isLeft(Schema.decodeUnknownEither(Payment.Command)(negative))).toBe(true)
      const refund = Schema.encodeSync(Payment.Event)(refundRequested())
      expect(Either.isLeft(Schema.decodeUnknownEither(Payment.Event)({ ...refund, amount: -5 }))).toBe(true)
    })
  })

  describe("RequireChallenge", () => {
    it("a 3DS challenge keeps the payment RUNNING with next_actions", () => {
      spec.given(started()).when(requireChallenge(1)).then(challenged())
      const state = fold(Payment.Payment, inChallenge())
      if (state._tag === "Initial") throw new Error("not started")
      expect(Payment.status(state)).toBe("RUNNING")
      expect(state.nextAction).toEqual(Option.some(challengeAction))
    })
    it("a re-delivered challenge changes nothing", () => {
      spec.given(inChallenge()).when(requireChallenge(2)).thenNothing()
    })
    it("an approved payment cannot be challenged", () => {
      spec
        .given(approvedCard())
        .when(
          new Payment.RequireChallenge({
            nextAction: { redirectUrl: "https://x", redirectMethod: "GET" },
            now: at(2)
          })
        )
        .thenFails(Payment.PaymentNotInState, { state: "APPROVED" })
    })
  })

  describe("CompleteChallenge", () => {
    it("an authenticated and authorized challenge approves the payment with 3DS", () => {
      spec
        .given(inChallenge())
        .when(
          new Payment.CompleteChallenge({ result: { _tag: "Approved", approvalNumber: "A7" }, now: at(3) })
        )
        .then([new Payment.PaymentApproved({ approvalNumber: "A7", threeDs: true, at: at(3) })])
    })
    it("a declined challenge rejects the payment", () => {
      spec
        .given(inChallenge())
        .when(
          new Payment.CompleteChallenge({ result: { _tag: "Declined", reason: "3DS_FAILED" }, now: at(3) })
        )
        .then(rejected("3DS_FAILED", 3))
    })
    it("no challenge is pending on a RUNNING payment without next_actions", () => {
      spec
        .given(started())
        .when(
          new Payment.CompleteChallenge({ result: { _tag: "Approved", approvalNumber: "A7" }, now: at(3) })
        )
        .thenFails(Payment.PaymentNotInState, { state: "RUNNING" })
    })
    it("the same outcome re-delivered (the cardholder reloads the callback) changes nothing", () => {
      spec
        .given([...inChallenge(), approved(at(3))])
        .when(
          new Payment.CompleteChallenge({ result: { _tag: "Approved", approvalNumber: "A7" }, now: at(4) })
        )
        .thenNothing()
      spec
        .given([...inChallenge(), approved(at(3))])
        .when(new Payment.CompleteChallenge({ result: { _tag: "Declined", reason: "late" }, now: at(4) }))
        .thenFails(Payment.PaymentNotInState, { state: "APPROVED" })
    })
  })

  describe("ApprovePayment", () => {
    it("the acquirer's approval makes the payment APPROVED", () => {
      spec.given(started()).when(approve(1)).then(approved())
    })
    it("a re-delivered approval changes nothing", () => {
      spec.given(approvedCard()).when(approve(2)).thenNothing()
    })
    it("a payment waiting for the cardholder's challenge cannot be approved directly", () => {
      spec.given(inChallenge()).when(approve(2)).thenFails(Payment.PaymentNotInState, { state: "CHALLENGE" })
    })
    it("a rejected payment cannot be approved", () => {
      spec
        .given([...started(), rejected("FRAUD_ENGINE")])
        .when(approve(2))
        .thenFails(Payment.PaymentNotInState, { state: "REJECTED" })
    })
  })

  describe("RejectPayment", () => {
    it("the acquirer's rejection makes the payment REJECTED", () => {
      spec.given(started()).when(reject("FRAUD_ENGINE", 1)).then(rejected("FRAUD_ENGINE"))
    })
    it("an abandoned challenge ends REJECTED", () => {
      spec.given(inChallenge()).when(reject("CHALLENGE_TIMEOUT", 30)).then(rejected("CHALLENGE_TIMEOUT", 30))
    })
    it("an approved payment cannot be rejected", () => {
      spec
        .given(approvedCard())
        .when(reject("late", 2))
        .thenFails(Payment.PaymentNotInState, { state: "APPROVED" })
    })
  })

  describe("VoidPayment", () => {
    const voidAt = (now: DateTime.Utc) => new Payment.VoidPayment({ now })
    /** Given `history`, a void at `now` is refused for `reason`. */
    const voidRefused = (
      history: ReadonlyArray<Payment.Event>,
      now: DateTime.Utc,
      reason: Payment.PaymentCannotBeVoided["reason"]
    ) => spec.given(history).when(voidAt(now)).thenFails(Payment.PaymentCannotBeVoided, { reason })
    it("an approved card payment is voided the same Bogotá day before 21:00", () => {
      spec
        .given(approvedCard())
        .when(voidAt(at(5)))
        .then(voided())
    })
    it("a void at 20:59:59.999 Bogotá is allowed", () => {
      const when = bogota(21, 20, 59, 59, 999)
      spec.given(approvedCard()).when(voidAt(when)).then(voided(when))
    })
    for (const [title, when] of [
      ["a void at 21:00:00.000 Bogotá is refused: after that, a refund is the remedy", bogota(21, 21)],
      ["a void at midnight Bogotá (the next day) is refused", bogota(22, 0)]
    ] as const) {
      it(title, () => {
        voidRefused(approvedCard(), when, "WindowClosed")
      })
    }
    it("a payment approved at 19:30 Bogotá (00:30 UTC the next day) is voidable until 21:00 Bogotá that day", () => {
      const approvedAt = bogota(21, 19, 30)
      expect(DateTime.toEpochMillis(approvedAt)).toBe(Date.UTC(2026, 10, 22, 0, 30))
      spec
        .given(approvedCard(approvedAt))
        .when(voidAt(bogota(21, 20, 59, 59, 999)))
        .then(voided(bogota(21, 20, 59, 59, 999)))
      voidRefused(approvedCard(approvedAt), bogota(21, 21), "WindowClosed")
    })
    it("a payment approved at or after 21:00 Bogotá is never voidable", () => {
      voidRefused(approvedCard(bogota(21, 21, 30)), bogota(21, 21, 31), "WindowClosed")
    })
    it.prop(
      "voidable iff the same Bogotá calendar day and before 21:00",
      [
        FastCheck.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        FastCheck.oneof(
          FastCheck.integer({ min: 0, max: 2 * DAY }),
          FastCheck.integer({ min: 0, max: 1_000 })
        )
      ],
      ([approvedMs, delta]) => {
        const nowMs = approvedMs + delta
        // Bogotá wall clock, computed here independently of the Bogota module.
        const local = (ms: number) => ms - 5 * HOUR
        const sameDay = Math.floor(local(approvedMs) / DAY) === Math.floor(local(nowMs) / DAY)
        const beforeNine = local(nowMs) - Math.floor(local(nowMs) / DAY) * DAY < 21 * HOUR
        const result = Payment.decide(
          voidAt(DateTime.unsafeMake(nowMs)),
          fold(Payment.Payment, approvedCard(DateTime.unsafeMake(approvedMs)))
        )
        expect(Either.isRight(result)).toBe(sameDay && beforeNine)
      }
    )
    it("only a card payment can be voided", () => {
      voidRefused(
        [...started(start({ paymentMethod: "PSE", card: Option.none() })), approved()],
        at(5),
        "NotCard"
      )
    })
    it("a DEBIT_CARD payment is a card payment", () => {
      spec
        .given([...started(start({ paymentMethod: "DEBIT_CARD" })), approved()])
        .when(voidAt(at(5)))
        .then(voided())
    })
    it("only an APPROVED payment can be voided", () => {
      voidRefused(started(), at(5), "NotApproved")
      voidRefused(inChallenge(), at(5), "NotApproved")
      voidRefused([...started(), rejected("x")], at(5), "NotApproved")
    })
    it("a void is irreversible: a second void is refused", () => {
      voidRefused(voidedCard(), at(6), "AlreadyVoided")
    })
    it("a payment with a refund under review or applied cannot be voided", () => {
      voidRefused(refundUnderReview(), at(15), "Refunded")
      voidRefused(refundedCard(), at(25), "Refunded")
    })
    it("after a rejected refund the payment can still be voided within the window", () => {
      spec
        .given(refundDenied())
        .when(voidAt(at(25)))
        .then(voided(at(25)))
    })
  })

  describe("RequestRefund", () => {
    /** Given `history`, a refund request (of `refundId`) is refused for `reason`. */
    const refundRefused = (
      history: ReadonlyArray<Payment.Event>,
      reason: Payment.RefundCannotBeRequested["reason"],
      refundId = rfd1
    ) =>
      spec.given(history).when(requestRefund(refundId)).thenFails(Payment.RefundCannotBeRequested, { reason })
    it("a refund of an approved card payment is requested for the whole captured amount", () => {
      spec.given(approvedCard()).when(requestRefund()).then(refundRequested())
    })
    it("a refund can be requested at any time after approval", () => {
      const later = DateTime.unsafeMake(DateTime.toEpochMillis(T0) + 400 * DAY)
      spec
        .given(approvedCard())
        .when(requestRefund(rfd1, later))
        .then([
          new Payment.PaymentRefundRequested({
            refundId: rfd1,
            amount: amount(total),
            reason: "customer",
            at: later
          })
        ])
    })
    it("only a card payment can be refunded", () => {
      refundRefused([...started(start({ paymentMethod: "PSE", card: Option.none() })), approved()], "NotCard")
    })
    it("only an APPROVED payment can be refunded", () => {
      refundRefused(started(), "NotApproved")
    })
    it("a voided payment cannot be refunded", () => {
      refundRefused(voidedCard(), "Voided")
    })
    it("a second refund while one is PROCESSING is refused", () => {
      refundRefused(refundUnderReview(), "RefundInProgress", rfd2)
    })
    it("a second refund after one was APPROVED is refused", () => {
      refundRefused(refundedCard(), "AlreadyRefunded", rfd2)
    })
    it("after a REJECTED refund a new request is allowed", () => {
      spec
        .given(refundDenied())
        .when(requestRefund(rfd2, at(30)))
        .then([
          new Payment.PaymentRefundRequested({
            refundId: rfd2,
            amount: amount(total),
            reason: "customer",
            at: at(30)
          })
        ])
    })
  })

  describe("RecordRefundReview", () => {
    it("an approved refund makes the payment REFUNDED", () => {
      spec.given(refundUnderReview()).when(review("APPROVED")).then(refunded())
    })
    it("a rejected refund leaves the payment APPROVED", () => {
      spec.given(refundUnderReview()).when(review("REJECTED")).then(refundRejected())
      expect(fold(Payment.Payment, refundDenied())._tag).toBe("APPROVED")
    })
    it("C9 reads the refund by transaction id: the payment records its latest refund", () => {
      const state = fold(Payment.Payment, [
        ...approvedCard(),
        refundRequested(),
        refundRejected(),
        refundRequested(rfd2)
      ])
      expect(state).toMatchObject({
        _tag: "APPROVED",
        refund: Option.some({ refundId: rfd2, amount: total, status: "PROCESSING", requestedAt: at(10) })
      })
    })
    it("a review of another refund is refused", () => {
      spec
        .given(refundUnderReview())
        .when(review("APPROVED", rfd2))
        .thenFails(Payment.UnknownRefund, { refundId: rfd2 })
      spec.given(approvedCard()).when(review("APPROVED")).thenFails(Payment.UnknownRefund)
    })
    it("a repeated review outcome changes nothing", () => {
      spec.given(refundedCard()).when(review("APPROVED")).thenNothing()
      spec.given(refundDenied()).when(review("REJECTED")).thenNothing()
    })
    it("a refund is irreversible: a contradicting review is refused", () => {
      spec
        .given(refundedCard())
        .when(review("REJECTED"))
        .thenFails(Payment.RefundReviewConflict, { status: "APPROVED" })
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 2 * 24 * 60 })
    const refundId = FastCheck.constantFrom(rfd1, rfd2, RefundId.make("RFD_3"))
    const method = FastCheck.constantFrom("CREDIT_CARD", "CREDIT_CARD", "DEBIT_CARD", "PSE")
    const command: FastCheck.Arbitrary<Payment.Command> = FastCheck.oneof(
      FastCheck.record({ method, m: minute }).map(({ method, m }) =>
        start({ paymentMethod: method, now: at(m) })
      ),
      minute.map(
        (m) =>
          new Payment.RequireChallenge({
            nextAction: { redirectUrl: "https://3ds.example", redirectMethod: "POST" },
            now: at(m)
          })
      ),
      FastCheck.record({ ok: FastCheck.boolean(), m: minute }).map(
        ({ ok, m }) =>
          new Payment.CompleteChallenge({
            result: ok ? { _tag: "Approved", approvalNumber: "A9" } : { _tag: "Declined", reason: "3DS" },
            now: at(m)
          })
      ),
      FastCheck.record({ threeDs: FastCheck.boolean(), m: minute }).map(
        ({ threeDs, m }) => new Payment.ApprovePayment({ approvalNumber: "A1", threeDs, now: at(m) })
      ),
      minute.map((m) => new Payment.RejectPayment({ reason: "FRAUD_ENGINE", now: at(m) })),
      FastCheck.record({ m: minute, timeout: FastCheck.constantFrom(5, 15, 30) }).map(
        ({ m, timeout }) => new Payment.ExpirePayment({ timeout: Duration.minutes(timeout), now: at(m) })
      ),
      minute.map((m) => new Payment.VoidPayment({ now: at(m) })),
      FastCheck.record({ id: refundId, m: minute }).map(({ id, m }) => requestRefund(id, at(m))),
      FastCheck.record({
        id: refundId,
        outcome: Arbitrary.make(Payment.ReviewOutcome),
        m: minute
      }).map(({ id, outcome, m }) => review(outcome, id, at(m)))
    )
    const run = runsFrom(
      method.map((paymentMethod) => [start({ paymentMethod })]),
      command,
      30
    )

    /** Runs the decider over the commands, returning every event appended and every state reached. */
    const play = (commands: ReadonlyArray<Payment.Command>) => {
      let state = Payment.initialState
      const steps: Array<{ before: Payment.State; events: ReadonlyArray<Payment.Event> }> = []
      for (const command of commands) {
        const result = Payment.decide(command, state)
        if (Either.isLeft(result)) continue
        steps.push({ before: state, events: result.right })
        state = fold(Payment.Payment, result.right, state)
      }
      return steps
    }

    /** An approved card payment, a refund requested, reviewed, and the same review re-delivered. */
    const reviewedTwice = (outcome: Payment.ReviewOutcome) =>
      FastCheck.record({ id: refundId, m: FastCheck.integer({ min: 2, max: 600 }) }).map(({ id, m }) => [
        start(),
        new Payment.ApprovePayment({ approvalNumber: "A1", threeDs: false, now: at(1) }),
        requestRefund(id, at(m)),
        review(outcome, id, at(m + 10)),
        review(outcome, id, at(m + 20))
      ])

    transitionProperties({
      aggregate: Payment.Payment,
      run,
      id: trx,
      targeted: {
        // A review re-delivered after it was recorded: four commands in order, then the same review again.
        "APPROVED ▸ RecordRefundReview → noop": reviewedTwice("REJECTED"),
        "REFUNDED ▸ RecordRefundReview → noop": reviewedTwice("APPROVED")
      },
      // REFUNDED needs four commands in order (approval, card, refund, review): 1000 runs reach it.
      numRuns: 1000,
      absorbing: {
        title:
          "REJECTED, EXPIRED, VOIDED and REFUNDED are absorbing; RUNNING, CHALLENGE and APPROVED are not",
        states: ["EXPIRED", "REFUNDED", "REJECTED", "VOIDED"]
      }
    })

    it.prop(
      "refunds never exceed the captured amount: at most one refund in flight or applied",
      [run],
      ([commands]) => {
        let refundedTotal = 0
        for (const { before, events } of play(commands)) {
          for (const event of events) {
            if (event._tag === "PaymentRefundRequested") {
              if (before._tag === "Initial") throw new Error("refund before the payment")
              expect(Option.exists(before.refund, (r) => r.status !== "REJECTED")).toBe(false)
              expect(event.amount).toBe(before.payment.amount.total)
            }
            if (event._tag === "PaymentRefunded") refundedTotal += event.amount
          }
        }
        expect(refundedTotal).toBeLessThanOrEqual(total)
      }
    )

    it.prop(
      "void and refund are irreversible: no command leaves VOIDED or REFUNDED",
      [run, FastCheck.array(command, { maxLength: 10 })],
      ([commands, more]) => {
        for (const { before, events } of play([...commands, ...more])) {
          if (before._tag === "VOIDED" || before._tag === "REFUNDED") expect(events).toEqual([])
        }
      }
    )
  })
})
