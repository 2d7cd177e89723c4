/**
 * The listings read from the event log: every list of the `Listings` port, answered by folding the
 * log's streams with their aggregates' own `evolve`. For tests and the in-memory setup, and the
 * oracle the store's read models are held to: a row here is what the aggregate says.
 *
 * It keeps the states it has folded and reads only the events appended since, on every query (as
 * `MerchantDirectory.layerFromLog` does), so it reads its own writes without a projection running.
 *
 * What a row is:
 *
 * - A **merchant**: one `Merchant` stream; `status` its state (ENABLED, DISABLED).
 * - A **transaction** of a merchant, one of three kinds, each under its own `TRX_…` id:
 *   - `terminal`: one `TerminalCheckout-INT_…` stream (A1), under the `transactionId` its
 *     `CheckoutCreated` names; `resourceId` the checkout's `INT_…`; `status` the checkout's state
 *     (PENDING … VOIDED); amount, currency and reference as A1 recorded them.
 *   - `link`: one payment of a link (B), that is one `LinkPaymentStarted` on the link's
 *     `PaymentLink-LNK_…` stream, under the `transactionId` it names: a link paid after a declined
 *     attempt has two. A link payment has no stream of its own (the link's stream records it, and no
 *     `Payment` stream is written for it), so its status is the link's state its events lead to, as
 *     the payment's: PROCESSING while under way, PAID, and REJECTED when declined, even where the
 *     link goes back to ACTIVE to be paid again (the transaction is over and declined); EXPIRED when
 *     the payer abandoned it and the timeout sweeper failed it (as the `Payment` state of that name).
 *     `resourceId` the link's `LNK_…`; amount the amount paid (an OPEN link's is the payer's), the
 *     link's currency (COP for an OPEN link, as the checkout page charges), the link's reference.
 *   - `online`: one `Payment-TRX_…` stream (C4). Every `Payment` stream comes from a payment intent
 *     (C1): link payments write none. `resourceId` is the `TRX_…` itself; `status` the Payment's
 *     state (RUNNING, CHALLENGE, APPROVED, REJECTED, EXPIRED, VOIDED, REFUNDED); amount and currency
 *     the intent's as the attempt recorded them, the reference its intent's `reference_id`.
 * - A **link**: one `PaymentLink` stream; `status` its recorded state (an ACTIVE link past its
 *   expiry stays ACTIVE until the sweeper records its expiry); an OPEN link has `amount` 0 (its
 *   `amountType` says so) and currency COP.
 * - A **notification**: one `WebhookDelivery` stream. `delivery`: `pending` while PENDING,
 *   `delivered` once an attempt got a 200, `failed` when EXHAUSTED or CANCELLED without a 200 (no
 *   webhook to send it to, or the webhook was deleted before it got through: it never arrived).
 * - A **refund**: one `Refund` stream (C8); its currency is its payment's.
 * - A **panel user**: one `PanelUser` stream; `status` its state (ACTIVE, DISABLED), `lastSignInAt`
 *   its last `SignedIn`, `updatedAt` the instant of its last event that changed the row (creation,
 *   sign-in, role change, disabling: {@link userChangedAt}), so a failed sign-in or a new password
 *   leaves the row as it was.
 *
 * Rows are newest first by their `position`: the log position (`Checkpoint`) of the event that
 * created the row (a stream's first event; a link payment's `LinkPaymentStarted`), and paged by
 * `Pagination.paginate`. The log it folds is read in commit order (`readAll`, under the store's
 * visibility rule), so a row is listed once no earlier position can still commit. A cursor
 * is any row of the merchant's list, whatever the filters: the page holds the rows that pass the
 * filters beyond its position. So a walk through a filtered list goes on when the cursor's row stops
 * passing them (a PROCESSING payment paid meanwhile).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Aggregate from "../kernel/Aggregate.js"
import * as EventStore from "../kernel/EventStore.js"
import * as PaymentLink from "../links/PaymentLink.js"
import * as Merchant from "../merchants/Merchant.js"
import * as Payment from "../online/Payment.js"
import * as Refund from "../online/Refund.js"
import * as PanelUser from "../panel/PanelUser.js"
import * as TerminalCheckout from "../terminal/TerminalCheckout.js"
import * as WebhookDelivery from "../webhooks/WebhookDelivery.js"
import * as Listings from "./Listings.js"
import * as Pagination from "./Pagination.js"

// ---------------------------------------------------------------------------------------------
// Rows from states
// ---------------------------------------------------------------------------------------------

const date = (instant: DateTime.Utc): Date => DateTime.toDate(instant)

/** The mode of a row whose events say `sandbox`. */
export const modeOf = (sandbox: boolean): Listings.Mode => (sandbox ? "test" : "production")

