/**
 * The terminal payment use cases (spec A1–A4, rules R1–R5): the merchant's methods and bound
 * terminals, the checkout (decode, merchant checks, create, push through the gateway), the outcomes
 * the terminal reports, and the fallback notifications query. Pure: everything goes through ports.
 *
 * Every command takes the metadata of its events, `actor` saying who caused them: the merchant for
 * A3 (the checkout, its push, and a push the terminal cannot take), the terminal (`terminal:<serial>`)
 * for what the terminal reports (its acknowledgement, an unlock, a sale's or a void's outcome) and
 * for a push again once it is back.
 */
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CheckoutErrors from "./CheckoutErrors.js"
import * as CommandHandler from "../kernel/CommandHandler.js"
import type * as EventStore from "../kernel/EventStore.js"
import { nextId } from "../kernel/IdGenerator.js"
import { IntegrationId, MerchantId, TransactionId } from "../shared/Ids.js"
import * as Merchant from "../merchants/Merchant.js"
import * as Nanos from "../shared/Nanos.js"
import * as Notification from "../webhooks/NotificationApi.js"
import { NotificationLog, type Owner } from "../webhooks/NotificationLog.js"
import * as Taxes from "./Taxes.js"
import type * as TerminalApi from "./TerminalApi.js"
import * as TerminalCheckout from "./TerminalCheckout.js"
import { unchecked } from "../kernel/Unchecked.js"
import { ChargeInstruction, TerminalBusy, TerminalGateway } from "./TerminalGateway.js"

/** Who calls the terminal API: one merchant, with a production (`sandbox: false`) or test key. */
export interface Caller {
  readonly merchantId: MerchantId
  readonly sandbox: boolean
}

// The merchant is read by nearly every request: only the events since the state last read are folded.
const loadMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const loadCheckout = CommandHandler.load(TerminalCheckout.TerminalCheckout)
// A checkout this process has just written is decided on as written: its next append checks the version.
const loadKnownCheckout = CommandHandler.loadKnown(TerminalCheckout.TerminalCheckout)
const handleCheckout = CommandHandler.make(TerminalCheckout.TerminalCheckout)
const decideCheckoutAll = CommandHandler.deciderOfAll(TerminalCheckout.TerminalCheckout)

const now = DateTime.now

/**
 * A checkout as a previous command left it, with its stream version: the outcome commands accept
 * it to decide without reading the stream again (`CommandHandler.Known`; a stale one only costs a
 * retry).
 */
export type KnownCheckout = CommandHandler.Known<TerminalCheckout.State>

/** The actor of what a terminal reports: `terminal:<serial>`. */
export const terminalActor = (terminalSerial: string): string => `terminal:${terminalSerial}`

/** The metadata of what the terminal `terminalSerial` reports. */
export const reportedBy = (terminalSerial: string): EventStore.EventMetadata => ({
  actor: terminalActor(terminalSerial)
})

/** The metadata of a report on a checkout: its own terminal's (none for a checkout that does not exist). */
const reportOn = (state: TerminalCheckout.State): EventStore.EventMetadata =>
  state._tag === "Initial" ? {} : reportedBy(state.checkout.terminalSerial)

/**
 * The checkout to decide a terminal's report on and the report's metadata: the caller's when given;
 * otherwise the checkout's terminal, read from the checkout (the one the caller holds, or the stream:
 * the read the handler would make, so the report costs no more).
 */
const asReported = (
  integrationId: IntegrationId,
  known: KnownCheckout | undefined,
  metadata: EventStore.EventMetadata | undefined
) =>
  metadata !== undefined
    ? Effect.succeed({ known, metadata })
    : Effect.map(known === undefined ? loadCheckout(integrationId) : Effect.succeed(known), (current) => ({
        known: current as KnownCheckout | undefined,
        metadata: reportOn(current.state)
      }))

/**
 * Decides a terminal's report on a checkout: the command, made at the current instant, on the
 * checkout and with the metadata {@link asReported} gives.
 */
