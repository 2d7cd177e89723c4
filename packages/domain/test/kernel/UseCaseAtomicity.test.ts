/**
 * Use cases that decide on several aggregates commit them at once, and a request cut short never
 * leaves a resource half done. Each race is made deterministic by an event store that lets another
 * request commit right before the use case's first write (what happens, by chance, when two
 * requests arrive together on real PostgreSQL; `packages/server/test/Races.int.test.ts` does that).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import type { YieldWrap } from "effect/Utils"
import * as Acquirer from "@cobro/domain/Acquirer"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { IntentReference } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentIntent from "@cobro/domain/PaymentIntent"
import { closeLink, linkStatus, payByCard } from "../fixtures/Links.js"
import { attemptInput, details, givenIntent, sandbox as scope } from "../fixtures/Online.js"
import { atT0, freshly, givenMerchant, MER_1, offering, T0 } from "../fixtures/Scenario.js"

const ref = IntentReference.make("order-1")

type Cut = Effect.Effect<
  unknown,
  unknown,
  EventStore.EventStore | IdGenerator.IdGenerator | Acquirer.Acquirer
>

/**
 * Arms `cut` to run once, right before the first write that touches a stream whose id starts with
 * `prefix`: another request that commits between this use case's reads and its write.
 */
class CutIn extends Context.Tag("test/CutIn")<
  CutIn,
  {
    readonly arm: (
      prefix: string,
      cut: Cut
    ) => Effect.Effect<void, never, IdGenerator.IdGenerator | Acquirer.Acquirer>
  }
>() {}

/** Has another request commit `cut` right before this use case's first write to a `prefix` stream. */
const cutIn = (prefix: string, cut: Cut) => Effect.flatMap(CutIn, (armed) => armed.arm(prefix, cut))

/** The in-memory store, wrapped so that a test can cut in before a write. */
const storeWithCutIn = Layer.effectContext(
  Effect.gen(function* () {
    const base = yield* EventStore.EventStore
    const armed = yield* Ref.make(
      Option.none<{ readonly prefix: string; readonly run: Effect.Effect<unknown> }>()
    )
    const before = (streamIds: ReadonlyArray<string>) =>
      Effect.flatMap(Ref.get(armed), (current) =>
        Option.isSome(current) && streamIds.some((id) => id.startsWith(current.value.prefix))
          ? Effect.zipRight(Ref.set(armed, Option.none()), current.value.run)
          : Effect.void
      )
    const wrapped: Context.Tag.Service<EventStore.EventStore> = {
      ...base,
      append: (streamId, events, expected) =>
        Effect.zipRight(before([streamId]), base.append(streamId, events, expected)),
      appendBatch: (items) => Effect.zipRight(before(items.map((i) => i.streamId)), base.appendBatch(items))
    }
    const arm = (prefix: string, cut: Cut) =>
      Effect.flatMap(Effect.context<IdGenerator.IdGenerator | Acquirer.Acquirer>(), (context) =>
        Ref.set(
          armed,
          Option.some({
            prefix,
            run: cut.pipe(
              Effect.provideService(EventStore.EventStore, base),
              Effect.provide(context),
              Effect.orDie
            )
          })
        )
      )
    return Context.make(EventStore.EventStore, wrapped).pipe(Context.add(CutIn, { arm }))
  })
).pipe(Layer.provide(InMemoryEventStore.layer))

/** An acquirer that answers as the sandbox's, except as `override` says. */
const acquirerWith = (
  override: (
    request: Acquirer.AuthorizationRequest
  ) => Option.Option<Effect.Effect<Acquirer.AuthorizationResult>>
) =>
  Layer.effect(
    Acquirer.Acquirer,
    Effect.gen(function* () {
      const sandbox = yield* Acquirer.Acquirer
      return {
        authorize: (request: Acquirer.AuthorizationRequest) =>
          Option.getOrElse(override(request), () => sandbox.authorize(request))
      }
    })
  ).pipe(Layer.provide(Acquirer.layerSandbox))

