/**
 * The terminal sandbox port (issue 4, "Admin and sandbox contract"; spec rules R1–R7): a merchant's
 * test key sets how a simulated terminal answers and acts on it as its cashier and customer would.
 * `@cobro/terminal-sim` implements it next to the `TerminalGateway` it controls. It reaches the
 * terminal's sandbox device only: production checkouts on the same serial are never shown, decided,
 * held or missed by it (issue 17).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { EventMetadata } from "../kernel/EventStore.js"
import { IntegrationId, MerchantId, TerminalSerial, TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"

/**
 * How the terminal answers a charge: `auto_approve` (the default) and `auto_reject` decide as soon
 * as the charge can be processed; `manual` waits for an `approve` or `reject` action.
 *
 * @category schemas
 */
export const Behavior = Schema.Literal("manual", "auto_approve", "auto_reject")
export type Behavior = typeof Behavior.Type

/** The behaviour of a terminal nobody configured. */
export const DEFAULT_BEHAVIOR: Behavior = "auto_approve"

/**
 * What the cashier or customer does on the terminal.
 *
 * @category schemas
 */
export const Action = Schema.Literal(
  "approve",
  "reject",
  "lock",
  "unlock",
  "power_off",
  "power_on",
  "expire_session",
  "open_notification"
)
export type Action = typeof Action.Type

/**
 * Power: a terminal that is off cannot be reached.
 *
 * @category schemas
 */
export const Power = Schema.Literal("on", "off")
export type Power = typeof Power.Type

/**
 * The payment app: open or in background is reachable, closed is not (spec A preconditions).
 *
 * @category schemas
 */
export const AppState = Schema.Literal("open", "background", "closed")
export type AppState = typeof AppState.Type

/**
 * The app's session token: an expired one shows the disconnected-POS message (R5).
 *
 * @category schemas
 */
export const Session = Schema.Literal("active", "expired")
export type Session = typeof Session.Type

/**
 * Where a charge on the terminal stands: `notified` (a charge notification waits for the cashier,
 * R6 on), `charging` (the payment screen is open), `held` (received while locked for more than 2
 * minutes; processed on unlock, R1).
 *
 * @category schemas
 */
export const RequestStage = Schema.Literal("notified", "charging", "held")
export type RequestStage = typeof RequestStage.Type

/**
 * A charge on the terminal that has no outcome yet. It cannot be cancelled remotely (R3).
 *
 * @category schemas
 */
export const PendingRequest = Schema.Struct({
  integration_id: IntegrationId,
  transaction_id: TransactionId,
  reference: Schema.String,
  payment_method: Schema.String,
  currency: Schema.String,
  total: Amount,
  stage: RequestStage,
  received_at: Schema.DateTimeUtc
})
export type PendingRequest = typeof PendingRequest.Type

/**
 * A notification shown on the terminal; it stays until opened (R2).
 *
 * @category schemas
 */
export const TerminalNotification = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  message: Schema.String,
  posted_at: Schema.DateTimeUtc
})
export type TerminalNotification = typeof TerminalNotification.Type

/**
 * The last outcome the terminal reported.
 *
 * @category schemas
 */
export const LastOutcome = Schema.Struct({
  integration_id: IntegrationId,
  outcome: Schema.Literal("approved", "rejected"),
  at: Schema.DateTimeUtc
})
export type LastOutcome = typeof LastOutcome.Type

/**
 * A simulated terminal as the sandbox shows it (the body of the actions and behaviour answers).
 *
 * @category schemas
 */
export const TerminalState = Schema.Struct({
  terminal_serial: TerminalSerial,
  terminal_model: Schema.String,
  behavior: Behavior,
  /** R6: the merchant app's charge-notification setting (on by default). */
  charge_notifications: Schema.Boolean,
  power: Power,
  app_state: AppState,
  locked: Schema.Boolean,
  locked_since: Schema.NullOr(Schema.DateTimeUtc),
  session: Session,
  /** Powered on, app open or in background, session active: a push reaches it. */
  reachable: Schema.Boolean,
  /** R7: the API-only mode is announced but not available; always false. */
  api_only_mode: Schema.Literal(false),
  /** Oldest first; `approve` and `reject` act on the oldest one that is not held. */
  pending_requests: Schema.Array(PendingRequest),
  /** Oldest first; `open_notification` opens the newest. */
  notifications: Schema.Array(TerminalNotification),
  /** R4: after a successful payment the confirmation screen stays until the next charge. */
  on_confirmation_screen: Schema.Boolean,
  /** Charges that could not reach the terminal; pushed again when it is reachable (R5). */
  missed_requests: Schema.Array(IntegrationId),
  last_outcome: Schema.NullOr(LastOutcome)
}).annotations({ identifier: "TerminalState" })
export type TerminalState = typeof TerminalState.Type

/** Which terminal: a serial bound to a merchant. */
export interface TerminalRef {
  readonly merchantId: MerchantId
  readonly terminalSerial: TerminalSerial
}

/**
 * The merchant has no terminal bound with that serial.
 *
 * @category errors
 */
export class UnknownTerminal extends Schema.TaggedError<UnknownTerminal>()("UnknownTerminal", {
  terminalSerial: Schema.String
}) {}

/**
 * The action cannot be done on the terminal as it is (approve with nothing to approve, unlock when off…).
 *
 * @category errors
 */
export class ActionRefused extends Schema.TaggedError<ActionRefused>()("ActionRefused", {
  action: Action,
  reason: Schema.String
}) {}

/** Options of a behaviour change. */
export interface BehaviorOptions {
  /** R6: turns the charge-notification setting on or off; unchanged when absent. */
  readonly chargeNotifications?: boolean | undefined
  /** Who made the change, for the log (the merchant panel records its user). */
  readonly metadata?: EventMetadata | undefined
}

/**
 * The terminal sandbox port.
 *
 * @category services
 */
export class TerminalSandbox extends Context.Tag("@cobro/domain/TerminalSandbox")<
  TerminalSandbox,
  {
    /** The terminal as it is now. */
    readonly state: (terminal: TerminalRef) => Effect.Effect<TerminalState, UnknownTerminal>
    /** Sets how the terminal answers charges from now on; returns its state. */
    readonly setBehavior: (
      terminal: TerminalRef,
      behavior: Behavior,
      options?: BehaviorOptions
    ) => Effect.Effect<TerminalState, UnknownTerminal>
    /** Does one action on the terminal and returns its state afterwards. */
    readonly perform: (
      terminal: TerminalRef,
      action: Action
    ) => Effect.Effect<TerminalState, UnknownTerminal | ActionRefused>
  }
>() {}
