/**
 * One simulated Smart or Smart Pro terminal as an event-sourced aggregate (spec A preconditions,
 * R1–R7): power, app, lock, session, pending charges, notifications and the confirmation screen. Its
 * stream lives in the event log, so every server process on one database sees the same terminal:
 * `SimTerminal-<merchant>/<serial>` for the sandbox's device, `SimTerminal-<merchant>:live/<serial>`
 * for production's (`Simulator.terminalKey`).
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, none, ok } from "@cobro/domain/Aggregate"
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import { Amount } from "@cobro/domain/Money"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import type { Section } from "@cobro/domain/StateMachinesDoc"
import * as Transitions from "@cobro/domain/Transitions"
import { unchecked } from "@cobro/domain/Unchecked"

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * The sandbox sets how the terminal answers charges (manual, auto-approve, auto-reject) and whether it posts charge notifications (R6).
 * @category commands
 */
export class SetBehavior extends Schema.TaggedClass<SetBehavior>()("SetBehavior", {
  behavior: TerminalSandbox.Behavior,
  chargeNotifications: Schema.OptionFromUndefinedOr(Schema.Boolean),
  now: Schema.DateTimeUtc
}) {}
/**
 * The terminal is locked: the app goes to the background; R1 counts the lock from now.
 * @category commands
 */
export class Lock extends Schema.TaggedClass<Lock>()("Lock", { now: Schema.DateTimeUtc }) {}
/**
 * The terminal is unlocked: the app comes back and an expired session is renewed (R5).
 * @category commands
 */
export class Unlock extends Schema.TaggedClass<Unlock>()("Unlock", { now: Schema.DateTimeUtc }) {}
/**
 * The terminal is powered off: pushes cannot reach it (A preconditions).
 * @category commands
 */
export class PowerOff extends Schema.TaggedClass<PowerOff>()("PowerOff", { now: Schema.DateTimeUtc }) {}
/**
 * The terminal is powered on: the app opens with a fresh session.
 * @category commands
 */
export class PowerOn extends Schema.TaggedClass<PowerOn>()("PowerOn", { now: Schema.DateTimeUtc }) {}
/**
 * The app's session token expires: the disconnected-POS message (R5).
 * @category commands
 */
export class ExpireSession extends Schema.TaggedClass<ExpireSession>()("ExpireSession", {
  now: Schema.DateTimeUtc
}) {}
/**
 * The newest charge notification on the screen is opened: its charge goes to the payment screen (R2).
 * @category commands
 */
export class OpenNotification extends Schema.TaggedClass<OpenNotification>()("OpenNotification", {
  now: Schema.DateTimeUtc
}) {}

/** A pushed charge: what {@link Deliver} brings and {@link RequestReceived} records. */
const chargeFields = {
  integrationId: IntegrationId,
  transactionId: TransactionId,
  reference: Schema.String,
  paymentMethod: Schema.String,
  currency: Schema.String,
  total: Amount
}

/**
 * The gateway pushes a charge: received (held when locked for more than 2 minutes) or missed.
 * @category commands
 */
