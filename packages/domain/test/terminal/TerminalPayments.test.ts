import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId, TerminalSerial, TransactionId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalGateway from "@cobro/domain/TerminalGateway"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import { freshly } from "../fixtures/Scenario.js"
import { checkoutBody, newMerchantMethods, set } from "../fixtures/Terminal.js"

const MER_1 = MerchantId.make("MER_1")
const MER_2 = MerchantId.make("MER_2")
const SN = TerminalSerial.make("SN0012345")
const production: TerminalPayments.Caller = { merchantId: MER_1, sandbox: false }

/** The spec's sample-style body, for the terminal bound by `given`. */
const body = checkoutBody

// ---------------------------------------------------------------------------------------------
// A fake gateway: answers as told and records what it was asked.
// ---------------------------------------------------------------------------------------------

type Answer =
  | { readonly _tag: "deliver"; readonly lockedSince?: DateTime.Utc }
  | { readonly _tag: "unreachable" }
  // The terminal never answers: the push hangs until it is cut.
  | { readonly _tag: "hang" }

class FakeGateway extends Effect.Service<FakeGateway>()("test/FakeGateway", {
  effect: Effect.gen(function* () {
    const answer = yield* Ref.make<Answer>({ _tag: "deliver" })
    const pushed = yield* Ref.make<ReadonlyArray<TerminalGateway.ChargeInstruction>>([])
    return { answer, pushed }
  })
}) {}

const gatewayLayer = Layer.effect(
  TerminalGateway.TerminalGateway,
  Effect.map(FakeGateway, ({ answer, pushed }) => ({
    push: (instruction: TerminalGateway.ChargeInstruction) =>
      Effect.gen(function* () {
        yield* Ref.update(pushed, (all) => [...all, instruction])
        const a = yield* Ref.get(answer)
        if (a._tag === "hang") return yield* Effect.never
        return a._tag === "unreachable"
          ? yield* new TerminalGateway.TerminalUnreachable({
              terminalSerial: instruction.terminalSerial,
              reason: "powered off"
            })
          : new TerminalGateway.Delivered({ lockedSince: Option.fromNullable(a.lockedSince) })
      })
  }))
).pipe(Layer.provideMerge(FakeGateway.Default))

/** From now on the terminal answers with `answer`. */
const terminalAnswers = (answer: Answer) =>
  Effect.flatMap(FakeGateway, (fake) => Ref.set(fake.answer, answer))

/** A checkout pushed to a terminal that cannot be reached: the request's answer. */
const checkoutUnreachable = Effect.zipRight(
  terminalAnswers({ _tag: "unreachable" }),
  TerminalPayments.checkout(production, body())
)

/** A checkout whose push the terminal never answers, past the push timeout: the request's answer. */
const checkoutPastTimeout = Effect.gen(function* () {
  yield* terminalAnswers({ _tag: "hang" })
  const request = yield* Effect.fork(TerminalPayments.checkout(production, body()))
  yield* TestClock.adjust(TerminalCheckout.PUSH_TIMEOUT_MS)
  return yield* Fiber.join(request)
})

// A notification log over a fixed list of bodies.
const stored = (
  bodies: ReadonlyArray<{ owner: NotificationLog.Owner; paymentId: string; reference: string; body: string }>
) =>
  Layer.succeed(NotificationLog.NotificationLog, {
    lastByPaymentId: (owner, paymentId) =>
      Effect.succeed(
        Option.fromNullable(
          bodies.find(
            (b) =>
              b.owner.merchantId === owner.merchantId &&
              b.owner.sandbox === owner.sandbox &&
              b.paymentId === paymentId
          )?.body
        )
      ),
    lastByExternalReference: (owner, reference, limit) =>
      Effect.succeed(
        bodies
          .filter(
            (b) =>
              b.owner.merchantId === owner.merchantId &&
              b.owner.sandbox === owner.sandbox &&
              b.reference === reference
          )
          .slice(0, limit)
          .map((b) => b.body)
      )
  })

const TestLayer = Layer.mergeAll(
  InMemoryEventStore.layer,
  IdGenerator.layerSequential,
  gatewayLayer,
  stored([])
)

