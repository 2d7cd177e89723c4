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
import type { Aggregate } from "@cobro/domain/Aggregate"
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import { Amount } from "@cobro/domain/Money"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Transitions from "@cobro/domain/Transitions"

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export class SetBehavior extends Schema.TaggedClass<SetBehavior>()("SetBehavior", {
  behavior: TerminalSandbox.Behavior,
  chargeNotifications: Schema.OptionFromUndefinedOr(Schema.Boolean),
  now: Schema.DateTimeUtc
}) {}
export class Lock extends Schema.TaggedClass<Lock>()("Lock", { now: Schema.DateTimeUtc }) {}
export class Unlock extends Schema.TaggedClass<Unlock>()("Unlock", { now: Schema.DateTimeUtc }) {}
export class PowerOff extends Schema.TaggedClass<PowerOff>()("PowerOff", { now: Schema.DateTimeUtc }) {}
export class PowerOn extends Schema.TaggedClass<PowerOn>()("PowerOn", { now: Schema.DateTimeUtc }) {}
export class ExpireSession extends Schema.TaggedClass<ExpireSession>()("ExpireSession", {
  now: Schema.DateTimeUtc
}) {}
export class OpenNotification extends Schema.TaggedClass<OpenNotification>()("OpenNotification", {
  now: Schema.DateTimeUtc
}) {}

/** The gateway pushes a charge: received (held when locked for more than 2 minutes) or missed. */
export class Deliver extends Schema.TaggedClass<Deliver>()("Deliver", {
  integrationId: IntegrationId,
  transactionId: TransactionId,
  reference: Schema.String,
  paymentMethod: Schema.String,
  currency: Schema.String,
  total: Amount,
  now: Schema.DateTimeUtc
}) {}

/** A held charge is processed after the unlock (R1). */
export class Release extends Schema.TaggedClass<Release>()("Release", {
  integrationId: IntegrationId,
  now: Schema.DateTimeUtc
}) {}

/** The charge's outcome was recorded on its checkout. */
export class RecordOutcome extends Schema.TaggedClass<RecordOutcome>()("RecordOutcome", {
  integrationId: IntegrationId,
  outcome: Schema.Literal("approved", "rejected"),
  now: Schema.DateTimeUtc
}) {}

/** A missed charge will not be pushed again (its checkout no longer waits for a push). */
export class DropMissed extends Schema.TaggedClass<DropMissed>()("DropMissed", {
  integrationId: IntegrationId,
  now: Schema.DateTimeUtc
}) {}

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

export class BehaviorSet extends Schema.TaggedClass<BehaviorSet>()("BehaviorSet", {
  behavior: TerminalSandbox.Behavior,
  chargeNotifications: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}
export class Locked extends Schema.TaggedClass<Locked>()("Locked", { at: Schema.DateTimeUtc }) {}
/** R5: unlocking renews an expired session. */
export class Unlocked extends Schema.TaggedClass<Unlocked>()("Unlocked", {
  sessionRenewed: Schema.Boolean,
  at: Schema.DateTimeUtc
}) {}
export class PoweredOff extends Schema.TaggedClass<PoweredOff>()("PoweredOff", { at: Schema.DateTimeUtc }) {}
export class PoweredOn extends Schema.TaggedClass<PoweredOn>()("PoweredOn", { at: Schema.DateTimeUtc }) {}
export class SessionExpired extends Schema.TaggedClass<SessionExpired>()("SessionExpired", {
  at: Schema.DateTimeUtc
}) {}
export class NotificationOpened extends Schema.TaggedClass<NotificationOpened>()("NotificationOpened", {
  notificationId: Schema.String,
  at: Schema.DateTimeUtc
}) {}
export class RequestReceived extends Schema.TaggedClass<RequestReceived>()("RequestReceived", {
  integrationId: IntegrationId,
  transactionId: TransactionId,
  reference: Schema.String,
  paymentMethod: Schema.String,
  currency: Schema.String,
  total: Amount,
  stage: TerminalSandbox.RequestStage,
  /** R6 on: a charge notification is posted (it stays until opened, R2). */
  notified: Schema.Boolean,
  /** When the terminal was locked, if it was (reported to the gateway's caller, R1). */
  lockedSince: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc),
  at: Schema.DateTimeUtc
}) {}
export class RequestMissed extends Schema.TaggedClass<RequestMissed>()("RequestMissed", {
  integrationId: IntegrationId,
  reason: Schema.String,
  at: Schema.DateTimeUtc
}) {}
export class RequestReleased extends Schema.TaggedClass<RequestReleased>()("RequestReleased", {
  integrationId: IntegrationId,
  at: Schema.DateTimeUtc
}) {}
export class OutcomeRecorded extends Schema.TaggedClass<OutcomeRecorded>()("OutcomeRecorded", {
  integrationId: IntegrationId,
  outcome: Schema.Literal("approved", "rejected"),
  at: Schema.DateTimeUtc
}) {}
export class MissedDropped extends Schema.TaggedClass<MissedDropped>()("MissedDropped", {
  integrationId: IntegrationId,
  at: Schema.DateTimeUtc
}) {}

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

/** A charge on the terminal without an outcome. */
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

/** A notification on the terminal's screen. */
export interface Note {
  readonly id: string
  readonly integrationId: IntegrationId
  readonly message: string
  readonly postedAt: DateTime.Utc
}

/** The terminal: `ON` or `OFF`. A terminal nobody touched is on, unlocked, app open, session active. */
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

