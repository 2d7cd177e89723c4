/**
 * Workloads for the listings' tests, shared by the domain's suite and the store's agreement suite:
 * merchants, terminal checkouts, links paid, declined and cancelled, online payments, refunds,
 * notifications and panel users (created, signing in right and wrong, their role, password and
 * access changed), written through the use cases (with the notifications' outbox), as the server
 * writes them. A workload is a list of operations that fast-check generates, or that a test writes
 * with the operations' constructors; `everyRow` reads a list back page by page.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as Acquirer from "@cobro/domain/Acquirer"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { sha256 } from "@cobro/domain/DerivedId"
import * as EventStore from "@cobro/domain/EventStore"
import type * as IdGenerator from "@cobro/domain/IdGenerator"
import { IntentReference, type MerchantId, TerminalSerial, type TransactionId } from "@cobro/domain/Ids"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { Credential } from "@cobro/domain/MerchantDirectory"
import { amount } from "@cobro/domain/Money"
import * as NotificationRules from "@cobro/domain/NotificationRules"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Outbox from "@cobro/domain/Outbox"
import type * as Pagination from "@cobro/domain/Pagination"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as PanelUser from "@cobro/domain/PanelUser"
import { PasswordHasher } from "@cobro/domain/PasswordHasher"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as TerminalGateway from "@cobro/domain/TerminalGateway"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { cardSale } from "@cobro/domain/testing/WebhookFixtures"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { attemptInput, details } from "../fixtures/Online.js"

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/** Which of the workload's two paying merchants: 0 has webhooks in both modes, 1 none. */
export type Who = 0 | 1

export type TerminalOutcome = "sent" | "approve" | "reject" | "void"
export type LinkOutcome = "open" | "paid" | "declined" | "declinedThenPaid" | "cancelled" | "atTheBank"
export type OnlineOutcome =
  "approve" | "reject" | "challenge" | "refundApproved" | "refundRejected" | "refundPending" | "void"
export type DeliveryOutcome = "delivered" | "failedOnce" | "exhausted"
/** What happens to a panel user: its creation, or a change made through `PanelAccess`. */
export type UserAction =
  "create" | "signIn" | "failedSignIn" | "toReadOnly" | "toFullAccess" | "changePassword" | "disable"

export type Operation =
  | {
      readonly _tag: "Terminal"
      readonly who: Who
      readonly sandbox: boolean
      readonly total: number
      readonly reference: string
      readonly outcome: TerminalOutcome
    }
  | {
      readonly _tag: "Link"
      readonly who: Who
      readonly sandbox: boolean
      readonly total: number
      readonly open: boolean
      readonly reference: string
      readonly outcome: LinkOutcome
    }
  | {
      readonly _tag: "Online"
      readonly who: Who
      readonly sandbox: boolean
      readonly total: number
      readonly reference: string
      readonly outcome: OnlineOutcome
    }
  /**
   * Actions on one of the merchant's panel users (`user`), in turn: `create` creates it with
   * `role`. An action refused (on a user not created yet, a second creation, a disabled user's
   * sign-in, one while failed sign-ins make the account wait) writes nothing.
   */
  | {
      readonly _tag: "PanelUser"
      readonly who: Who
      readonly user: 0 | 1 | 2
      readonly role: PanelUser.Role
      readonly actions: ReadonlyArray<UserAction>
    }
  /** Moves the clock on by `ms` (a tie in `createdAt` when 0). */
  | { readonly _tag: "Wait"; readonly ms: number }

/** Whose mode an operation is in: the sandbox is `test`. */
export type Mode = "production" | "test"

/** A terminal checkout, for a workload written by hand. */
export const terminalSale = (
  who: Who,
  mode: Mode,
  total: number,
  reference: string,
  outcome: TerminalOutcome
): Operation => ({ _tag: "Terminal", who, sandbox: mode === "test", total, reference, outcome })