export class Deliver extends Schema.TaggedClass<Deliver>()("Deliver", {
  ...chargeFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * A held charge is processed after the unlock (R1).
 * @category commands
 */
export class Release extends Schema.TaggedClass<Release>()("Release", {
  integrationId: IntegrationId,
  now: Schema.DateTimeUtc
}) {}

/**
 * The charge's outcome was recorded on its checkout.
 * @category commands
 */
export class RecordOutcome extends Schema.TaggedClass<RecordOutcome>()("RecordOutcome", {
  integrationId: IntegrationId,
  outcome: Schema.Literal("approved", "rejected"),
  now: Schema.DateTimeUtc
}) {}

/**
 * A missed charge will not be pushed again (its checkout no longer waits for a push).
 * @category commands
 */
export class DropMissed extends Schema.TaggedClass<DropMissed>()("DropMissed", {
  integrationId: IntegrationId,
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the simulated terminal.
 * @category commands
 */
export type Command =
  | SetBehavior
  | Lock
  | Unlock
  | PowerOff
  | PowerOn
  | ExpireSession
  | OpenNotification
  | Deliver
  | Release
  | RecordOutcome
  | DropMissed

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * How the terminal answers charges, and whether it notifies them, changed.
 * @category events
 */
export class BehaviorSet extends Schema.TaggedClass<BehaviorSet>()("BehaviorSet", {
  behavior: TerminalSandbox.Behavior,
  chargeNotifications: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}
/**
 * The terminal was locked at `at`.
 * @category events
 */
export class Locked extends Schema.TaggedClass<Locked>()("Locked", { at: Schema.DateTimeUtc }) {}
/**
 * R5: unlocking renews an expired session.
 * @category events
 */
export class Unlocked extends Schema.TaggedClass<Unlocked>()("Unlocked", {
  sessionRenewed: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}
/**
 * The terminal was powered off.
 * @category events
 */
export class PoweredOff extends Schema.TaggedClass<PoweredOff>()("PoweredOff", { at: Schema.DateTimeUtc }) {}
/**
 * The terminal was powered on, with a fresh session.
 * @category events
 */
export class PoweredOn extends Schema.TaggedClass<PoweredOn>()("PoweredOn", { at: Schema.DateTimeUtc }) {}
/**
 * The app's session token expired (R5).
 * @category events
 */
export class SessionExpired extends Schema.TaggedClass<SessionExpired>()("SessionExpired", {
  at: Schema.DateTimeUtc
}) {}
/**
 * A charge notification was opened: its charge is being charged.
 * @category events
 */
export class NotificationOpened extends Schema.TaggedClass<NotificationOpened>()("NotificationOpened", {
  notificationId: Schema.String,
  at: Schema.DateTimeUtc
}) {}
/**
 * A pushed charge reached the terminal: notified, charging, or held on a terminal locked for more than 2 minutes (R1).
 * @category events
 */
export class RequestReceived extends Schema.TaggedClass<RequestReceived>()("RequestReceived", {
  ...chargeFields,
  stage: TerminalSandbox.RequestStage,
  /** R6 on: a charge notification is posted (it stays until opened, R2). */
  notified: Schema.Boolean,
  /** When the terminal was locked, if it was (reported to the gateway's caller, R1). */
  lockedSince: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc),
  at: Schema.DateTimeUtc
}) {}
/**
 * A pushed charge could not reach the terminal (off, app closed, session expired): the gateway reports it unreachable.
 * @category events
 */
export class RequestMissed extends Schema.TaggedClass<RequestMissed>()("RequestMissed", {
  integrationId: IntegrationId,
  reason: Schema.String,
  at: Schema.DateTimeUtc
}) {}
/**
 * A held charge was released by the unlock (R1): it is being charged.
 * @category events
 */
export class RequestReleased extends Schema.TaggedClass<RequestReleased>()("RequestReleased", {
  integrationId: IntegrationId,
  at: Schema.DateTimeUtc
}) {}
/**
 * A charge's outcome was recorded on its checkout: it leaves the terminal (R4's confirmation screen after an approval).
 * @category events
 */
export class OutcomeRecorded extends Schema.TaggedClass<OutcomeRecorded>()("OutcomeRecorded", {
  integrationId: IntegrationId,
  outcome: Schema.Literal("approved", "rejected"),
  at: Schema.DateTimeUtc
}) {}
/**
 * A missed charge will not be pushed again: forgotten.
 * @category events
 */
export class MissedDropped extends Schema.TaggedClass<MissedDropped>()("MissedDropped", {
  integrationId: IntegrationId,
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the simulated terminal, as stored.
 * @category events
 */
export const Event = Schema.Union(
  BehaviorSet,
  Locked,
  Unlocked,
  PoweredOff,
  PoweredOn,
  SessionExpired,
  NotificationOpened,
  RequestReceived,
  RequestMissed,
  RequestReleased,
  OutcomeRecorded,
  MissedDropped
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * A charge on the terminal without an outcome.
 * @category models
 */
export interface Pending {
  readonly integrationId: IntegrationId
  readonly transactionId: TransactionId
  readonly reference: string
  readonly paymentMethod: string
  readonly currency: string
  readonly total: Amount
  readonly stage: TerminalSandbox.RequestStage
  readonly receivedAt: DateTime.Utc
}

/**
 * A notification on the terminal's screen.
 * @category models
 */
export interface Note {
  readonly id: string
  readonly integrationId: IntegrationId
  readonly message: string
  readonly postedAt: DateTime.Utc
}

/**
 * The terminal: `ON` or `OFF`. A terminal nobody touched is on, unlocked, app open, session active.
 * @category models
 */
export interface State {
  readonly _tag: "ON" | "OFF"
  readonly behavior: TerminalSandbox.Behavior
  readonly chargeNotifications: boolean
  readonly app: TerminalSandbox.AppState
  readonly lockedSince: Option.Option<DateTime.Utc>
  readonly session: TerminalSandbox.Session
  readonly pending: ReadonlyArray<Pending>
  readonly notifications: ReadonlyArray<Note>
  readonly onConfirmationScreen: boolean
  readonly missed: ReadonlyArray<IntegrationId>
  readonly lastOutcome: Option.Option<{
    readonly integrationId: IntegrationId
    readonly outcome: "approved" | "rejected"
    readonly at: DateTime.Utc
  }>
}

/**
 * A terminal nobody touched: on, unlocked, app open, session active, nothing pending.
 * @category models
 */
export const initialState: State = {
  _tag: "ON",
  behavior: TerminalSandbox.DEFAULT_BEHAVIOR,
  chargeNotifications: true,
  app: "open",
  lockedSince: Option.none(),
  session: "active",
  pending: [],
  notifications: [],
  onConfirmationScreen: false,
  missed: [],
  lastOutcome: Option.none()
}

/**
 * Why a push cannot reach the terminal (spec A preconditions, R5), or none when it can.
 * @category models
 */
export const unreachableReason = (state: State): Option.Option<string> =>
  state._tag === "OFF"
    ? Option.some("the terminal is powered off")
    : state.app === "closed"
      ? Option.some("the payment app is closed")
      : state.session === "expired"
        ? Option.some("the session token expired (disconnected POS): lock and unlock the terminal")
        : Option.none()

/**
 * The charge `approve` and `reject` act on: the oldest pending one that is not held.
 * @category models
 */
export const actionable = (state: State): Option.Option<Pending> =>
  Option.fromNullable(state.pending.find((p) => p.stage !== "held"))

/**
 * The notification id of a charge (one notification per charge).
 * @category models
 */
export const notificationId = (integrationId: IntegrationId): string => `NTF_${integrationId}`

// ---------------------------------------------------------------------------------------------
// Transitions and decide
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. Most commands record a
 * change and keep the terminal ON, or record nothing when there is nothing to change (locking a
 * locked terminal keeps the original lock instant, a charge already on the terminal is not received
 * twice). Off, only power-on, behaviour changes and the gateway's reports are possible.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  ON: {
    SetBehavior: ["ON", "noop"],
    Lock: ["ON", "noop"],
    Unlock: ["ON", "noop"],
    PowerOff: "OFF",
    PowerOn: "noop",
    ExpireSession: ["ON", "noop"],
    OpenNotification: "ON",
    Deliver: ["ON", "noop"],
    Release: ["ON", "noop"],
    RecordOutcome: ["ON", "noop"],
    DropMissed: ["ON", "noop"]
  },
  OFF: {
    SetBehavior: ["OFF", "noop"],
    PowerOff: "noop",
    PowerOn: "ON",
    Deliver: ["OFF", "noop"],
    RecordOutcome: ["OFF", "noop"],
    DropMissed: ["OFF", "noop"]
  }
})

/**
 * The simulated terminal's section of `docs/state-machines.md` (`npm run docs:state-machines`).
 * @category models
 */
export const stateMachine: Section = {
  title: "SimTerminal",
  spec: "A preconditions, R1–R7 (the simulated Smart and Smart Pro terminal, `packages/terminal-sim`)",
  table: transitions
}

const actionOf: Partial<Record<Command["_tag"], TerminalSandbox.Action>> = {
  Lock: "lock",
  Unlock: "unlock",
  PowerOff: "power_off",
  PowerOn: "power_on",
  ExpireSession: "expire_session",
  OpenNotification: "open_notification",
  Release: "unlock"
}

type Result = Decision<Event, TerminalSandbox.ActionRefused>

/** What the table refuses: an action on a terminal that is off. */
const refuse = (command: Command): TerminalSandbox.ActionRefused =>
  new TerminalSandbox.ActionRefused({
    action: actionOf[command._tag] ?? "power_on",
    reason: "the terminal is powered off"
  })

/** Decides a command the table lets act on the terminal's state. */
const decideAllowed = (command: Command, state: State): Result =>
  Match.valueTags(command, {
    SetBehavior: (c) => {
      const chargeNotifications = Option.getOrElse(c.chargeNotifications, () => state.chargeNotifications)
      return c.behavior === state.behavior && chargeNotifications === state.chargeNotifications
        ? none
        : ok(new BehaviorSet({ behavior: c.behavior, chargeNotifications, at: c.now }, unchecked))
    },
    // Locking a locked terminal keeps the original lock instant: R1 counts from it.
    Lock: (c) => (Option.isSome(state.lockedSince) ? none : ok(new Locked({ at: c.now }, unchecked))),
    Unlock: (c) =>
      Option.isNone(state.lockedSince)
        ? none
        : ok(new Unlocked({ sessionRenewed: state.session === "expired", at: c.now }, unchecked)),
    PowerOff: (c) => (state._tag === "OFF" ? none : ok(new PoweredOff({ at: c.now }, unchecked))),
    PowerOn: (c) => (state._tag === "ON" ? none : ok(new PoweredOn({ at: c.now }, unchecked))),
    ExpireSession: (c) =>
      state.session === "expired" ? none : ok(new SessionExpired({ at: c.now }, unchecked)),
    OpenNotification: (c) => {
      const newest = state.notifications[state.notifications.length - 1]
      return newest === undefined
        ? Either.left(
            new TerminalSandbox.ActionRefused({
              action: "open_notification",
              reason: "there is no notification on the terminal"
            })
          )
        : ok(new NotificationOpened({ notificationId: newest.id, at: c.now }, unchecked))
    },
    Deliver: (c) => {
      if (state.pending.some((p) => p.integrationId === c.integrationId)) return none
      return Option.match(unreachableReason(state), {
        onSome: (reason) =>
          state.missed.includes(c.integrationId)
            ? none
            : ok(new RequestMissed({ integrationId: c.integrationId, reason, at: c.now }, unchecked)),
        onNone: () => {
          const held = TerminalCheckout.holdsPayment(state.lockedSince, c.now)
          return ok(
            new RequestReceived(
              {
                integrationId: c.integrationId,
                transactionId: c.transactionId,
                reference: c.reference,
                paymentMethod: c.paymentMethod,
                currency: c.currency,
                total: c.total,
                stage: held ? "held" : state.chargeNotifications ? "notified" : "charging",
                notified: state.chargeNotifications,
                lockedSince: state.lockedSince,
                at: c.now
              },
              unchecked
            )
          )
        }
      })
    },
    Release: (c) =>
      state.pending.some((p) => p.integrationId === c.integrationId && p.stage === "held")
        ? ok(new RequestReleased({ integrationId: c.integrationId, at: c.now }, unchecked))
        : none,
    RecordOutcome: (c) =>
      state.pending.some((p) => p.integrationId === c.integrationId)
        ? ok(
            new OutcomeRecorded({ integrationId: c.integrationId, outcome: c.outcome, at: c.now }, unchecked)
          )
        : none,
    DropMissed: (c) =>
      state.missed.includes(c.integrationId)
        ? ok(new MissedDropped({ integrationId: c.integrationId, at: c.now }, unchecked))
        : none
  })

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const setStage = (
  state: State,
  integrationId: IntegrationId,
  from: TerminalSandbox.RequestStage,
  to: TerminalSandbox.RequestStage
): ReadonlyArray<Pending> =>
  state.pending.map((p) => (p.integrationId === integrationId && p.stage === from ? { ...p, stage: to } : p))

const evolveState = (state: State, event: Event): State =>
  Match.valueTags(event, {
    BehaviorSet: (e): State => ({
      ...state,
      behavior: e.behavior,
      chargeNotifications: e.chargeNotifications
    }),
    Locked: (e): State => ({ ...state, lockedSince: Option.some(e.at), app: "background" }),
    Unlocked: (): State => ({ ...state, lockedSince: Option.none(), app: "open", session: "active" }),
    PoweredOff: (): State => ({ ...state, _tag: "OFF", app: "closed", lockedSince: Option.none() }),
    // A restart is R5's next step: it renews the session too.
    PoweredOn: (): State => ({ ...state, _tag: "ON", app: "open", session: "active" }),
    SessionExpired: (): State => ({ ...state, session: "expired" }),
    NotificationOpened: (e): State => {
      const opened = state.notifications.find((n) => n.id === e.notificationId)
      return {
        ...state,
        notifications: state.notifications.filter((n) => n.id !== e.notificationId),
        pending:
          opened === undefined ? state.pending : setStage(state, opened.integrationId, "notified", "charging")
      }
    },
    RequestReceived: (e): State => ({
      ...state,
      pending: [
        ...state.pending,
        {
          integrationId: e.integrationId,
          transactionId: e.transactionId,
          reference: e.reference,
          paymentMethod: e.paymentMethod,
          currency: e.currency,
          total: e.total,
          stage: e.stage,
          receivedAt: e.at
        }
      ],
      notifications: e.notified
        ? [
            ...state.notifications,
            {
              id: notificationId(e.integrationId),
              integrationId: e.integrationId,
              message: `Cobro ${e.currency} ${e.total}: ${e.reference}`,
              postedAt: e.at
            }
          ]
        : state.notifications,
      // R4: the confirmation screen stays until a new charge opens the payment screen.
      onConfirmationScreen: e.stage === "charging" ? false : state.onConfirmationScreen,
      missed: state.missed.filter((id) => id !== e.integrationId)
    }),
    RequestMissed: (e): State => ({ ...state, missed: [...state.missed, e.integrationId] }),
    RequestReleased: (e): State => ({
      ...state,
      pending: setStage(state, e.integrationId, "held", "charging"),
      onConfirmationScreen: false
    }),
    OutcomeRecorded: (e): State => ({
      ...state,
      pending: state.pending.filter((p) => p.integrationId !== e.integrationId),
      onConfirmationScreen: e.outcome === "approved",
      lastOutcome: Option.some({ integrationId: e.integrationId, outcome: e.outcome, at: e.at })
    }),
    MissedDropped: (e): State => ({ ...state, missed: state.missed.filter((id) => id !== e.integrationId) })
  })

/**
 * The SimTerminal aggregate; its streams are keyed by `Simulator.terminalKey` (merchant, serial, mode).
 * @category aggregates
 */
export const SimTerminal: Aggregate<Command, Event, State, TerminalSandbox.ActionRefused> =
  Aggregate.withTable({
    name: "SimTerminal",
    Event,
    transitions,
    initialState,
    refuse,
    decide: decideAllowed,
    evolve: evolveState
  })

/**
 * The aggregate's `decide` (checked against its table) and `evolve`, as the module's own functions.
 * @category aggregates
 */
export const { decide, evolve } = SimTerminal