/** The currency of a link and of its payments: an OPEN link's is COP, as the checkout page charges. */
const linkCurrency = (link: PaymentLink.Link): string =>
  Option.match(link.amount, { onNone: () => "COP", onSome: (amount) => amount.currency })

/** Where a notification's delivery stands, from its `WebhookDelivery` state. */
export const deliveryStanding = (state: WebhookDelivery.Existing): Listings.DeliveryStanding => {
  switch (state._tag) {
    case "PENDING":
      return "pending"
    case "DELIVERED":
      return "delivered"
    case "EXHAUSTED":
      return "failed"
    case "CANCELLED":
      return state.attempts.some((attempt) => attempt._tag === "AttemptSucceeded") ? "delivered" : "failed"
  }
}

const lastStatusCode = (state: WebhookDelivery.Existing): number | null => {
  const last = state.attempts[state.attempts.length - 1]
  if (last === undefined) return null
  if (last._tag === "AttemptSucceeded") return last.statusCode
  return last.outcome._tag === "Answered" ? last.outcome.statusCode : null
}

const merchantRow = (state: Merchant.Existing, position: EventStore.Checkpoint): Listings.MerchantRow => ({
  position,
  merchantId: state.merchantId,
  name: state.name,
  status: state._tag,
  createdAt: date(state.createdAt)
})

/** What a terminal checkout and an online payment recorded of their sale, as a transaction row lists it. */
interface RecordedSale {
  readonly transactionId: string
  readonly merchantId: string
  readonly sandbox: boolean
  readonly amount: { readonly total: number; readonly currency: string }
}

/** The row of a sale with a stream of its own: its status and last change are its state's. */
const saleRow = (
  kind: Listings.TransactionKind,
  position: EventStore.Checkpoint,
  state: { readonly _tag: string; readonly updatedAt: DateTime.Utc },
  sale: RecordedSale,
  recorded: Pick<Listings.TransactionRow, "resourceId" | "reference" | "createdAt">
): Listings.TransactionRow => ({
  position,
  transactionId: sale.transactionId,
  kind,
  resourceId: recorded.resourceId,
  merchantId: sale.merchantId,
  mode: modeOf(sale.sandbox),
  status: state._tag,
  amount: sale.amount.total,
  currency: sale.amount.currency,
  reference: recorded.reference,
  createdAt: recorded.createdAt,
  updatedAt: date(state.updatedAt)
})

const terminalRow = (state: TerminalCheckout.Existing, position: EventStore.Checkpoint) =>
  saleRow("terminal", position, state, state.checkout, {
    resourceId: state.checkout.integrationId,
    reference: state.checkout.reference,
    createdAt: date(state.checkout.createdAt)
  })

const onlineRow = (state: Payment.Existing, position: EventStore.Checkpoint) =>
  saleRow("online", position, state, state.payment, {
    resourceId: state.payment.transactionId,
    reference: state.payment.referenceId,
    createdAt: date(state.payment.attemptedAt)
  })

