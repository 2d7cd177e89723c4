/**
 * The payment link use cases (spec B): B1 the merchant's link methods with their bounds, B2 create a
 * link, B3 read its record, and the payment flow of the hosted checkout page, over the event store.
 *
 * Every command takes the metadata of its events, `actor` saying who caused them: by default the
 * key's merchant for B2, the payer (`payer`) for the checkout page's payment (the acquirer's answer
 * to it included) and the sweeper (`sweeper`) for the expiries; the caller passes its own.
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Acquirer from "../online/Acquirer.js"
import * as Schema from "effect/Schema"
import * as CommandHandler from "../kernel/CommandHandler.js"
import type * as EventStore from "../kernel/EventStore.js"
import { nextId } from "../kernel/IdGenerator.js"
import { PaymentLinkId, TransactionId } from "../shared/Ids.js"
import type * as LinkApi from "./LinkApi.js"
import * as Merchant from "../merchants/Merchant.js"
import type { Credential } from "../merchants/MerchantDirectory.js"
import { Amount } from "../shared/Money.js"
import * as Nanos from "../shared/Nanos.js"
import * as Payment from "../online/Payment.js"
import * as PaymentLink from "./PaymentLink.js"
import { unchecked } from "../kernel/Unchecked.js"

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * One field of a link request that breaks a rule only the merchant's account can check.
 *
 * @category schemas
 */
export const RequestIssue = Schema.Struct({ field: Schema.String, message: Schema.String })
export type RequestIssue = typeof RequestIssue.Type

/**
 * B2 rules beyond the wire schema (methods the merchant offers, a CLOSE total that some allowed
 * method's bounds admit, an expiration date in the future, taxes and tip within the total): one issue
 * per field, so the HTTP layer answers one error item per field.
 *
 * @category errors
 */
export class InvalidLinkRequest extends Schema.TaggedError<InvalidLinkRequest>()("InvalidLinkRequest", {
  issues: Schema.NonEmptyArray(RequestIssue)
}) {}

/**
 * An OPEN link's payment names no amount: the payer must choose one.
 *
 * @category errors
 */
export class PaymentAmountRequired extends Schema.TaggedError<PaymentAmountRequired>()(
  "PaymentAmountRequired",
  { linkId: PaymentLinkId }
) {}

/**
 * A card method was chosen without a card number: the acquirer has nothing to authorize.
 *
 * @category errors
 */
export class CardNumberRequired extends Schema.TaggedError<CardNumberRequired>()("CardNumberRequired", {
  linkId: PaymentLinkId
}) {}

/**
 * A decision on a payment that does not wait for the payer: it is being authorized, or it was
 * decided already with the other choice.
 *
 * @category errors
 */
export class PaymentNotAwaitingPayer extends Schema.TaggedError<PaymentNotAwaitingPayer>()(
  "PaymentNotAwaitingPayer",
  { linkId: PaymentLinkId, transactionId: TransactionId }
) {}

/**
 * A decision of the payer on a payment that the timeout sweeper expired meanwhile (they were away
 * longer than `Payment.ABANDONED_PAYMENT_TIMEOUT`): nothing was charged, and the link can be paid
 * again unless it expired too.
 *
 * @category errors
 */
export class LinkPaymentExpired extends Schema.TaggedError<LinkPaymentExpired>()("LinkPaymentExpired", {
  linkId: PaymentLinkId,
  transactionId: TransactionId
}) {}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

// The merchant is read by nearly every request, a link by every B3 and checkout page: only the
// events since the state last read are decoded and folded (`KnownStates`).
const loadMerchant = CommandHandler.loadCurrent(Merchant.Merchant)
const loadLink = CommandHandler.loadCurrent(PaymentLink.PaymentLink)
/** A link with its events: the checkout page's view of one transaction reads its history. */
const loadLinkHistory = CommandHandler.load(PaymentLink.PaymentLink)
const handleLink = CommandHandler.make(PaymentLink.PaymentLink)

