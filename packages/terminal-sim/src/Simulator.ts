/**
 * The simulated terminal fleet behind the `TerminalGateway` and `TerminalSandbox` ports (spec A, rules
 * R1–R7, issue 4 "Terminal simulator"). Terminal state lives in the event log (`SimTerminal` streams,
 * one device per mode: issue 17), outcomes are recorded on the checkouts through `TerminalPayments`,
 * and time comes from `Clock`.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as IdGenerator from "@cobro/domain/IdGenerator"
import * as Merchant from "@cobro/domain/Merchant"
import type * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalGateway from "@cobro/domain/TerminalGateway"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as CardData from "./CardData.js"
import * as SimTerminal from "./SimTerminal.js"
import { unchecked } from "@cobro/domain/Unchecked"

/**
 * Up to 60 more tries, jittered from 2 ms and doubling up to 100 ms apart: about 5 seconds in all,
 * within the push's timeout, before the terminal is reported busy (the push is then tried again by
 * the pusher, never read as unreachable).
 */
const PUSH_BACKOFF = Schedule.exponential("2 millis").pipe(
  Schedule.union(Schedule.spaced("100 millis")),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(60))
)

/**
 * Which of a serial's two simulated devices: the sandbox terminal, that a test key controls and that
 * takes the sandbox checkouts, or the production terminal, that takes the production checkouts and
 * that nothing controls (on, unlocked, app open, `auto_approve`: a production sale is approved at
 * once, as the production acquirer approves, O4). Sandbox controls see and touch sandbox data only.
 */
export type Mode = "sandbox" | "production"

/** The terminal's command of each sandbox action that is one (approve and reject decide its payment instead). */
const TERMINAL_COMMANDS: Partial<
  Record<TerminalSandbox.Action, new (props: { readonly now: DateTime.Utc }) => SimTerminal.Command>
> = {
  lock: SimTerminal.Lock,
  unlock: SimTerminal.Unlock,
  power_off: SimTerminal.PowerOff,
  power_on: SimTerminal.PowerOn,
  expire_session: SimTerminal.ExpireSession,
  open_notification: SimTerminal.OpenNotification
}

/** The mode of a checkout or a charge instruction by its `sandbox` flag. */
export const modeOf = (sandbox: boolean): Mode => (sandbox ? "sandbox" : "production")

/**
 * The stream key of a simulated terminal: one device per merchant, serial and mode. The sandbox
 * terminal keeps `<merchant>/<serial>`; the production one is `<merchant>:live/<serial>`, which no
 * sandbox key can spell (a merchant id has no `:`, while a serial may hold a `/`).
 */
export const terminalKey = (ref: TerminalSandbox.TerminalRef, mode: Mode): string =>
  mode === "sandbox"
    ? `${ref.merchantId}/${ref.terminalSerial}`
    : `${ref.merchantId}:live/${ref.terminalSerial}`

type Outcome = "approved" | "rejected"

const refused = (action: TerminalSandbox.Action, reason: string) =>
  new TerminalSandbox.ActionRefused({ action, reason })

const OTHER_MODE = "the payment belongs to the other mode: a terminal decides only its own mode's payments"

/** The refusal of a charge of the other mode (found on a terminal stream written before the split). */
const isOtherMode = (error: TerminalSandbox.ActionRefused) => error.reason === OTHER_MODE

/** The wire view of a terminal's state. */
export const view = (
  ref: TerminalSandbox.TerminalRef,
  model: string,
  state: SimTerminal.State
): TerminalSandbox.TerminalState => ({
  terminal_serial: ref.terminalSerial,
  terminal_model: model,
  behavior: state.behavior,
  charge_notifications: state.chargeNotifications,
  power: state._tag === "ON" ? "on" : "off",
  app_state: state.app,
  locked: Option.isSome(state.lockedSince),
  locked_since: Option.getOrNull(state.lockedSince),
  session: state.session,
  reachable: Option.isNone(SimTerminal.unreachableReason(state)),
  api_only_mode: false,
  pending_requests: state.pending.map((p) => ({
    integration_id: p.integrationId,
    transaction_id: p.transactionId,
    reference: p.reference,
    payment_method: p.paymentMethod,
    currency: p.currency,
    total: p.total,
    stage: p.stage,
    received_at: p.receivedAt
  })),
  notifications: state.notifications.map((n) => ({
    id: n.id,
    integration_id: n.integrationId,
    message: n.message,
    posted_at: n.postedAt
  })),
  on_confirmation_screen: state.onConfirmationScreen,
  missed_requests: state.missed,
  last_outcome: Option.getOrNull(
    Option.map(state.lastOutcome, (o) => ({ integration_id: o.integrationId, outcome: o.outcome, at: o.at }))
  )
})

