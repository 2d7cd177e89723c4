import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { MerchantId, PaymentLinkId, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
const nanosAt = (minutes: number) => BigInt(T0 + minutes * 60_000) * 1_000_000n
const linkId = PaymentLinkId.make("LNK_1")
const trx1 = TransactionId.make("TRX_1")
const trx2 = TransactionId.make("TRX_2")
const bounds = { min: amount(1_000), max: amount(5_000_000) }

const create = (overrides: Partial<ConstructorParameters<typeof PaymentLink.CreateLink>[0]> = {}) =>
  new PaymentLink.CreateLink({
    linkId,
    merchantId: MerchantId.make("MER_1"),
    sandbox: true,
    amountType: "CLOSE",
    amount: Option.some(
      new PaymentLink.LinkAmount({ currency: "COP", total: amount(50_000), tip: amount(0), taxes: [] })
    ),
    reference: "order-1",
    description: Option.some("Two coffees"),
    expiresAt: Option.some(nanosAt(60)),
    callbackUrl: Option.none(),
    paymentMethods: ["CREDIT_CARD", "PSE"],
    payerEmail: Option.none(),
    imageUrl: Option.none(),
    now: at(0),
    ...overrides
  })

/** What a creation records: the command's link, at its instant. */
const linkCreated = (command = create()) =>
  new PaymentLink.LinkCreated({
    linkId,
    merchantId: command.merchantId,
    sandbox: true,
    amountType: "CLOSE",
    amount: command.amount,
    reference: "order-1",
    description: command.description,
    expiresAt: command.expiresAt,
    callbackUrl: Option.none(),
    paymentMethods: ["CREDIT_CARD", "PSE"],
    payerEmail: Option.none(),
    imageUrl: Option.none(),
    createdAt: at(0)
  })

// Histories, built from events (the given of each spec).
const created = (command = create()) => openedBy(PaymentLink.PaymentLink, command)
const started = (trx = trx1, minutes = 1) =>
  new PaymentLink.LinkPaymentStarted({
    transactionId: trx,
    paymentMethod: "CREDIT_CARD",
    amount: amount(50_000),
    at: at(minutes)
  })
const paid = (minutes = 2) => new PaymentLink.LinkPaid({ transactionId: trx1, at: at(minutes) })
const failed = (minutes: number) =>
  new PaymentLink.LinkPaymentFailed({ transactionId: trx1, at: at(minutes) })
const rejected = (minutes: number) => new PaymentLink.LinkRejected({ transactionId: trx1, at: at(minutes) })
const cancelled = (minutes = 5) => new PaymentLink.LinkCancelled({ at: at(minutes) })
const expired = (minutes = 60) => new PaymentLink.LinkExpired({ at: at(minutes) })
const processing = () => [...created(), started()]
const paidLink = () => [...processing(), paid()]
const cancelledLink = () => [...created(), cancelled()]
const expiredLink = () => [...created(), expired()]

// Commands, at an instant given in minutes after T0.
const start = (overrides: Partial<ConstructorParameters<typeof PaymentLink.StartPayment>[0]> = {}) =>
  new PaymentLink.StartPayment({
    transactionId: trx1,
    paymentMethod: "CREDIT_CARD",
    amount: amount(50_000),
    bounds,
    now: at(1),
    ...overrides
  })
const complete = (trx: TransactionId, minutes: number) =>
  new PaymentLink.CompletePayment({ transactionId: trx, now: at(minutes) })
const fail = (trx: TransactionId, minutes: number) =>
  new PaymentLink.FailPayment({ transactionId: trx, now: at(minutes) })
const cancel = (minutes: number) => new PaymentLink.CancelLink({ now: at(minutes) })
const expire = (minutes: number) => new PaymentLink.ExpireLink({ now: at(minutes) })

const spec = DeciderSpec.for(PaymentLink.PaymentLink)

describe("PaymentLink", () => {
  describe("CreateLink", () => {
    it("a valid request creates an ACTIVE link", () => {
      spec.given([]).when(create()).then(linkCreated())
    })
    it("a CLOSE link requires an amount", () => {
      spec
        .given([])
        .when(create({ amount: Option.none() }))
        .thenFails(PaymentLink.InvalidLinkAmount, { amountType: "CLOSE" })
    })
    it("an OPEN link carries no amount", () => {
      spec
        .given([])
        .when(create({ amountType: "OPEN" }))
        .thenFails(PaymentLink.InvalidLinkAmount, { amountType: "OPEN" })
    })
    it("a link id is created once", () => {
      spec.given(created()).when(create()).thenFails(PaymentLink.LinkAlreadyExists)
    })
  })

  describe("StartPayment", () => {
    it("an ACTIVE link starts PROCESSING", () => {
      spec.given(created()).when(start()).then([started()])
    })
    it("a CLOSE link is paid for exactly its total", () => {
      spec
        .given(created())
        .when(start({ amount: amount(49_999) }))
        .thenFails(PaymentLink.InvalidPaymentAmount, { min: amount(50_000), max: amount(50_000) })
    })
    it("an OPEN link accepts an amount within the method's bounds only", () => {
      const open = created(create({ amountType: "OPEN", amount: Option.none() }))
      spec
        .given(open)
        .when(start({ amount: amount(1_000) }))
        .then([
          new PaymentLink.LinkPaymentStarted({
            transactionId: trx1,
            paymentMethod: "CREDIT_CARD",
            amount: amount(1_000),
            at: at(1)
          })
        ])
      spec
        .given(open)
        .when(start({ amount: amount(999) }))
        .thenFails(PaymentLink.InvalidPaymentAmount)
      spec
        .given(open)
        .when(start({ amount: amount(5_000_001) }))
        .thenFails(PaymentLink.InvalidPaymentAmount)
    })
    it("only a method the link offers can pay it", () => {
      spec
        .given(created())
        .when(start({ paymentMethod: "WALLET_A" }))
        .thenFails(PaymentLink.MethodNotOffered)
    })
    it("a link cannot be paid at or after its expiration_date", () => {
      spec
        .given(created())
        .when(start({ now: at(60) }))
        .thenFails(PaymentLink.LinkOverdue)
      spec
        .given(created())
        .when(start({ now: at(59.99) }))
        .then([started(trx1, 59.99)])
    })
    it("a link already PROCESSING cannot start a second payment (two tabs)", () => {
      spec
        .given(processing())
        .when(start({ transactionId: trx2 }))
        .thenFails(PaymentLink.LinkNotInState, {
          status: "PROCESSING"
        })
    })
    it("a link on a non-existing stream is not found", () => {
      spec.given([]).when(start()).thenFails(PaymentLink.LinkNotFound)
    })
  })

  describe("CompletePayment", () => {
    it("the payment under way approved makes the link PAID", () => {
      spec.given(processing()).when(complete(trx1, 2)).then(paid(2))
    })
    it("another transaction cannot complete it", () => {
      spec.given(processing()).when(complete(trx2, 2)).thenFails(PaymentLink.UnknownLinkTransaction)
    })
    it("a re-delivered approval of a PAID link changes nothing", () => {
      spec.given(paidLink()).when(complete(trx1, 3)).thenNothing()
    })
  })

  describe("FailPayment", () => {
    it("a failed payment returns a usable link to ACTIVE", () => {
      spec.given(processing()).when(fail(trx1, 2)).then(failed(2))
    })
    it("a failed payment of a link that expired meanwhile makes it REJECTED", () => {
      spec.given(processing()).when(fail(trx1, 61)).then(rejected(61))
    })
    it("a failure on an ACTIVE link is forbidden", () => {
      spec.given(created()).when(fail(trx1, 2)).thenFails(PaymentLink.LinkNotInState)
    })
  })

  describe("CancelLink", () => {
    it("an ACTIVE link can be cancelled", () => {
      spec.given(created()).when(cancel(5)).then(cancelled(5))
    })
    it("a PAID link cannot be cancelled", () => {
      spec.given(paidLink()).when(cancel(5)).thenFails(PaymentLink.LinkNotInState, { status: "PAID" })
    })
    it("cancelling a CANCELLED link again changes nothing", () => {
      spec.given(cancelledLink()).when(cancel(6)).thenNothing()
    })
  })

  describe("ExpireLink", () => {
    it("an ACTIVE link expires at its expiration_date", () => {
      spec.given(created()).when(expire(60)).then(expired(60))
    })
    it("a link cannot be expired before its expiration_date", () => {
      spec.given(created()).when(expire(59)).thenFails(PaymentLink.LinkNotOverdue)
    })
    it("a link without expiration_date never expires", () => {
      spec
        .given(created(create({ expiresAt: Option.none() })))
        .when(expire(1_000_000))
        .thenFails(PaymentLink.LinkNotOverdue)
    })
    it("expiring an EXPIRED link again changes nothing", () => {
      spec.given(expiredLink()).when(expire(70)).thenNothing()
    })
    it("an overdue ACTIVE link reads as EXPIRED before the sweeper records it", () => {
      const state = openedBy(PaymentLink.PaymentLink, create())
      const folded = state.reduce(PaymentLink.evolve, PaymentLink.initialState)
      if (folded._tag === "Initial") throw new Error("not created")
      expect(PaymentLink.statusAt(folded, at(59))).toBe("ACTIVE")
      expect(PaymentLink.statusAt(folded, at(60))).toBe("EXPIRED")
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 120 })
    const trx = FastCheck.constantFrom(trx1, trx2)
    const command: FastCheck.Arbitrary<PaymentLink.Command> = FastCheck.oneof(
      FastCheck.record({
        open: FastCheck.boolean(),
        expires: FastCheck.option(minute, { nil: undefined })
      }).map(({ open, expires }) =>
        create({
          amountType: open ? "OPEN" : "CLOSE",
          amount: open ? Option.none() : create().amount,
          expiresAt: expires === undefined ? Option.none() : Option.some(nanosAt(expires))
        })
      ),
      FastCheck.record({ trx, m: minute, a: FastCheck.constantFrom(50_000, 999, 2_000) }).map(
        ({ trx, m, a }) => start({ transactionId: trx, now: at(m), amount: amount(a) })
      ),
      FastCheck.record({ trx, m: minute }).map(({ trx, m }) => complete(trx, m)),
      FastCheck.record({ trx, m: minute }).map(({ trx, m }) => fail(trx, m)),
      FastCheck.record({ trx, m: minute, timeout: FastCheck.constantFrom(5, 15, 30) }).map(
        ({ m, timeout, trx }) =>
          new PaymentLink.ExpirePayment({
            transactionId: trx,
            timeout: Duration.minutes(timeout),
            now: at(m)
          })
      ),
      minute.map((m) => new PaymentLink.CancelLink({ now: at(m) })),
      minute.map((m) => new PaymentLink.ExpireLink({ now: at(m) }))
    )
    // Starting from a created link makes most runs exercise more than creation.
    const run = runsFrom(FastCheck.constant([create()]), command, 25)

    // B3 writes the record as built, without encoding it through its schema again: every state a
    // run reaches must give a record the schema accepts, at any instant.
    it.prop("every reachable state's B3 record is a valid LinkRecord", [run, minute], ([commands, m]) => {
      let state: PaymentLink.State = PaymentLink.initialState
      for (const command of commands) {
        const decided = PaymentLink.decide(command, state)
        if (decided._tag === "Right") state = decided.right.reduce(PaymentLink.evolve, state)
        if (state._tag === "Initial") continue
        const record = LinkPayments.toRecord(state, at(m))
        expect(
          Schema.is(LinkApi.LinkRecord)(record),
          JSON.stringify(record, (_, v) => (typeof v === "bigint" ? `${v}n` : v))
        ).toBe(true)
      }
    })

    transitionProperties({
      aggregate: PaymentLink.PaymentLink,
      run,
      id: "LNK_1",
      absorbing: {
        title: "PAID, REJECTED, CANCELLED and EXPIRED are absorbing; ACTIVE and PROCESSING are not",
        states: ["CANCELLED", "EXPIRED", "PAID", "REJECTED"]
      }
    })
  })
})