const existingMerchant = Effect.fnUntraced(function* (merchantId: string) {
  const { state } = yield* loadMerchant(merchantId)
  return state._tag === "Initial" ? yield* new Merchant.MerchantNotFound() : state
})

/** A link that exists, whoever owns it (the checkout page and the sweeper know only its id). */
const existingLink = Effect.fnUntraced(function* (linkId: string) {
  const { state } = yield* loadLink(linkId)
  return state._tag === "Initial" ? yield* new PaymentLink.LinkNotFound() : state
})

/** The merchant's account must be enabled to take payments (creating a link is asking for one). */
const requireEnabled = (merchant: Merchant.Existing, command: string) =>
  merchant._tag === "ENABLED"
    ? Effect.void
    : Effect.fail(
        new Merchant.MerchantNotInState({ merchantId: merchant.merchantId, status: merchant._tag, command })
      )

const within = (bounds: Merchant.AmountBounds, amount: number): boolean =>
  amount >= bounds.min && amount <= bounds.max

// ---------------------------------------------------------------------------------------------
// B1
// ---------------------------------------------------------------------------------------------

/**
 * B1: the link methods the merchant offers, each with its `{min, max}` (the same in both modes).
 *
 * @category queries
 */
export const paymentMethods = Effect.fn("LinkPayments.paymentMethods")(function* (credential: Credential) {
  const merchant = yield* existingMerchant(credential.merchantId)
  return Merchant.linkMethodBounds(merchant)
})

// ---------------------------------------------------------------------------------------------
// B2
// ---------------------------------------------------------------------------------------------

const roundCents = (n: number): number => Math.round(n * 100) / 100

/** What a CLOSE link's total is made of: `total = subtotal + tip + Σ tax values`. */
const subtotalOf = (amount: PaymentLink.LinkAmount): number =>
  roundCents(amount.total - amount.tip - amount.taxes.reduce((sum, tax) => sum + tax.value, 0))

/**
 * The methods a link offers: those requested (duplicates dropped, in the order sent), or every
 * method the merchant offers when the request names none (absent or empty). Each requested method
 * must be one the merchant offers now.
 */
const chooseMethods = (
  requested: ReadonlyArray<Merchant.LinkMethod> | undefined,
  offered: { readonly [M in Merchant.LinkMethod]?: Merchant.AmountBounds }
): { readonly methods: ReadonlyArray<Merchant.LinkMethod>; readonly issues: ReadonlyArray<RequestIssue> } => {
  const all = Merchant.LinkMethod.literals.filter((m) => offered[m] !== undefined)
  if (requested === undefined || requested.length === 0) {
    return {
      methods: all,
      issues:
        all.length === 0
          ? [{ field: "payment_methods", message: "the merchant offers no payment link method (see B1)" }]
          : []
    }
  }
  const issues = requested.flatMap((method, index) =>
    offered[method] === undefined
      ? [{ field: `payment_methods.${index}`, message: `${method} is not offered by the merchant (see B1)` }]
      : []
  )
  return { methods: [...new Set(requested)], issues }
}

/**
 * B2: creates a link from the decoded request. The reference defaults to the link id; the methods
 * are those requested or all the merchant's; a CLOSE total must fit the bounds of at least one of
 * them; the expiration date must be in the future; the link is a sandbox link when the key is a
 * test key. An OPEN link's `amount`, which the wire accepts, is not kept: the payer chooses.
 *
 * @category commands
 */