const linkRow = (state: PaymentLink.Existing, position: EventStore.Checkpoint): Listings.LinkRow => ({
  position,
  linkId: state.link.linkId,
  merchantId: state.link.merchantId,
  mode: modeOf(state.link.sandbox),
  status: state._tag,
  amountType: state.link.amountType,
  amount: Option.match(state.link.amount, { onNone: () => 0, onSome: (amount) => amount.total }),
  currency: linkCurrency(state.link),
  description: Option.getOrNull(state.link.description),
  reference: state.link.reference,
  createdAt: date(state.link.createdAt),
  expiresAt: Option.getOrNull(
    Option.map(state.link.expiresAt, (nanos) => new Date(Number(nanos / 1_000_000n)))
  ),
  updatedAt: date(state.updatedAt)
})

const notificationRow = (
  state: WebhookDelivery.Existing,
  position: EventStore.Checkpoint
): Listings.NotificationRow => ({
  position,
  notificationId: state.notification.notificationId,
  merchantId: state.notification.merchantId,
  mode: modeOf(state.notification.sandbox),
  subject: state.notification.subject,
  type: state.notification.type,
  delivery: deliveryStanding(state),
  attempts: state.attempts.length,
  lastStatusCode: lastStatusCode(state),
  createdAt: date(state.notification.createdAt),
  updatedAt: date(state.updatedAt)
})

const refundRow = (
  state: Refund.Existing,
  currency: string,
  position: EventStore.Checkpoint
): Listings.RefundRow => ({
  position,
  refundId: state.refund.refundId,
  transactionId: state.refund.transactionId,
  merchantId: state.refund.merchantId,
  mode: modeOf(state.refund.sandbox),
  status: state._tag,
  amount: state.refund.amount,
  currency,
  createdAt: date(state.refund.requestedAt),
  updatedAt: date(Option.getOrElse(state.dateApplied, () => state.refund.requestedAt))
})

/**
 * When a panel user's event changes its row: the instant it records, or undefined for an event that
 * changes no listed field (a failed sign-in, a password change). The store's read model is written
 * by the same events alone.
 */
export const userChangedAt = (event: PanelUser.Event): DateTime.Utc | undefined => {
  switch (event._tag) {
    case "PanelUserCreated":
      return event.createdAt
    case "SignedIn":
    case "RoleChanged":
    case "PanelUserDisabled":
    case "PanelUserEnabled":
      return event.at
    case "SignInFailed":
    case "PasswordChanged":
      return undefined
  }
}

/** The row of a panel user, last changed at `updatedAt`, created at `position` in the log. */
export const userRow = (
  state: PanelUser.Existing,
  updatedAt: Date,
  position: EventStore.Checkpoint
): Listings.UserRow => ({
  position,
  userId: state.userId,
  merchantId: state.merchantId,
  email: state.email,
  role: state.role,
  status: state._tag,
  createdAt: date(state.createdAt),
  lastSignInAt: Option.getOrNull(Option.map(state.lastSignInAt, date)),
  updatedAt
})

/**
 * The transaction row of one payment of a link, after the link's event `event` about it (`state`:
 * the link after that event), logged at `position` (where a list places the row; a page that
 * shows one payment alone has no use for it). Undefined for an event about no payment.
 */
