import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { fold } from "@cobro/domain/Decider"
import { IntentReference, MerchantId, RefundId, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as Refund from "@cobro/domain/Refund"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
const refundId = RefundId.make("RFD_1")

const request = (overrides: Partial<ConstructorParameters<typeof Refund.RequestRefund>[0]> = {}) =>
  new Refund.RequestRefund({
    refundId,
    merchantId: MerchantId.make("MER_1"),
    sandbox: true,
    transactionId: TransactionId.make("TRX_1"),
    referenceId: IntentReference.make("order-1"),
    amount: amount(119_000),
    reason: "customer changed their mind",
    now: at(0),
    ...overrides
  })

/** What a request records: the command's refund, at its instant. */
const refundRequested = (command = request()) =>
  new Refund.RefundRequested({
    refundId,
    merchantId: command.merchantId,
    sandbox: true,
    transactionId: command.transactionId,
    referenceId: command.referenceId,
    amount: amount(119_000),
    reason: "customer changed their mind",
    requestedAt: at(0)
  })

// Histories, built from events (the given of each spec).
const requested = (command = request()) => openedBy(Refund.Refund, command)
const approved = () => new Refund.RefundApproved({ dateApplied: at(10) })
const rejected = () => new Refund.RefundRejected({ dateApplied: at(10) })
const approvedRefund = () => [...requested(), approved()]
const rejectedRefund = () => [...requested(), rejected()]

const reviewRefund = (outcome: Refund.Outcome, minutes = 10) =>
  new Refund.ReviewRefund({ outcome, now: at(minutes) })

const spec = DeciderSpec.for(Refund.Refund)

describe("Refund", () => {
  describe("RequestRefund", () => {
    it("a refund request is PROCESSING, for the captured amount", () => {
      spec.given([]).when(request()).then(refundRequested())
      expect(fold(Refund.Refund, requested())).toMatchObject({
        _tag: "PROCESSING",
        dateApplied: Option.none()
      })
    })
    it("a refund id is requested once", () => {
      spec
        .given(requested())
        .when(request({ now: at(1) }))
        .thenFails(Refund.RefundAlreadyExists, { refundId })
      spec
        .given(rejectedRefund())
        .when(request({ now: at(11) }))
        .thenFails(Refund.RefundAlreadyExists)
    })
    it("amounts are never negative: a negative refund does not decode", () => {
      const encoded = Schema.encodeSync(Refund.RefundRequested)(requested()[0] as Refund.RefundRequested)
      expect(Either.isLeft(Schema.decodeUnknownEither(Refund.Event)({ ...encoded, amount: -1 }))).toBe(true)
      expect(Schema.decodeUnknownSync(Refund.Event)(encoded)).toEqual(requested()[0])
    })
  })

  describe("ReviewRefund", () => {
    it("the review approves the refund, with date_applied", () => {
      spec.given(requested()).when(reviewRefund("APPROVED")).then(approved())
      expect(fold(Refund.Refund, approvedRefund())).toMatchObject({
        _tag: "APPROVED",
        dateApplied: Option.some(at(10))
      })
    })
    it("the review rejects the refund, with date_applied", () => {
      spec.given(requested()).when(reviewRefund("REJECTED")).then(rejected())
    })
    it("a repeated review outcome changes nothing", () => {
      spec.given(approvedRefund()).when(reviewRefund("APPROVED", 20)).thenNothing()
      spec.given(rejectedRefund()).when(reviewRefund("REJECTED", 20)).thenNothing()
    })
    it("a refund is irreversible: a contradicting review is refused", () => {
      spec
        .given(approvedRefund())
        .when(reviewRefund("REJECTED", 20))
        .thenFails(Refund.RefundAlreadyReviewed, { status: "APPROVED" })
      spec
        .given(rejectedRefund())
        .when(reviewRefund("APPROVED", 20))
        .thenFails(Refund.RefundAlreadyReviewed, { status: "REJECTED" })
    })
    it("a review of an unknown refund is not found", () => {
      spec.given([]).when(reviewRefund("APPROVED")).thenFails(Refund.RefundNotFound)
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 120 })
    const command: FastCheck.Arbitrary<Refund.Command> = FastCheck.oneof(
      minute.map((m) => request({ now: at(m) })),
      FastCheck.record({ outcome: Arbitrary.make(Refund.Outcome), m: minute }).map(({ outcome, m }) =>
        reviewRefund(outcome, m)
      )
    )
    const run = runsFrom(FastCheck.constant([request()]), command, 15)

    transitionProperties({
      aggregate: Refund.Refund,
      run,
      id: refundId,
      absorbing: {
        title: "APPROVED and REJECTED are absorbing; PROCESSING is not",
        states: ["APPROVED", "REJECTED"]
      }
    })

    it.prop("the first review outcome is final", [run], ([commands]) => {
      let state = Refund.initialState
      let first: string | undefined
      for (const command of commands) {
        const result = Refund.decide(command, state)
        if (Either.isRight(result)) state = fold(Refund.Refund, result.right, state)
        if (first === undefined && (state._tag === "APPROVED" || state._tag === "REJECTED"))
          first = state._tag
      }
      if (first !== undefined) expect(state._tag).toBe(first)
    })
  })
})