const handleReport = Effect.fnUntraced(function* (
  integrationId: IntegrationId,
  command: (now: DateTime.Utc) => TerminalCheckout.Command,
  known: KnownCheckout | undefined,
  metadata: EventStore.EventMetadata | undefined
) {
  const reported = yield* asReported(integrationId, known, metadata)
  return yield* handleCheckout(integrationId, command(yield* now), reported.metadata, reported.known)
})

/**
 * A1: every terminal method with `enabled`, in the A1 order (POS, WALLET_A, WALLET_B, PAY_BY_LINK, PAY_BY_QR_SERVICE).
 *
 * @category queries
 */
export const paymentMethods = Effect.fn("TerminalPayments.paymentMethods")(function* (
  merchantId: MerchantId
) {
  const { state } = yield* loadMerchant(merchantId)
  return Merchant.terminalMethods(state).map((m): TerminalApi.PaymentMethodEntry => ({
    name: m.name,
    enabled: m.enabled
  }))
})

/**
 * A2: the terminals bound to the merchant, selected for the API or not, each with status `BINDED`.
 *
 * @category queries
 */
export const boundTerminals = Effect.fn("TerminalPayments.boundTerminals")(function* (
  merchantId: MerchantId
) {
  const { state } = yield* loadMerchant(merchantId)
  return Merchant.boundTerminals(state).map((t): TerminalApi.TerminalEntry => ({
    terminal_model: t.model,
    terminal_serial: t.serial,
    status: "BINDED",
    name: t.name
  }))
})

/**
 * What A3 created: the checkout's ids and its status after the push (SENT, HELD, UNREACHABLE, or an
 * outcome; SENDING when the terminal did not answer in time and the pusher will push it again).
 */
export interface CheckoutCreated {
  readonly integrationId: IntegrationId
  readonly transactionId: TransactionId
  readonly status: TerminalCheckout.Status
}

/**
 * The merchant checks of A3 after decoding, in the spec's field order: the method must be active
 * (AP003; `""` needs at least one active method, since the terminal's selection screen lists the
 * active ones), then the terminal must be bound to an enabled account with that model and be
 * selected for the API (AP004).
 */
export const checkMerchant = (
  state: Merchant.State,
  request: TerminalApi.CheckoutRequest
): Either.Either<void, CheckoutErrors.PaymentMethodNotActive | CheckoutErrors.TerminalNotBound> => {
  const active = Merchant.activeTerminalMethods(state)
  const method = request.payment_method
  if (method === "" ? active.length === 0 : !active.includes(method)) {
    return Either.left(new CheckoutErrors.PaymentMethodNotActive({ payment_method: method }))
  }
  if (
    !Merchant.isEnabled(state) ||
    !Merchant.isTerminalUsable(state, request.terminal_serial, request.terminal_model)
  ) {
    return Either.left(
      new CheckoutErrors.TerminalNotBound({
        terminal_model: request.terminal_model,
        terminal_serial: request.terminal_serial
      })
    )
  }
  return Either.void
}

const unmapped = (reason: string) => new CheckoutErrors.Unmapped({ reason })

/**
 * A3: decodes the raw JSON body (AP002/AP003/AP005/AP006 with the field), checks the merchant (AP003
 * not active, AP004 not bound or not usable), computes the tax lines (AP002 when the amounts cannot
 * hold), creates the checkout with fresh `INT_…` and `TRX_…` ids, and pushes it to the terminal.
 *
 * An unreachable terminal does not fail the request: the checkout exists, waits UNREACHABLE and is
 * pushed again when the terminal comes back (spec-decisions A-16). The push is a fast path: its
 * claim commits with the checkout, so a request cut after that commit, or a terminal that does not
 * answer in time, leaves the push to the pusher ({@link pushAgain}, spec-decisions A-23). Any other
 * failure is AP001.
 *
 * @category commands
 */