export const linkTransaction = (
  previous: Listings.TransactionRow | undefined,
  state: PaymentLink.Existing,
  event: PaymentLink.Event,
  position: EventStore.Checkpoint = EventStore.Start
): Listings.TransactionRow | undefined => {
  const at = (status: string, instant: DateTime.Utc) =>
    previous === undefined ? undefined : { ...previous, status, updatedAt: date(instant) }
  switch (event._tag) {
    case "LinkPaymentStarted":
      return {
        position: previous?.position ?? position,
        transactionId: event.transactionId,
        kind: "link",
        resourceId: state.link.linkId,
        merchantId: state.link.merchantId,
        mode: modeOf(state.link.sandbox),
        status: "PROCESSING",
        amount: event.amount,
        currency: linkCurrency(state.link),
        reference: state.link.reference,
        createdAt: date(event.at),
        updatedAt: date(event.at)
      }
    case "LinkPaid":
      return at("PAID", event.at)
    case "LinkPaymentFailed":
    case "LinkRejected":
      return at(event.expired === true ? "EXPIRED" : "REJECTED", event.at)
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Order, filters, pages
// ---------------------------------------------------------------------------------------------

/** Log positions in the log's commit order: transaction id, then global position. */
export const comparePositions = (a: EventStore.Checkpoint, b: EventStore.Checkpoint): number =>
  a.transactionId !== b.transactionId
    ? a.transactionId < b.transactionId
      ? -1
      : 1
    : a.globalPosition < b.globalPosition
      ? -1
      : a.globalPosition > b.globalPosition
        ? 1
        : 0

/** Newest first: the row's `position` descending (one event creates at most one row of a list). */
export const newestFirst = (a: Listings.Positioned, b: Listings.Positioned): number =>
  comparePositions(b.position, a.position)

/**
 * The page of `rows` (one merchant's list, any order) that passes `keep`, newest first. The cursor
 * may be any row of `rows`: the page holds the rows that pass `keep` beyond it.
 */
export const pageOf = <A extends Listings.Positioned>(
  rows: Iterable<A>,
  idOf: (row: A) => string,
  keep: (row: A) => boolean,
  request: Pagination.PageRequest
): Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor> => {
  const cursor = request.startingAfter ?? request.endingBefore
  const listed = Array.from(rows)
    .filter((row) => keep(row) || idOf(row) === cursor)
    .sort(newestFirst)
  return Either.match(Pagination.paginate(listed, idOf, request), {
    onLeft: Effect.fail,
    onRight: Effect.succeed
  })
}

const inRange = (createdAt: Date, filter: { readonly createdGte?: Date; readonly createdLt?: Date }) =>
  (filter.createdGte === undefined || createdAt.getTime() >= filter.createdGte.getTime()) &&
  (filter.createdLt === undefined || createdAt.getTime() < filter.createdLt.getTime())

/** Whether a transaction passes the filter: every criterion given holds. */
export const transactionMatches =
  (filter: Listings.TransactionFilter) =>
  (row: Listings.TransactionRow): boolean =>
    (filter.mode === undefined || row.mode === filter.mode) &&
    (filter.kind === undefined || row.kind === filter.kind) &&
    (filter.status === undefined || row.status === filter.status) &&
    (filter.reference === undefined ||
      (row.reference !== null && row.reference.startsWith(filter.reference))) &&
    inRange(row.createdAt, filter)

/** Whether a merchant passes the filter; the name matches case-insensitively (ASCII letters). */
export const merchantMatches =
  (filter: Listings.MerchantFilter) =>
  (row: Listings.MerchantRow): boolean =>
    (filter.status === undefined || row.status === filter.status) &&
    (filter.name === undefined || asciiLower(row.name).includes(asciiLower(filter.name)))

/**
 * Whether a row passes the criteria `keys` of `filter`: each one given equals the row's field of the
 * same name (the filters of links, notifications, refunds and users hold only such criteria).
 */
const sameWhereGiven =
  <F, K extends keyof F>(filter: F, keys: ReadonlyArray<K>) =>
  (row: { readonly [P in K]: unknown }): boolean =>
    keys.every((key) => filter[key] === undefined || row[key] === filter[key])

/** Lower case for ASCII letters only: what PostgreSQL's `lower` does under the "C" ctype, everywhere. */
export const asciiLower = (text: string): string => text.replace(/[A-Z]+/g, (s) => s.toLowerCase())

// ---------------------------------------------------------------------------------------------
// The layer
// ---------------------------------------------------------------------------------------------

const prefix = (aggregate: { readonly name: string }) => Aggregate.streamId(aggregate, "")

/** The folded states, by stream id, and the link payments by transaction id. */
interface Folded {
  readonly merchants: Map<string, Merchant.State>
  readonly checkouts: Map<string, TerminalCheckout.State>
  readonly links: Map<string, PaymentLink.State>
  readonly linkPayments: Map<string, Listings.TransactionRow>
  readonly payments: Map<string, Payment.State>
  readonly refunds: Map<string, Refund.State>
  readonly deliveries: Map<string, WebhookDelivery.State>
  readonly users: Map<string, PanelUser.State>
  /** When each panel user's row last changed, by stream id. */
  readonly usersUpdatedAt: Map<string, Date>
  /** The log position of each stream's first event: where the stream's row stands in its list. */
  readonly created: Map<string, EventStore.Checkpoint>
}

/** One aggregate's streams: its prefix, how to fold one of its events into `Folded`. */
interface Folder {
  readonly prefix: string
  readonly apply: (folded: Folded, event: EventStore.LoggedEvent) => void
}

const folder = <E extends { readonly _tag: string }, S>(
  aggregate: {
    readonly name: string
    readonly Event: Schema.Schema<E, any>
    readonly initialState: S
    readonly evolve: (state: S, event: E) => S
  },
  states: (folded: Folded) => Map<string, S>,
  after?: (folded: Folded, state: S, event: E, logged: EventStore.LoggedEvent) => void
): Folder => {
  const decode = Schema.decodeUnknownSync(aggregate.Event)
  return {
    prefix: prefix(aggregate),
    apply: (folded, logged) => {
      const map = states(folded)
      if (!folded.created.has(logged.streamId)) folded.created.set(logged.streamId, logged.checkpoint)
      const event = decode(logged.data)
      const state = aggregate.evolve(map.get(logged.streamId) ?? aggregate.initialState, event)
      map.set(logged.streamId, state)
      after?.(folded, state, event, logged)
    }
  }
}

const folders: ReadonlyArray<Folder> = [
  folder(Merchant.Merchant, (f) => f.merchants),
  folder(TerminalCheckout.TerminalCheckout, (f) => f.checkouts),
  folder(
    PaymentLink.PaymentLink,
    (f) => f.links,
    (folded, state, event, logged) => {
      if (state._tag === "Initial" || !("transactionId" in event)) return
      const row = linkTransaction(
        folded.linkPayments.get(event.transactionId),
        state,
        event,
        logged.checkpoint
      )
      if (row !== undefined) folded.linkPayments.set(row.transactionId, row)
    }
  ),
  folder(Payment.Payment, (f) => f.payments),
  folder(Refund.Refund, (f) => f.refunds),
  folder(WebhookDelivery.WebhookDelivery, (f) => f.deliveries),
  folder(
    PanelUser.PanelUser,
    (f) => f.users,
    (folded, state, event) => {
      const at = userChangedAt(event)
      if (state._tag !== "Initial" && at !== undefined) {
        folded.usersUpdatedAt.set(Aggregate.streamId(PanelUser.PanelUser, state.userId), date(at))
      }
    }
  )
]

/** The rows of the streams of `states` that exist, each built with its stream's first position. */
const existing = <S extends { readonly _tag: string }, A>(
  states: Map<string, S>,
  created: Map<string, EventStore.Checkpoint>,
  row: (state: Exclude<S, Aggregate.Initial>, position: EventStore.Checkpoint, stream: string) => A
): Array<A> =>
  Array.from(states).flatMap(([stream, state]) =>
    state._tag === "Initial"
      ? []
      : [row(state as Exclude<S, Aggregate.Initial>, created.get(stream) ?? EventStore.Start, stream)]
  )

/**
 * The in-memory adapter of `Listings`, over the event store in context.
 *
 * @category layers
 */
export const layer: Layer.Layer<Listings.Listings, never, EventStore.EventStore> = Layer.effect(
  Listings.Listings,
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const folded: Folded = {
      merchants: new Map(),
      checkouts: new Map(),
      links: new Map(),
      linkPayments: new Map(),
      payments: new Map(),
      refunds: new Map(),
      deliveries: new Map(),
      users: new Map(),
      usersUpdatedAt: new Map(),
      created: new Map()
    }
    let cursor = EventStore.Start
    const lock = yield* Effect.makeSemaphore(1)
    const catchUp = lock.withPermits(1)(
      Effect.gen(function* () {
        for (;;) {
          const page = yield* store.readAll({ after: cursor })
          for (const event of page) {
            folders.find((f) => event.streamId.startsWith(f.prefix))?.apply(folded, event)
          }
          const last = page[page.length - 1]
          if (last === undefined) return
          cursor = last.checkpoint
        }
      })
    )
    const listed = <A>(rows: () => Iterable<A>) => Effect.zipRight(catchUp, Effect.sync(rows))
    /** The page of one merchant's rows of a list that pass `keep`. */
    const merchantPage = <A extends Listings.Positioned & { readonly merchantId: string }>(
      merchantId: string,
      rows: () => Array<A>,
      idOf: (row: A) => string,
      keep: (row: A) => boolean,
      page: Pagination.PageRequest
    ) =>
      Effect.flatMap(
        listed(() => rows().filter((r) => r.merchantId === merchantId)),
        (mine) => pageOf(mine, idOf, keep, page)
      )

    const transactions = (): Array<Listings.TransactionRow> => [
      ...existing(folded.checkouts, folded.created, terminalRow),
      ...folded.linkPayments.values(),
      ...existing(folded.payments, folded.created, onlineRow)
    ]

    return Listings.Listings.of({
      merchants: (filter, page) =>
        Effect.flatMap(
          listed(() => existing(folded.merchants, folded.created, merchantRow)),
          (rows) => pageOf(rows, (r) => r.merchantId, merchantMatches(filter), page)
        ),
      transactions: (merchantId, filter, page) =>
        merchantPage(merchantId, transactions, (r) => r.transactionId, transactionMatches(filter), page),
      links: (merchantId, filter, page) =>
        merchantPage(
          merchantId,
          () => existing(folded.links, folded.created, linkRow),
          (r) => r.linkId,
          sameWhereGiven(filter, ["mode", "status"]),
          page
        ),
      notifications: (merchantId, filter, page) =>
        merchantPage(
          merchantId,
          () => existing(folded.deliveries, folded.created, notificationRow),
          (r) => r.notificationId,
          sameWhereGiven(filter, ["mode", "delivery", "subject"]),
          page
        ),
      refunds: (merchantId, filter, page) =>
        merchantPage(
          merchantId,
          () =>
            existing(folded.refunds, folded.created, (s, position) => {
              const payment = folded.payments.get(Aggregate.streamId(Payment.Payment, s.refund.transactionId))
              const currency =
                payment === undefined || payment._tag === "Initial" ? "COP" : payment.payment.amount.currency
              return refundRow(s, currency, position)
            }),
          (r) => r.refundId,
          sameWhereGiven(filter, ["mode", "status"]),
          page
        ),
      users: (merchantId, filter, page) =>
        merchantPage(
          merchantId,
          () =>
            existing(folded.users, folded.created, (state, position, stream) =>
              userRow(state, folded.usersUpdatedAt.get(stream) ?? date(state.createdAt), position)
            ),
          (r) => r.userId,
          sameWhereGiven(filter, ["role", "status"]),
          page
        ),
      events: (query) =>
        Effect.gen(function* () {
          const after = query.after ?? EventStore.Start
          const wanted = (event: EventStore.LoggedEvent) =>
            (query.stream === undefined || event.streamId === query.stream) &&
            (query.type === undefined || event.type === query.type)
          const found: Array<EventStore.LoggedEvent> = []
          let from = after
          while (found.length <= query.limit) {
            const page = yield* store.readAll({ after: from })
            for (const event of page) if (wanted(event) && found.length <= query.limit) found.push(event)
            const last = page[page.length - 1]
            if (last === undefined) break
            from = last.checkpoint
          }
          const data = found.slice(0, query.limit)
          return {
            data,
            hasMore: found.length > query.limit,
            next: data[data.length - 1]?.checkpoint ?? after
          }
        })
    })
  })
)
