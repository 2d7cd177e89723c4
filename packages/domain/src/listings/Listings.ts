/**
 * The listings port: the operator's and the merchant panel's lists (merchants; a merchant's
 * transactions, links, notifications, refunds and panel users; the log itself), each newest first and paged
 * by `Pagination`. The store answers them from read models written with their events; the
 * in-memory adapter (`ListingsFromLog`) folds the log with the aggregates' own `evolve`, and is
 * the oracle the store's read models are held to.
 *
 * A row's `status` is its aggregate's state name as `docs/state-machines.md` draws it. Every list
 * is newest first by the row's {@link Positioned.position}, the log position of the event that
 * created it: an order that commits in order, so that no row a later commit adds lands behind a
 * page already read (brief, "Exactly once at the edge" 4).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as EventStore from "../kernel/EventStore.js"
import type * as PanelUser from "../panel/PanelUser.js"
import type * as Pagination from "./Pagination.js"

/** Production or sandbox data: the two are never mixed in one row. */
export type Mode = "test" | "production"

/**
 * A row's place in its list: the log position (transaction id, global position) of the event that
 * created it. Lists are newest first by it, and show a row only once every transaction that could
 * still commit an earlier position has ended (the log's visibility rule, as `readAll` reads it).
 *
 * @category models
 */
export interface Positioned {
  readonly position: EventStore.Checkpoint
}

/** @category models */
export interface MerchantRow extends Positioned {
  readonly merchantId: string
  readonly name: string
  readonly status: "ENABLED" | "DISABLED"
  readonly createdAt: Date
}

/** `name`: a case-insensitive part of the name. @category models */
export interface MerchantFilter {
  readonly name?: string
  readonly status?: "ENABLED" | "DISABLED"
}

/** Which API made a transaction: a terminal checkout (A), a payment link (B), an online payment (C). */
export type TransactionKind = "terminal" | "link" | "online"

/**
 * One transaction of a merchant. `transactionId` is the row's id (its cursor); `resourceId` the
 * resource that holds it: the checkout's `INT_…`, the link's `LNK_…`, the payment's `TRX_…`.
 *
 * @category models
 */
export interface TransactionRow extends Positioned {
  readonly transactionId: string
  readonly kind: TransactionKind
  readonly resourceId: string
  readonly merchantId: string
  readonly mode: Mode
  readonly status: string
  readonly amount: number
  readonly currency: string
  /** The merchant's reference (A1 `reference`, B2 `reference`, C1 `reference_id`), if any. */
  readonly reference: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** `reference`: rows whose reference starts with it. `created*`: `createdAt` ≥ / < the instant. @category models */
export interface TransactionFilter {
  readonly mode?: Mode
  readonly kind?: TransactionKind
  readonly status?: string
  readonly createdGte?: Date
  readonly createdLt?: Date
  readonly reference?: string
}

/** @category models */
export interface LinkRow extends Positioned {
  readonly linkId: string
  readonly merchantId: string
  readonly mode: Mode
  readonly status: string
  /** CLOSE: paid for exactly `amount`; OPEN: for the amount the payer chooses (`amount` is then 0). */
  readonly amountType: "OPEN" | "CLOSE"
  readonly amount: number
  readonly currency: string
  readonly description: string | null
  readonly reference: string | null
  readonly createdAt: Date
  readonly expiresAt: Date | null
  readonly updatedAt: Date
}

/** @category models */
export interface LinkFilter {
  readonly mode?: Mode
  readonly status?: string
}

/** Where a notification's delivery stands: `failed` once its retries are exhausted. */
export type DeliveryStanding = "pending" | "delivered" | "failed"

/** @category models */
export interface NotificationRow extends Positioned {
  readonly notificationId: string
  readonly merchantId: string
  readonly mode: Mode
  /** What it notifies about: a transaction id, a link id, … as the delivery records it. */
  readonly subject: string
  readonly type: string
  readonly delivery: DeliveryStanding
  readonly attempts: number
  readonly lastStatusCode: number | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** @category models */
export interface NotificationFilter {
  readonly mode?: Mode
  readonly delivery?: DeliveryStanding
  readonly subject?: string
}

/** @category models */
export interface RefundRow extends Positioned {
  readonly refundId: string
  readonly transactionId: string
  readonly merchantId: string
  readonly mode: Mode
  readonly status: string
  readonly amount: number
  readonly currency: string
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** @category models */
export interface RefundFilter {
  readonly mode?: Mode
  readonly status?: string
}

/**
 * A user of the merchant's panel (never its password hash). `status` is the `PanelUser` state;
 * `updatedAt` the instant of the last event that changed one of the other fields: a failed sign-in
 * or a password change changes none.
 *
 * @category models
 */
export interface UserRow extends Positioned {
  readonly userId: string
  readonly merchantId: string
  readonly email: string
  readonly role: PanelUser.Role
  readonly status: PanelUser.Status
  readonly createdAt: Date
  /** The last successful sign-in; null: never signed in. */
  readonly lastSignInAt: Date | null
  readonly updatedAt: Date
}

/** @category models */
export interface UserFilter {
  readonly role?: PanelUser.Role
  readonly status?: PanelUser.Status
}

/**
 * The log in commit order, for tools that follow it: the events after `after` (default: the
 * start), of one stream and/or one type. `next` is the checkpoint to resume from (the last
 * event's, or `after` when the page is empty).
 *
 * @category models
 */
export interface EventsQuery {
  readonly after?: EventStore.Checkpoint
  readonly stream?: string
  readonly type?: string
  readonly limit: number
}

/** @category models */
export interface EventsPage {
  readonly data: ReadonlyArray<EventStore.LoggedEvent>
  readonly hasMore: boolean
  readonly next: EventStore.Checkpoint
}

type Listed<A> = Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>

/**
 * The listings port.
 *
 * @category services
 */
export class Listings extends Context.Tag("@cobro/domain/Listings")<
  Listings,
  {
    readonly merchants: (filter: MerchantFilter, page: Pagination.PageRequest) => Listed<MerchantRow>
    readonly transactions: (
      merchantId: string,
      filter: TransactionFilter,
      page: Pagination.PageRequest
    ) => Listed<TransactionRow>
    readonly links: (merchantId: string, filter: LinkFilter, page: Pagination.PageRequest) => Listed<LinkRow>
    readonly notifications: (
      merchantId: string,
      filter: NotificationFilter,
      page: Pagination.PageRequest
    ) => Listed<NotificationRow>
    readonly refunds: (
      merchantId: string,
      filter: RefundFilter,
      page: Pagination.PageRequest
    ) => Listed<RefundRow>
    readonly users: (merchantId: string, filter: UserFilter, page: Pagination.PageRequest) => Listed<UserRow>
    readonly events: (query: EventsQuery) => Effect.Effect<EventsPage>
  }
>() {}