/** A scenario at T0 on the store with `CutIn`, with MER_1 offering card payments on links. */
const scenario = <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
  body: () => Generator<Eff, A, never>,
  acquirer: Layer.Layer<Acquirer.Acquirer> = Acquirer.layerSandbox
) =>
  freshly(
    Layer.mergeAll(storeWithCutIn, IdGenerator.layerSequential, acquirer),
    atT0(givenMerchant(MER_1, offering("CREDIT_CARD")))
  )(body)

const card = attemptInput("order-1")

const streamLength = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => Effect.map(store.readStream(streamId), (e) => e.length))

const streamsOf = (prefix: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 10_000 }), (events) => [
      ...new Set(events.filter((e) => e.streamId.startsWith(prefix)).map((e) => e.streamId))
    ])
  )

describe("an attempt and its intent commit together (C3, C4)", () => {
  it.effect(
    "an amount update that commits between the attempt's read and its write: the payment carries the amount of the intent it was started on",
    () =>
      scenario(function* () {
        yield* givenIntent(1_000)
        yield* cutIn(
          "Payment-",
          OnlinePayments.updateIntent(scope, { referenceId: ref, details: details(900_000) })
        )
        const attempt = yield* OnlinePayments.attempt(scope, card)
        const intent = yield* OnlinePayments.readIntent(scope, ref)
        const payment = yield* OnlinePayments.readPayment(scope, ref)
        expect(intent._tag).toBe("PAID")
        expect(Payment.status(payment)).toBe("APPROVED")
        expect(payment.payment.amount.total).toBe(intent.details.amount.total)
        expect(attempt.payment.payment.amount.total).toBe(900_000)
      })
  )

  it.effect(
    "an amount update after the attempt started is refused (IntentAmountLocked, 409) and changes nothing",
    () =>
      scenario(function* () {
        yield* givenIntent(555_020) // a 3DS challenge: the attempt stays under way
        yield* OnlinePayments.attempt(scope, card)
        const version = yield* streamLength(`PaymentIntent-${PaymentIntent.streamKey(MER_1, true, ref)}`)
        const refused = yield* Effect.flip(
          OnlinePayments.updateIntent(scope, { referenceId: ref, details: details(900_000) })
        )
        expect(refused._tag).toBe("IntentAmountLocked")
        expect(yield* streamLength(`PaymentIntent-${PaymentIntent.streamKey(MER_1, true, ref)}`)).toBe(
          version
        )
        const payment = yield* OnlinePayments.readPayment(scope, ref)
        expect(payment.payment.amount.total).toBe(555_020)
      })
  )

  it.effect(
    "another attempt that commits between the attempt's read and its write: the later one is refused (409) and leaves no payment behind",
    () =>
      scenario(function* () {
        yield* givenIntent(555_020)
        yield* cutIn("Payment-", OnlinePayments.attempt(scope, card))
        const refused = yield* Effect.flip(OnlinePayments.attempt(scope, card))
        expect(refused._tag).toBe("IntentNotInState")
        // One payment stream: the winner's. The loser recorded nothing.
        expect(yield* streamsOf("Payment-")).toHaveLength(1)
      })
  )

  it.effect(
    "an acquirer that fails releases the intent at once: the payment is REJECTED and the intent ACTIVE",
    () =>
      scenario(
        function* () {
          yield* givenIntent(1_000)
          const failed = yield* Effect.exit(OnlinePayments.attempt(scope, card))
          expect(failed._tag).toBe("Failure")
          const intent = yield* OnlinePayments.readIntent(scope, ref)
          expect(intent._tag).toBe("ACTIVE")
          expect(Payment.status(yield* OnlinePayments.readPayment(scope, ref))).toBe("REJECTED")
        },
        acquirerWith((request) =>
          request.total === 1_000 ? Option.some(Effect.die("acquirer down")) : Option.none()
        )
      )
  )
})