export const create = Effect.fn("LinkPayments.create")(function* (
  credential: Credential,
  request: LinkApi.CreateLinkRequest,
  /** Who asks: the key's merchant unless told (the merchant panel names its user). */
  metadata: EventStore.EventMetadata = { actor: credential.merchantId }
) {
  const merchant = yield* existingMerchant(credential.merchantId)
  yield* requireEnabled(merchant, "CreateLink")
  const now = yield* DateTime.now
  const offered = Merchant.linkMethodBounds(merchant)
  const { issues: methodIssues, methods } = chooseMethods(request.payment_methods, offered)
  const issues: Array<RequestIssue> = [...methodIssues]

  const amount: Option.Option<PaymentLink.LinkAmount> =
    request.amount_type === "CLOSE" && request.amount?.total_amount !== undefined
      ? Option.some(
          new PaymentLink.LinkAmount(
            {
              currency: request.amount.currency ?? "COP",
              total: request.amount.total_amount,
              tip: request.amount.tip_amount ?? Amount.make(0),
              taxes: request.amount.taxes ?? []
            },
            unchecked
          )
        )
      : Option.none()
  if (Option.isSome(amount)) {
    const total = amount.value.total
    if (subtotalOf(amount.value) < 0) {
      issues.push({
        field: "amount.total_amount",
        message: "total_amount must include the tip and the taxes: it is less than their sum"
      })
    } else if (methodIssues.length === 0 && !methods.some((m) => within(offered[m]!, total))) {
      issues.push({
        field: "amount.total_amount",
        message: `total_amount ${total} is outside the bounds of every method the link offers (see B1)`
      })
    }
  }
  if (request.expiration_date !== undefined && request.expiration_date <= Nanos.fromDateTime(now)) {
    issues.push({ field: "expiration_date", message: "expiration_date must be in the future" })
  }
  if (issues.length > 0) return yield* new InvalidLinkRequest({ issues: [issues[0]!, ...issues.slice(1)] })

  const linkId = PaymentLinkId.make(yield* nextId("LNK_"))
  // The command's values come from the decoded request and the checks above: built unchecked.
  const handled = yield* handleLink(
    linkId,
    new PaymentLink.CreateLink(
      {
        linkId,
        merchantId: merchant.merchantId,
        sandbox: credential.sandbox,
        amountType: request.amount_type,
        amount,
        reference: request.reference ?? linkId,
        description: Option.fromNullable(request.description),
        expiresAt: Option.fromNullable(request.expiration_date),
        callbackUrl: Option.fromNullable(request.callback_url),
        paymentMethods: [methods[0]!, ...methods.slice(1)],
        payerEmail: Option.fromNullable(request.payer_email),
        imageUrl: Option.fromNullable(request.image_url),
        now
      },
      unchecked
    ),
    metadata,
    CommandHandler.fresh(PaymentLink.PaymentLink)
  )
  return { linkId, state: handled.state as PaymentLink.Existing }
})

// ---------------------------------------------------------------------------------------------
// B3
// ---------------------------------------------------------------------------------------------

/**
 * The link record (B3) at `now`: an overdue ACTIVE link reads EXPIRED. `total` is the CLOSE link's
 * total, or for an OPEN link the amount of the last payment started (0 before any);
 * `transaction_id` and `payment_method` are those of the last payment started, whatever its
 * outcome (the status says it); timestamps are exact nanoseconds.
 */
export const toRecord = (state: PaymentLink.Existing, now: DateTime.DateTime): LinkApi.LinkRecord => {
  const link = state.link
  const zero = Amount.make(0)
  const { subtotal, taxes, tip, total } = Option.match(link.amount, {
    onNone: () => {
      const paid = Option.getOrElse(state.paidAmount, () => zero)
      return { total: paid, subtotal: paid, tip: zero, taxes: [] }
    },
    onSome: (amount) => ({
      total: amount.total,
      subtotal: Amount.make(Math.max(0, subtotalOf(amount))),
      tip: amount.tip,
      taxes: amount.taxes
    })
  })
  return {
    api_version: 1,
    id: link.linkId,
    total,
    subtotal,
    tip_amount: tip,
    taxes,
    status: PaymentLink.statusAt(state, now),
    expiration_date: Option.getOrNull(link.expiresAt),
    creation_date: Nanos.fromDateTime(link.createdAt),
    description: Option.getOrNull(link.description),
    payment_method: Option.getOrElse(state.paymentMethod, () => "") as LinkApi.LinkRecord["payment_method"],
    transaction_id: Option.getOrNull(state.transactionId),
    amount_type: link.amountType,
    is_sandbox: link.sandbox,
    reference: link.reference
  }
}

