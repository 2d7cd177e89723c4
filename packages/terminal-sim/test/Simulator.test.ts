import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type { YieldWrap } from "effect/Utils"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId, TerminalSerial } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as KnownStates from "@cobro/domain/KnownStates"
import { Amount } from "@cobro/domain/Money"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notification from "@cobro/domain/Notification"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalGateway from "@cobro/domain/TerminalGateway"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as CardData from "@cobro/terminal-sim/CardData"
import * as SimTerminal from "@cobro/terminal-sim/SimTerminal"
import * as Simulator from "@cobro/terminal-sim/Simulator"

const MER_1 = MerchantId.make("MER_1")
const MER_2 = MerchantId.make("MER_2")
const SN = TerminalSerial.make("SN0012345")
const ref: TerminalSandbox.TerminalRef = { merchantId: MER_1, terminalSerial: SN }
const caller: TerminalPayments.Caller = { merchantId: MER_1, sandbox: true }
const T0 = DateTime.unsafeMake("2026-11-21T15:00:00Z")

const Store = Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)
const TestLayer = Simulator.layer.pipe(Layer.provideMerge(Store))

const merchant = CommandHandler.make(Merchant.Merchant)

/** MER_1 with the SMART_PRO terminal SN0012345 bound and selected for the API, as of the clock's now. */
const givenTerminal = Effect.gen(function* () {
  const now = yield* DateTime.now
  yield* merchant(MER_1, new Merchant.CreateMerchant({ merchantId: MER_1, name: "Shop", now }))
  yield* merchant(MER_1, new Merchant.BindTerminal({ serial: SN, model: "SMART_PRO", name: "Caja 1", now }))
  yield* merchant(MER_1, new Merchant.EnableTerminalForApi({ serial: SN, now }))
})

/** {@link givenTerminal} with the test clock at T0. */
const given = Effect.zipRight(TestClock.setTime(DateTime.toEpochMillis(T0)), givenTerminal)

/**
 * Makes the runner of test bodies: each body runs after `before` on its own build of `layer`, so
 * every test starts from an empty store.
 */
const scenario =
  <ROut, LE, RB = never>(layer: Layer.Layer<ROut, LE>, before: Effect.Effect<unknown, unknown, RB>) =>
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(body: () => Generator<Eff, A, never>) =>
    Effect.zipRight(before, Effect.gen(body)).pipe(Effect.provide(layer))

/** A test body on `layer`, after {@link given}. */
const simulatedOn = <ROut, LE>(layer: Layer.Layer<ROut, LE>) => scenario(layer, given)

/** A test body on the simulator over the in-memory store, after {@link given}. */
const simulated = simulatedOn(TestLayer)

const body = (reference = "order-42") => ({
  amount: { currency: "COP", total_amount: 11900, taxes: [{ type: "IVA_19" }], tip_amount: 0 },
  user_email: "seller@shop.co",
  payment_method: "POS",
  terminal_model: "SMART_PRO",
  terminal_serial: "SN0012345",
  reference,
  payer: { email: "payer@mail.co" }
})

/** A checkout's events when the terminal approves it at once (and on an untouched terminal). */
const APPROVED_AT_ONCE = ["CheckoutCreated", "PushAttempted", "CheckoutSent", "SaleApproved"]

const checkout = (reference?: string) => TerminalPayments.checkout(caller, body(reference))
const sandbox = TerminalSandbox.TerminalSandbox
const act = (action: TerminalSandbox.Action) => Effect.flatMap(sandbox, (s) => s.perform(ref, action))
/** What the sandbox shows of the terminal now. */
const terminalState = Effect.flatMap(sandbox, (s) => s.state(ref))
const behave = (behavior: TerminalSandbox.Behavior, chargeNotifications?: boolean) =>
  Effect.flatMap(sandbox, (s) => s.setBehavior(ref, behavior, { chargeNotifications }))