/** Why a push cannot reach the terminal (spec A preconditions, R5), or none when it can. */
export const unreachableReason = (state: State): Option.Option<string> =>
  state._tag === "OFF"
    ? Option.some("the terminal is powered off")
    : state.app === "closed"
      ? Option.some("the payment app is closed")
      : state.session === "expired"
        ? Option.some("the session token expired (disconnected POS): lock and unlock the terminal")
        : Option.none()

/** The charge `approve` and `reject` act on: the oldest pending one that is not held. */
export const actionable = (state: State): Option.Option<Pending> =>
  Option.fromNullable(state.pending.find((p) => p.stage !== "held"))

/** The notification id of a charge (one notification per charge). */
export const notificationId = (integrationId: IntegrationId): string => `NTF_${integrationId}`

// ---------------------------------------------------------------------------------------------
// Transitions and decide
// ---------------------------------------------------------------------------------------------

/** Off, only power-on, behaviour changes and the gateway's reports are possible. */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  ON: {
    SetBehavior: ["ON"],
    Lock: ["ON"],
    Unlock: ["ON"],
    PowerOff: ["OFF"],
    PowerOn: ["ON"],
    ExpireSession: ["ON"],
    OpenNotification: ["ON"],
    Deliver: ["ON"],
    Release: ["ON"],
    RecordOutcome: ["ON"],
    DropMissed: ["ON"]
  },
  OFF: {
    SetBehavior: ["OFF"],
    PowerOff: ["OFF"],
    PowerOn: ["ON"],
    Deliver: ["OFF"],
    RecordOutcome: ["OFF"],
    DropMissed: ["OFF"]
  }
})

const actionOf: Partial<Record<Command["_tag"], TerminalSandbox.Action>> = {
  Lock: "lock",
  Unlock: "unlock",
  PowerOff: "power_off",
  PowerOn: "power_on",
  ExpireSession: "expire_session",
  OpenNotification: "open_notification",
  Release: "unlock"
}

type Result = Either.Either<ReadonlyArray<Event>, TerminalSandbox.ActionRefused>
const ok = (...events: ReadonlyArray<Event>): Result => Either.right(events)
const none = ok()

export const decide = (command: Command, state: State): Result => {
  if (!Transitions.allows(transitions, state._tag, command._tag)) {
    return Either.left(
      new TerminalSandbox.ActionRefused({
        action: actionOf[command._tag] ?? "power_on",
        reason: "the terminal is powered off"
      })
    )
  }
  return Match.valueTags(command, {
    SetBehavior: (c) => {
      const chargeNotifications = Option.getOrElse(c.chargeNotifications, () => state.chargeNotifications)
      return c.behavior === state.behavior && chargeNotifications === state.chargeNotifications
        ? none
        : ok(new BehaviorSet({ behavior: c.behavior, chargeNotifications, at: c.now }))
    },
    // Locking a locked terminal keeps the original lock instant: R1 counts from it.
    Lock: (c) => (Option.isSome(state.lockedSince) ? none : ok(new Locked({ at: c.now }))),
    Unlock: (c) =>
      Option.isNone(state.lockedSince)
        ? none
        : ok(new Unlocked({ sessionRenewed: state.session === "expired", at: c.now })),
    PowerOff: (c) => (state._tag === "OFF" ? none : ok(new PoweredOff({ at: c.now }))),
    PowerOn: (c) => (state._tag === "ON" ? none : ok(new PoweredOn({ at: c.now }))),
    ExpireSession: (c) => (state.session === "expired" ? none : ok(new SessionExpired({ at: c.now }))),
    OpenNotification: (c) => {
      const newest = state.notifications[state.notifications.length - 1]
      return newest === undefined
        ? Either.left(
            new TerminalSandbox.ActionRefused({
              action: "open_notification",
              reason: "there is no notification on the terminal"
            })
          )
        : ok(new NotificationOpened({ notificationId: newest.id, at: c.now }))
    },
    Deliver: (c) => {
      if (state.pending.some((p) => p.integrationId === c.integrationId)) return none
      return Option.match(unreachableReason(state), {
        onSome: (reason) =>
          state.missed.includes(c.integrationId)
            ? none
            : ok(new RequestMissed({ integrationId: c.integrationId, reason, at: c.now })),
        onNone: () => {
          const held = TerminalCheckout.holdsPayment(state.lockedSince, c.now)
          return ok(
            new RequestReceived({
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
            })
          )
        }
      })
    },
    Release: (c) =>
      state.pending.some((p) => p.integrationId === c.integrationId && p.stage === "held")
        ? ok(new RequestReleased({ integrationId: c.integrationId, at: c.now }))
        : none,
    RecordOutcome: (c) =>
      state.pending.some((p) => p.integrationId === c.integrationId)
        ? ok(new OutcomeRecorded({ integrationId: c.integrationId, outcome: c.outcome, at: c.now }))
        : none,
    DropMissed: (c) =>
      state.missed.includes(c.integrationId)
        ? ok(new MissedDropped({ integrationId: c.integrationId, at: c.now }))
        : none
  })
}

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

export const evolve = (state: State, event: Event): State =>
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

/** The SimTerminal aggregate; its streams are keyed by `Simulator.terminalKey` (merchant, serial, mode). */
export const SimTerminal: Aggregate<Command, Event, State, TerminalSandbox.ActionRefused> = {
  name: "SimTerminal",
  initialState,
  decide,
  evolve,
  transitions,
  Event,
  schemaVersion: 1
}
