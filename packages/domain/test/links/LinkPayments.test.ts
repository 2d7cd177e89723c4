import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import { TransactionId } from "@cobro/domain/Ids"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Merchant from "@cobro/domain/Merchant"
import { closeLink, closeRequest, createLink, credential, linkRequest } from "../fixtures/Links.js"
import * as Scenario from "../fixtures/Scenario.js"
import { atT0, freshly, type LinkMethods, MER_1, MER_2, ports, tagOf, T0 } from "../fixtures/Scenario.js"

const nanosAt = (minutes: number) => BigInt(T0 + minutes * 60_000) * 1_000_000n

const DEFAULT_METHODS: LinkMethods = {
  CREDIT_CARD: { min: 1_000, max: 5_000_000 },
  PSE: { min: 10_000, max: 20_000_000 }
}

const handleMerchant = CommandHandler.make(Merchant.Merchant)

/** Given: a merchant offering these link methods, at T0 on the test clock. */
const givenMerchant = (merchantId = MER_1, methods: LinkMethods = DEFAULT_METHODS) =>
  Scenario.givenMerchant(merchantId, methods)

const close = closeRequest
const open = (extra: Record<string, unknown> = {}) => linkRequest({ amount_type: "OPEN", ...extra })

const issuesOf = <A, E>(result: Either.Either<A, E>) =>
  Either.match(result, {
    onLeft: (e) => (e instanceof LinkPayments.InvalidLinkRequest ? e.issues : e),
    onRight: () => "accepted"
  })

/** Runs a test at T0 with a fresh store and id generator. */
const scenario = freshly(ports, atT0())

/** As {@link scenario}, with the merchant of {@link givenMerchant} at T0. */
const withMerchant = freshly(ports, atT0(givenMerchant()))

