/**
 * The checkout page's payment flows over the in-memory store and the sandbox acquirer: a card
 * authorized at once, a 3DS challenge, the bank and wallet flows, the payer's decision, and two tabs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as Acquirer from "@cobro/domain/Acquirer"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Merchant from "@cobro/domain/Merchant"
import { Credential } from "@cobro/domain/MerchantDirectory"
import { amount } from "@cobro/domain/Money"
import { IdentityKeyHash } from "@cobro/domain/SigningKey"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const MER_1 = MerchantId.make("MER_1")
const CARD = "4111111111111111"

const credential = (mode: "test" | "production" = "test") =>
  new Credential({
    merchantId: MER_1,
    integration: "payment_button",
    mode,
    identityKeyHash: IdentityKeyHash.make((mode === "test" ? "a" : "b").repeat(64))
  })

const handleMerchant = CommandHandler.make(Merchant.Merchant)

const givenMerchant = Effect.gen(function* () {
  const now = DateTime.unsafeMake(T0)
  yield* handleMerchant(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Café Andino", now }))
  for (const method of ["CREDIT_CARD", "PSE", "BOTON_BANK", "WALLET_A"] as const) {
    yield* handleMerchant(
      MER_1,
      new Merchant.SetLinkMethod({ method, min: amount(1_000), max: amount(5_000_000), now })
    )
  }
}).pipe(Effect.orDie)

const request = (body: Record<string, unknown>) => Schema.decodeUnknownSync(LinkApi.CreateLinkRequest)(body)
const closeLink = (total: number, mode: "test" | "production" = "test") =>
  LinkPayments.create(
    credential(mode),
    request({ amount_type: "CLOSE", amount: { total_amount: total } })
  ).pipe(Effect.map((r) => r.linkId))

const tagOf = <A, E extends { readonly _tag: string }>(result: Either.Either<A, E>) =>
  Either.match(result, { onLeft: (e) => e._tag, onRight: () => "accepted" })

const statusOf = (id: string) => Effect.map(LinkPayments.read(credential(), id), (r) => r.status)

const ports = Layer.mergeAll(InMemoryEventStore.layer, IdGenerator.layerSequential, Acquirer.layerSandbox)

const scenario = <A, E>(
  body: Effect.Effect<A, E, EventStore.EventStore | IdGenerator.IdGenerator | Acquirer.Acquirer>
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0)
    yield* givenMerchant
    return yield* body
  }).pipe(Effect.provide(ports))

describe("paying a link on the checkout page", () => {
  it.effect("an approving card pays the link at once: PAID, outcome Approved", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(50_000)
        const paid = yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        expect(paid.outcome._tag).toBe("Approved")
        expect(yield* statusOf(id)).toBe("PAID")
        const view = yield* LinkPayments.transaction(id, paid.transactionId)
        expect([view.outcome._tag, view.paymentMethod, view.amount]).toEqual([
          "Approved",
          "CREDIT_CARD",
          50_000
        ])
      })
    )
  )

  it.effect("a card the sandbox declines (555042) leaves the link ACTIVE, and it can be paid again", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(555_042)
        const declined = yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        expect(declined.outcome._tag).toBe("Declined")
        expect(yield* statusOf(id)).toBe("ACTIVE")
        expect((yield* LinkPayments.transaction(id, declined.transactionId)).outcome._tag).toBe("Declined")
        const again = yield* LinkPayments.pay(id, { paymentMethod: "PSE" })
        expect(again.transactionId).not.toBe(declined.transactionId)
        expect(yield* statusOf(id)).toBe("PROCESSING")
      })
    )
  )

  it.effect("sandbox 555020 waits for the payer's 3DS challenge; approve makes it PAID, once", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(555_020)
        const started = yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        expect(started.outcome).toEqual({ _tag: "Pending", step: Option.some("ThreeDsChallenge") })
        expect(yield* statusOf(id)).toBe("PROCESSING")
        yield* LinkPayments.decide(id, started.transactionId, "approve")
        expect(yield* statusOf(id)).toBe("PAID")
        // A reloaded approval changes nothing; a decline after it is refused.
        yield* LinkPayments.decide(id, started.transactionId, "approve")
        const late = yield* Effect.either(LinkPayments.decide(id, started.transactionId, "decline"))
        expect(tagOf(late)).toBe("PaymentNotAwaitingPayer")
        expect(yield* statusOf(id)).toBe("PAID")
      })
    )
  )

  it.effect("a declined 3DS challenge returns the link to ACTIVE", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(555_020)
        const started = yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        yield* LinkPayments.decide(id, started.transactionId, "decline")
        expect(yield* statusOf(id)).toBe("ACTIVE")
        expect((yield* LinkPayments.transaction(id, started.transactionId)).outcome._tag).toBe("Declined")
      })
    )
  )

  it.effect("the sandbox amounts have no effect on a production link: 555020 is approved at once", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(555_020, "production")
        const paid = yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        expect(paid.outcome._tag).toBe("Approved")
      })
    )
  )

  it.effect("PSE and the bank button wait at the bank, WALLET_A at the wallet", () =>
    scenario(
      Effect.gen(function* () {
        const steps: Array<unknown> = []
        for (const method of ["PSE", "BOTON_BANK", "WALLET_A"]) {
          const id = yield* closeLink(80_000)
          const started = yield* LinkPayments.pay(id, { paymentMethod: method })
          steps.push(started.outcome)
          expect(yield* statusOf(id)).toBe("PROCESSING")
        }
        expect(steps).toEqual([
          { _tag: "Pending", step: Option.some("BankRedirect") },
          { _tag: "Pending", step: Option.some("BankRedirect") },
          { _tag: "Pending", step: Option.some("Wallet") }
        ])
      })
    )
  )

  it.effect("a card method without a card number is refused and records nothing", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(50_000)
        const result = yield* Effect.either(LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD" }))
        expect(tagOf(result)).toBe("CardNumberRequired")
        expect(yield* statusOf(id)).toBe("ACTIVE")
      })
    )
  )

  it.effect("the card number is sent to the acquirer only: no event of the link carries it", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(50_000)
        yield* LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD })
        const store = yield* EventStore.EventStore
        const all = yield* store.readAll()
        expect(all.length).toBeGreaterThan(0)
        expect(JSON.stringify(all.map((e) => e.data))).not.toContain(CARD)
      })
    )
  )

  it.effect("a card payment being authorized takes no decision from the payer", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(50_000)
        const { transactionId } = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
        const refused = yield* Effect.either(LinkPayments.decide(id, transactionId, "approve"))
        expect(tagOf(refused)).toBe("PaymentNotAwaitingPayer")
        expect(yield* statusOf(id)).toBe("PROCESSING")
      })
    )
  )

  it.effect("a transaction that is not the link's is UnknownLinkTransaction", () =>
    scenario(
      Effect.gen(function* () {
        const id = yield* closeLink(50_000)
        const unknown = yield* Effect.either(LinkPayments.transaction(id, "TRX_nope"))
        expect(tagOf(unknown)).toBe("UnknownLinkTransaction")
        const decided = yield* Effect.either(LinkPayments.decide(id, "TRX_nope", "approve"))
        expect(tagOf(decided)).toBe("UnknownLinkTransaction")
      })
    )
  )

  it.effect.prop(
    "a link paid from several tabs at once with approving cards is paid exactly once",
    [FastCheck.integer({ min: 2, max: 6 })],
    ([tabs]) =>
      scenario(
        Effect.gen(function* () {
          const id = yield* closeLink(50_000)
          const results = yield* Effect.all(
            Array.from({ length: tabs }, () =>
              Effect.either(LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD", cardNumber: CARD }))
            ),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Either.isRight)).toHaveLength(1)
          expect(results.filter(Either.isLeft).map(tagOf)).toEqual(
            Array.from({ length: tabs - 1 }, () => "LinkNotInState")
          )
          const store = yield* EventStore.EventStore
          const paid = (yield* store.readAll()).filter((e) => e.type === "LinkPaid")
          expect(paid).toHaveLength(1)
        })
      ),
    { timeout: 60_000, fastCheck: { numRuns: 20 } }
  )
})