export const checkout = Effect.fn("TerminalPayments.checkout")(function* (
  caller: Caller,
  body: unknown,
  /** Who asks: the key's merchant unless told. */
  metadata: EventStore.EventMetadata = { actor: caller.merchantId }
) {
  const request = yield* CheckoutErrors.decodeCheckoutRequest(body)
  const { state: merchant } = yield* loadMerchant(caller.merchantId)
  yield* checkMerchant(merchant, request)
  const taxes = yield* Option.match(
    Taxes.taxLines(request.amount.taxes, {
      total: request.amount.total_amount,
      tip: request.amount.tip_amount
    }),
    {
      onNone: () =>
        Effect.fail(
          new CheckoutErrors.InvalidTaxes({ reason: "the tax values and the tip exceed the total" })
        ),
      onSome: Effect.succeed
    }
  )
  const integrationId = IntegrationId.make(yield* nextId("INT_"))
  const transactionId = TransactionId.make(yield* nextId("TRX_"))
  const payer = Option.fromNullable(request.payer).pipe(
    Option.map(
      (p) =>
        new TerminalCheckout.Payer(
          {
            email: Option.fromNullable(p.email),
            phoneNumber: Option.fromNullable(p.phone_number),
            document: Option.fromNullable(p.document).pipe(
              Option.map(
                (d) =>
                  new TerminalCheckout.PayerDocument(
                    {
                      documentType: Option.fromNullable(d.document_type),
                      documentNumber: Option.fromNullable(d.document_number)
                    },
                    unchecked
                  )
              )
            )
          },
          unchecked
        )
    )
  )
  const at = yield* now
  // The checkout and the claim of its first push are one append: the terminal is called after it.
  // Its commands hold the decoded request's values and those computed above: built unchecked.
  const created = yield* decideCheckoutAll(
    integrationId,
    [
      new TerminalCheckout.CreateCheckout(
        {
          integrationId,
          transactionId,
          merchantId: caller.merchantId,
          sandbox: caller.sandbox,
          terminalSerial: request.terminal_serial,
          terminalModel: request.terminal_model,
          reference: request.reference,
          amount: new TerminalCheckout.CheckoutAmount(
            {
              currency: request.amount.currency,
              total: request.amount.total_amount,
              tip: request.amount.tip_amount,
              taxes
            },
            unchecked
          ),
          paymentMethod: request.payment_method,
          userEmail: request.user_email,
          description: Option.fromNullable(request.description),
          payer,
          now: at
        },
        unchecked
      ),
      new TerminalCheckout.AttemptPush({ now: at }, unchecked)
    ],
    CommandHandler.fresh(TerminalCheckout.TerminalCheckout),
    metadata
  ).pipe(
    Effect.tap((decided) => CommandHandler.commit([decided])),
    Effect.mapError((e) => unmapped(`${e._tag} while creating the checkout`))
  )
  // The checkout and its claim are committed: a push that fails from here (a connection lost while
  // the terminal's answer was written) is the pusher's to finish. Answering an error would have the
  // merchant send the sale again, and both would be charged.
  const status = yield* deliver(integrationId, created.handled, metadata).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.as(
            Effect.logWarning(
              "A3: the push failed after the checkout was committed; the pusher pushes it",
              cause
            ),
            "SENDING" as const
          )
    )
  )
  return { integrationId, transactionId, status } satisfies CheckoutCreated
})

/**
 * Pushes a checkout to its terminal: claims the push (`AttemptPush`, so that a cancel cannot race it,
 * R3), calls the gateway, and records the delivery (SENT, or HELD on a terminal locked for more than
 * 2 minutes, R1) or the failure (UNREACHABLE, R5). Used to push an UNREACHABLE checkout again once
 * its terminal is back (A3 writes the checkout and its first claim in one append, then delivers);
 * a SENDING checkout whose claim is live is left to its pusher. Returns the checkout's status
 * afterwards. `known`: the checkout as the caller just left it, to claim the push without reading
 * the stream again. `metadata`: who caused the push again; by default the checkout's terminal, whose
 * return causes it.
 *
 * @category commands
 */