/**
 * Makes both services over one fleet. Requires the `EventStore` (terminal and checkout streams) and
 * the `IdGenerator` (event ids); time is read from `Clock`, so a virtual clock drives R1.
 */
export const make = Effect.gen(function* () {
  const context = yield* Effect.context<EventStore.EventStore | IdGenerator.IdGenerator>()
  const handleStream = CommandHandler.make(SimTerminal.SimTerminal)
  const loadStream = CommandHandler.load(SimTerminal.SimTerminal)
  const refreshStream = CommandHandler.refresh(SimTerminal.SimTerminal)

  // This process's latest view of each terminal. A terminal's stream grows by two events a sale, so
  // loads and commands fold only the events after the view (`CommandHandler.refresh`), not its whole
  // history. Other nodes' writes are in the log and read like any others; a stale view costs a
  // conflict and a retry, never a wrong decision.
  const views = new Map<string, CommandHandler.Known<SimTerminal.State>>()
  const remember =
    (key: string) =>
    (known: CommandHandler.Known<SimTerminal.State>): Effect.Effect<void> =>
      Effect.sync(() => {
        views.set(key, { state: known.state, version: known.version })
      })
  const loadTerminal = (key: string) => {
    const known = views.get(key)
    return (known === undefined ? loadStream(key) : refreshStream(key, known)).pipe(Effect.tap(remember(key)))
  }
  const handle = (
    key: string,
    command: SimTerminal.Command,
    metadata: EventStore.EventMetadata = {},
    known?: CommandHandler.Known<SimTerminal.State>
  ) =>
    (known === undefined ? loadTerminal(key) : Effect.succeed(known)).pipe(
      Effect.flatMap((current) => handleStream(key, command, metadata, current)),
      Effect.tap(remember(key))
    )
  const loadMerchant = CommandHandler.load(Merchant.Merchant)

  const busy = (action: TerminalSandbox.Action) => () =>
    Effect.fail(refused(action, "the terminal changed concurrently; try again"))

  /**
   * Records the outcome on the checkout, then on the terminal. A conflicting outcome already on the
   * checkout wins. `known`: the checkout and the terminal as the caller just left them (no reads).
   */
  const decideOne = (
    ref: TerminalSandbox.TerminalRef,
    mode: Mode,
    pending: SimTerminal.Pending,
    outcome: Outcome,
    action: TerminalSandbox.Action,
    known?: {
      readonly checkout: TerminalPayments.KnownCheckout
      readonly terminal: CommandHandler.Known<SimTerminal.State>
    }
  ) =>
    Effect.gen(function* () {
      const checkout = known?.checkout.state ?? (yield* TerminalPayments.load(pending.integrationId))
      // A terminal never decides another mode's payment: a sandbox control cannot reach production.
      if (checkout._tag !== "Initial" && modeOf(checkout.checkout.sandbox) !== mode) {
        return yield* Effect.fail(refused(action, OTHER_MODE))
      }
      const payerEmail =
        checkout._tag === "Initial"
          ? Option.none<string>()
          : Option.flatMap(checkout.checkout.payer, (p) => p.email)
      const input = {
        transactionId: pending.transactionId,
        terminalSerial: ref.terminalSerial,
        checkoutMethod: pending.paymentMethod
      }
      const recorded = yield* (
        outcome === "approved"
          ? TerminalPayments.approveSale(
              pending.integrationId,
              pending.transactionId,
              CardData.saleFor({ ...input, payerEmail }),
              known?.checkout,
              TerminalPayments.reportedBy(ref.terminalSerial)
            )
          : Effect.flatMap(Effect.succeed(CardData.declineFor(input)), (d) =>
              TerminalPayments.rejectSale(
                pending.integrationId,
                pending.transactionId,
                d.reason,
                d.card,
                known?.checkout,
                TerminalPayments.reportedBy(ref.terminalSerial)
              )
            )
      ).pipe(Effect.either)
      // Another process (or an earlier crash) may have settled the checkout: the terminal follows it.
      const final =
        recorded._tag === "Right" ? recorded.right.state : yield* TerminalPayments.load(pending.integrationId)
      const settled: Outcome | undefined =
        final._tag === "APPROVED" || final._tag === "VOIDED"
          ? "approved"
          : final._tag === "REJECTED"
            ? "rejected"
            : undefined
      if (settled === undefined) {
        return yield* Effect.fail(refused(action, `the checkout could not take the outcome (${final._tag})`))
      }
      const now = yield* DateTime.now
      yield* handle(
        terminalKey(ref, mode),
        new SimTerminal.RecordOutcome(
          { integrationId: pending.integrationId, outcome: settled, now },
          unchecked
        ),
        {},
        known?.terminal
      )
      return settled
    }).pipe(Effect.catchTag("ConcurrencyConflict", busy(action)))

  const behaviorOutcome = (behavior: TerminalSandbox.Behavior): Option.Option<Outcome> =>
    behavior === "auto_approve"
      ? Option.some("approved")
      : behavior === "auto_reject"
        ? Option.some("rejected")
        : Option.none()

  const decideTerminal = CommandHandler.deciderOfAll(SimTerminal.SimTerminal)

  /** Whether the terminal's answer is on the checkout: a status that never goes back to SENDING. */
  const isAnswered = (status: TerminalCheckout.Status) =>
    status !== "PENDING" && status !== "SENDING" && status !== "UNREACHABLE"

  /**
   * One try of a push: the terminal takes the charge (`Deliver`) and, when an automatic behaviour
   * decides at once, acknowledges it and answers on the checkout (`TerminalPayments.decideAnswer`)
   * and records its outcome, all in one commit, so that the checkout and the terminal never disagree
   * on what happened. The first try decides on the states this process last knew (no read); a
   * conflict forgets them and the next try reads. Anything unusual (the checkout moved on, another
   * mode's) commits the delivery alone and is settled step by step after it ({@link decideOne}).
   */
  const takeCharge = (instruction: TerminalGateway.ChargeInstruction, ref: TerminalSandbox.TerminalRef) => {
    const mode = modeOf(instruction.sandbox)
    const key = terminalKey(ref, mode)
    let read = false
    return Effect.gen(function* () {
      const retry = read
      const view = read ? undefined : views.get(key)
      read = true
      const terminal = view ?? (yield* loadTerminal(key))
      // A push again of a checkout already answered (two pushers crossed, A-23): the terminal takes
      // nothing twice. A retry reads the checkout, which the conflict may have moved on; the first
      // try trusts a kept state only for statuses no checkout leaves for SENDING again.
      const current = retry
        ? yield* TerminalPayments.load(instruction.integrationId)
        : (yield* TerminalPayments.knownCheckout(instruction.integrationId)).state
      if (current._tag !== "Initial" && isAnswered(current._tag)) {
        return {
          state: terminal.state,
          pending: undefined,
          auto: Option.none<Outcome>(),
          recorded: true,
          terminal
        }
      }
      const now = yield* DateTime.now
      const deliver = new SimTerminal.Deliver(
        {
          integrationId: instruction.integrationId,
          transactionId: instruction.transactionId,
          reference: instruction.reference,
          paymentMethod: instruction.paymentMethod,
          currency: instruction.currency,
          total: instruction.total,
          now
        },
        unchecked
      )
      const delivered = yield* decideTerminal(key, [deliver], terminal)
      const state = delivered.handled.state
      const pending = state.pending.find((p) => p.integrationId === instruction.integrationId)
      const auto = behaviorOutcome(state.behavior)
      if (pending !== undefined && pending.stage !== "held" && Option.isSome(auto)) {
        const checkout = yield* TerminalPayments.knownCheckout(pending.integrationId)
        if (checkout.state._tag !== "Initial" && modeOf(checkout.state.checkout.sandbox) === mode) {
          const input = {
            transactionId: pending.transactionId,
            terminalSerial: ref.terminalSerial,
            checkoutMethod: pending.paymentMethod
          }
          const answered = yield* Effect.either(
            TerminalPayments.decideAnswer(
              pending.integrationId,
              pending.transactionId,
              state.lockedSince,
              auto.value === "approved"
                ? {
                    _tag: "Approve",
                    sale: CardData.saleFor({
                      ...input,
                      payerEmail: Option.flatMap(checkout.state.checkout.payer, (p) => p.email)
                    })
                  }
                : { _tag: "Reject", ...CardData.declineFor(input) },
              checkout,
              TerminalPayments.reportedBy(ref.terminalSerial)
            )
          )
          if (answered._tag === "Right") {
            const withOutcome = yield* decideTerminal(
              key,
              [
                deliver,
                new SimTerminal.RecordOutcome(
                  {
                    integrationId: pending.integrationId,
                    outcome: auto.value,
                    now
                  },
                  unchecked
                )
              ],
              terminal
            )
            yield* CommandHandler.commit([withOutcome, answered.right])
            yield* remember(key)(withOutcome.handled)
            return {
              state,
              pending,
              auto: Option.none<Outcome>(),
              recorded: true,
              terminal: withOutcome.handled
            }
          }
        }
      }
      yield* CommandHandler.commit([delivered])
      yield* remember(key)(delivered.handled)
      return { state, pending, auto, recorded: false, terminal: delivered.handled }
    })
  }

  const gateway: TerminalGateway.TerminalGateway["Type"] = {
    push: (instruction) =>
      Effect.gen(function* () {
        const ref = { merchantId: instruction.merchantId, terminalSerial: instruction.terminalSerial }
        const mode = modeOf(instruction.sandbox)
        const taken = yield* takeCharge(instruction, ref).pipe(
          // Concurrent checkouts to one terminal contend on its stream; the handler's immediate
          // retries are not enough under load, so back off before reporting the terminal busy: a
          // busy terminal is not unreachable (the checkout stays SENDING and is pushed again).
          Effect.retry({
            while: (error) => Predicate.isTagged(error, "ConcurrencyConflict"),
            schedule: PUSH_BACKOFF
          }),
          Effect.catchAll((error) =>
            Predicate.isTagged(error, "ConcurrencyConflict")
              ? Effect.fail(
                  new TerminalGateway.TerminalBusy({
                    terminalSerial: instruction.terminalSerial,
                    reason: "the terminal is busy with other requests"
                  })
                )
              : Effect.die(error)
          )
        )
        const { auto, pending, state } = taken
        if (taken.recorded) {
          return new TerminalGateway.Delivered({ lockedSince: state.lockedSince, recorded: true }, unchecked)
        }
        if (pending === undefined) {
          return yield* new TerminalGateway.TerminalUnreachable({
            terminalSerial: instruction.terminalSerial,
            reason: Option.getOrElse(
              SimTerminal.unreachableReason(state),
              () => "the terminal did not answer"
            )
          })
        }
        // Auto behaviours decide at once: the terminal acknowledges, then reports the outcome.
        if (pending.stage !== "held" && Option.isSome(auto)) {
          yield* TerminalPayments.recordDelivery(
            pending.integrationId,
            state.lockedSince,
            undefined,
            TerminalPayments.reportedBy(ref.terminalSerial)
          ).pipe(
            Effect.flatMap((recorded) =>
              decideOne(ref, mode, pending, auto.value, auto.value === "approved" ? "approve" : "reject", {
                checkout: recorded,
                terminal: taken.terminal
              })
            ),
            Effect.catchAll((e) => Effect.logWarning("terminal-sim: automatic outcome not recorded", e))
          )
        }
        return new TerminalGateway.Delivered({ lockedSince: state.lockedSince }, unchecked)
      }).pipe(Effect.provide(context))
  }

  const withGateway = <A, E>(
    effect: Effect.Effect<
      A,
      E,
      EventStore.EventStore | IdGenerator.IdGenerator | TerminalGateway.TerminalGateway
    >
  ) => effect.pipe(Effect.provideService(TerminalGateway.TerminalGateway, gateway), Effect.provide(context))

  /**
   * Brings the checkouts in line with the sandbox terminal after a sandbox control: missed charges are
   * pushed again when it is reachable (R5), held ones are released when it is on and unlocked (R1),
   * and the auto behaviours decide what waits (never a production charge found there).
   */
  const settle = (ref: TerminalSandbox.TerminalRef, action: TerminalSandbox.Action) =>
    Effect.gen(function* () {
      const key = terminalKey(ref, "sandbox")
      let { state } = yield* loadTerminal(key)
      if (state._tag === "OFF") return
      if (Option.isNone(SimTerminal.unreachableReason(state))) {
        for (const integrationId of state.missed) {
          // The terminal is back: its return causes the push again.
          const pushed = yield* Effect.either(
            TerminalPayments.push(integrationId, undefined, TerminalPayments.reportedBy(ref.terminalSerial))
          )
          if (pushed._tag === "Left") {
            yield* handle(key, new SimTerminal.DropMissed({ integrationId, now: yield* DateTime.now }))
          }
        }
        state = (yield* loadTerminal(key)).state
      }
      if (Option.isNone(state.lockedSince)) {
        for (const p of state.pending.filter((p) => p.stage === "held")) {
          yield* TerminalPayments.recordUnlock(
            p.integrationId,
            TerminalPayments.reportedBy(ref.terminalSerial)
          ).pipe(Effect.ignore)
          yield* handle(
            key,
            new SimTerminal.Release({ integrationId: p.integrationId, now: yield* DateTime.now })
          )
        }
        state = (yield* loadTerminal(key)).state
      }
      const auto = behaviorOutcome(state.behavior)
      if (Option.isSome(auto)) {
        for (const p of state.pending.filter((p) => p.stage !== "held")) {
          yield* decideOne(ref, "sandbox", p, auto.value, action).pipe(
            Effect.catchIf(isOtherMode, () => Effect.void)
          )
        }
      }
    }).pipe(Effect.catchTag("ConcurrencyConflict", busy(action)))

  /** The merchant's terminal with that serial, or `UnknownTerminal` (another merchant's terminal is unknown). */
  const boundTerminal = (ref: TerminalSandbox.TerminalRef) =>
    Effect.flatMap(loadMerchant(ref.merchantId), ({ state }) =>
      Option.match(Merchant.terminalFor(state, ref.terminalSerial), {
        onNone: () =>
          Effect.fail(new TerminalSandbox.UnknownTerminal({ terminalSerial: ref.terminalSerial })),
        onSome: Effect.succeed
      })
    )

  const current = (ref: TerminalSandbox.TerminalRef, model: string) =>
    Effect.map(loadTerminal(terminalKey(ref, "sandbox")), ({ state }) => view(ref, model, state))

  const commandFor = (
    action: TerminalSandbox.Action,
    now: DateTime.Utc
  ): Option.Option<SimTerminal.Command> =>
    Option.map(Option.fromNullable(TERMINAL_COMMANDS[action]), (Command) => new Command({ now }))

  // The port a test key reaches: every call reads and writes the sandbox terminal only.
  const sandbox: TerminalSandbox.TerminalSandbox["Type"] = {
    state: (ref) => withGateway(Effect.flatMap(boundTerminal(ref), (t) => current(ref, t.model))),
    setBehavior: (ref, behavior, options = {}) =>
      withGateway(
        Effect.gen(function* () {
          const terminal = yield* boundTerminal(ref)
          yield* handle(
            terminalKey(ref, "sandbox"),
            new SimTerminal.SetBehavior({
              behavior,
              chargeNotifications: Option.fromNullable(options.chargeNotifications),
              now: yield* DateTime.now
            }),
            options.metadata
          ).pipe(Effect.orDie)
          // Charges that waited in manual mode are decided by an auto behaviour now.
          yield* settle(ref, behavior === "auto_reject" ? "reject" : "approve").pipe(
            Effect.catchAll((e) => Effect.logWarning("terminal-sim: settling after a behaviour change", e))
          )
          return yield* current(ref, terminal.model)
        })
      ),
    perform: (ref, action) =>
      withGateway(
        Effect.gen(function* () {
          const terminal = yield* boundTerminal(ref)
          const now = yield* DateTime.now
          const command = commandFor(action, now)
          if (Option.isSome(command)) {
            yield* handle(terminalKey(ref, "sandbox"), command.value).pipe(
              Effect.catchTag("ConcurrencyConflict", busy(action))
            )
          } else {
            const { state } = yield* loadTerminal(terminalKey(ref, "sandbox"))
            if (state._tag === "OFF")
              return yield* Effect.fail(refused(action, "the terminal is powered off"))
            const target = SimTerminal.actionable(state)
            if (Option.isNone(target)) {
              return yield* Effect.fail(
                refused(
                  action,
                  state.pending.length > 0
                    ? "the payment is held until the terminal is unlocked (R1)"
                    : "no payment is waiting on the terminal"
                )
              )
            }
            yield* decideOne(
              ref,
              "sandbox",
              target.value,
              action === "approve" ? "approved" : "rejected",
              action
            )
          }
          yield* settle(ref, action)
          return yield* current(ref, terminal.model)
        })
      )
  }

  return { gateway, sandbox }
})

/**
 * The simulated terminals: provides `TerminalGateway` and `TerminalSandbox`. Requires `EventStore`
 * and `IdGenerator`; reads `Clock` (a virtual clock drives the R1 hold).
 */
export const layer: Layer.Layer<
  TerminalGateway.TerminalGateway | TerminalSandbox.TerminalSandbox,
  never,
  EventStore.EventStore | IdGenerator.IdGenerator
> = Layer.effectContext(
  Effect.map(make, ({ gateway, sandbox }) =>
    Context.make(TerminalGateway.TerminalGateway, gateway).pipe(
      Context.add(TerminalSandbox.TerminalSandbox, sandbox)
    )
  )
)