describe("LinkPayments", () => {
  describe("B1: payment methods with limits", () => {
    it.effect("B1 lists each link method the merchant offers with its {min, max}", () =>
      withMerchant(function* () {
        expect(yield* LinkPayments.paymentMethods(credential())).toEqual(DEFAULT_METHODS)
        // The bounds are the merchant's, the same for its production key.
        expect(yield* LinkPayments.paymentMethods(credential(MER_1, "production"))).toEqual(DEFAULT_METHODS)
      })
    )

    it.effect("B1 lists no method for a merchant that offers none", () =>
      scenario(function* () {
        yield* givenMerchant(MER_1, {})
        expect(yield* LinkPayments.paymentMethods(credential())).toEqual({})
      })
    )
  })

  describe("B2: create a link", () => {
    it.effect("when no reference is given, the link id (prefix LNK_) is used", () =>
      withMerchant(function* () {
        const id = yield* createLink(open())
        expect(id).toMatch(/^LNK_[A-Za-z0-9]+$/)
        expect((yield* LinkPayments.read(credential(), id)).reference).toBe(id)
      })
    )

    it.effect("a reference given is kept", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ reference: "order_42-A" }))
        expect((yield* LinkPayments.read(credential(), id)).reference).toBe("order_42-A")
      })
    )

    it.effect("when payment_methods is absent, all available methods are offered", () =>
      withMerchant(function* () {
        const id = yield* createLink(open())
        const view = yield* LinkPayments.checkout(id)
        expect(view.state.link.paymentMethods).toEqual(["CREDIT_CARD", "PSE"])
      })
    )

    it.effect("an empty payment_methods list offers all available methods, as when absent", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ payment_methods: [] }))
        expect((yield* LinkPayments.checkout(id)).state.link.paymentMethods).toEqual(["CREDIT_CARD", "PSE"])
      })
    )

    it.effect("payment_methods keeps the methods named, once each", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ payment_methods: ["PSE", "PSE"] }))
        expect((yield* LinkPayments.checkout(id)).state.link.paymentMethods).toEqual(["PSE"])
      })
    )

    it.effect("payment_methods must be names the merchant offers (one issue per method)", () =>
      withMerchant(function* () {
        const result = yield* Effect.either(
          createLink(open({ payment_methods: ["CREDIT_CARD", "WALLET_A", "BOTON_BANK"] }))
        )
        expect(issuesOf(result)).toEqual([
          { field: "payment_methods.1", message: "WALLET_A is not offered by the merchant (see B1)" },
          { field: "payment_methods.2", message: "BOTON_BANK is not offered by the merchant (see B1)" }
        ])
      })
    )

    it.effect("a merchant that offers no link method cannot create a link", () =>
      scenario(function* () {
        yield* givenMerchant(MER_1, {})
        const result = yield* Effect.either(createLink(open()))
        expect(issuesOf(result)).toEqual([
          { field: "payment_methods", message: "the merchant offers no payment link method (see B1)" }
        ])
      })
    )

    it.effect("a CLOSE total must lie within the bounds of at least one allowed method", () =>
      withMerchant(function* () {
        // Within PSE only, the bounds included.
        yield* closeLink(20_000_000)
        yield* closeLink(1_000, { payment_methods: ["CREDIT_CARD"] })
        yield* closeLink(5_000_000, { payment_methods: ["CREDIT_CARD"] })
        const tooSmall = yield* Effect.either(closeLink(999))
        expect(issuesOf(tooSmall)).toEqual([
          {
            field: "amount.total_amount",
            message: "total_amount 999 is outside the bounds of every method the link offers (see B1)"
          }
        ])
        // Within PSE's bounds, but the link allows CREDIT_CARD only.
        const notThatMethod = yield* Effect.either(closeLink(6_000_000, { payment_methods: ["CREDIT_CARD"] }))
        expect(issuesOf(notThatMethod)).toMatchObject([{ field: "amount.total_amount" }])
      })
    )

    it.effect("a CLOSE total includes the tip and the taxes: a total below their sum is refused", () =>
      withMerchant(function* () {
        const amountWith = (total: number) => ({
          amount_type: "CLOSE",
          amount: {
            total_amount: total,
            tip_amount: 1_000,
            taxes: [{ type: "VAT", base: 10_000, value: 1_900 }]
          }
        })
        yield* createLink(linkRequest(amountWith(2_900)))
        const result = yield* Effect.either(createLink(linkRequest(amountWith(2_899))))
        expect(issuesOf(result)).toMatchObject([{ field: "amount.total_amount" }])
      })
    )

    it.effect("an expiration_date at or before now is refused; a future one is kept to the nanosecond", () =>
      withMerchant(function* () {
        for (const past of [nanosAt(0), nanosAt(-60)]) {
          const result = yield* Effect.either(createLink(open({ expiration_date: past })))
          expect(issuesOf(result)).toEqual([
            { field: "expiration_date", message: "expiration_date must be in the future" }
          ])
        }
        const exact = nanosAt(60) + 123_457n
        const id = yield* createLink(open({ expiration_date: exact }))
        expect((yield* LinkPayments.read(credential(), id)).expiration_date).toBe(exact)
      })
    )

    it.effect("every rule broken is reported, one issue per field", () =>
      withMerchant(function* () {
        const result = yield* Effect.either(
          createLink(close(1, { payment_methods: ["WALLET_A"], expiration_date: nanosAt(-1) }))
        )
        expect(issuesOf(result)).toMatchObject([{ field: "payment_methods.0" }, { field: "expiration_date" }])
      })
    )

    it.effect("the link is a sandbox link exactly when it is created with a test key", () =>
      withMerchant(function* () {
        const sandbox = yield* createLink(open(), credential(MER_1, "test"))
        const production = yield* createLink(open(), credential(MER_1, "production"))
        expect((yield* LinkPayments.read(credential(MER_1, "test"), sandbox)).is_sandbox).toBe(true)
        expect((yield* LinkPayments.read(credential(MER_1, "production"), production)).is_sandbox).toBe(false)
      })
    )

    it.effect("amount.currency defaults to COP; tip and taxes default to none", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        const { state } = yield* LinkPayments.checkout(id)
        expect(Option.map(state.link.amount, (a) => [a.currency, a.tip, a.taxes])).toEqual(
          Option.some(["COP", 0, []])
        )
      })
    )

    it.effect("an OPEN link keeps no amount, even when the request carried one (the payer chooses)", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ amount: { total_amount: 50_000, currency: "USD" } }))
        const { state } = yield* LinkPayments.checkout(id)
        expect(state.link.amount).toEqual(Option.none())
        expect(state.link.amountType).toBe("OPEN")
      })
    )

    it.effect("a disabled merchant account cannot create a link", () =>
      withMerchant(function* () {
        yield* handleMerchant(MER_1, new Merchant.DisableMerchant({ now: DateTime.unsafeMake(T0) }))
        const result = yield* Effect.either(createLink(open()))
        expect(tagOf(result)).toBe("MerchantNotInState")
      })
    )
  })

  describe("B3: read a link", () => {
    it.effect("the record carries total, subtotal, tip, taxes, nanosecond dates and the link's fields", () =>
      withMerchant(function* () {
        const expiry = 1_895_000_000_123_456_789n
        const id = yield* createLink(
          linkRequest({
            amount_type: "CLOSE",
            amount: {
              currency: "COP",
              total_amount: 12_900,
              tip_amount: 1_000,
              taxes: [{ type: "VAT", base: 10_000, value: 1_900 }]
            },
            description: "Two coffees",
            expiration_date: expiry
          })
        )
        expect(yield* LinkPayments.read(credential(), id)).toEqual({
          api_version: 1,
          id,
          total: 12_900,
          subtotal: 10_000,
          tip_amount: 1_000,
          taxes: [{ type: "VAT", base: 10_000, value: 1_900 }],
          status: "ACTIVE",
          expiration_date: expiry,
          creation_date: BigInt(T0) * 1_000_000n,
          description: "Two coffees",
          payment_method: "",
          transaction_id: null,
          amount_type: "CLOSE",
          is_sandbox: true,
          reference: id
        })
      })
    )

    it.effect("an overdue ACTIVE link reads EXPIRED, before any sweeper has run", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ expiration_date: nanosAt(10) }))
        yield* TestClock.setTime(T0 + 10 * 60_000 - 1)
        expect((yield* LinkPayments.read(credential(), id)).status).toBe("ACTIVE")
        yield* TestClock.setTime(T0 + 10 * 60_000)
        expect((yield* LinkPayments.read(credential(), id)).status).toBe("EXPIRED")
      })
    )

    it.effect(
      "only the owning merchant, in the link's mode, can read a link: otherwise it is not found",
      () =>
        scenario(function* () {
          yield* givenMerchant(MER_1)
          yield* givenMerchant(MER_2)
          const id = yield* createLink(open(), credential(MER_1, "test"))
          expect(tagOf(yield* Effect.either(LinkPayments.read(credential(MER_2, "test"), id)))).toBe(
            "LinkNotFound"
          )
          expect(tagOf(yield* Effect.either(LinkPayments.read(credential(MER_1, "production"), id)))).toBe(
            "LinkNotFound"
          )
          expect(tagOf(yield* Effect.either(LinkPayments.read(credential(MER_1, "test"), "LNK_404")))).toBe(
            "LinkNotFound"
          )
        })
    )
  })

  describe("paying a link (the checkout page)", () => {
    it.effect("an OPEN link is paid for an amount within the method's bounds, bounds included", () =>
      withMerchant(function* () {
        for (const chosen of [1_000, 5_000_000]) {
          const id = yield* createLink(open())
          const { state } = yield* LinkPayments.startPayment(id, {
            paymentMethod: "CREDIT_CARD",
            amount: chosen
          })
          expect(state._tag).toBe("PROCESSING")
          expect((yield* LinkPayments.read(credential(), id)).total).toBe(chosen)
        }
      })
    )

    it.effect("an OPEN link's payment must name an amount", () =>
      withMerchant(function* () {
        const id = yield* createLink(open())
        const result = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(result)).toBe("PaymentAmountRequired")
      })
    )

    it.effect.prop(
      "an OPEN amount outside the chosen method's bounds is always refused",
      [
        FastCheck.constantFrom<Merchant.LinkMethod>("CREDIT_CARD", "PSE"),
        FastCheck.oneof(
          FastCheck.double({ min: -1e9, max: 999.999_999, noNaN: true }),
          FastCheck.double({ min: 5_000_000.000_001, max: 1e12, noNaN: true }),
          FastCheck.constantFrom(Number.POSITIVE_INFINITY, Number.NaN)
        )
      ],
      ([method, chosen]) =>
        scenario(function* () {
          yield* givenMerchant(MER_1, {
            CREDIT_CARD: { min: 1_000, max: 5_000_000 },
            PSE: { min: 1_000, max: 5_000_000 }
          })
          const id = yield* createLink(open())
          const result = yield* Effect.either(
            LinkPayments.startPayment(id, { paymentMethod: method, amount: chosen })
          )
          expect(tagOf(result)).toBe("InvalidPaymentAmount")
          expect((yield* LinkPayments.read(credential(), id)).status).toBe("ACTIVE")
        }),
      { timeout: 60_000, fastCheck: { numRuns: 60 } }
    )

    it.effect("a CLOSE link is paid for exactly its total", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        const other = yield* Effect.either(
          LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD", amount: 49_999 })
        )
        expect(tagOf(other)).toBe("InvalidPaymentAmount")
        const { state } = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        expect(state.paidAmount).toEqual(Option.some(50_000))
      })
    )

    it.effect("a CLOSE link cannot be paid with a method whose bounds exclude its total", () =>
      withMerchant(function* () {
        // 6,000,000 fits PSE only; the link allows both.
        const id = yield* closeLink(6_000_000)
        expect((yield* LinkPayments.checkout(id)).methods.map((m) => m.method)).toEqual(["PSE"])
        const result = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(result)).toBe("InvalidPaymentAmount")
        yield* LinkPayments.startPayment(id, { paymentMethod: "PSE" })
      })
    )

    it.effect("a method the link does not offer, or the merchant no longer offers, is refused", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ payment_methods: ["CREDIT_CARD"] }))
        const pse = yield* Effect.either(
          LinkPayments.startPayment(id, { paymentMethod: "PSE", amount: 20_000 })
        )
        expect(tagOf(pse)).toBe("MethodNotOffered")
        yield* handleMerchant(
          MER_1,
          new Merchant.RemoveLinkMethod({ method: "CREDIT_CARD", now: DateTime.unsafeMake(T0) })
        )
        const card = yield* Effect.either(
          LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD", amount: 20_000 })
        )
        expect(tagOf(card)).toBe("MethodNotOffered")
        expect((yield* LinkPayments.checkout(id)).methods).toEqual([])
      })
    )

    it.effect("a link opened in two tabs cannot be paid twice: only one payment starts", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        const results = yield* Effect.all(
          [
            Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })),
            Effect.either(LinkPayments.startPayment(id, { paymentMethod: "PSE" }))
          ],
          { concurrency: "unbounded" }
        )
        expect(results.map(tagOf).sort()).toEqual(["LinkNotInState", "accepted"])
      })
    )

    it.effect(
      "an approved payment makes the link PAID; the record names the transaction and the method",
      () =>
        withMerchant(function* () {
          const id = yield* closeLink(50_000)
          const { transactionId } = yield* LinkPayments.startPayment(id, { paymentMethod: "PSE" })
          expect((yield* LinkPayments.read(credential(), id)).status).toBe("PROCESSING")
          yield* LinkPayments.completePayment(id, transactionId)
          const record = yield* LinkPayments.read(credential(), id)
          expect([record.status, record.transaction_id, record.payment_method]).toEqual([
            "PAID",
            transactionId,
            "PSE"
          ])
          const again = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "PSE" }))
          expect(tagOf(again)).toBe("LinkNotInState")
          expect((yield* LinkPayments.checkout(id)).methods).toEqual([])
        })
    )

    it.effect("a failed payment returns a usable link to ACTIVE, and it can be paid again", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        const first = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        expect((yield* LinkPayments.failPayment(id, first.transactionId))._tag).toBe("ACTIVE")
        const second = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        expect(second.transactionId).not.toBe(first.transactionId)
        expect((yield* LinkPayments.completePayment(id, second.transactionId))._tag).toBe("PAID")
      })
    )

    it.effect("a failed payment of a link that expired meanwhile makes it REJECTED", () =>
      withMerchant(function* () {
        const id = yield* createLink(close(50_000, { expiration_date: nanosAt(10) }))
        const { transactionId } = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        yield* TestClock.setTime(T0 + 11 * 60_000)
        expect((yield* LinkPayments.failPayment(id, transactionId))._tag).toBe("REJECTED")
        expect((yield* LinkPayments.read(credential(), id)).status).toBe("REJECTED")
      })
    )

    it.effect("an expired link cannot be paid and the checkout page offers no method", () =>
      withMerchant(function* () {
        const id = yield* createLink(close(50_000, { expiration_date: nanosAt(10) }))
        yield* TestClock.setTime(T0 + 10 * 60_000)
        const view = yield* LinkPayments.checkout(id)
        expect([view.status, view.methods]).toEqual(["EXPIRED", []])
        const result = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(result)).toBe("LinkOverdue")
      })
    )

    it.effect("a cancelled link cannot be paid; a link being paid cannot be cancelled", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        expect((yield* LinkPayments.cancel(id))._tag).toBe("CANCELLED")
        const pay = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(pay)).toBe("LinkNotInState")
        const busy = yield* closeLink(50_000)
        yield* LinkPayments.startPayment(busy, { paymentMethod: "CREDIT_CARD" })
        expect(tagOf(yield* Effect.either(LinkPayments.cancel(busy)))).toBe("LinkNotInState")
      })
    )

    it.effect("a disabled merchant account cannot take a link payment", () =>
      withMerchant(function* () {
        const id = yield* closeLink(50_000)
        yield* handleMerchant(MER_1, new Merchant.DisableMerchant({ now: DateTime.unsafeMake(T0) }))
        const result = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(result)).toBe("MerchantNotInState")
        expect((yield* LinkPayments.checkout(id)).methods).toEqual([])
      })
    )

    it.effect("the checkout view names the merchant and the link, found by its id alone", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ description: "Tip jar" }))
        const view = yield* LinkPayments.checkout(id)
        expect([view.merchantName, view.record.description, view.status]).toEqual([
          "Café Andino",
          "Tip jar",
          "ACTIVE"
        ])
        expect(view.methods).toEqual([
          { method: "CREDIT_CARD", bounds: { min: 1_000, max: 5_000_000 } },
          { method: "PSE", bounds: { min: 10_000, max: 20_000_000 } }
        ])
        expect(tagOf(yield* Effect.either(LinkPayments.checkout("LNK_404")))).toBe("LinkNotFound")
      })
    )
  })

  describe("the sweeper's step", () => {
    it.effect("expire records EXPIRED for an overdue ACTIVE link only", () =>
      withMerchant(function* () {
        const id = yield* createLink(open({ expiration_date: nanosAt(10) }))
        const early = yield* LinkPayments.expire(id)
        expect(early._tag).toBe("ACTIVE")
        yield* TestClock.setTime(T0 + 10 * 60_000)
        expect((yield* LinkPayments.expire(id))._tag).toBe("EXPIRED")
        const store = yield* EventStore.EventStore
        const types = (yield* store.readStream(`PaymentLink-${id}`)).map((e) => e.type)
        expect(types).toEqual(["LinkCreated", "LinkExpired"])
        // Again: nothing more is recorded.
        yield* LinkPayments.expire(id)
        expect((yield* store.readStream(`PaymentLink-${id}`)).length).toBe(2)
      })
    )

    it.effect("expire leaves a link being paid as it is", () =>
      withMerchant(function* () {
        const id = yield* createLink(close(50_000, { expiration_date: nanosAt(10) }))
        yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        yield* TestClock.setTime(T0 + 20 * 60_000)
        expect((yield* LinkPayments.expire(id))._tag).toBe("PROCESSING")
      })
    )
  })

  describe("invariants", () => {
    type Step =
      | { readonly _tag: "start"; readonly method: "CREDIT_CARD" | "PSE" }
      | { readonly _tag: "complete" | "fail"; readonly which: number }
      | { readonly _tag: "race" }
      | { readonly _tag: "cancel" }
      | { readonly _tag: "advance"; readonly minutes: number }

    const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
      FastCheck.record({
        _tag: FastCheck.constant("start" as const),
        method: FastCheck.constantFrom("CREDIT_CARD" as const, "PSE" as const)
      }),
      FastCheck.record({
        _tag: FastCheck.constantFrom("complete" as const, "fail" as const),
        which: FastCheck.nat(5)
      }),
      FastCheck.record({ _tag: FastCheck.constant("race" as const) }),
      FastCheck.record({ _tag: FastCheck.constant("cancel" as const) }),
      FastCheck.record({
        _tag: FastCheck.constant("advance" as const),
        minutes: FastCheck.integer({ min: 1, max: 20 })
      })
    )

    it.effect.prop(
      "a link is never paid twice, whatever the payers, the outcomes and the clock do",
      [FastCheck.array(step, { maxLength: 25 }), FastCheck.boolean()],
      ([steps, withExpiry]) =>
        withMerchant(function* () {
          const id = yield* createLink(close(50_000, withExpiry ? { expiration_date: nanosAt(30) } : {}))
          const started: Array<TransactionId> = []
          let minutes = 0
          for (const s of steps) {
            if (s._tag === "start") {
              const r = yield* Effect.either(LinkPayments.startPayment(id, { paymentMethod: s.method }))
              if (Either.isRight(r)) started.push(r.right.transactionId)
            } else if (s._tag === "race") {
              const rs = yield* Effect.all(
                [1, 2].map(() => Effect.either(LinkPayments.startPayment(id, { paymentMethod: "PSE" }))),
                { concurrency: "unbounded" }
              )
              expect(rs.filter(Either.isRight).length).toBeLessThanOrEqual(1)
              for (const r of rs) if (Either.isRight(r)) started.push(r.right.transactionId)
            } else if (s._tag === "complete" || s._tag === "fail") {
              const trx = started[s.which % Math.max(1, started.length)] ?? TransactionId.make("TRX_none")
              const run = s._tag === "complete" ? LinkPayments.completePayment : LinkPayments.failPayment
              yield* Effect.either(run(id, trx))
            } else if (s._tag === "cancel") {
              yield* Effect.either(LinkPayments.cancel(id))
            } else if (s._tag === "advance") {
              minutes += s.minutes
              yield* TestClock.setTime(T0 + minutes * 60_000)
            }
          }
          const store = yield* EventStore.EventStore
          const events = yield* store.readStream(`PaymentLink-${id}`)
          expect(events.filter((e) => e.type === "LinkPaid").length).toBeLessThanOrEqual(1)
          // Nothing starts after the link was paid.
          const paidAt = events.findIndex((e) => e.type === "LinkPaid")
          if (paidAt >= 0) expect(events.slice(paidAt + 1)).toEqual([])
        }),
      { timeout: 60_000, fastCheck: { numRuns: 60 } }
    )
  })
})