/** Whether the credential may see the link: its merchant's, in the same mode (test keys see sandbox links). */
export const isVisibleTo = (state: PaymentLink.Existing, credential: Credential): boolean =>
  state.link.merchantId === credential.merchantId && state.link.sandbox === credential.sandbox

/**
 * B3: the link record. Another merchant's link, or a link of the other mode, is not found.
 *
 * @category queries
 */
export const read = Effect.fn("LinkPayments.read")(function* (credential: Credential, linkId: string) {
  const state = yield* existingLink(linkId)
  if (!isVisibleTo(state, credential)) return yield* new PaymentLink.LinkNotFound()
  return toRecord(state, yield* DateTime.now)
})

// ---------------------------------------------------------------------------------------------
// The checkout page (issue 6)
// ---------------------------------------------------------------------------------------------

/** A method the payer may choose on the checkout page, with the amounts it accepts. */
export interface PayableMethod {
  readonly method: Merchant.LinkMethod
  readonly bounds: Merchant.AmountBounds
}

/** What the checkout page shows: the link, its status now, the merchant's name and the methods payable now. */
export interface CheckoutView {
  readonly state: PaymentLink.Existing
  readonly status: PaymentLink.Status
  readonly record: LinkApi.LinkRecord
  readonly merchantName: string
  /** Empty unless the link can be paid now. */
  readonly methods: ReadonlyArray<PayableMethod>
}

/**
 * The methods a payment may use now: those the link offers that the merchant still offers, and, for
 * a CLOSE link, whose bounds admit its total.
 */
export const payableMethods = (
  state: PaymentLink.Existing,
  merchant: Merchant.State
): ReadonlyArray<PayableMethod> => {
  const offered = Merchant.linkMethodBounds(merchant)
  return state.link.paymentMethods.flatMap((name) => {
    const method = name as Merchant.LinkMethod
    const bounds = offered[method]
    if (bounds === undefined) return []
    if (Option.isSome(state.link.amount) && !within(bounds, state.link.amount.value.total)) return []
    return [{ method, bounds }]
  })
}

/**
 * The checkout page's view of a link, found by its id alone (the page is public).
 *
 * @category queries
 */
export const checkout = Effect.fn("LinkPayments.checkout")(function* (linkId: string) {
  return yield* viewOf(yield* existingLink(linkId))
})

const viewOf = Effect.fnUntraced(function* (state: PaymentLink.Existing) {
  const merchant = yield* existingMerchant(state.link.merchantId)
  const now = yield* DateTime.now
  const status = PaymentLink.statusAt(state, now)
  return {
    state,
    status,
    record: toRecord(state, now),
    merchantName: merchant.name,
    methods: status === "ACTIVE" && merchant._tag === "ENABLED" ? payableMethods(state, merchant) : []
  } satisfies CheckoutView
})

/** What the payer chose on the checkout page. */
export interface PaymentChoice {
  readonly paymentMethod: string
  /** Required for an OPEN link; for a CLOSE link it may be left out, and must equal the total if sent. */
  readonly amount?: number | undefined
}

/**
 * Starts paying a link: the link becomes PROCESSING under a new transaction id. The method must be
 * one the link and the merchant offer; the amount must lie within the method's bounds (an OPEN link's
 * amount is the payer's; a CLOSE link's is its total). Two tabs cannot both start: the second is
 * refused with `LinkNotInState`.
 *
 * @category commands
 */