/** A payment link (an OPEN one is paid for `total` by the payer), for a workload written by hand. */
export const linkPayment = (
  who: Who,
  mode: Mode,
  total: number,
  amountType: "OPEN" | "CLOSE",
  reference: string,
  outcome: LinkOutcome
): Operation => ({
  _tag: "Link",
  who,
  sandbox: mode === "test",
  total,
  open: amountType === "OPEN",
  reference,
  outcome
})

/** An online payment, for a workload written by hand. */
export const onlinePayment = (
  who: Who,
  mode: Mode,
  total: number,
  reference: string,
  outcome: OnlineOutcome
): Operation => ({ _tag: "Online", who, sandbox: mode === "test", total, reference, outcome })

/** The clock moved on by `ms`, for a workload written by hand. */
export const wait = (ms: number): Operation => ({ _tag: "Wait", ms })

/** References share prefixes (`ord-1`, `ord-12`, …) so that prefix searches find several. */
const reference = FastCheck.constantFrom("ord-1", "ord-12", "ord-123", "ord-2", "ORD-1", "inv-9", "inv-99")
const who = FastCheck.constantFrom<Who>(0, 1)
// Amounts the sandbox acquirer approves (555002 and 555042 are declined, 555020 asks for 3DS).
const total = FastCheck.integer({ min: 1_000, max: 500_000 })

/** One operation of a workload. */
export const operation: FastCheck.Arbitrary<Operation> = FastCheck.oneof(
  FastCheck.record({
    _tag: FastCheck.constant("Terminal" as const),
    who,
    sandbox: FastCheck.boolean(),
    total,
    reference,
    outcome: FastCheck.constantFrom<TerminalOutcome>("sent", "approve", "reject", "void")
  }),
  FastCheck.record({
    _tag: FastCheck.constant("Link" as const),
    who,
    sandbox: FastCheck.boolean(),
    total,
    open: FastCheck.boolean(),
    reference,
    outcome: FastCheck.constantFrom<LinkOutcome>(
      "open",
      "paid",
      "declined",
      "declinedThenPaid",
      "cancelled",
      "atTheBank"
    )
  }),
  FastCheck.record({
    _tag: FastCheck.constant("Online" as const),
    who,
    sandbox: FastCheck.boolean(),
    total,
    reference,
    outcome: FastCheck.constantFrom<OnlineOutcome>(
      "approve",
      "reject",
      "challenge",
      "refundApproved",
      "refundRejected",
      "refundPending",
      "void"
    )
  }),
  FastCheck.record({
    _tag: FastCheck.constant("PanelUser" as const),
    who,
    // Two users of each merchant, so that later operations often find one created.
    user: FastCheck.constantFrom<0 | 1>(0, 1),
    role: FastCheck.constantFrom<PanelUser.Role>("full_access", "read_only"),
    // Half of them create the user first.
    actions: FastCheck.tuple(
      FastCheck.boolean(),
      FastCheck.array(
        FastCheck.constantFrom<UserAction>(
          "create",
          "signIn",
          "signIn",
          "failedSignIn",
          "toReadOnly",
          "toFullAccess",
          "changePassword",
          "disable"
        ),
        { minLength: 1, maxLength: 3 }
      )
    ).map(([create, then]): ReadonlyArray<UserAction> => (create ? ["create", ...then] : then))
  }),
  FastCheck.record({
    _tag: FastCheck.constant("Wait" as const),
    ms: FastCheck.constantFrom(0, 0, 1, 7, 1000)
  })
)

/** A workload: its operations, and what becomes of the notifications they raise, in turn. */
export interface Workload {
  readonly operations: ReadonlyArray<Operation>
  readonly deliveries: ReadonlyArray<DeliveryOutcome>
}

