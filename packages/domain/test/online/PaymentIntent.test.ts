import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { fold } from "@cobro/domain/Decider"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import { IntentReference, MerchantId, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import { DeciderSpec, openedBy } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
const merchant = MerchantId.make("MER_1")
const referenceId = IntentReference.make("order-1")
const trx1 = TransactionId.make("TRX_1")
const trx2 = TransactionId.make("TRX_2")

const intentAmount = (total: number) =>
  new PaymentIntent.IntentAmount({
    currency: "COP",
    total: amount(total),
    tip: amount(0),
    taxes: [{ type: "VAT", base: amount(total / 1.19), value: amount(total - total / 1.19) }]
  })

const details = (overrides: Partial<ConstructorParameters<typeof PaymentIntent.IntentDetails>[0]> = {}) =>
  new PaymentIntent.IntentDetails({
    amount: intentAmount(119_000),
    description: Option.some("Two coffees"),
    callbackUrl: Option.some("https://shop.example/return"),
    metadata: Option.some({ key: "order", value: "1" }),
    customer: Option.some({ name: "Ana", email: "ana@example.com", billingAddress: { city: "Bogotá" } }),
    ...overrides
  })

const create = (overrides: Partial<ConstructorParameters<typeof PaymentIntent.CreateIntent>[0]> = {}) =>
  new PaymentIntent.CreateIntent({
    merchantId: merchant,
    sandbox: true,
    referenceId,
    details: details(),
    deviceFingerprint: Option.some({ ip: "10.0.0.1", javaEnabled: false, screenHeight: 900 }),
    now: at(0),
    ...overrides
  })

/** What a creation records: the command's intent, at its instant. */
const intentCreated = (command = create()) =>
  new PaymentIntent.IntentCreated({
    merchantId: merchant,
    sandbox: true,
    referenceId,
    details: command.details,
    deviceFingerprint: command.deviceFingerprint,
    createdAt: at(0)
  })

// Histories, built from events (the given of each spec).
const created = (command = create()) => openedBy(PaymentIntent.PaymentIntent, command)
const started = (trx = trx1, minutes = 1) =>
  new PaymentIntent.IntentPaymentStarted({
    transactionId: trx,
    paymentMethod: "CREDIT_CARD",
    at: at(minutes)
  })
const paid = (trx = trx1) => new PaymentIntent.IntentPaid({ transactionId: trx, at: at(2) })
const failed = (trx = trx1) => new PaymentIntent.IntentPaymentFailed({ transactionId: trx, at: at(2) })
const updated = (replacement: PaymentIntent.IntentDetails) =>
  new PaymentIntent.IntentUpdated({ details: replacement, at: at(3) })
const processing = () => [...created(), started()]
const paidIntent = () => [...processing(), paid()]
const afterFailure = () => [...processing(), failed()]

// Commands, at an instant given in minutes after T0.
const update = (replacement: PaymentIntent.IntentDetails) =>
  new PaymentIntent.UpdateIntent({ details: replacement, now: at(3) })
const start = (overrides: Partial<ConstructorParameters<typeof PaymentIntent.StartPayment>[0]> = {}) =>
  new PaymentIntent.StartPayment({
    transactionId: trx1,
    paymentMethod: "CREDIT_CARD",
    now: at(1),
    ...overrides
  })
const complete = (trx: TransactionId, minutes = 2) =>
  new PaymentIntent.CompletePayment({ transactionId: trx, now: at(minutes) })
const fail = (trx: TransactionId, minutes = 2) =>
  new PaymentIntent.FailPayment({ transactionId: trx, now: at(minutes) })

const spec = DeciderSpec.for(PaymentIntent.PaymentIntent)

/** Given an attempt of TRX_1 under way, `command`, for TRX_2, is refused as another transaction's. */
const refusedForOtherTransaction = (command: PaymentIntent.Command) =>
  spec
    .given(processing())
    .when(command)
    .thenFails(PaymentIntent.UnknownIntentTransaction, { transactionId: trx2 })

describe("PaymentIntent", () => {
  describe("CreateIntent", () => {
    it("C1 creates an ACTIVE intent", () => {
      spec.given([]).when(create()).then(intentCreated())
      expect(fold(PaymentIntent.PaymentIntent, created())._tag).toBe("ACTIVE")
    })
    it("a duplicate reference_id is a conflict", () => {
      spec
        .given(created())
        .when(create({ now: at(5) }))
        .thenFails(PaymentIntent.IntentAlreadyExists, { referenceId })
    })
    it("totals, taxes and tip are not checked for consistency", () => {
      const inconsistent = details({
        amount: new PaymentIntent.IntentAmount({
          currency: "COP",
          total: amount(100),
          tip: amount(500),
          taxes: [{ type: "VAT", base: amount(1_000), value: amount(190) }]
        })
      })
      const result = PaymentIntent.decide(create({ details: inconsistent }), PaymentIntent.initialState)
      expect(Either.isRight(result)).toBe(true)
    })
    it("metadata accepts both {key, value} and a map of keys to values", () => {
      const decode = Schema.decodeUnknownSync(PaymentIntent.IntentDetails)
      const base = Schema.encodeSync(PaymentIntent.IntentDetails)(details())
      for (const metadata of [
        { key: "order", value: "1" },
        { order: "1", channel: "web" }
      ]) {
        expect(decode({ ...base, metadata }).metadata).toEqual(Option.some(metadata))
      }
    })
    it("an intent's currency is COP or USD", () => {
      const base = Schema.encodeSync(PaymentIntent.IntentAmount)(intentAmount(1_000))
      expect(
        Either.isRight(Schema.decodeUnknownEither(PaymentIntent.IntentAmount)({ ...base, currency: "USD" }))
      ).toBe(true)
      expect(
        Either.isLeft(Schema.decodeUnknownEither(PaymentIntent.IntentAmount)({ ...base, currency: "EUR" }))
      ).toBe(true)
    })
    it("reference_id is unique per merchant and mode: the stream key holds all three", () => {
      const key = PaymentIntent.streamKey(merchant, true, referenceId)
      expect(key).toBe("MER_1:test:order-1")
      expect(PaymentIntent.streamKey(merchant, false, referenceId)).not.toBe(key)
      expect(PaymentIntent.streamKey(MerchantId.make("MER_2"), true, referenceId)).not.toBe(key)
    })
    it.effect(
      "a duplicate reference_id of the same merchant and mode is a conflict (409), another mode is not",
      () =>
        Effect.gen(function* () {
          const handle = CommandHandler.make(PaymentIntent.PaymentIntent)
          const test = PaymentIntent.streamKey(merchant, true, referenceId)
          const live = PaymentIntent.streamKey(merchant, false, referenceId)
          yield* handle(test, create())
          const duplicate = yield* Effect.flip(handle(test, create({ now: at(1) })))
          expect(duplicate).toMatchObject({ _tag: "IntentAlreadyExists", referenceId })
          const other = yield* handle(live, create({ sandbox: false }))
          expect(other.state._tag).toBe("ACTIVE")
        }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
    )
    it("events encode to JSON and decode back", () => {
      const events = [...created(), started(), paid()]
      const codec = Schema.parseJson(PaymentIntent.Event)
      for (const event of events) {
        expect(Schema.decodeSync(codec)(Schema.encodeSync(codec)(event))).toEqual(event)
      }
    })
  })

  describe("UpdateIntent", () => {
    it("C3 replaces the whole body: omitted optional fields become absent", () => {
      const replacement = details({
        amount: intentAmount(50_000),
        description: Option.none(),
        metadata: Option.none(),
        customer: Option.none()
      })
      spec.given(created()).when(update(replacement)).then(updated(replacement))
      const state = fold(PaymentIntent.PaymentIntent, [...created(), updated(replacement)])
      expect(state).toMatchObject({ _tag: "ACTIVE", details: replacement })
    })
    it("an identical PUT (a retry) appends nothing", () => {
      spec.given(created()).when(update(details())).thenNothing()
    })
    it("while an attempt is RUNNING the amount cannot change", () => {
      spec
        .given(processing())
        .when(update(details({ amount: intentAmount(1) })))
        .thenFails(PaymentIntent.IntentAmountLocked, { referenceId, transactionId: trx1 })
    })
    it("while an attempt is RUNNING the other fields can change", () => {
      const replacement = details({ description: Option.some("Three coffees") })
      spec.given(processing()).when(update(replacement)).then(updated(replacement))
    })
    it("an intent can be updated only while it has not been paid", () => {
      spec
        .given(paidIntent())
        .when(update(details({ amount: intentAmount(1) })))
        .thenFails(PaymentIntent.IntentAlreadyPaid, { referenceId, transactionId: trx1 })
      spec.given(paidIntent()).when(update(details())).thenFails(PaymentIntent.IntentAlreadyPaid)
    })
    it("an unknown reference is not found (404 PaymentNotFound)", () => {
      spec.given([]).when(update(details())).thenFails(PaymentIntent.IntentNotFound)
    })
  })

  describe("StartPayment", () => {
    it("an attempt ties its transaction to the intent: PROCESSING, with service_transaction_id", () => {
      spec.given(created()).when(start()).then([started()])
      const state = fold(PaymentIntent.PaymentIntent, processing())
      expect(state).toMatchObject({ _tag: "PROCESSING", transactionId: Option.some(trx1) })
    })
    it("a second attempt while one is running is refused", () => {
      spec.refusedIn(start({ transactionId: trx2 }), PaymentIntent.IntentNotInState, {
        PROCESSING: processing()
      })
    })
    it("callback_url is required for the PSE and the bank-button payment methods", () => {
      const noCallback = created(create({ details: details({ callbackUrl: Option.none() }) }))
      spec
        .given(noCallback)
        .when(start({ paymentMethod: "PSE" }))
        .thenFails(PaymentIntent.CallbackUrlRequired)
      spec
        .given(noCallback)
        .when(start({ paymentMethod: "BOTON_BANK" }))
        .thenFails(PaymentIntent.CallbackUrlRequired)
      spec
        .given(created())
        .when(start({ paymentMethod: "PSE" }))
        .then([
          new PaymentIntent.IntentPaymentStarted({ transactionId: trx1, paymentMethod: "PSE", at: at(1) })
        ])
    })
    it("a card attempt does not require callback_url", () => {
      const noCallback = created(create({ details: details({ callbackUrl: Option.none() }) }))
      spec.given(noCallback).when(start()).then([started()])
    })
    it("a PAID intent cannot be attempted again", () => {
      spec.refusedIn(start({ transactionId: trx2 }), PaymentIntent.IntentNotInState, { PAID: paidIntent() })
    })
    it("an attempt on an unknown intent is not found", () => {
      spec.given([]).when(start()).thenFails(PaymentIntent.IntentNotFound)
    })
  })

  describe("CompletePayment", () => {
    it("when the payment is approved the intent is PAID", () => {
      spec.given(processing()).when(complete(trx1)).then([paid()])
    })
    it("another transaction cannot pay it", () => {
      refusedForOtherTransaction(complete(trx2))
    })
    it("a re-delivered approval of a PAID intent changes nothing", () => {
      spec.given(paidIntent()).when(complete(trx1, 5)).thenNothing()
    })
    it("an ACTIVE intent has no attempt to approve", () => {
      spec.refusedIn(complete(trx1), PaymentIntent.IntentNotInState, { ACTIVE: created() })
    })
  })

  describe("FailPayment", () => {
    it("a rejected payment returns the intent to ACTIVE", () => {
      spec.given(processing()).when(fail(trx1)).then([failed()])
    })
    it("after a rejected payment the intent can be attempted again", () => {
      spec
        .given(afterFailure())
        .when(start({ transactionId: trx2, now: at(3) }))
        .then([started(trx2, 3)])
      const state = fold(PaymentIntent.PaymentIntent, afterFailure())
      expect(state).toMatchObject({ _tag: "ACTIVE", transactionId: Option.some(trx1) })
    })
    it("a re-delivered rejection of the last attempt changes nothing", () => {
      spec.given(afterFailure()).when(fail(trx1, 4)).thenNothing()
    })
    it("a rejection of another transaction is refused", () => {
      refusedForOtherTransaction(fail(trx2))
      spec.given(created()).when(fail(trx1)).thenFails(PaymentIntent.UnknownIntentTransaction)
    })
    it("a PAID intent cannot fail", () => {
      spec.refusedIn(fail(trx1, 3), PaymentIntent.IntentNotInState, { PAID: paidIntent() })
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 120 })
    const trx = FastCheck.constantFrom(trx1, trx2)
    const someDetails = FastCheck.record({
      total: FastCheck.constantFrom(119_000, 50_000),
      callback: FastCheck.boolean(),
      description: FastCheck.constantFrom("Two coffees", "Three coffees")
    }).map(({ total, callback, description }) =>
      details({
        amount: intentAmount(total),
        callbackUrl: callback ? Option.some("https://shop.example/return") : Option.none(),
        description: Option.some(description)
      })
    )
    const command: FastCheck.Arbitrary<PaymentIntent.Command> = FastCheck.oneof(
      FastCheck.record({ d: someDetails, m: minute }).map(({ d, m }) => create({ details: d, now: at(m) })),
      FastCheck.record({ d: someDetails, m: minute }).map(
        ({ d, m }) => new PaymentIntent.UpdateIntent({ details: d, now: at(m) })
      ),
      FastCheck.record({ trx, m: minute, method: FastCheck.constantFrom("CREDIT_CARD", "PSE") }).map(
        ({ trx, m, method }) => start({ transactionId: trx, paymentMethod: method, now: at(m) })
      ),
      FastCheck.record({ trx, m: minute }).map(
        ({ trx, m }) => new PaymentIntent.CompletePayment({ transactionId: trx, now: at(m) })
      ),
      FastCheck.record({ trx, m: minute }).map(
        ({ trx, m }) => new PaymentIntent.FailPayment({ transactionId: trx, now: at(m) })
      )
    )
    const run = runsFrom(FastCheck.constant([create()]), command, 25)

    transitionProperties({
      aggregate: PaymentIntent.PaymentIntent,
      run,
      id: PaymentIntent.streamKey(merchant, true, referenceId),
      absorbing: { title: "PAID is absorbing; ACTIVE and PROCESSING are not", states: ["PAID"] }
    })

    it.prop("an intent is never updated once paid", [run], ([commands]) => {
      let state = PaymentIntent.initialState
      for (const command of commands) {
        const result = PaymentIntent.decide(command, state)
        if (state._tag === "PAID") expect(Either.getOrElse(result, () => [])).toEqual([])
        if (Either.isRight(result)) state = fold(PaymentIntent.PaymentIntent, result.right, state)
      }
    })
  })
})