export const startPayment = Effect.fn("LinkPayments.startPayment")(function* (
  linkId: string,
  choice: PaymentChoice,
  /** Who pays: the payer on the checkout page unless told. */
  metadata: EventStore.EventMetadata = { actor: "payer" }
) {
  const state = yield* existingLink(linkId)
  const merchant = yield* existingMerchant(state.link.merchantId)
  yield* requireEnabled(merchant, "StartPayment")
  const bounds = Merchant.linkMethodBounds(merchant)[choice.paymentMethod as Merchant.LinkMethod]
  if (bounds === undefined || !state.link.paymentMethods.includes(choice.paymentMethod)) {
    return yield* new PaymentLink.MethodNotOffered({
      linkId: state.link.linkId,
      paymentMethod: choice.paymentMethod
    })
  }
  const amount = Option.match(state.link.amount, {
    onNone: () => choice.amount,
    onSome: (a) => choice.amount ?? a.total
  })
  if (amount === undefined) return yield* new PaymentAmountRequired({ linkId: state.link.linkId })
  if (!Number.isFinite(amount) || !within(bounds, amount)) {
    return yield* new PaymentLink.InvalidPaymentAmount({
      linkId: state.link.linkId,
      amount: Amount.make(Number.isFinite(amount) ? Math.max(0, amount) : 0),
      min: bounds.min,
      max: bounds.max
    })
  }
  const transactionId = TransactionId.make(yield* nextId("TRX_"))
  const handled = yield* handleLink(
    linkId,
    new PaymentLink.StartPayment({
      transactionId,
      paymentMethod: choice.paymentMethod,
      amount: Amount.make(amount),
      bounds,
      now: yield* DateTime.now
    }),
    metadata
  )
  return { transactionId, state: handled.state as PaymentLink.Existing }
})

/** The use case that records an outcome of the payment under way, at the clock's now (by default the payer's). */
const paymentOutcome = (
  name: string,
  Outcome: new (fields: {
    readonly transactionId: TransactionId
    readonly now: DateTime.Utc
  }) => PaymentLink.CompletePayment | PaymentLink.FailPayment
) =>
  Effect.fn(name)(function* (
    linkId: string,
    transactionId: TransactionId,
    metadata: EventStore.EventMetadata = { actor: "payer" }
  ) {
    const handled = yield* handleLink(
      linkId,
      new Outcome({ transactionId, now: yield* DateTime.now }),
      metadata
    )
    return handled.state as PaymentLink.Existing
  })

/**
 * The payment under way was approved: the link is PAID (a re-delivered approval changes nothing).
 *
 * @category commands
 */
export const completePayment = paymentOutcome("LinkPayments.completePayment", PaymentLink.CompletePayment)

/**
 * The payment under way failed: the link is ACTIVE again, or REJECTED when it expired meanwhile
 * (spec-decisions "Link REJECTED versus back to ACTIVE").
 *
 * @category commands
 */
export const failPayment = paymentOutcome("LinkPayments.failPayment", PaymentLink.FailPayment)

/**
 * Cancels an ACTIVE link (the admin API: the spec has no public endpoint for it).
 *
 * @category commands
 */
export const cancel = Effect.fn("LinkPayments.cancel")(function* (
  linkId: string,
  metadata: EventStore.EventMetadata = {}
) {
  const handled = yield* handleLink(
    linkId,
    new PaymentLink.CancelLink({ now: yield* DateTime.now }),
    metadata
  )
  return handled.state as PaymentLink.Existing
})

/**
 * Records the expiry of one overdue link (the sweeper's step). A link that is not overdue, or that
 * was paid, cancelled or is being paid, is left as it is and its state returned.
 *
 * @category commands
 */
export const expire = Effect.fn("LinkPayments.expire")(function* (
  linkId: string,
  /** Who expires it: the link expiry sweeper (`sweeper`) unless told. */
  metadata: EventStore.EventMetadata = { actor: "sweeper" }
) {
  const state = yield* existingLink(linkId)
  const now = yield* DateTime.now
  if (state._tag !== "ACTIVE" || !PaymentLink.isOverdue(state.link, now)) return state
  const handled = yield* handleLink(linkId, new PaymentLink.ExpireLink({ now }), metadata).pipe(
    // A payment that started between the read and the append wins: the link is no longer ACTIVE.
    Effect.catchTag("LinkNotInState", () => Effect.map(existingLink(linkId), (s) => ({ state: s })))
  )
  return handled.state as PaymentLink.Existing
})