export const push = Effect.fn("TerminalPayments.push")(function* (
  integrationId: IntegrationId,
  known?: KnownCheckout,
  metadata?: EventStore.EventMetadata
) {
  const reported = yield* asReported(integrationId, known, metadata)
  const claimed = yield* handleCheckout(
    integrationId,
    new TerminalCheckout.AttemptPush({ now: yield* now }),
    reported.metadata,
    reported.known
  )
  // A live claim is its pusher's (TerminalCheckout.claimLapsed): it pushes, this call does not.
  if (claimed.events.length === 0) {
    return claimed.state._tag === "Initial" ? ("PENDING" as const) : claimed.state._tag
  }
  return yield* deliver(integrationId, claimed, reported.metadata)
})

/** Who pushes a checkout again when its claim has lapsed: the server's pusher. */
export const PUSHER: EventStore.EventMetadata = { actor: "pusher" }

/**
 * The pusher's use case (spec-decisions A-23): claims again the push of a SENDING checkout whose
 * claim has lapsed (`TerminalCheckout.claimLapsed`: its request was cut, its node died, or its
 * terminal did not answer in time), or of one an earlier version left UNREACHABLE for a busy
 * terminal (`TerminalCheckout.BUSY_READ_AS_UNREACHABLE`), and pushes it. The claim is appended at the version read, never
 * retried: a conflict means another pusher claimed it (or the terminal answered) first, so two
 * pushers never push one claim. Returns the status after the push, or none when there was nothing
 * to push (not SENDING, a live claim, or claimed by another).
 *
 * @category commands
 */
export const pushAgain = Effect.fn("TerminalPayments.pushAgain")(function* (
  integrationId: IntegrationId,
  metadata: EventStore.EventMetadata = PUSHER
) {
  const current = yield* loadCheckout(integrationId)
  // Only a push under way is the pusher's: an UNREACHABLE checkout waits for its terminal,
  // unless an earlier version recorded a busy terminal as unreachable.
  const state = current.state
  const due =
    state._tag === "SENDING" ||
    (state._tag === "UNREACHABLE" &&
      Option.contains(state.lastFailure, TerminalCheckout.BUSY_READ_AS_UNREACHABLE))
  if (!due) return Option.none<TerminalCheckout.Status>()
  const claim = yield* decideCheckoutAll(
    integrationId,
    [new TerminalCheckout.AttemptPush({ now: yield* now })],
    current,
    metadata
  )
  if (claim.append === undefined) return Option.none<TerminalCheckout.Status>()
  const claimed = yield* CommandHandler.commit([claim]).pipe(
    Effect.as(true),
    Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(false))
  )
  if (!claimed) return Option.none<TerminalCheckout.Status>()
  return Option.some(yield* deliver(integrationId, claim.handled, metadata))
})

/**
 * Calls the gateway for a checkout whose push is claimed, and records the delivery (the terminal's
 * acknowledgement: its report) or the failure (with the push's `metadata`). The call is cut when the
 * claim lapses (`TerminalCheckout.PUSH_TIMEOUT_MS` after it), so that no other pusher's claim finds
 * it still running; a terminal that did not answer (busy, or cut) records nothing: the checkout
 * stays SENDING for the pusher.
 */
