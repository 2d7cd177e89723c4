import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { IntegrationId, MerchantId, TerminalSerial, TransactionId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import { amount } from "@cobro/domain/Money"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as NotificationRules from "@cobro/domain/NotificationRules"
import { card } from "@cobro/domain/testing/WebhookFixtures"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const HOUR = 60 * 60 * 1000
/** 2026-11-21 10:00 Bogotá (15:00 UTC). */
const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
/** An instant given as Bogotá wall-clock time (UTC−05:00). */
const bogota = (y: number, mo: number, d: number, h: number, mi = 0, s = 0, ms = 0) =>
  DateTime.unsafeMake(Date.UTC(y, mo - 1, d, h + 5, mi, s, ms))

const integrationId = IntegrationId.make("INT_1")
const trx1 = TransactionId.make("TRX_1")
const trx2 = TransactionId.make("TRX_2")
const serial = TerminalSerial.make("SN-0001")

const create = (overrides: Partial<ConstructorParameters<typeof TerminalCheckout.CreateCheckout>[0]> = {}) =>
  new TerminalCheckout.CreateCheckout({
    integrationId,
    transactionId: trx1,
    merchantId: MerchantId.make("MER_1"),
    sandbox: true,
    terminalSerial: serial,
    terminalModel: "Smart Pro",
    reference: "order-1",
    amount: new TerminalCheckout.CheckoutAmount({
      currency: "COP",
      total: amount(11_900),
      tip: amount(0),
      taxes: [{ type: "VAT", base: amount(10_000), value: amount(1_900) }]
    }),
    paymentMethod: "POS",
    userEmail: "seller@shop.example",
    description: Option.some("Two coffees"),
    payer: Option.none(),
    now: at(0),
    ...overrides
  })

const cardSale = new TerminalCheckout.Sale({
  paymentMethod: "CARD",
  serviceCode: "SC-1",
  approvalNumber: Option.some("123456"),
  payerEmail: Option.none(),
  card: Option.some(card)
})
const walletSale = new TerminalCheckout.Sale({
  paymentMethod: "WALLET_A",
  serviceCode: "SC-2",
  approvalNumber: Option.none(),
  payerEmail: Option.none(),
  card: Option.none()
})

const Checkout = {
  fold: (events: ReadonlyArray<TerminalCheckout.Event>): TerminalCheckout.State =>
    events.reduce(TerminalCheckout.evolve, TerminalCheckout.initialState)
}

/** What a creation records: the command's checkout, at its instant. */
const checkoutCreated = (command = create()) =>
  new TerminalCheckout.CheckoutCreated({
    integrationId,
    transactionId: trx1,
    merchantId: command.merchantId,
    sandbox: true,
    terminalSerial: serial,
    terminalModel: "Smart Pro",
    reference: "order-1",
    amount: command.amount,
    paymentMethod: "POS",
    userEmail: "seller@shop.example",
    description: Option.some("Two coffees"),
    payer: Option.none(),
    createdAt: at(0)
  })

// Histories, built from events (the given of each spec).
const created = (command = create()) => openedBy(TerminalCheckout.TerminalCheckout, command)
const attempted = (attempt = 1, minutes = 0) =>
  new TerminalCheckout.PushAttempted({ attempt, at: at(minutes) })
const checkoutSent = (minutes = 0) =>
  new TerminalCheckout.CheckoutSent({ lockedSince: Option.none(), at: at(minutes) })
const deliveryFailed = (reason: string, minutes = 0) =>
  new TerminalCheckout.DeliveryFailed({ reason, at: at(minutes) })
const released = (minutes: number) => new TerminalCheckout.CheckoutReleased({ at: at(minutes) })
const sending = () => [...created(), attempted()]
const sent = () => [...sending(), checkoutSent()]
const held = () => [...sending(), new TerminalCheckout.CheckoutHeld({ lockedSince: at(-10), at: at(0) })]
const unreachable = () => [...sending(), deliveryFailed("SESSION_EXPIRED")]
const checkoutCancelled = (minutes = 1) => new TerminalCheckout.CheckoutCancelled({ at: at(minutes) })
const cancelled = () => [...created(), checkoutCancelled()]
const saleApproved = (when: DateTime.Utc = at(1), sale = cardSale) =>
  new TerminalCheckout.SaleApproved({ transactionId: trx1, sale, at: when })
const approved = (when: DateTime.Utc = at(1), sale = cardSale) => [...sent(), saleApproved(when, sale)]
const rejected = () => [
  ...sent(),
  new TerminalCheckout.SaleRejected({
    transactionId: trx1,
    reason: "DECLINED",
    card: Option.none(),
    at: at(1)
  })
]
const voided = () => [...approved(), new TerminalCheckout.SaleVoided({ transactionId: trx1, at: at(2) })]

const approve = (overrides: Partial<ConstructorParameters<typeof TerminalCheckout.ApproveSale>[0]> = {}) =>
  new TerminalCheckout.ApproveSale({ transactionId: trx1, sale: cardSale, now: at(1), ...overrides })
const reject = (transactionId = trx1, now = at(1)) =>
  new TerminalCheckout.RejectSale({ transactionId, reason: "DECLINED", card: Option.none(), now })
const approveVoid = (now: DateTime.Utc = at(2), transactionId = trx1) =>
  new TerminalCheckout.ApproveVoid({ transactionId, now })
const rejectVoid = (now: DateTime.Utc = at(2), transactionId = trx1) =>
  new TerminalCheckout.RejectVoid({ transactionId, reason: "NETWORK_DECLINED", now })
const deliver = (lockedSince: Option.Option<DateTime.Utc>, now = at(0)) =>
  new TerminalCheckout.RecordDelivery({ lockedSince, now })
/** A delivery to an unlocked terminal, reported `minutes` after T0. */
const deliverUnlocked = (minutes = 0) => deliver(Option.none(), at(minutes))
const attemptPush = (minutes: number) => new TerminalCheckout.AttemptPush({ now: at(minutes) })
const recordUnreachable = (reason: string, minutes: number) =>
  new TerminalCheckout.RecordUnreachable({ reason, now: at(minutes) })
const unlock = (minutes: number) => new TerminalCheckout.UnlockTerminal({ now: at(minutes) })
const cancel = (minutes: number) => new TerminalCheckout.CancelCheckout({ now: at(minutes) })

const spec = DeciderSpec.for(TerminalCheckout.TerminalCheckout)

/** Given `history` (a checkout of TRX_1), `command`, for TRX_2, is refused as another transaction's. */
const refusedForOtherTransaction = (
  history: ReadonlyArray<TerminalCheckout.Event>,
  command: TerminalCheckout.Command
) =>
  spec
    .given(history)
    .when(command)
    .thenFails(TerminalCheckout.UnknownCheckoutTransaction, { transactionId: trx2 })

/**
 * A sale approved at `approvedAt`, on 2026-11-21 in Bogotá, is voidable until 20:59:59.999 Bogotá
 * that day; a void at 21:00 finds the window closed.
 */
const voidableUntil21 = (approvedAt: DateTime.Utc) => {
  const lastInstant = bogota(2026, 11, 21, 20, 59, 59, 999)
  spec
    .given(approved(approvedAt))
    .when(approveVoid(lastInstant))
    .then([new TerminalCheckout.SaleVoided({ transactionId: trx1, at: lastInstant })])
  spec
    .given(approved(approvedAt))
    .when(approveVoid(bogota(2026, 11, 21, 21)))
    .thenFails(TerminalCheckout.VoidWindowClosed, { approvedAt, closesAt: bogota(2026, 11, 21, 21) })
}

describe("TerminalCheckout", () => {
  describe("CreateCheckout", () => {
    it("A3: a checkout is created PENDING, to be pushed to the bound terminal", () => {
      spec.given([]).when(create()).then(checkoutCreated())
    })
    it("an empty payment_method is kept: the terminal shows its own method-selection screen", () => {
      const result = TerminalCheckout.decide(create({ paymentMethod: "" }), TerminalCheckout.initialState)
      expect(Either.getOrThrow(result)[0]).toMatchObject({ _tag: "CheckoutCreated", paymentMethod: "" })
    })
    it("an integration id is created once", () => {
      spec
        .given(created())
        .when(create())
        .thenFails(TerminalCheckout.CheckoutAlreadyExists, { integrationId })
    })
    it.effect("R4: a new request on a terminal that just approved a sale proceeds normally", () =>
      Effect.gen(function* () {
        const handle = CommandHandler.make(TerminalCheckout.TerminalCheckout)
        yield* handle("INT_1", create())
        yield* handle("INT_1", new TerminalCheckout.AttemptPush({ now: at(0) }))
        yield* handle("INT_1", deliver(Option.none()))
        const first = yield* handle("INT_1", approve())
        expect(first.state._tag).toBe("APPROVED")
        // Same terminal, still on its confirmation screen: the second checkout is not blocked.
        const second = IntegrationId.make("INT_2")
        yield* handle("INT_2", create({ integrationId: second, transactionId: trx2, now: at(2) }))
        yield* handle("INT_2", new TerminalCheckout.AttemptPush({ now: at(2) }))
        const delivered = yield* handle("INT_2", deliver(Option.none(), at(2)))
        expect(delivered.state._tag).toBe("SENT")
      }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
    )
  })

  describe("AttemptPush", () => {
    it("a PENDING checkout is claimed for its first push", () => {
      spec.given(created()).when(attemptPush(0)).then(attempted(1, 0))
    })
    it("R5: an UNREACHABLE checkout waits and is pushed again", () => {
      spec.given(unreachable()).when(attemptPush(3)).then(attempted(2, 3))
    })
    it("a push claimed again while its claim is live changes nothing: its pusher pushes it", () => {
      const justBefore = DateTime.unsafeMake(T0 + TerminalCheckout.PUSH_TIMEOUT_MS - 1)
      spec
        .given(sending())
        .when(new TerminalCheckout.AttemptPush({ now: justBefore }))
        .thenNothing()
    })
    it("a push whose claim has lapsed (its pusher was cut or died) is claimed again, the attempt counted", () => {
      const lapsed = DateTime.unsafeMake(T0 + TerminalCheckout.PUSH_TIMEOUT_MS)
      spec
        .given(sending())
        .when(new TerminalCheckout.AttemptPush({ now: lapsed }))
        .then([new TerminalCheckout.PushAttempted({ attempt: 2, at: lapsed })])
    })
    it.prop(
      "a SENDING checkout is claimed again iff its claim is at least the push timeout old",
      [FastCheck.integer({ min: -60_000, max: 60_000 })],
      ([elapsed]) => {
        const now = DateTime.unsafeMake(T0 + elapsed)
        const decided = TerminalCheckout.decide(
          new TerminalCheckout.AttemptPush({ now }),
          Checkout.fold(sending())
        )
        expect(Either.getOrThrow(decided).length).toBe(elapsed >= TerminalCheckout.PUSH_TIMEOUT_MS ? 1 : 0)
      }
    )
    it("a checkout already on the terminal is not pushed again", () => {
      spec
        .given(sent())
        .when(attemptPush(1))
        .thenFails(TerminalCheckout.CheckoutNotInState, { status: "SENT", command: "AttemptPush" })
    })
    it("a checkout on a non-existing stream is not found", () => {
      spec.given([]).when(attemptPush(0)).thenFails(TerminalCheckout.CheckoutNotFound)
    })
  })

  describe("RecordDelivery", () => {
    it("an unlocked terminal gets the payment: SENT", () => {
      spec.given(sending()).when(deliverUnlocked(1)).then(checkoutSent(1))
    })
    it("R1: a terminal locked for exactly 2 minutes gets the payment normally", () => {
      const lockedSince = DateTime.unsafeMake(T0 - 2 * 60_000)
      spec
        .given(sending())
        .when(deliver(Option.some(lockedSince)))
        .then([new TerminalCheckout.CheckoutSent({ lockedSince: Option.some(lockedSince), at: at(0) })])
    })
    it("R1: a terminal locked for more than 2 minutes (2 min + 1 ms) holds the payment: HELD", () => {
      const lockedSince = DateTime.unsafeMake(T0 - 2 * 60_000 - 1)
      spec
        .given(sending())
        .when(deliver(Option.some(lockedSince)))
        .then([new TerminalCheckout.CheckoutHeld({ lockedSince, at: at(0) })])
    })
    it.prop(
      "R1: the payment is held iff the terminal was locked for more than 2 minutes",
      [
        FastCheck.oneof(
          FastCheck.integer({ min: 0, max: 10 * 60_000 }),
          FastCheck.integer({ min: 119_995, max: 120_005 })
        )
      ],
      ([lockedForMs]) => {
        const lockedSince = DateTime.unsafeMake(T0 - lockedForMs)
        const events = Either.getOrThrow(
          TerminalCheckout.decide(deliver(Option.some(lockedSince)), Checkout.fold(sending()))
        )
        expect(events.map((e) => e._tag)).toEqual([lockedForMs > 120_000 ? "CheckoutHeld" : "CheckoutSent"])
      }
    )
    it("a repeated delivery report changes nothing", () => {
      spec.given(sent()).when(deliverUnlocked(1)).thenNothing()
      spec.given(held()).when(deliverUnlocked(1)).thenNothing()
    })
    it("a delivery report overtaken by the terminal's outcome changes nothing", () => {
      spec.given(approved()).when(deliverUnlocked(2)).thenNothing()
    })
    it("a delivery without a claimed push is refused", () => {
      spec.refusedIn(deliverUnlocked(), TerminalCheckout.CheckoutNotInState, { PENDING: created() })
    })
  })

  describe("RecordUnreachable", () => {
    it("R5: a terminal off, with its app closed or its session expired leaves the checkout UNREACHABLE", () => {
      spec.given(sending()).when(recordUnreachable("APP_CLOSED", 1)).then(deliveryFailed("APP_CLOSED", 1))
    })
    it("a failed push is reported only for a push under way", () => {
      spec.refusedIn(recordUnreachable("APP_CLOSED", 1), TerminalCheckout.CheckoutNotInState, {
        SENT: sent()
      })
    })
    it("a failure report overtaken by the terminal's outcome changes nothing", () => {
      spec.given(approved()).when(recordUnreachable("TIMEOUT", 2)).thenNothing()
    })
  })

  describe("UnlockTerminal", () => {
    it("R1: unlocking processes the held payment automatically: SENT", () => {
      spec.given(held()).when(unlock(5)).then(released(5))
    })
    it("unlocking a terminal that did not hold the payment changes nothing", () => {
      spec.given(sent()).when(unlock(5)).thenNothing()
    })
    it("an unlock before the checkout reached the terminal is refused", () => {
      spec.refusedIn(unlock(5), TerminalCheckout.CheckoutNotInState, { PENDING: created() })
    })
  })

  describe("CancelCheckout", () => {
    it("R3: a request not yet sent can be cancelled", () => {
      spec.given(created()).when(cancel(1)).then(checkoutCancelled(1))
    })
    it("R5: a request that could not reach the terminal can be cancelled", () => {
      spec.given(unreachable()).when(cancel(1)).then(checkoutCancelled(1))
    })
    it("R3: a payment request already sent cannot be cancelled remotely", () => {
      spec.refusedIn(
        cancel(3),
        TerminalCheckout.CheckoutAlreadySent,
        {
          SENDING: sending(),
          SENT: sent(),
          HELD: held(),
          APPROVED: approved(),
          REJECTED: rejected(),
          VOIDED: voided()
        },
        { integrationId }
      )
    })
    it("cancelling a CANCELLED checkout again changes nothing", () => {
      spec.given(cancelled()).when(cancel(2)).thenNothing()
    })
  })

  describe("ApproveSale", () => {
    it("the terminal's approval makes the checkout APPROVED with the card data", () => {
      spec.given(sent()).when(approve()).then([saleApproved()])
    })
    it("an approval proves a held payment was processed on unlock", () => {
      spec.given(held()).when(approve()).then([saleApproved()])
    })
    it("an approval may overtake the delivery report", () => {
      spec.given(sending()).when(approve()).then([saleApproved()])
    })
    it("a sale by another method carries no card", () => {
      spec
        .given(sent())
        .when(approve({ sale: walletSale }))
        .then([saleApproved(at(1), walletSale)])
      spec
        .given(sent())
        .when(approve({ sale: new TerminalCheckout.Sale({ ...walletSale, card: Option.some(card) }) }))
        .thenFails(TerminalCheckout.InvalidSaleDetails)
    })
    it("a card sale carries the card and the approval number", () => {
      spec
        .given(sent())
        .when(approve({ sale: new TerminalCheckout.Sale({ ...cardSale, card: Option.none() }) }))
        .thenFails(TerminalCheckout.InvalidSaleDetails)
      spec
        .given(sent())
        .when(approve({ sale: new TerminalCheckout.Sale({ ...cardSale, approvalNumber: Option.none() }) }))
        .thenFails(TerminalCheckout.InvalidSaleDetails)
    })
    it("an outcome for a different transaction is refused", () => {
      spec
        .given(sent())
        .when(approve({ transactionId: trx2 }))
        .thenFails(TerminalCheckout.UnknownCheckoutTransaction, { integrationId, transactionId: trx2 })
      refusedForOtherTransaction(approved(), approve({ transactionId: trx2 }))
    })
    it("a re-delivered approval changes nothing", () => {
      spec
        .given(approved())
        .when(approve({ now: at(9) }))
        .thenNothing()
      spec
        .given(voided())
        .when(approve({ now: at(9) }))
        .thenNothing()
    })
    it("an approval of a REJECTED sale conflicts and is refused", () => {
      spec.refusedIn(approve(), TerminalCheckout.CheckoutNotInState, { REJECTED: rejected() })
    })
    it("a checkout that never reached the terminal cannot be approved", () => {
      spec.refusedIn(approve(), TerminalCheckout.CheckoutNotInState, {
        PENDING: created(),
        UNREACHABLE: unreachable(),
        CANCELLED: cancelled()
      })
    })
  })

  describe("RejectSale", () => {
    it("the terminal's rejection makes the checkout REJECTED", () => {
      spec
        .given(sent())
        .when(reject())
        .then([
          new TerminalCheckout.SaleRejected({
            transactionId: trx1,
            reason: "DECLINED",
            card: Option.none(),
            at: at(1)
          })
        ])
    })
    it("an outcome for a different transaction is refused", () => {
      refusedForOtherTransaction(sent(), reject(trx2))
    })
    it("a re-delivered rejection changes nothing", () => {
      spec
        .given(rejected())
        .when(reject(trx1, at(5)))
        .thenNothing()
    })
    it("a rejection of an APPROVED sale conflicts and is refused", () => {
      spec.refusedIn(reject(), TerminalCheckout.CheckoutNotInState, { APPROVED: approved() })
    })
  })

  describe("ApproveVoid", () => {
    it("an APPROVED card sale voided the same day before 21:00 Bogotá is VOIDED", () => {
      spec
        .given(approved())
        .when(approveVoid(at(2)))
        .then([new TerminalCheckout.SaleVoided({ transactionId: trx1, at: at(2) })])
    })
    it("void at 20:59:59.999 Bogotá is allowed; at 21:00:00 it is refused", () => {
      voidableUntil21(bogota(2026, 11, 21, 10))
    })
    it("a sale approved at 23:00 Bogotá cannot be voided that night nor after Bogotá midnight", () => {
      const approvedAt = bogota(2026, 11, 21, 23)
      spec
        .given(approved(approvedAt))
        .when(approveVoid(bogota(2026, 11, 21, 23, 30)))
        .thenFails(TerminalCheckout.VoidWindowClosed)
      spec
        .given(approved(approvedAt))
        .when(approveVoid(bogota(2026, 11, 22, 0, 0, 0, 1)))
        .thenFails(TerminalCheckout.VoidWindowClosed)
      spec
        .given(approved(approvedAt))
        .when(approveVoid(bogota(2026, 11, 22, 10)))
        .thenFails(TerminalCheckout.VoidWindowClosed)
    })
    it("a sale approved at 19:00 Bogotá (00:00 UTC next day) is voidable until 21:00 Bogotá that Bogotá day", () => {
      const approvedAt = bogota(2026, 11, 21, 19)
      expect(DateTime.formatIso(approvedAt)).toBe("2026-11-22T00:00:00.000Z")
      voidableUntil21(approvedAt)
    })
    it.prop(
      "a sale is voidable iff the void is on its Bogotá day, at or after approval and before 21:00",
      [voidInstants()],
      ([[approvedMs, voidMs]]) => {
        const result = TerminalCheckout.decide(
          approveVoid(DateTime.unsafeMake(voidMs)),
          Checkout.fold(approved(DateTime.unsafeMake(approvedMs)))
        )
        const expected =
          voidMs >= approvedMs && bogotaDay(voidMs) === bogotaDay(approvedMs) && bogotaHour(voidMs) < 21
        if (expected) expect(Either.getOrThrow(result).map((e) => e._tag)).toEqual(["SaleVoided"])
        else
          expect(Either.getLeft(result).pipe(Option.map((e) => e._tag))).toEqual(
            Option.some("VoidWindowClosed")
          )
      }
    )
    it("only APPROVED sales can be voided", () => {
      spec.refusedIn(approveVoid(), TerminalCheckout.CheckoutNotInState, {
        REJECTED: rejected(),
        SENT: sent()
      })
    })
    it("only credit or debit card sales can be voided", () => {
      spec
        .given(approved(at(1), walletSale))
        .when(approveVoid())
        .thenFails(TerminalCheckout.NotACardSale, { paymentMethod: "WALLET_A" })
    })
    it("a void for a different transaction is refused", () => {
      refusedForOtherTransaction(approved(), approveVoid(at(2), trx2))
    })
    it("a void is irreversible: a re-delivered void approval changes nothing, even after 21:00", () => {
      spec
        .given(voided())
        .when(approveVoid(at(2)))
        .thenNothing()
      spec
        .given(voided())
        .when(approveVoid(at(24 * 60)))
        .thenNothing()
    })
  })

  describe("RejectVoid", () => {
    it("a rejected void leaves the sale APPROVED with the rejection recorded", () => {
      const events = [
        ...approved(),
        new TerminalCheckout.VoidRejected({ transactionId: trx1, reason: "NETWORK_DECLINED", at: at(2) })
      ]
      spec
        .given(approved())
        .when(rejectVoid(at(2)))
        .then([events[events.length - 1]!])
      expect(Checkout.fold(events)._tag).toBe("APPROVED")
      // The sale can still be voided within its window.
      spec
        .given(events)
        .when(approveVoid(at(3)))
        .then([new TerminalCheckout.SaleVoided({ transactionId: trx1, at: at(3) })])
    })
    it("a void after the window is refused before any outcome", () => {
      spec
        .given(approved())
        .when(rejectVoid(at(12 * 60)))
        .thenFails(TerminalCheckout.VoidWindowClosed)
    })
    it("a void is irreversible: a VOIDED sale takes no void rejection", () => {
      spec.refusedIn(rejectVoid(), TerminalCheckout.CheckoutNotInState, { VOIDED: voided() })
    })
    it("a void rejection for a different transaction is refused", () => {
      refusedForOtherTransaction(approved(), rejectVoid(at(2), trx2))
    })
  })

  describe("the webhook type of each event (NotificationRules)", () => {
    it("maps each outcome to its webhook type (D) and every other event to none", () => {
      const byTag = (tag: TerminalCheckout.Event["_tag"]) => allEvents().find((e) => e._tag === tag)!
      expect(NotificationRules.notificationTypeOf(byTag("SaleApproved"))).toEqual(
        Option.some("SALE_APPROVED")
      )
      expect(NotificationRules.notificationTypeOf(byTag("SaleRejected"))).toEqual(
        Option.some("SALE_REJECTED")
      )
      expect(NotificationRules.notificationTypeOf(byTag("SaleVoided"))).toEqual(Option.some("VOID_APPROVED"))
      expect(NotificationRules.notificationTypeOf(byTag("VoidRejected"))).toEqual(
        Option.some("VOID_REJECTED")
      )
      const silent = allEvents().filter(
        (e) => !["SaleApproved", "SaleRejected", "SaleVoided", "VoidRejected"].includes(e._tag)
      )
      expect(new Set(silent.map((e) => e._tag)).size).toBe(7)
      for (const event of silent) expect(NotificationRules.notificationTypeOf(event)).toEqual(Option.none())
    })
  })

  describe("events", () => {
    it("every event survives JSON through its schema", () => {
      const encode = Schema.encodeSync(TerminalCheckout.Event)
      const decode = Schema.decodeUnknownSync(TerminalCheckout.Event)
      for (const event of allEvents()) {
        expect(decode(JSON.parse(JSON.stringify(encode(event))))).toEqual(event)
      }
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 720 })
    const trx = FastCheck.constantFrom(trx1, trx1, trx2)
    const command: FastCheck.Arbitrary<TerminalCheckout.Command> = FastCheck.oneof(
      { arbitrary: FastCheck.constant(create()), weight: 1 },
      { arbitrary: minute.map((m) => new TerminalCheckout.AttemptPush({ now: at(m) })), weight: 3 },
      {
        arbitrary: FastCheck.record({ m: minute, lock: FastCheck.constantFrom(undefined, 0, 2, 3) }).map(
          ({ m, lock }) => deliver(lock === undefined ? Option.none() : Option.some(at(m - lock)), at(m))
        ),
        weight: 3
      },
      {
        arbitrary: minute.map(
          (m) => new TerminalCheckout.RecordUnreachable({ reason: "POWERED_OFF", now: at(m) })
        ),
        weight: 2
      },
      { arbitrary: minute.map((m) => new TerminalCheckout.UnlockTerminal({ now: at(m) })), weight: 1 },
      { arbitrary: minute.map((m) => new TerminalCheckout.CancelCheckout({ now: at(m) })), weight: 1 },
      {
        arbitrary: FastCheck.record({
          trx,
          m: minute,
          sale: FastCheck.constantFrom(cardSale, cardSale, walletSale)
        }).map(({ trx, m, sale }) => approve({ transactionId: trx, sale, now: at(m) })),
        weight: 3
      },
      { arbitrary: FastCheck.record({ trx, m: minute }).map(({ trx, m }) => reject(trx, at(m))), weight: 2 },
      {
        arbitrary: FastCheck.record({ trx, m: minute }).map(({ trx, m }) => approveVoid(at(m), trx)),
        weight: 2
      },
      {
        arbitrary: FastCheck.record({ trx, m: minute }).map(({ trx, m }) => rejectVoid(at(m), trx)),
        weight: 1
      }
    )
    // Starting from a created checkout makes most runs exercise more than creation; from a voided
    // sale (five commands in order, within the void window), they exercise the late reports on it.
    const voidedSale = [
      create(),
      new TerminalCheckout.AttemptPush({ now: at(0) }),
      deliver(Option.none()),
      approve(),
      approveVoid()
    ]
    const run = runsFrom(FastCheck.constantFrom([create()], [create()], voidedSale), command, 25)

    transitionProperties({
      aggregate: TerminalCheckout.TerminalCheckout,
      run,
      id: "INT_1",
      absorbing: {
        title: "CANCELLED, REJECTED and VOIDED are absorbing; every other state is not",
        states: ["CANCELLED", "REJECTED", "VOIDED"]
      }
    })
  })
})

// ---------------------------------------------------------------------------------------------
// Helpers (function declarations, hoisted)
// ---------------------------------------------------------------------------------------------

/** The Bogotá calendar date and hour of an instant, computed apart from `Bogota.ts` as an oracle. */
function bogotaDay(ms: number): string {
  return new Date(ms - 5 * HOUR).toISOString().slice(0, 10)
}
function bogotaHour(ms: number): number {
  return new Date(ms - 5 * HOUR).getUTCHours()
}

/**
 * Pairs (approved, void) of epoch millis: voids up to 30 hours around the approval, and voids a few
 * milliseconds around 21:00 and midnight Bogotá of the approval's day, where the window's edges are.
 */
function voidInstants(): FastCheck.Arbitrary<readonly [number, number]> {
  const approvedAt = FastCheck.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 0, 1) })
  const anyTime = FastCheck.tuple(approvedAt, FastCheck.integer({ min: -2 * HOUR, max: 30 * HOUR })).map(
    ([a, d]) => [a, a + d] as const
  )
  const nearEdge = FastCheck.tuple(
    approvedAt,
    FastCheck.constantFrom(21, 24),
    FastCheck.integer({ min: -3, max: 3 })
  ).map(([a, edgeHour, d]) => {
    const day = new Date(a - 5 * HOUR)
    const edge = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), edgeHour + 5)
    return [a, edge + d] as const
  })
  return FastCheck.oneof(anyTime, nearEdge)
}

/** One event of each kind. */
function allEvents(): ReadonlyArray<TerminalCheckout.Event> {
  return [
    ...voided(),
    new TerminalCheckout.CheckoutHeld({ lockedSince: at(-10), at: at(0) }),
    new TerminalCheckout.CheckoutReleased({ at: at(1) }),
    new TerminalCheckout.DeliveryFailed({ reason: "POWERED_OFF", at: at(0) }),
    new TerminalCheckout.CheckoutCancelled({ at: at(1) }),
    new TerminalCheckout.SaleRejected({
      transactionId: trx1,
      reason: "DECLINED",
      card: Option.some(card),
      at: at(1)
    }),
    new TerminalCheckout.VoidRejected({ transactionId: trx1, reason: "NETWORK_DECLINED", at: at(2) }),
    ...created(
      create({
        payer: Option.some(
          new TerminalCheckout.Payer({
            email: Option.some("payer@example.com"),
            phoneNumber: Option.none(),
            document: Option.some(
              new TerminalCheckout.PayerDocument({
                documentType: Option.some("CEDULA"),
                documentNumber: Option.some("1234567")
              })
            )
          })
        )
      })
    )
  ]
}