/**
 * Fails the link's payment `transactionId` when it has been under way for `timeout` (the timeout
 * sweeper's step): the payer left it at the 3DS challenge, the bank or the wallet. The link is
 * ACTIVE again (REJECTED if it expired meanwhile), notified as any failed payment. A payment that
 * was decided meanwhile, another transaction, or one not yet due is left as it is; the link's state
 * is returned either way.
 *
 * @category commands
 */
export const expirePayment = Effect.fn("LinkPayments.expirePayment")(function* (
  linkId: string,
  transactionId: TransactionId,
  timeout: Duration.Duration = Payment.ABANDONED_PAYMENT_TIMEOUT,
  /** Who expires it: the timeout sweeper (`sweeper`) unless told. */
  metadata: EventStore.EventMetadata = { actor: "sweeper" }
) {
  const state = yield* existingLink(linkId)
  const now = yield* DateTime.now
  if (
    !Option.contains(state.transactionId, transactionId) ||
    !PaymentLink.isPaymentOverdue(state, timeout, now)
  ) {
    return state
  }
  const reload = () => Effect.map(existingLink(linkId), (s) => ({ state: s }))
  const handled = yield* handleLink(
    linkId,
    new PaymentLink.ExpirePayment({ transactionId, timeout, now }),
    metadata
  ).pipe(
    // The payer decided between the read and the append: their decision stands.
    Effect.catchTags({
      LinkNotInState: reload,
      UnknownLinkTransaction: reload,
      LinkPaymentNotOverdue: reload
    })
  )
  return handled.state as PaymentLink.Existing
})

// ---------------------------------------------------------------------------------------------
// Paying on the checkout page: card, bank and wallet flows (issue 6)
// ---------------------------------------------------------------------------------------------

/** Where a payment under way waits for the payer: a 3DS challenge, the bank (PSE, bank button), the wallet. */
export type PayerStep = "ThreeDsChallenge" | "BankRedirect" | "Wallet"

/**
 * How a link payment stands: under way (and waiting for the payer, or being authorized), approved,
 * declined, or expired (the payer never came back: the timeout sweeper failed it).
 */
export type PaymentOutcome =
  | { readonly _tag: "Pending"; readonly step: Option.Option<PayerStep> }
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Declined" }
  | { readonly _tag: "Expired" }

/** The payment methods that are cards: sent to the acquirer with the card number. */
export const isCardMethod = (paymentMethod: string): boolean => Payment.isCardMethod(paymentMethod)

/**
 * Where the link's payment under way waits for the payer, if it does. A bank method (PSE, bank
 * button) waits at the bank, any other non-card method at the wallet. A card payment waits only when
 * the acquirer asked for a 3DS challenge, which the sandbox acquirer does for exactly the sandbox
 * amount 555020 (`Payment.sandboxOutcome`); otherwise it is being authorized.
 */
export const payerStep = (state: PaymentLink.Existing): Option.Option<PayerStep> => {
  if (state._tag !== "PROCESSING") return Option.none()
  const method = Option.getOrElse(state.paymentMethod, () => "")
  if (!isCardMethod(method)) {
    return Option.some(method === "PSE" || method === "BOTON_BANK" ? "BankRedirect" : "Wallet")
  }
  const amount = Option.getOrElse(state.paidAmount, () => Amount.make(0))
  return state.link.sandbox && Payment.sandboxOutcome(amount)._tag === "ChallengeRequired"
    ? Option.some("ThreeDsChallenge")
    : Option.none()
}