describe("a refund has one owner, and reads never write (C5, C8, C9)", () => {
  const approved = Effect.gen(function* () {
    yield* givenIntent(50_000)
    return (yield* OnlinePayments.attempt(scope, card)).transactionId
  })

  it.effect(
    "a refund request that commits between another's read and its write: the later one is refused (409), one Refund stream",
    () =>
      scenario(function* () {
        const transactionId = yield* approved
        const request = OnlinePayments.requestRefund(scope, { referenceId: ref, transactionId, reason: "" })
        yield* cutIn("Refund-", request)
        const refused = yield* Effect.flip(request)
        expect(refused._tag).toBe("RefundCannotBeRequested")
        expect(yield* streamsOf("Refund-")).toHaveLength(1)
      })
  )

  it.effect("a sandbox review that fell due reads APPROVED and REFUNDED, and the reads write nothing", () =>
    scenario(function* () {
      const transactionId = yield* approved
      yield* OnlinePayments.requestRefund(scope, { referenceId: ref, transactionId, reason: "" })
      yield* TestClock.adjust(OnlinePayments.SANDBOX_REFUND_REVIEW_SECONDS * 1000)
      const before = yield* Effect.flatMap(EventStore.EventStore, (s) => s.readAll({ limit: 10_000 }))
      const refund = yield* OnlinePayments.refundStatus(scope, transactionId)
      const payment = yield* OnlinePayments.readPayment(scope, ref)
      expect(refund._tag).toBe("APPROVED")
      expect(Option.map(refund.dateApplied, DateTime.toEpochMillis)).toEqual(
        Option.some(T0 + OnlinePayments.SANDBOX_REFUND_REVIEW_SECONDS * 1000)
      )
      expect(Payment.status(payment)).toBe("REFUNDED")
      const after = yield* Effect.flatMap(EventStore.EventStore, (s) => s.readAll({ limit: 10_000 }))
      expect(after.length).toBe(before.length)
      // The next command on the payment records the review with its own decision (here a refusal:
      // nothing at all is written).
      const again = yield* Effect.flip(
        OnlinePayments.requestRefund(scope, { referenceId: ref, transactionId, reason: "" })
      )
      expect(again).toMatchObject({ _tag: "RefundCannotBeRequested", reason: "AlreadyRefunded" })
    })
  )
})

describe("a checkout page payment cut short never leaves the link PROCESSING (B)", () => {
  it.effect("an acquirer that fails releases the link at once: ACTIVE and payable again", () =>
    scenario(
      function* () {
        const id = yield* closeLink(7_000)
        const failed = yield* Effect.exit(payByCard(id))
        expect(failed._tag).toBe("Failure")
        expect(yield* linkStatus(id)).toBe("ACTIVE")
      },
      acquirerWith((request) =>
        request.total === 7_000 ? Option.some(Effect.die("acquirer down")) : Option.none()
      )
    )
  )

  it.effect(
    "a payer who leaves while the acquirer answers does not interrupt the payment: the link is PAID, not PROCESSING",
    () =>
      Effect.gen(function* () {
        const authorizing = yield* Deferred.make<void>()
        const answer = yield* Deferred.make<void>()
        const slow = acquirerWith((request) =>
          request.total === 8_000
            ? Option.some(
                Effect.zipRight(
                  Effect.zipRight(Deferred.succeed(authorizing, undefined), Deferred.await(answer)),
                  Effect.succeed<Acquirer.AuthorizationResult>({
                    _tag: "Approved",
                    approvalNumber: "000001",
                    threeDs: false
                  })
                )
              )
            : Option.none()
        )
        yield* scenario(function* () {
          const id = yield* closeLink(8_000)
          const paying = yield* Effect.fork(payByCard(id))
          yield* Deferred.await(authorizing)
          // The request is interrupted (the client hung up) while the acquirer works.
          const interrupting = yield* Effect.fork(Fiber.interrupt(paying))
          yield* Deferred.succeed(answer, undefined)
          yield* Fiber.join(interrupting)
          expect(yield* linkStatus(id)).toBe("PAID")
        }, slow)
      })
  )
})