const deliver = Effect.fnUntraced(function* (
  integrationId: IntegrationId,
  claimed: KnownCheckout,
  metadata: EventStore.EventMetadata
) {
  if (claimed.state._tag === "Initial") return yield* new TerminalCheckout.CheckoutNotFound()
  const checkout = claimed.state.checkout
  const gateway = yield* TerminalGateway
  const started = yield* now
  const left = Option.match(claimed.state.claimedAt, {
    onNone: () => TerminalCheckout.PUSH_TIMEOUT_MS,
    onSome: (at) =>
      DateTime.toEpochMillis(at) + TerminalCheckout.PUSH_TIMEOUT_MS - DateTime.toEpochMillis(started)
  })
  const delivered = yield* gateway
    .push(
      new ChargeInstruction(
        {
          integrationId,
          transactionId: checkout.transactionId,
          merchantId: checkout.merchantId,
          terminalSerial: checkout.terminalSerial,
          terminalModel: checkout.terminalModel,
          paymentMethod: checkout.paymentMethod,
          currency: checkout.amount.currency,
          total: checkout.amount.total,
          reference: checkout.reference,
          sandbox: checkout.sandbox
        },
        unchecked
      )
    )
    .pipe(
      Effect.timeoutFail({
        duration: Duration.millis(Math.max(0, left)),
        onTimeout: () =>
          new TerminalBusy({
            terminalSerial: checkout.terminalSerial,
            reason: "the terminal did not answer within the push timeout"
          })
      }),
      Effect.either
    )
  // No answer: neither delivered nor unreachable. The claim lapses and the pusher pushes it again.
  if (Either.isLeft(delivered) && delivered.left._tag === "TerminalBusy") return "SENDING" as const
  if (Either.isRight(delivered) && delivered.right.recorded) {
    const { state } = yield* loadKnownCheckout(integrationId)
    return state._tag === "Initial" ? ("PENDING" as const) : state._tag
  }
  const recorded = yield* Either.match(delivered, {
    onLeft: (unreachable) =>
      Effect.flatMap(now, (at) =>
        handleCheckout(
          integrationId,
          new TerminalCheckout.RecordUnreachable({ reason: unreachable.reason, now: at }, unchecked),
          metadata
        )
      ),
    onRight: (d) =>
      Effect.flatMap(now, (at) =>
        handleCheckout(
          integrationId,
          new TerminalCheckout.RecordDelivery({ lockedSince: d.lockedSince, now: at }, unchecked),
          reportedBy(checkout.terminalSerial)
        )
      )
  })
  return recorded.state._tag === "Initial" ? ("PENDING" as const) : recorded.state._tag
})

/**
 * The checkout's current state (the simulator reads what it was asked to charge).
 *
 * @category queries
 */
export const load = Effect.fn("TerminalPayments.load")(function* (integrationId: IntegrationId) {
  const { state } = yield* loadCheckout(integrationId)
  return state
})

/**
 * The terminal acknowledged the instruction (the simulator may report it before the push returns).
 * `metadata`: by default the checkout's terminal's ({@link reportedBy}), as for every report below.
 *
 * @category commands
 */
export const recordDelivery = Effect.fn("TerminalPayments.recordDelivery")(function* (
  integrationId: IntegrationId,
  lockedSince: Option.Option<DateTime.Utc>,
  known?: KnownCheckout,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.RecordDelivery({ lockedSince, now: at }),
    known,
    metadata
  )
})

/**
 * R1: the terminal was unlocked; a held payment is processed.
 *
 * @category commands
 */
export const recordUnlock = Effect.fn("TerminalPayments.recordUnlock")(function* (
  integrationId: IntegrationId,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.UnlockTerminal({ now: at }),
    undefined,
    metadata
  )
})

/**
 * The terminal approved the sale (SALE_APPROVED); the sale carries what the webhook's `data` needs.
 *
 * @category commands
 */
export const approveSale = Effect.fn("TerminalPayments.approveSale")(function* (
  integrationId: IntegrationId,
  transactionId: TransactionId,
  sale: TerminalCheckout.Sale,
  known?: KnownCheckout,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.ApproveSale({ transactionId, sale, now: at }),
    known,
    metadata
  )
})

/**
 * The checkout as this process last wrote or read it, without a read when it has it
 * (`CommandHandler.loadKnown`): for a decision committed with the checkout's expected version.
 */
export const knownCheckout = (integrationId: IntegrationId) => loadKnownCheckout(integrationId)

/** What a terminal answers at once when it takes a charge: it approves the sale, or rejects it. */
export type ImmediateOutcome =
  | { readonly _tag: "Approve"; readonly sale: TerminalCheckout.Sale }
  | {
      readonly _tag: "Reject"
      readonly reason: string
      readonly card: Option.Option<TerminalCheckout.Card>
    }