export const workload = (maxLength = 25): FastCheck.Arbitrary<Workload> =>
  FastCheck.record({
    operations: FastCheck.array(operation, { minLength: 1, maxLength }),
    deliveries: FastCheck.array(
      FastCheck.constantFrom<DeliveryOutcome>("delivered", "failedOnce", "exhausted"),
      {
        minLength: 1,
        maxLength: 6
      }
    )
  })

// ---------------------------------------------------------------------------------------------
// The ports the use cases need besides the store and the ids
// ---------------------------------------------------------------------------------------------

let keys = 0
const randomHash = () =>
  IdentityKeyHash.make(
    Array.from({ length: 64 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("")
  )

/** A vault that mints unique keys (merchants of many runs share a database). */
const vault = Layer.succeed(KeyVault.KeyVault, {
  issue: (integration, mode) =>
    Effect.sync(() => {
      const n = ++keys
      return {
        integration,
        mode,
        identityKey: `${MerchantAdmin.keyPrefix("identity", integration, mode)}${n}`,
        secretKey: `${MerchantAdmin.keyPrefix("secret", integration, mode)}${n}`,
        keyPair: { identityKeyHash: randomHash(), secretKey: SealedSecret.make(`sealed:${n}`) }
      }
    }),
  hashIdentityKey: () => randomHash(),
  unseal: (sealed) => Effect.succeed(sealed)
} satisfies KeyVault.KeyVault["Type"])

/** A terminal that takes every checkout pushed to it. */
const gateway = Layer.succeed(TerminalGateway.TerminalGateway, {
  push: () => Effect.succeed(new TerminalGateway.Delivered({ lockedSince: Option.none() }))
})

/** A fast hasher (the scrypt one is `@cobro/http`'s): `test$<salt>$<sha256(salt:password)>`. */
const hasher = Layer.sync(PasswordHasher, () => {
  let salt = 0
  const hashWith = (s: string, password: string) =>
    `test$${s}$${Array.from(sha256(`${s}:${password}`), (b) => b.toString(16).padStart(2, "0")).join("")}`
  return PasswordHasher.of({
    hash: (password) => Effect.sync(() => hashWith(String(++salt), password)),
    verify: (password, stored) =>
      Effect.sync(() => {
        const [scheme, s] = stored.split("$")
        return scheme === "test" && s !== undefined && hashWith(s, password) === stored
      }),
    dummy: hashWith("dummy", "no one's password")
  })
})

/**
 * The acquirer, vault and terminal of the workloads, the notifications' outbox, and the panel's
 * password hasher and sessions.
 */
export const ports: Layer.Layer<
  | Acquirer.Acquirer
  | KeyVault.KeyVault
  | TerminalGateway.TerminalGateway
  | Outbox.Outbox
  | PasswordHasher
  | PanelSessions.PanelSessions,
  never,
  EventStore.EventStore
> = Layer.mergeAll(
  Acquirer.layerSandbox,
  vault,
  gateway,
  Layer.succeed(Outbox.Outbox, NotificationRules.outbox),
  hasher,
  PanelSessions.layerMemory
)

// ---------------------------------------------------------------------------------------------
// Running a workload
// ---------------------------------------------------------------------------------------------

const SERIAL = TerminalSerial.make("SN0012345")
const LINK_BOUNDS = { min: amount(1_000), max: amount(5_000_000) }

/** The merchants a run writes: two that take payments, a third disabled. */
export interface Merchants {
  readonly paying: readonly [MerchantId, MerchantId]
  readonly disabled: MerchantId
}

/** Creates the run's merchants: names share words, so that name searches find several. */
export const givenMerchants = Effect.gen(function* () {
  const suffix = Math.random().toString(36).slice(2, 8)
  const paying: Array<MerchantId> = []
  for (const [i, name] of [`Café Andino ${suffix}`, `Tienda ANDINA ${suffix}`].entries()) {
    const { merchantId } = yield* MerchantAdmin.createMerchant(name)
    yield* MerchantAdmin.bindTerminal(merchantId, { model: "SMART_PRO", serial: SERIAL, name: "Caja 1" })
    yield* MerchantAdmin.setTerminalApiEnabled(merchantId, SERIAL, true)
    yield* MerchantAdmin.setPaymentMethods(merchantId, {
      link: { CREDIT_CARD: LINK_BOUNDS, PSE: LINK_BOUNDS }
    })
    if (i === 0) {
      yield* MerchantAdmin.setWebhook(merchantId, "production", "https://merchant.example/hooks")
      yield* MerchantAdmin.setWebhook(merchantId, "test", "https://merchant.example/test-hooks")
    }
    paying.push(merchantId)
  }
  const { merchantId: disabled } = yield* MerchantAdmin.createMerchant(`Zapatería Andina ${suffix}`)
  yield* MerchantAdmin.setStatus(disabled, "DISABLED")
  return { paying: [paying[0]!, paying[1]!], disabled } satisfies Merchants
}).pipe(Effect.orDie)

const credentialOf = (merchantId: MerchantId, sandbox: boolean) =>
  new Credential({
    merchantId,
    integration: "payment_button",
    mode: sandbox ? "test" : "production",
    identityKeyHash: IdentityKeyHash.make("a".repeat(64))
  })

const terminal = (merchantId: MerchantId, op: Extract<Operation, { _tag: "Terminal" }>) =>
  Effect.gen(function* () {
    const created = yield* TerminalPayments.checkout(
      { merchantId, sandbox: op.sandbox },
      {
        amount: { currency: "COP", total_amount: op.total, taxes: [], tip_amount: 0 },
        user_email: "seller@shop.co",
        payment_method: "POS",
        terminal_model: "SMART_PRO",
        terminal_serial: SERIAL,
        reference: op.reference
      }
    )
    const { integrationId, transactionId } = created
    switch (op.outcome) {
      case "sent":
        break
      case "approve":
        yield* TerminalPayments.approveSale(integrationId, transactionId, cardSale)
        break
      case "reject":
        yield* TerminalPayments.rejectSale(
          integrationId,
          transactionId,
          "declined by the bank",
          Option.none()
        )
        break
      case "void":
        yield* TerminalPayments.approveSale(integrationId, transactionId, cardSale)
        yield* TerminalPayments.approveVoid(integrationId, transactionId)
        break
    }
    return Aggregate.streamId(TerminalCheckout.TerminalCheckout, integrationId)
  })

const link = (merchantId: MerchantId, op: Extract<Operation, { _tag: "Link" }>) =>
  Effect.gen(function* () {
    const request = Schema.decodeUnknownSync(LinkApi.CreateLinkRequest)(
      op.open
        ? { amount_type: "OPEN", reference: op.reference, description: "Open link" }
        : { amount_type: "CLOSE", amount: { total_amount: op.total }, reference: op.reference }
    )
    const { linkId } = yield* LinkPayments.create(credentialOf(merchantId, op.sandbox), request)
    const card = (total: number) =>
      LinkPayments.pay(linkId, {
        paymentMethod: "CREDIT_CARD",
        cardNumber: "4111111111111111",
        ...(op.open ? { amount: total } : {})
      })
    const declinedCard = (total: number) =>
      Effect.gen(function* () {
        // The sandbox declines 555002; a CLOSE link is paid for its total, so the bank declines instead.
        if (op.open && op.sandbox) return yield* card(555002)
        const started = yield* LinkPayments.pay(linkId, {
          paymentMethod: "PSE",
          ...(op.open ? { amount: total } : {})
        })
        return yield* LinkPayments.decide(linkId, started.transactionId, "decline")
      })
    switch (op.outcome) {
      case "open":
        break
      case "paid":
        yield* card(op.total)
        break
      case "declined":
        yield* declinedCard(op.total)
        break
      case "declinedThenPaid":
        yield* declinedCard(op.total)
        yield* card(op.total)
        break
      case "cancelled":
        yield* LinkPayments.cancel(linkId)
        break
      case "atTheBank":
        yield* LinkPayments.pay(linkId, { paymentMethod: "PSE", ...(op.open ? { amount: op.total } : {}) })
        break
    }
    return Aggregate.streamId(PaymentLink.PaymentLink, linkId)
  })

const online = (merchantId: MerchantId, op: Extract<Operation, { _tag: "Online" }>) =>
  Effect.gen(function* () {
    const scope: OnlinePayments.Scope = { merchantId, sandbox: op.sandbox }
    // References are unique per intent: the generated one is its prefix.
    const referenceId = IntentReference.make(`${op.reference}-${Math.random().toString(36).slice(2, 8)}`)
    yield* OnlinePayments.createIntent(scope, {
      referenceId,
      details: details(op.total, { description: Option.none() }),
      deviceFingerprint: Option.none()
    })
    // Outside the sandbox every card is approved: a decline there is the acquirer's 3DS refusal.
    const cardTotal = op.outcome === "reject" ? 555002 : op.outcome === "challenge" ? 555020 : op.total
    if (cardTotal !== op.total) {
      yield* OnlinePayments.updateIntent(scope, {
        referenceId,
        details: details(cardTotal, { description: Option.none() })
      })
    }
    const attempted = yield* OnlinePayments.attempt(scope, attemptInput(referenceId))
    const transactionId: TransactionId = attempted.payment.payment.transactionId
    const refund = (outcome: "APPROVED" | "REJECTED" | undefined) =>
      Effect.gen(function* () {
        yield* OnlinePayments.requestRefund(scope, { referenceId, transactionId, reason: "customer asked" })
        if (outcome !== undefined) yield* OnlinePayments.reviewRefund({ transactionId, outcome, scope })
      })
    switch (op.outcome) {
      case "refundApproved":
        yield* refund("APPROVED")
        break
      case "refundRejected":
        yield* refund("REJECTED")
        break
      case "refundPending":
        yield* refund(undefined)
        break
      case "void":
        yield* OnlinePayments.voidPayment(scope, transactionId)
        break
    }
    return Aggregate.streamId(Payment.Payment, transactionId)
  })

/** The email of the merchant's user `user`: unique to the merchant, so to the run. */
export const emailOf = (merchantId: MerchantId, user: number): string =>
  `user${user}@${merchantId.toLowerCase()}.example`

const PASSWORD = "correct horse battery"

/** One action on a panel user; refused ones fail. */
const userAction = (
  merchantId: MerchantId,
  op: Extract<Operation, { _tag: "PanelUser" }>,
  action: UserAction
): Effect.Effect<void, unknown, Requirements> => {
  const email = emailOf(merchantId, op.user)
  const userId = PanelUser.userIdOf(email)
  const signIn = (password: string) =>
    Effect.flatMap(DateTime.now, (now) => PanelAccess.signIn({ email, password, address: "10.0.0.1", now }))
  switch (action) {
    case "create":
      return Effect.asVoid(PanelAccess.createUser({ merchantId, email, password: PASSWORD, role: op.role }))
    case "signIn":
      return Effect.asVoid(signIn(PASSWORD))
    case "failedSignIn":
      return Effect.asVoid(signIn("a wrong password, surely"))
    case "toReadOnly":
      return PanelAccess.changeRole(userId, "read_only")
    case "toFullAccess":
      return PanelAccess.changeRole(userId, "full_access")
    case "changePassword":
      // The same password again: later sign-ins still get it right.
      return PanelAccess.changePassword(userId, PASSWORD)
    case "disable":
      return PanelAccess.disableUser(userId)
  }
}

const deliveries = CommandHandler.make(WebhookDelivery.WebhookDelivery)
const deliveryPrefix = Aggregate.streamId(WebhookDelivery.WebhookDelivery, "")

/** Records what becomes of one scheduled notification: its attempts, as the dispatcher records them. */
const deliver = (streamId: string, outcome: DeliveryOutcome) =>
  Effect.gen(function* () {
    const notificationId = streamId.slice(deliveryPrefix.length)
    const attempt = (n: number, statusCode: number) =>
      Effect.flatMap(DateTime.now, (now) =>
        deliveries(
          notificationId,
          new WebhookDelivery.RecordAttempt({
            attempt: n,
            result: { _tag: "Answered", statusCode, snippet: statusCode === 200 ? "ok" : "busy" },
            latencyMs: 12,
            now
          })
        )
      )
    switch (outcome) {
      case "delivered":
        yield* attempt(1, 200)
        break
      case "failedOnce":
        yield* attempt(1, 503)
        break
      case "exhausted":
        for (let n = 1; n <= WebhookDelivery.MAX_ATTEMPTS; n++) yield* attempt(n, 500)
        break
    }
  })

/** The delivery streams scheduled by the events of `streamId` that raise notifications. */
const deliveryStreamsOf = (streamId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(streamId)
    return events
      .filter((event) => NotificationRules.mayRaise({ streamId, type: event.type }))
      .map((event) => NotificationRules.deliveryStreamOf(NotificationRules.notificationIdOf(event.eventId)))
  })

// ---------------------------------------------------------------------------------------------
// Reading the lists
// ---------------------------------------------------------------------------------------------

/** Every row of a list, walking its pages with `starting_after` as a client does. */
export const everyRow = <A>(
  list: (page: Pagination.PageRequest) => Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>,
  idOf: (row: A) => string,
  limit: number
) =>
  Effect.gen(function* () {
    const rows: Array<A> = []
    let page = yield* list({ limit })
    rows.push(...page.data)
    while (page.hasMore) {
      page = yield* list({ limit, startingAfter: idOf(page.data[page.data.length - 1]!) })
      rows.push(...page.data)
    }
    return rows
  })

/** What running a workload needs. */
export type Requirements =
  | EventStore.EventStore
  | IdGenerator.IdGenerator
  | Acquirer.Acquirer
  | TerminalGateway.TerminalGateway
  | Outbox.Outbox
  | PasswordHasher
  | PanelSessions.PanelSessions

/**
 * Runs a workload for `merchants`; `wait(ms)` moves the clock on (the test clock, or nothing on a
 * real one). Operations the use cases refuse are skipped: the listings are held to the log whatever
 * it holds.
 */
export const run = (
  merchants: Merchants,
  load: Workload,
  wait: (ms: number) => Effect.Effect<void>
): Effect.Effect<void, never, Requirements> =>
  Effect.gen(function* () {
    const sources: Array<string> = []
    for (const op of load.operations) {
      if (op._tag === "Wait") {
        yield* wait(op.ms)
        continue
      }
      const merchantId = merchants.paying[op.who]
      if (op._tag === "PanelUser") {
        // Panel users raise no notifications.
        for (const action of op.actions) yield* Effect.ignore(userAction(merchantId, op, action))
        continue
      }
      const written: Effect.Effect<string, unknown, Requirements> =
        op._tag === "Terminal"
          ? terminal(merchantId, op)
          : op._tag === "Link"
            ? link(merchantId, op)
            : online(merchantId, op)
      const stream = yield* Effect.option(written)
      if (Option.isSome(stream)) sources.push(stream.value)
    }
    const scheduled = (yield* Effect.forEach(sources, deliveryStreamsOf)).flat()
    // The dispatcher comes later: an attempt at the instant a delivery was cancelled would be one in flight.
    yield* wait(1)
    for (const [i, streamId] of scheduled.entries()) {
      // CANCELLED deliveries (no webhook) refuse attempts: their rows stay as scheduled.
      yield* Effect.ignore(deliver(streamId, load.deliveries[i % load.deliveries.length]!))
    }
  })
