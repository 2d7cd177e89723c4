/**
 * The terminal gateway port (spec A): pushes a charge to a bound card terminal and reports what the
 * terminal did. `@cobro/terminal-sim` implements it with simulated Smart and Smart Pro terminals.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { IntegrationId, MerchantId, TerminalSerial, TransactionId } from "../shared/Ids.js"
import { Amount } from "../shared/Money.js"

/**
 * What the terminal is asked to charge.
 *
 * @category schemas
 */
export class ChargeInstruction extends Schema.Class<ChargeInstruction>("ChargeInstruction")({
  integrationId: IntegrationId,
  /** The transaction the terminal reports its outcome against. */
  transactionId: TransactionId,
  merchantId: MerchantId,
  terminalSerial: TerminalSerial,
  terminalModel: Schema.String,
  paymentMethod: Schema.String,
  currency: Schema.String,
  total: Amount,
  reference: Schema.String,
  sandbox: Schema.Boolean
}) {}

/**
 * The terminal could not be reached (powered off, app closed, session expired: R5).
 *
 * @category errors
 */
export class TerminalUnreachable extends Schema.TaggedError<TerminalUnreachable>()("TerminalUnreachable", {
  terminalSerial: TerminalSerial,
  reason: Schema.String
}) {}

/**
 * The terminal did not answer this push: it stayed busy with other requests, or the call was cut at
 * the push's timeout. Neither delivered nor unreachable as far as Cobro knows: the checkout stays
 * SENDING and its push is tried again (spec-decisions A-23), never read as unreachable.
 *
 * @category errors
 */
export class TerminalBusy extends Schema.TaggedError<TerminalBusy>()("TerminalBusy", {
  terminalSerial: TerminalSerial,
  reason: Schema.String
}) {}

/**
 * The instruction reached the terminal. `lockedSince` is when the terminal was locked, if it was:
 * locked for more than 2 minutes, it holds the payment until unlocked (R1).
 *
 * @category schemas
 */
export class Delivered extends Schema.Class<Delivered>("Delivered")({
  lockedSince: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc),
  /**
   * The terminal's acknowledgement is on the checkout already: a terminal that answers in process
   * (the simulator) records it, and any outcome it decides at once, with its own state in one
   * commit. The caller then records nothing more.
   */
  recorded: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/**
 * The terminal gateway port.
 *
 * @category services
 */
export class TerminalGateway extends Context.Tag("@cobro/domain/TerminalGateway")<
  TerminalGateway,
  {
    /**
     * Sends the instruction; once sent it cannot be cancelled remotely (R3). At least once: a push
     * may be sent again for the same `integrationId` (a pusher cut before it recorded the answer),
     * and the terminal takes one charge per integration id.
     */
    readonly push: (
      instruction: ChargeInstruction
    ) => Effect.Effect<Delivered, TerminalUnreachable | TerminalBusy>
  }
>() {}