/** The outcome of one transaction of the link, from the link's events; none when it is not the link's. */
export const outcomeOf = (
  events: ReadonlyArray<PaymentLink.Event>,
  state: PaymentLink.Existing,
  transactionId: string
): Option.Option<PaymentOutcome> => {
  let outcome: Option.Option<PaymentOutcome> = Option.none()
  for (const event of events) {
    if (!("transactionId" in event) || event.transactionId !== transactionId) continue
    switch (event._tag) {
      case "LinkPaymentStarted":
        outcome = Option.some({ _tag: "Pending", step: Option.none() })
        break
      case "LinkPaid":
        outcome = Option.some({ _tag: "Approved" })
        break
      case "LinkPaymentFailed":
      case "LinkRejected":
        outcome = Option.some(event.expired === true ? { _tag: "Expired" } : { _tag: "Declined" })
        break
    }
  }
  return Option.map(outcome, (o) =>
    o._tag === "Pending" && Option.contains(state.transactionId, transactionId)
      ? { _tag: "Pending", step: payerStep(state) }
      : o
  )
}

/** One transaction of a link as the checkout page shows it: the link's view and the transaction's outcome. */
export interface TransactionView {
  readonly view: CheckoutView
  readonly transactionId: TransactionId
  readonly outcome: PaymentOutcome
  /** The method and amount of the transaction (those of the link's last payment, when it is the last). */
  readonly paymentMethod: string
  readonly amount: Amount
}

/**
 * The checkout page's view of one transaction of the link; `UnknownLinkTransaction` when it is not one.
 *
 * @category queries
 */
export const transaction = Effect.fn("LinkPayments.transaction")(function* (
  linkId: string,
  transactionId: string
) {
  const { events, state } = yield* loadLinkHistory(linkId)
  if (state._tag === "Initial") return yield* new PaymentLink.LinkNotFound()
  const view = yield* viewOf(state)
  const outcome = outcomeOf(events, state, transactionId)
  const started = events.find(
    (e): e is PaymentLink.LinkPaymentStarted =>
      e._tag === "LinkPaymentStarted" && e.transactionId === transactionId
  )
  if (Option.isNone(outcome) || started === undefined) {
    return yield* new PaymentLink.UnknownLinkTransaction({
      linkId: state.link.linkId,
      transactionId: TransactionId.make(transactionId)
    })
  }
  return {
    view,
    transactionId: started.transactionId,
    outcome: outcome.value,
    paymentMethod: started.paymentMethod,
    amount: started.amount
  } satisfies TransactionView
})

/** What the payer sends to pay: the choice, and the card number for a card method. */
export interface PaymentRequest extends PaymentChoice {
  /** The card number (digits only) for a card method; ignored otherwise. Never recorded. */
  readonly cardNumber?: string | undefined
}

/** The result of {@link pay}: the transaction and how it stands. */
export interface PaymentStarted {
  readonly transactionId: TransactionId
  readonly outcome: PaymentOutcome
  readonly state: PaymentLink.Existing
}

/**
 * Pays a link from the checkout page. The link becomes PROCESSING (see {@link startPayment}: two tabs
 * cannot both start). A card is authorized at once by the acquirer: approved → PAID, rejected → ACTIVE
 * again (or REJECTED if it expired meanwhile), a 3DS challenge → left PROCESSING for the payer. Any
 * other method is left PROCESSING for the payer's bank or wallet. The card number is only sent to the
 * acquirer, never recorded.
 *
 * @category commands
 */
export const pay = Effect.fn("LinkPayments.pay")(function* (
  linkId: string,
  request: PaymentRequest,
  /** Who pays: the payer on the checkout page unless told; the acquirer's answer is recorded as theirs. */
  metadata: EventStore.EventMetadata = { actor: "payer" }
) {
  const card = isCardMethod(request.paymentMethod)
  if (card && (request.cardNumber === undefined || request.cardNumber.length === 0)) {
    const state = yield* existingLink(linkId)
    return yield* new CardNumberRequired({ linkId: state.link.linkId })
  }
  // Once the link's payment may be started, the request no longer decides whether it ends: a payer
  // who closes the tab interrupts neither the start, nor the acquirer's call, nor the record of its
  // outcome, so the link is never left PROCESSING by a request cut short.
  return yield* Effect.uninterruptible(payStarted(linkId, request, card, metadata))
})