// ---------------------------------------------------------------------------------------------
// Given
// ---------------------------------------------------------------------------------------------

const merchant = CommandHandler.make(Merchant.Merchant)

const T0 = DateTime.unsafeMake("2026-11-21T15:00:00Z")

/** A merchant with the SMART_PRO terminal SN0012345 bound and, unless told, selected for the API. */
const given = (options: { merchantId?: MerchantId; apiEnabled?: boolean } = {}) =>
  Effect.gen(function* () {
    const id = options.merchantId ?? MER_1
    yield* TestClock.setTime(DateTime.toEpochMillis(T0))
    yield* merchant(id, new Merchant.CreateMerchant({ merchantId: id, name: "Shop", now: T0 }))
    yield* merchant(
      id,
      new Merchant.BindTerminal({ serial: SN, model: "SMART_PRO", name: "Caja 1", now: T0 })
    )
    if (options.apiEnabled ?? true)
      yield* merchant(id, new Merchant.EnableTerminalForApi({ serial: SN, now: T0 }))
  })

/** Runs a test body on its own store, ids, gateway and (empty) notification log. */
const onTerminal = freshly(TestLayer)

/** As {@link onTerminal}, after `given()`: MER_1 with SN0012345 bound and selected for the API. */
const withTerminal = freshly(TestLayer, Effect.orDie(given()))

const checkoutEvents = (integrationId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`TerminalCheckout-${integrationId}`), (events) => events.map((e) => e.type))
  )

const allStreams = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll(), (events) => [...new Set(events.map((e) => e.streamId))])
)

const apError = (result: Either.Either<unknown, { readonly _tag: string }>) =>
  Either.match(result, {
    onRight: () => "accepted",
    onLeft: (e) => {
      const item = e as { code?: string; field?: string }
      return `${item.code ?? e._tag}${item.field === undefined || item.field === "" ? "" : ` ${item.field}`}`
    }
  })

const attempt = (json: unknown, caller = production) => Effect.either(TerminalPayments.checkout(caller, json))