const status = (integrationId: string) =>
  Effect.map(TerminalPayments.load(integrationId as never), (s) => s._tag)
const events = (integrationId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`TerminalCheckout-${integrationId}`), (all) =>
      all.map((e) => Schema.decodeUnknownSync(TerminalCheckout.Event)(e.data))
    )
  )
const tags = (integrationId: string) => Effect.map(events(integrationId), (all) => all.map((e) => e._tag))

/** The in-memory store with the operations `wrap` gives in place of its own (which it may call). */
const wrapped = (
  wrap: (inner: EventStore.EventStore["Type"]) => Partial<EventStore.EventStore["Type"]>
): Layer.Layer<EventStore.EventStore> =>
  Layer.effect(
    EventStore.EventStore,
    Effect.map(InMemoryEventStore.make, (inner) => ({ ...inner, ...wrap(inner) }))
  )

const refusedReason = (result: Either.Either<unknown, { readonly _tag: string }>) =>
  Either.match(result, { onRight: () => "done", onLeft: (e) => e._tag })

describe("terminal-sim", () => {
  describe("behaviours", () => {
    it.effect(
      "auto_approve (the default) approves at once, with the card data the webhook's data needs",
      () =>
        simulated(function* () {
          const created = yield* checkout()
          expect(created.status).toBe("APPROVED")
          const all = yield* events(created.integrationId)
          expect(all.map((e) => e._tag)).toEqual(APPROVED_AT_ONCE)
          const approved = all[3] as TerminalCheckout.SaleApproved
          const card = Option.getOrThrow(approved.sale.card)
          expect(approved.sale.paymentMethod).toBe("CARD")
          expect(Schema.is(Notification.MaskedPan)(card.maskedPan)).toBe(true)
          const product = CardData.PRODUCTS.find((p) => card.maskedPan.startsWith(p.bin))
          expect(product?.brand).toBe(card.brand)
          expect(card.maskedPan).toHaveLength(product!.length)
          expect(card.terminalId).toBe("SN0012345")
          expect(Option.getOrThrow(approved.sale.approvalNumber)).toMatch(/^[0-9]{6}$/)
          expect(approved.sale.payerEmail).toEqual(Option.some("payer@mail.co"))
          expect(approved.transactionId).toBe(created.transactionId)
          const createdEvent = all[0] as TerminalCheckout.CheckoutCreated
          expect(createdEvent.reference).toBe("order-42")
          expect((yield* act("lock")).last_outcome?.outcome).toBe("approved")
        })
    )

    it.effect("auto_reject rejects at once, with the card read and a reason", () =>
      simulated(function* () {
        yield* behave("auto_reject")
        const created = yield* checkout()
        expect(created.status).toBe("REJECTED")
        const rejected = (yield* events(created.integrationId))[3] as TerminalCheckout.SaleRejected
        expect(rejected._tag).toBe("SaleRejected")
        expect(Option.isSome(rejected.card)).toBe(true)
      })
    )

    it.effect("manual waits for an approve or reject action; with nothing waiting they are refused", () =>
      simulated(function* () {
        yield* behave("manual")
        expect(refusedReason(yield* Effect.either(act("approve")))).toBe("ActionRefused")
        const a = yield* checkout("a")
        const b = yield* checkout("b")
        expect(a.status).toBe("SENT")
        const state = yield* act("approve")
        expect(state.pending_requests.map((p) => p.reference)).toEqual(["b"])
        yield* act("reject")
        expect(yield* status(a.integrationId)).toBe("APPROVED")
        expect(yield* status(b.integrationId)).toBe("REJECTED")
      })
    )

    it.effect("switching from manual to an auto behaviour decides the charges that wait", () =>
      simulated(function* () {
        yield* behave("manual")
        const a = yield* checkout()
        const state = yield* behave("auto_approve")
        expect(state.pending_requests).toEqual([])
        expect(yield* status(a.integrationId)).toBe("APPROVED")
      })
    )
  })

  describe("rules", () => {
    it.effect(
      "R1: a terminal locked for more than 2 minutes holds the payment and processes it on unlock",
      () =>
        simulated(function* () {
          yield* act("lock")
          yield* TestClock.adjust("121 seconds")
          const created = yield* checkout()
          expect(created.status).toBe("HELD")
          const held = yield* terminalState
          expect(held.pending_requests.map((p) => p.stage)).toEqual(["held"])
          expect(refusedReason(yield* Effect.either(act("approve")))).toBe("ActionRefused")
          const after = yield* act("unlock")
          expect(after.pending_requests).toEqual([])
          expect(yield* tags(created.integrationId)).toEqual([
            "CheckoutCreated",
            "PushAttempted",
            "CheckoutHeld",
            "CheckoutReleased",
            "SaleApproved"
          ])
        })
    )

    it.effect("R1: locked for exactly 2 minutes the payment is not held", () =>
      simulated(function* () {
        yield* act("lock")
        yield* TestClock.adjust("120 seconds")
        expect((yield* checkout()).status).toBe("APPROVED")
      })
    )

    it.effect("R1: locking again does not restart the lock time", () =>
      simulated(function* () {
        yield* act("lock")
        yield* TestClock.adjust("100 seconds")
        yield* act("lock")
        yield* TestClock.adjust("30 seconds")
        expect((yield* checkout()).status).toBe("HELD")
      })
    )

    it.effect(
      "R1 in manual mode: the held charge reaches the payment screen on unlock and waits for approve",
      () =>
        simulated(function* () {
          yield* behave("manual", false)
          yield* act("lock")
          yield* TestClock.adjust("3 minutes")
          const created = yield* checkout()
          const unlocked = yield* act("unlock")
          expect(unlocked.pending_requests.map((p) => p.stage)).toEqual(["charging"])
          expect(yield* status(created.integrationId)).toBe("SENT")
          yield* act("approve")
          expect(yield* status(created.integrationId)).toBe("APPROVED")
        })
    )

    it.effect("R2: notifications stay on the terminal until opened, even after the payment", () =>
      simulated(function* () {
        const created = yield* checkout()
        yield* act("lock")
        const state = yield* act("unlock")
        expect(state.notifications.map((n) => n.integration_id)).toEqual([created.integrationId])
        expect((yield* act("open_notification")).notifications).toEqual([])
        expect(refusedReason(yield* Effect.either(act("open_notification")))).toBe("ActionRefused")
      })
    )

    it.effect("R3: a charge on the terminal cannot be cancelled remotely; it survives a power cycle", () =>
      simulated(function* () {
        yield* behave("manual")
        const created = yield* checkout()
        yield* act("power_off")
        const state = yield* act("power_on")
        expect(state.pending_requests.map((p) => p.integration_id)).toEqual([created.integrationId])
        const handle = CommandHandler.make(TerminalCheckout.TerminalCheckout)
        const cancel = yield* Effect.either(
          handle(created.integrationId, new TerminalCheckout.CancelCheckout({ now: T0 }))
        )
        expect(refusedReason(cancel)).toBe("CheckoutAlreadySent")
      })
    )

    it.effect(
      "R4: after a successful payment the confirmation screen stays; a new request still proceeds",
      () =>
        simulated(function* () {
          yield* behave("manual", false)
          yield* checkout("a")
          expect((yield* act("approve")).on_confirmation_screen).toBe(true)
          expect((yield* act("lock")).on_confirmation_screen).toBe(true)
          yield* act("unlock")
          const b = yield* checkout("b")
          expect(b.status).toBe("SENT")
          const state = yield* terminalState
          expect(state.on_confirmation_screen).toBe(false)
          expect(state.pending_requests.map((p) => p.stage)).toEqual(["charging"])
        })
    )

    it.effect(
      "R5: a powered-off terminal is unreachable; the checkout waits and goes through on power-on",
      () =>
        simulated(function* () {
          const off = yield* act("power_off")
          expect(off).toMatchObject({ power: "off", app_state: "closed", reachable: false })
          const created = yield* checkout()
          expect(created.status).toBe("UNREACHABLE")
          expect(refusedReason(yield* Effect.either(act("lock")))).toBe("ActionRefused")
          const on = yield* act("power_on")
          expect(on.missed_requests).toEqual([])
          expect(yield* status(created.integrationId)).toBe("APPROVED")
        })
    )

    it.effect(
      "R5: an expired session is unreachable; locking and unlocking renews it and the checkout goes through",
      () =>
        simulated(function* () {
          yield* act("expire_session")
          const created = yield* checkout()
          expect(created.status).toBe("UNREACHABLE")
          yield* act("lock")
          expect(yield* status(created.integrationId)).toBe("UNREACHABLE")
          const state = yield* act("unlock")
          expect(state.session).toBe("active")
          expect(yield* status(created.integrationId)).toBe("APPROVED")
        })
    )

    it.effect("R6: with charge notifications off a payment starts with no manual interaction", () =>
      simulated(function* () {
        yield* behave("manual", false)
        yield* checkout()
        const state = yield* terminalState
        expect(state.notifications).toEqual([])
        expect(state.pending_requests.map((p) => p.stage)).toEqual(["charging"])
      })
    )

    it.effect(
      "R6: with charge notifications on (the default) the charge waits as a notification until opened",
      () =>
        simulated(function* () {
          const manual = yield* behave("manual")
          expect(manual.charge_notifications).toBe(true)
          yield* checkout()
          expect((yield* terminalState).pending_requests[0]!.stage).toBe("notified")
          const opened = yield* act("open_notification")
          expect(opened.pending_requests[0]!.stage).toBe("charging")
        })
    )

    it.effect("R7: the API-only mode is not available", () =>
      simulated(function* () {
        expect((yield* terminalState).api_only_mode).toBe(false)
      })
    )
  })

  describe("one commit for the terminal's answer", () => {
    /**
     * The in-memory store, noting each write (its streams) and each read of a stream, and failing (as
     * a lost connection) the writes whose event types `fail` picks.
     */
    const recording = (fail: (types: ReadonlyArray<string>) => boolean = () => false) => {
      const writes: Array<ReadonlyArray<string>> = []
      const reads: Array<string> = []
      const store = wrapped((inner) => ({
        append: (streamId, events, expected) => {
          writes.push([streamId])
          return fail([streamId])
            ? Effect.dieMessage("connection lost")
            : inner.append(streamId, events, expected)
        },
        appendBatch: (items) => {
          const streams = items.map((item) => item.streamId)
          writes.push(streams)
          return fail(items.flatMap((item) => item.events.map((e) => e.type)))
            ? Effect.dieMessage("connection lost")
            : inner.appendBatch(items)
        },
        readStream: (streamId, options) => {
          reads.push(streamId)
          return inner.readStream(streamId, options)
        }
      }))
      const layer = Simulator.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(store, IdGenerator.layerSequential)),
        Layer.provideMerge(Layer.succeed(KnownStates.KnownStates, KnownStates.unbounded()))
      )
      return { writes, reads, layer }
    }

    it.effect(
      "an auto_approve sale is two writes: the checkout with its claim, then the terminal's answer on the terminal and the checkout in one commit; the checkout is never read back",
      () => {
        const { layer, reads, writes } = recording()
        return simulatedOn(layer)(function* () {
          writes.length = 0
          reads.length = 0
          const created = yield* checkout()
          expect(created.status).toBe("APPROVED")
          const stream = `TerminalCheckout-${created.integrationId}`
          expect(writes).toEqual([[stream], [`SimTerminal-${MER_1}/${SN}`, stream]])
          expect(reads.filter((id) => id === stream)).toEqual([])
          expect(yield* tags(created.integrationId)).toEqual(APPROVED_AT_ONCE)
        })
      }
    )

    it.effect(
      "when the commit of the terminal's answer is lost, neither the terminal nor the checkout records any of it",
      () => {
        // The write that records the terminal's outcome is lost.
        const { layer } = recording((types) => types.includes("OutcomeRecorded"))
        return simulatedOn(layer)(function* () {
          // A3 still answers: the checkout and its claim are committed, the pusher pushes it again.
          expect((yield* checkout()).status).toBe("SENDING")
          const store = yield* EventStore.EventStore
          const [created] = (yield* store.readAll()).filter((e) => e.type === "CheckoutCreated")
          expect(created).toBeDefined()
          expect((yield* store.readStream(created!.streamId)).map((e) => e.type)).toEqual([
            "CheckoutCreated",
            "PushAttempted"
          ])
          expect(yield* store.readStream(`SimTerminal-${MER_1}/${SN}`)).toEqual([])
        })
      }
    )
  })

  describe("a push again", () => {
    it.effect(
      "a push again of a checkout the terminal already answered (two pushers crossed) takes nothing on the terminal",
      () =>
        simulated(function* () {
          const created = yield* checkout()
          expect(created.status).toBe("APPROVED")
          const state = yield* TerminalPayments.load(created.integrationId)
          if (state._tag === "Initial") return expect.fail("the checkout exists")
          const gateway = yield* TerminalGateway.TerminalGateway
          const again = yield* gateway.push(
            new TerminalGateway.ChargeInstruction({
              integrationId: created.integrationId,
              transactionId: created.transactionId,
              merchantId: MER_1,
              terminalSerial: SN,
              terminalModel: "SMART_PRO",
              paymentMethod: "POS",
              currency: "COP",
              total: state.checkout.amount.total,
              reference: state.checkout.reference,
              sandbox: true
            })
          )
          expect(again.recorded).toBe(true)
          const store = yield* EventStore.EventStore
          const terminal = yield* store.readStream(`SimTerminal-${MER_1}/${SN}`)
          expect(terminal.map((e) => e.type)).toEqual(["RequestReceived", "OutcomeRecorded"])
          expect(yield* tags(created.integrationId)).toEqual(APPROVED_AT_ONCE)
        })
    )
  })

  describe("contention", () => {
    /**
     * The in-memory store, refusing the first `conflicts` appends to simulated terminals' streams
     * (`contention.left`, which a test may set to end the contention).
     */
    const contended = (conflicts: number, contention = { left: conflicts }) => {
      const store = wrapped((inner) => ({
        append: (streamId, events, expected) =>
          streamId.startsWith("SimTerminal-") && contention.left-- > 0
            ? Effect.fail(new EventStore.ConcurrencyConflict({ streamId, expected: "test", actual: 0 }))
            : inner.append(streamId, events, expected),
        // A push commits the terminal's decisions with the checkout's in one batch.
        appendBatch: (items) => {
          const terminal = items.find((item) => item.streamId.startsWith("SimTerminal-"))
          return terminal !== undefined && contention.left-- > 0
            ? Effect.fail(
                new EventStore.ConcurrencyConflict({
                  streamId: terminal.streamId,
                  expected: "test",
                  actual: 0
                })
              )
            : inner.appendBatch(items)
        }
      }))
      return Simulator.layer.pipe(Layer.provideMerge(Layer.merge(store, IdGenerator.layerSequential)))
    }

    /** A test body on `layer` with the live clock, after {@link givenTerminal}. */
    const liveOn = <ROut, LE>(layer: Layer.Layer<ROut, LE>) => scenario(layer, givenTerminal)

    it.live(
      "a push that keeps conflicting with other requests on the terminal's stream backs off and is delivered, not a defect",
      () =>
        liveOn(contended(CommandHandler.MAX_RETRIES + 4))(function* () {
          const created = yield* checkout()
          expect(yield* status(created.integrationId)).toBe("APPROVED")
        })
    )

    it.live(
      "a terminal whose stream keeps conflicting is busy, never unreachable: the checkout stays SENDING and the pusher pushes it once its claim lapses",
      () => {
        const contention = { left: 1_000 }
        return liveOn(contended(1_000, contention))(function* () {
          const created = yield* checkout()
          expect(created.status).toBe("SENDING")
          expect(yield* tags(created.integrationId)).toEqual(["CheckoutCreated", "PushAttempted"])
          // While the claim is live, it is its pusher's: the pusher claims nothing.
          expect(yield* TerminalPayments.pushAgain(created.integrationId)).toEqual(Option.none())
          contention.left = 0
          const [claim] = (yield* events(created.integrationId)).filter((e) => e._tag === "PushAttempted")
          const lapsesAt = DateTime.toEpochMillis((claim as TerminalCheckout.PushAttempted).at)
          const nowMillis = yield* Clock.currentTimeMillis
          yield* Effect.sleep(Math.max(0, lapsesAt + TerminalCheckout.PUSH_TIMEOUT_MS - nowMillis))
          expect(yield* TerminalPayments.pushAgain(created.integrationId)).toEqual(Option.some("APPROVED"))
          expect(yield* tags(created.integrationId)).toEqual([
            "CheckoutCreated",
            "PushAttempted",
            "PushAttempted",
            "CheckoutSent",
            "SaleApproved"
          ])
        })
      },
      { timeout: 30_000 }
    )
  })

  describe("isolation and storage", () => {
    it.effect("another merchant's terminal is unknown to the sandbox", () =>
      simulated(function* () {
        yield* merchant(MER_2, new Merchant.CreateMerchant({ merchantId: MER_2, name: "Other", now: T0 }))
        const other = yield* Effect.either(
          Effect.flatMap(sandbox, (s) => s.perform({ merchantId: MER_2, terminalSerial: SN }, "lock"))
        )
        expect(refusedReason(other)).toBe("UnknownTerminal")
      })
    )

    const production: TerminalPayments.Caller = { merchantId: MER_1, sandbox: false }

    it.effect(
      "sandbox controls reach the sandbox terminal only: a production sale on the same serial is approved at once, as on an untouched terminal, and the sandbox shows no trace of it",
      () =>
        simulated(function* () {
          yield* behave("manual")
          const waiting = yield* checkout("test-1")
          const live = yield* TerminalPayments.checkout(production, body("live-1"))
          expect(yield* tags(live.integrationId)).toEqual(APPROVED_AT_ONCE)
          const seen = yield* act("approve")
          expect(seen.last_outcome?.integration_id).toBe(waiting.integrationId)
          for (const control of [
            behave("auto_reject"),
            act("lock"),
            act("expire_session"),
            act("power_off")
          ]) {
            yield* control
            yield* TestClock.adjust("3 minutes")
            const next = yield* TerminalPayments.checkout(production, body("live-2"))
            expect(yield* tags(next.integrationId)).toEqual(APPROVED_AT_ONCE)
          }
          const state = yield* terminalState
          expect(JSON.stringify(state)).not.toContain("live-")
          expect(yield* tags(live.integrationId)).toEqual(APPROVED_AT_ONCE)
        })
    )

    it.effect(
      "a production charge found on the sandbox terminal (a log written before the terminals were split by mode) is never decided by a sandbox control",
      () =>
        simulated(function* () {
          const terminal = CommandHandler.make(SimTerminal.SimTerminal)
          // The production terminal is never controlled through the port; the log can still say manual.
          yield* terminal(
            Simulator.terminalKey(ref, "production"),
            new SimTerminal.SetBehavior({
              behavior: "manual",
              chargeNotifications: Option.some(false),
              now: T0
            })
          )
          const live = yield* TerminalPayments.checkout(production, body("live-1"))
          expect(live.status).toBe("SENT")
          yield* terminal(
            Simulator.terminalKey(ref, "sandbox"),
            new SimTerminal.Deliver({
              integrationId: live.integrationId,
              transactionId: live.transactionId,
              reference: "live-1",
              paymentMethod: "POS",
              currency: "COP",
              total: Amount.make(11900),
              now: T0
            })
          )
          for (const control of [
            act("approve"),
            act("reject"),
            behave("auto_reject"),
            behave("auto_approve")
          ]) {
            yield* Effect.either(control)
            expect(yield* status(live.integrationId)).toBe("SENT")
          }
        })
    )

    it.effect("two simulators on one event log (two server processes) see the same terminal", () =>
      simulatedOn(Store)(function* () {
        const [first, second] = yield* Effect.all([Simulator.make, Simulator.make])
        yield* first.sandbox.setBehavior(ref, "manual")
        yield* first.sandbox.perform(ref, "lock")
        const seen = yield* second.sandbox.state(ref)
        expect(seen).toMatchObject({ behavior: "manual", locked: true })
      })
    )
  })

  describe("properties", () => {
    const step = FastCheck.oneof(
      FastCheck.constantFrom<ReadonlyArray<TerminalSandbox.Action>>(
        ...TerminalSandbox.Action.literals.map((a) => [a])
      ),
      FastCheck.constant("checkout" as const),
      FastCheck.constantFrom(...TerminalSandbox.Behavior.literals).map((b) => ({ behavior: b })),
      FastCheck.integer({ min: 1, max: 200 }).map((seconds) => ({ seconds }))
    )

    it.effect.prop(
      "random action sequences never reach an impossible state; every pushed charge ends in exactly one outcome or still waits",
      [FastCheck.array(step, { maxLength: 25 })],
      ([steps]) =>
        simulated(function* () {
          const created: Array<string> = []
          for (const s of steps) {
            if (s === "checkout") created.push((yield* checkout()).integrationId)
            else if (Array.isArray(s)) yield* Effect.either(act(s[0]!))
            else if ("behavior" in s) yield* behave(s.behavior as TerminalSandbox.Behavior)
            else yield* TestClock.adjust(`${(s as { seconds: number }).seconds} seconds`)
            const state = yield* terminalState
            // Impossible states: off with the app not closed or locked; locked without the app in background.
            if (state.power === "off") expect([state.app_state, state.locked]).toEqual(["closed", false])
            else expect(state.app_state).toBe(state.locked ? "background" : "open")
            expect(state.reachable).toBe(state.power === "on" && state.session === "active")
            const ids = state.pending_requests.map((p) => p.integration_id)
            expect(new Set(ids).size).toBe(ids.length)
            expect(ids.some((id) => state.missed_requests.includes(id))).toBe(false)
            if (state.behavior !== "manual" && state.power === "on") {
              expect(state.pending_requests.every((p) => p.stage === "held")).toBe(true)
            }
            if (!state.locked && state.power === "on") {
              expect(state.pending_requests.some((p) => p.stage === "held")).toBe(false)
            }
          }
          const state = yield* terminalState
          for (const id of created) {
            const history = yield* tags(id)
            const outcomes = history.filter((t) => t === "SaleApproved" || t === "SaleRejected")
            const current = yield* status(id)
            const waiting = state.pending_requests.find((p) => p.integration_id === id)
            if (outcomes.length === 1) {
              expect(["APPROVED", "REJECTED"]).toContain(current)
              expect(waiting).toBeUndefined()
            } else {
              expect(outcomes).toEqual([])
              if (current === "UNREACHABLE") expect(state.missed_requests).toContain(id)
              else {
                expect(["SENT", "HELD"]).toContain(current)
                expect(waiting?.stage === "held").toBe(current === "HELD")
              }
            }
          }
        }),
      { timeout: 60_000, fastCheck: { numRuns: 30 } }
    )
  })
})