const payStarted = (
  linkId: string,
  request: PaymentRequest,
  card: boolean,
  metadata: EventStore.EventMetadata
) =>
  Effect.gen(function* () {
    const started = yield* startPayment(linkId, request, metadata)
    const { transactionId } = started
    if (!card) {
      return {
        transactionId,
        state: started.state,
        outcome: { _tag: "Pending", step: payerStep(started.state) }
      } satisfies PaymentStarted
    }
    const acquirer = yield* Acquirer.Acquirer
    const link = started.state.link
    const result = yield* acquirer
      .authorize(
        new Acquirer.AuthorizationRequest({
          transactionId,
          currency: Option.match(link.amount, { onNone: () => "COP", onSome: (a) => a.currency }),
          total: Option.getOrElse(started.state.paidAmount, () => Amount.make(0)),
          cardNumber: request.cardNumber ?? "",
          sandbox: link.sandbox
        })
      )
      .pipe(
        // The acquirer failed: the link is released at once (ACTIVE again, payable), not left PROCESSING
        // until the payment timeout. Should the release fail too, the timeout sweeper still ends it.
        Effect.onError(() => Effect.ignoreLogged(failPayment(linkId, transactionId, metadata)))
      )
    switch (result._tag) {
      case "Approved": {
        const state = yield* completePayment(linkId, transactionId, metadata)
        return { transactionId, state, outcome: { _tag: "Approved" } } satisfies PaymentStarted
      }
      case "Rejected": {
        const state = yield* failPayment(linkId, transactionId, metadata)
        return { transactionId, state, outcome: { _tag: "Declined" } } satisfies PaymentStarted
      }
      case "ChallengeRequired":
        return {
          transactionId,
          state: started.state,
          outcome: { _tag: "Pending", step: Option.some("ThreeDsChallenge") }
        } satisfies PaymentStarted
    }
  })

/** The payer's decision at the simulated 3DS challenge, bank or wallet. */
export type PayerDecision = "approve" | "decline"

/**
 * Records the payer's decision on a payment that waits for it: approve → PAID, decline → ACTIVE (or
 * REJECTED). The same decision again (a reloaded form) changes nothing; the other decision after one
 * was recorded, or a decision on a payment that does not wait for the payer, is `PaymentNotAwaitingPayer`.
 * Any decision on a payment the timeout sweeper expired (even while this one was being recorded) is
 * `LinkPaymentExpired`.
 *
 * @category commands
 */
export const decide = Effect.fn("LinkPayments.decide")(function* (
  linkId: string,
  transactionId: string,
  decision: PayerDecision,
  /** Who decided: the payer unless told. */
  metadata: EventStore.EventMetadata = { actor: "payer" }
) {
  const current = yield* transaction(linkId, transactionId)
  const ids = { linkId: current.view.state.link.linkId, transactionId: current.transactionId }
  const refused = new PaymentNotAwaitingPayer(ids)
  switch (current.outcome._tag) {
    case "Approved":
      return decision === "approve" ? current.view.state : yield* refused
    case "Declined":
      return decision === "decline" ? current.view.state : yield* refused
    case "Expired":
      return yield* new LinkPaymentExpired(ids)
    case "Pending": {
      if (Option.isNone(current.outcome.step)) return yield* refused
      const recorded =
        decision === "approve"
          ? completePayment(linkId, current.transactionId, metadata)
          : failPayment(linkId, current.transactionId, metadata)
      // The sweeper expired the payment between the read and the append: say so rather than "decided".
      return yield* recorded.pipe(
        Effect.catchTag("LinkNotInState", (error) =>
          Effect.flatMap(
            transaction(linkId, transactionId),
            (now): Effect.Effect<never, LinkPaymentExpired | PaymentLink.LinkNotInState> =>
              now.outcome._tag === "Expired" ? Effect.fail(new LinkPaymentExpired(ids)) : Effect.fail(error)
          )
        )
      )
    }
  }
})