describe("TerminalPayments", () => {
  describe("A1 payment methods", () => {
    it.effect("A1 lists every method as {name, enabled} in the A1 order; a new merchant has POS on", () =>
      withTerminal(function* () {
        expect(yield* TerminalPayments.paymentMethods(MER_1)).toEqual(newMerchantMethods)
      })
    )
  })

  describe("A2 bound terminals", () => {
    it.effect("A2 lists the bound terminals with status BINDED, selected for the API or not", () =>
      onTerminal(function* () {
        yield* given({ apiEnabled: false })
        expect(yield* TerminalPayments.boundTerminals(MER_1)).toEqual([
          { terminal_model: "SMART_PRO", terminal_serial: "SN0012345", status: "BINDED", name: "Caja 1" }
        ])
        expect(yield* TerminalPayments.boundTerminals(MER_2)).toEqual([])
      })
    )
  })

  describe("A3 checkout", () => {
    it.effect("A3 creates the checkout with INT_ and TRX_ ids and pushes it to the terminal: SENT", () =>
      withTerminal(function* () {
        const created = yield* TerminalPayments.checkout(production, body())
        expect(created.integrationId).toMatch(/^INT_/)
        expect(created.transactionId).toMatch(/^TRX_/)
        expect(created.status).toBe("SENT")
        expect(yield* checkoutEvents(created.integrationId)).toEqual([
          "CheckoutCreated",
          "PushAttempted",
          "CheckoutSent"
        ])
        const [instruction] = yield* Ref.get((yield* FakeGateway).pushed)
        expect(instruction).toMatchObject({
          integrationId: created.integrationId,
          transactionId: created.transactionId,
          terminalSerial: "SN0012345",
          reference: "order-42",
          total: 11900,
          sandbox: false
        })
      })
    )

    it.effect(
      "A3 writes the checkout and the claim of its push in one append, before the terminal is called",
      () =>
        withTerminal(function* () {
          const writes: Array<ReadonlyArray<string>> = []
          const created = yield* TerminalPayments.checkout(production, body()).pipe(
            Effect.provideServiceEffect(
              EventStore.EventStore,
              Effect.map(EventStore.EventStore, (store) => ({
                ...store,
                append: (streamId, events, expected) => {
                  if (streamId.startsWith("TerminalCheckout-")) writes.push(events.map((e) => e.type))
                  return store.append(streamId, events, expected)
                },
                appendBatch: (items) => {
                  for (const item of items) {
                    if (item.streamId.startsWith("TerminalCheckout-"))
                      writes.push(item.events.map((e) => e.type))
                  }
                  return store.appendBatch(items)
                }
              }))
            )
          )
          expect(created.status).toBe("SENT")
          expect(writes).toEqual([["CheckoutCreated", "PushAttempted"], ["CheckoutSent"]])
        })
    )

    it.effect(
      "A3 records the checkout as the merchant sent it, with the tax lines computed from a label",
      () =>
        withTerminal(function* () {
          const created = yield* TerminalPayments.checkout(
            { merchantId: MER_1, sandbox: true },
            set(set(body(), "amount.taxes", [{ type: "IVA_19" }]), "amount.tip_amount", 1000)
          )
          const state = yield* TerminalPayments.load(created.integrationId)
          if (state._tag === "Initial") throw new Error("no checkout")
          expect(state.checkout.sandbox).toBe(true)
          expect(state.checkout.amount.taxes).toEqual([{ type: "VAT", base: 9159.66, value: 1740.34 }])
          expect(Option.getOrThrow(state.checkout.payer).email).toEqual(Option.some("payer@mail.co"))
        })
    )

    it.effect("AP005: a missing required field is reported with the field named", () =>
      withTerminal(function* () {
        expect(apError(yield* attempt(set(body(), "terminal_serial", undefined)))).toBe(
          "AP005 terminal_serial"
        )
        expect(apError(yield* attempt(set(body(), "amount.currency", undefined)))).toBe(
          "AP005 amount.currency"
        )
      })
    )

    it.effect("AP006: a field of the wrong type is reported with the field named", () =>
      withTerminal(function* () {
        expect(apError(yield* attempt(set(body(), "amount.total_amount", "11900")))).toBe(
          "AP006 amount.total_amount"
        )
        expect(apError(yield* attempt([body()]))).toBe("AP006")
      })
    )

    it.effect("AP002: taxes that fit no form, or amounts that cannot hold, are AP002 on amount.taxes", () =>
      withTerminal(function* () {
        expect(apError(yield* attempt(set(body(), "amount.taxes", [{ type: "IVA_19", value: 1 }])))).toBe(
          "AP002"
        )
        const tooMuchTax = set(body(), "amount.taxes", [{ type: "VAT", value: 20000 }])
        expect(apError(yield* attempt(tooMuchTax))).toBe("AP002")
      })
    )

    it.effect("AP003: a payment method that is not active for the merchant", () =>
      withTerminal(function* () {
        expect(apError(yield* attempt(set(body(), "payment_method", "WALLET_A")))).toBe("AP003")
        expect(apError(yield* attempt(set(body(), "payment_method", "BITCOIN")))).toBe("AP003")
        yield* merchant(MER_1, new Merchant.SetTerminalMethod({ method: "WALLET_A", enabled: true, now: T0 }))
        expect(apError(yield* attempt(set(body(), "payment_method", "WALLET_A")))).toBe("accepted")
      })
    )

    it.effect(
      "AP003: the empty method (the terminal's own selection screen) needs at least one active method",
      () =>
        withTerminal(function* () {
          expect(apError(yield* attempt(set(body(), "payment_method", "")))).toBe("accepted")
          yield* merchant(MER_1, new Merchant.SetTerminalMethod({ method: "POS", enabled: false, now: T0 }))
          expect(apError(yield* attempt(set(body(), "payment_method", "")))).toBe("AP003")
        })
    )

    it.effect("AP004: a terminal not bound, bound as another model, or not selected for the API", () =>
      onTerminal(function* () {
        yield* given({ apiEnabled: false })
        expect(apError(yield* attempt(body()))).toBe("AP004")
        yield* merchant(MER_1, new Merchant.EnableTerminalForApi({ serial: SN, now: T0 }))
        expect(apError(yield* attempt(set(body(), "terminal_serial", "SN-OTHER")))).toBe("AP004")
        expect(apError(yield* attempt(set(body(), "terminal_model", "SMART")))).toBe("AP004")
        expect(apError(yield* attempt(body()))).toBe("accepted")
      })
    )

    it.effect("AP004: another merchant's terminal is not bound to the caller", () =>
      onTerminal(function* () {
        yield* given({ merchantId: MER_2 })
        yield* merchant(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Other", now: T0 }))
        expect(apError(yield* attempt(body()))).toBe("AP004")
      })
    )

    it.effect("AP004: the terminals of a disabled account cannot be used", () =>
      withTerminal(function* () {
        yield* merchant(MER_1, new Merchant.DisableMerchant({ now: T0 }))
        expect(apError(yield* attempt(body()))).toBe("AP004")
      })
    )

    it.effect(
      "AP003 is reported before AP004 (the spec's field order: payment_method before terminal_serial)",
      () =>
        withTerminal(function* () {
          const both = set(set(body(), "payment_method", "WALLET_A"), "terminal_serial", "SN-OTHER")
          expect(apError(yield* attempt(both))).toBe("AP003")
        })
    )

    it.effect("a rejected checkout stores nothing", () =>
      withTerminal(function* () {
        const before = yield* allStreams
        for (const bad of [
          set(body(), "reference", undefined),
          set(body(), "amount.tip_amount", "x"),
          set(body(), "amount.taxes", [{ type: "X" }]),
          set(body(), "payment_method", "WALLET_B"),
          set(body(), "terminal_serial", "SN-OTHER")
        ]) {
          expect(apError(yield* attempt(bad))).not.toBe("accepted")
        }
        expect(yield* allStreams).toEqual(before)
      })
    )

    it.effect(
      "R5: an unreachable terminal does not fail A3: the checkout exists, UNREACHABLE, and is pushed again later",
      () =>
        withTerminal(function* () {
          const created = yield* checkoutUnreachable
          expect(created.status).toBe("UNREACHABLE")
          yield* terminalAnswers({ _tag: "deliver" })
          expect(yield* TerminalPayments.push(created.integrationId)).toBe("SENT")
          expect(yield* checkoutEvents(created.integrationId)).toEqual([
            "CheckoutCreated",
            "PushAttempted",
            "DeliveryFailed",
            "PushAttempted",
            "CheckoutSent"
          ])
        })
    )

    it.effect(
      "a request cut after the checkout's commit leaves its push to the pusher: once the claim lapses, the pusher pushes it",
      () =>
        withTerminal(function* () {
          const fake = yield* FakeGateway
          yield* terminalAnswers({ _tag: "hang" })
          // The request's fiber is interrupted while its push is under way (the client went away).
          const request = yield* Effect.fork(TerminalPayments.checkout(production, body()))
          const pushed = yield* Effect.repeat(Ref.get(fake.pushed), {
            until: (all) => all.length === 1
          })
          yield* Fiber.interrupt(request)
          const integrationId = pushed[0]!.integrationId
          expect(yield* checkoutEvents(integrationId)).toEqual(["CheckoutCreated", "PushAttempted"])
          // The claim is live: the pusher leaves it to its pusher.
          yield* TestClock.adjust(TerminalCheckout.PUSH_TIMEOUT_MS - 1)
          expect(yield* TerminalPayments.pushAgain(integrationId)).toEqual(Option.none())
          yield* TestClock.adjust(1)
          yield* terminalAnswers({ _tag: "deliver" })
          expect(yield* TerminalPayments.pushAgain(integrationId)).toEqual(Option.some("SENT"))
          expect(yield* Ref.get(fake.pushed)).toHaveLength(2)
          const store = yield* EventStore.EventStore
          const stream = yield* store.readStream(`TerminalCheckout-${integrationId}`)
          expect(stream.map((e) => [e.type, e.metadata.actor])).toEqual([
            ["CheckoutCreated", MER_1],
            ["PushAttempted", MER_1],
            ["PushAttempted", "pusher"],
            ["CheckoutSent", "terminal:SN0012345"]
          ])
          // Decided: nothing is left for the pusher.
          expect(yield* TerminalPayments.pushAgain(integrationId)).toEqual(Option.none())
        })
    )

    it.effect(
      "a terminal that does not answer within the push timeout leaves the checkout SENDING for the pusher, never UNREACHABLE",
      () =>
        withTerminal(function* () {
          const created = yield* checkoutPastTimeout
          expect(created.status).toBe("SENDING")
          expect(yield* checkoutEvents(created.integrationId)).toEqual(["CheckoutCreated", "PushAttempted"])
        })
    )

    it.effect(
      "two pushers that find one lapsed claim: one claims it and pushes, the other's claim conflicts and pushes nothing",
      () =>
        withTerminal(function* () {
          const fake = yield* FakeGateway
          const { integrationId } = yield* checkoutPastTimeout
          yield* terminalAnswers({ _tag: "deliver" })
          const results = yield* Effect.all(
            [TerminalPayments.pushAgain(integrationId), TerminalPayments.pushAgain(integrationId)],
            { concurrency: 2 }
          )
          expect(results.filter(Option.isSome)).toHaveLength(1)
          expect(yield* Ref.get(fake.pushed)).toHaveLength(2)
          expect(yield* checkoutEvents(integrationId)).toEqual([
            "CheckoutCreated",
            "PushAttempted",
            "PushAttempted",
            "CheckoutSent"
          ])
        })
    )

    it.effect(
      "a checkout an earlier version left UNREACHABLE for a busy terminal is pushed again by the pusher; a truly unreachable one waits for its terminal",
      () =>
        withTerminal(function* () {
          const waiting = yield* checkoutUnreachable
          expect(waiting.status).toBe("UNREACHABLE")
          // As earlier versions recorded a terminal whose stream kept conflicting.
          const busy = yield* checkoutPastTimeout
          yield* CommandHandler.make(TerminalCheckout.TerminalCheckout)(
            busy.integrationId,
            new TerminalCheckout.RecordUnreachable({
              reason: TerminalCheckout.BUSY_READ_AS_UNREACHABLE,
              now: yield* DateTime.now
            })
          )
          yield* terminalAnswers({ _tag: "deliver" })
          expect(yield* TerminalPayments.pushAgain(waiting.integrationId)).toEqual(Option.none())
          expect(yield* TerminalPayments.pushAgain(busy.integrationId)).toEqual(Option.some("SENT"))
        })
    )

    it.effect("R1: a terminal locked for more than 2 minutes holds the payment; the unlock releases it", () =>
      withTerminal(function* () {
        yield* TestClock.adjust("3 minutes")
        yield* terminalAnswers({ _tag: "deliver", lockedSince: T0 })
        const created = yield* TerminalPayments.checkout(production, body())
        expect(created.status).toBe("HELD")
        const released = yield* TerminalPayments.recordUnlock(created.integrationId)
        expect(released.state._tag).toBe("SENT")
      })
    )
  })

  describe("outcomes", () => {
    const card = new TerminalCheckout.Card({
      maskedPan: "450799******1234",
      brand: "VISA",
      captureMode: "CHIP",
      cardType: "CREDIT",
      cardholderName: "ANA PEREZ",
      installments: 1,
      terminalId: "SN0012345"
    })
    const sale = new TerminalCheckout.Sale({
      paymentMethod: "CARD",
      serviceCode: "SC123",
      approvalNumber: Option.some("123456"),
      payerEmail: Option.some("payer@mail.co"),
      card: Option.some(card)
    })

    it.effect(
      "the terminal's approval records SaleApproved with the card; a void then records SaleVoided",
      () =>
        withTerminal(function* () {
          const created = yield* TerminalPayments.checkout(production, body())
          yield* TerminalPayments.approveSale(created.integrationId, created.transactionId, sale)
          yield* TerminalPayments.approveVoid(created.integrationId, created.transactionId)
          expect(yield* checkoutEvents(created.integrationId)).toEqual([
            "CheckoutCreated",
            "PushAttempted",
            "CheckoutSent",
            "SaleApproved",
            "SaleVoided"
          ])
        })
    )

    it.effect("the terminal's rejection records SaleRejected; a rejected void leaves the sale APPROVED", () =>
      withTerminal(function* () {
        const a = yield* TerminalPayments.checkout(production, body())
        const rejected = yield* TerminalPayments.rejectSale(
          a.integrationId,
          a.transactionId,
          "insufficient funds",
          Option.some(card)
        )
        expect(rejected.state._tag).toBe("REJECTED")
        const b = yield* TerminalPayments.checkout(production, body())
        yield* TerminalPayments.approveSale(b.integrationId, b.transactionId, sale)
        const kept = yield* TerminalPayments.rejectVoid(b.integrationId, b.transactionId, "declined")
        expect(kept.state._tag).toBe("APPROVED")
      })
    )

    it.effect("an outcome for another transaction is refused", () =>
      withTerminal(function* () {
        const created = yield* TerminalPayments.checkout(production, body())
        const result = yield* Effect.either(
          TerminalPayments.approveSale(created.integrationId, TransactionId.make("TRX_other"), sale)
        )
        expect(apError(result)).toBe("UnknownCheckoutTransaction")
      })
    )
  })

  // A4 only reads: the notification log is fixed, so one build of the layer serves the block.
  /** One notification the schema allows (a fixed sample of its arbitrary), for `paymentId`. */
  const [sample] = FastCheck.sample(Arbitrary.make(Notification.Notification), { numRuns: 1, seed: 42 })
  const notification = (paymentId: string, reference: string) =>
    Nanos.stringifyWithBigInt(
      Schema.encodeSync(Notification.Notification)({
        ...sample!,
        subject: paymentId,
        data: { ...sample!.data, payment_id: TransactionId.make(paymentId), metadata: { reference } }
      })
    )
  const owner = { merchantId: MER_1, sandbox: false }
  const rows = [
    ...Array.from({ length: 12 }, (_, i) => ({
      owner,
      paymentId: `TRX_${i}`,
      reference: "order-42",
      body: notification(`TRX_${i}`, "order-42")
    })),
    {
      owner: { merchantId: MER_1, sandbox: true },
      paymentId: "TRX_sbx",
      reference: "order-42",
      body: notification("TRX_sbx", "order-42")
    },
    { owner, paymentId: "TRX_bad", reference: "bad", body: "{not json" }
  ]
  const A4Layer = Layer.mergeAll(
    InMemoryEventStore.layer,
    IdGenerator.layerSequential,
    gatewayLayer,
    stored(rows)
  )

  it.layer(A4Layer)("A4 fallback notifications", (it) => {
    it.effect("A4 by transaction id (is_external_reference false): the payment's last notification", () =>
      Effect.gen(function* () {
        const found = yield* TerminalPayments.fallbackNotifications(production, "TRX_3", false)
        expect(found.map((n) => n.data.payment_id)).toEqual(["TRX_3"])
        expect(yield* TerminalPayments.fallbackNotifications(production, "order-42", false)).toEqual([])
      })
    )

    it.effect("A4 by external reference returns at most 10 notifications", () =>
      Effect.gen(function* () {
        const found = yield* TerminalPayments.fallbackNotifications(production, "order-42", true)
        expect(found).toHaveLength(10)
        expect(found.every((n) => Schema.is(Notification.Notification)(n))).toBe(true)
      })
    )

    it.effect("A4 sees only the caller's mode: a test key finds only sandbox notifications", () =>
      Effect.gen(function* () {
        const found = yield* TerminalPayments.fallbackNotifications(
          { merchantId: MER_1, sandbox: true },
          "order-42",
          true
        )
        expect(found.map((n) => n.data.payment_id)).toEqual(["TRX_sbx"])
        expect(yield* TerminalPayments.fallbackNotifications(production, "TRX_sbx", false)).toEqual([])
      })
    )

    it.effect("A4 skips a stored body that does not decode", () =>
      Effect.gen(function* () {
        expect(yield* TerminalPayments.fallbackNotifications(production, "TRX_bad", false)).toEqual([])
      })
    )
  })
})