/**
 * The terminal's acknowledgement and the outcome it decided at once (an automatic behaviour), decided
 * together on `known` (usually {@link knownCheckout}), and not written: the terminal's
 * adapter commits them with its own decisions (`CommandHandler.commit`), so that nothing records an
 * outcome on one side only. Fails as the commands do (the checkout moved on: a cancel, another answer).
 */
export const decideAnswer = Effect.fnUntraced(function* (
  integrationId: IntegrationId,
  transactionId: TransactionId,
  lockedSince: Option.Option<DateTime.Utc>,
  outcome: ImmediateOutcome,
  known: KnownCheckout,
  metadata: EventStore.EventMetadata = reportOn(known.state)
) {
  const at = yield* now
  return yield* decideCheckoutAll(
    integrationId,
    [
      new TerminalCheckout.RecordDelivery({ lockedSince, now: at }, unchecked),
      outcome._tag === "Approve"
        ? new TerminalCheckout.ApproveSale({ transactionId, sale: outcome.sale, now: at }, unchecked)
        : new TerminalCheckout.RejectSale(
            {
              transactionId,
              reason: outcome.reason,
              card: outcome.card,
              now: at
            },
            unchecked
          )
    ],
    known,
    metadata
  )
})

/**
 * The terminal rejected the sale (SALE_REJECTED), with the card read if any.
 *
 * @category commands
 */
export const rejectSale = Effect.fn("TerminalPayments.rejectSale")(function* (
  integrationId: IntegrationId,
  transactionId: TransactionId,
  reason: string,
  card: Option.Option<TerminalCheckout.Card>,
  known?: KnownCheckout,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.RejectSale({ transactionId, reason, card, now: at }),
    known,
    metadata
  )
})

/**
 * The sale was voided on the terminal and the void approved (VOID_APPROVED).
 *
 * @category commands
 */
export const approveVoid = Effect.fn("TerminalPayments.approveVoid")(function* (
  integrationId: IntegrationId,
  transactionId: TransactionId,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.ApproveVoid({ transactionId, now: at }),
    undefined,
    metadata
  )
})

/**
 * The void was rejected (VOID_REJECTED); the sale stays APPROVED.
 *
 * @category commands
 */
export const rejectVoid = Effect.fn("TerminalPayments.rejectVoid")(function* (
  integrationId: IntegrationId,
  transactionId: TransactionId,
  reason: string,
  metadata?: EventStore.EventMetadata
) {
  return yield* handleReport(
    integrationId,
    (at) => new TerminalCheckout.RejectVoid({ transactionId, reason, now: at }),
    undefined,
    metadata
  )
})

const decodeNotification = Schema.decodeEither(Nanos.fromExactJson(Notification.Notification))

/**
 * A4: the notification of the last valid state of each matching payment of the caller (its merchant,
 * production or sandbox), at most 10: by transaction id (default) or by the external reference sent
 * with the payment. A stored body that no longer decodes is skipped (it cannot be served in the A4
 * shape).
 *
 * @category queries
 */
export const fallbackNotifications = Effect.fn("TerminalPayments.fallbackNotifications")(function* (
  caller: Caller,
  paymentId: string,
  isExternalReference: boolean
) {
  const log = yield* NotificationLog
  const owner: Owner = { merchantId: caller.merchantId, sandbox: caller.sandbox }
  const bodies = isExternalReference
    ? yield* log.lastByExternalReference(owner, paymentId, MAX_NOTIFICATIONS)
    : Option.toArray(yield* log.lastByPaymentId(owner, paymentId))
  return bodies
    .flatMap((body) =>
      Either.getOrElse(
        Either.map(decodeNotification(body), (n) => [n]),
        () => []
      )
    )
    .slice(0, MAX_NOTIFICATIONS)
})

/** A4's limit. */
export const MAX_NOTIFICATIONS = 10
