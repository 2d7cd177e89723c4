/**
 * The checkout page's payment flows over the in-memory store and the sandbox acquirer: a card
 * authorized at once, a 3DS challenge, the bank and wallet flows, the payer's decision, and two tabs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as EventStore from "@cobro/domain/EventStore"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import {
  cardPaymentOn,
  closeLink,
  credential,
  expectPaysAgain,
  linkStatus,
  payByCard
} from "../fixtures/Links.js"
import { atT0, CARD, freshly, givenMerchant, MER_1, offering, ports, tagOf } from "../fixtures/Scenario.js"

const scenario = freshly(
  ports,
  atT0(givenMerchant(MER_1, offering("CREDIT_CARD", "PSE", "BOTON_BANK", "WALLET_A")))
)

describe("paying a link on the checkout page", () => {
  it.effect("an approving card pays the link at once: PAID, outcome Approved", () =>
    scenario(function* () {
      const { id, payment: paid } = yield* cardPaymentOn(50_000)
      expect(paid.outcome._tag).toBe("Approved")
      expect(yield* linkStatus(id)).toBe("PAID")
      const view = yield* LinkPayments.transaction(id, paid.transactionId)
      expect([view.outcome._tag, view.paymentMethod, view.amount]).toEqual([
        "Approved",
        "CREDIT_CARD",
        50_000
      ])
    })
  )

  it.effect("a card the sandbox declines (555042) leaves the link ACTIVE, and it can be paid again", () =>
    scenario(function* () {
      const { id, payment: declined } = yield* cardPaymentOn(555_042)
      expect(declined.outcome._tag).toBe("Declined")
      expect(yield* linkStatus(id)).toBe("ACTIVE")
      expect((yield* LinkPayments.transaction(id, declined.transactionId)).outcome._tag).toBe("Declined")
      yield* expectPaysAgain(id, declined.transactionId)
    })
  )

  it.effect("sandbox 555020 waits for the payer's 3DS challenge; approve makes it PAID, once", () =>
    scenario(function* () {
      const { id, payment: started } = yield* cardPaymentOn(555_020)
      expect(started.outcome).toEqual({ _tag: "Pending", step: Option.some("ThreeDsChallenge") })
      expect(yield* linkStatus(id)).toBe("PROCESSING")
      yield* LinkPayments.decide(id, started.transactionId, "approve")
      expect(yield* linkStatus(id)).toBe("PAID")
      // A reloaded approval changes nothing; a decline after it is refused.
      yield* LinkPayments.decide(id, started.transactionId, "approve")
      const late = yield* Effect.either(LinkPayments.decide(id, started.transactionId, "decline"))
      expect(tagOf(late)).toBe("PaymentNotAwaitingPayer")
      expect(yield* linkStatus(id)).toBe("PAID")
    })
  )

  it.effect("a declined 3DS challenge returns the link to ACTIVE", () =>
    scenario(function* () {
      const { id, payment: started } = yield* cardPaymentOn(555_020)
      yield* LinkPayments.decide(id, started.transactionId, "decline")
      expect(yield* linkStatus(id)).toBe("ACTIVE")
      expect((yield* LinkPayments.transaction(id, started.transactionId)).outcome._tag).toBe("Declined")
    })
  )

  it.effect("the sandbox amounts have no effect on a production link: 555020 is approved at once", () =>
    scenario(function* () {
      const { payment: paid } = yield* cardPaymentOn(555_020, credential(MER_1, "production"))
      expect(paid.outcome._tag).toBe("Approved")
    })
  )

  it.effect("PSE and the bank button wait at the bank, WALLET_A at the wallet", () =>
    scenario(function* () {
      const steps: Array<unknown> = []
      for (const method of ["PSE", "BOTON_BANK", "WALLET_A"]) {
        const id = yield* closeLink(80_000)
        const started = yield* LinkPayments.pay(id, { paymentMethod: method })
        steps.push(started.outcome)
        expect(yield* linkStatus(id)).toBe("PROCESSING")
      }
      expect(steps).toEqual([
        { _tag: "Pending", step: Option.some("BankRedirect") },
        { _tag: "Pending", step: Option.some("BankRedirect") },
        { _tag: "Pending", step: Option.some("Wallet") }
      ])
    })
  )

  it.effect("a card method without a card number is refused and records nothing", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      const result = yield* Effect.either(LinkPayments.pay(id, { paymentMethod: "CREDIT_CARD" }))
      expect(tagOf(result)).toBe("CardNumberRequired")
      expect(yield* linkStatus(id)).toBe("ACTIVE")
    })
  )

  it.effect("the card number is sent to the acquirer only: no event of the link carries it", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      yield* payByCard(id)
      const store = yield* EventStore.EventStore
      const all = yield* store.readAll()
      expect(all.length).toBeGreaterThan(0)
      expect(JSON.stringify(all.map((e) => e.data))).not.toContain(CARD)
    })
  )

  it.effect("a card payment being authorized takes no decision from the payer", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      const { transactionId } = yield* LinkPayments.startPayment(id, { paymentMethod: "CREDIT_CARD" })
      const refused = yield* Effect.either(LinkPayments.decide(id, transactionId, "approve"))
      expect(tagOf(refused)).toBe("PaymentNotAwaitingPayer")
      expect(yield* linkStatus(id)).toBe("PROCESSING")
    })
  )

  it.effect("a transaction that is not the link's is UnknownLinkTransaction", () =>
    scenario(function* () {
      const id = yield* closeLink(50_000)
      const unknown = yield* Effect.either(LinkPayments.transaction(id, "TRX_nope"))
      expect(tagOf(unknown)).toBe("UnknownLinkTransaction")
      const decided = yield* Effect.either(LinkPayments.decide(id, "TRX_nope", "approve"))
      expect(tagOf(decided)).toBe("UnknownLinkTransaction")
    })
  )

  it.effect.prop(
    "a link paid from several tabs at once with approving cards is paid exactly once",
    [FastCheck.integer({ min: 2, max: 6 })],
    ([tabs]) =>
      scenario(function* () {
        const id = yield* closeLink(50_000)
        const results = yield* Effect.all(
          Array.from({ length: tabs }, () => Effect.either(payByCard(id))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(results.filter(Either.isLeft).map(tagOf)).toEqual(
          Array.from({ length: tabs - 1 }, () => "LinkNotInState")
        )
        const store = yield* EventStore.EventStore
        const paid = (yield* store.readAll()).filter((e) => e.type === "LinkPaid")
        expect(paid).toHaveLength(1)
      }),
    { timeout: 60_000, fastCheck: { numRuns: 20 } }
  )
})
