/**
 * Handlers of the operator's lists (`AdminListEndpoints`) over the `Listings` port, and of a
 * resource's history over the event store, folded with `Histories.replay` as `cobro audit history`
 * folds it. Rows are written snake_case, instants ISO 8601; a cursor that names no row of the list
 * is a 400 naming its parameter, an unknown merchant the admin API's 404 `MerchantNotFound` (its
 * body as `AdminHandlers.fromMerchantError` writes it).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as EventStore from "@cobro/domain/EventStore"
import * as Histories from "@cobro/domain/Histories"
import * as Listings from "@cobro/domain/Listings"
import * as Pagination from "@cobro/domain/Pagination"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { CobroApi } from "@cobro/api/Api"
import type * as AdminListEndpoints from "@cobro/api/AdminListEndpoints"
import { Codes } from "@cobro/api/AdminListEndpoints"
import * as Errors from "@cobro/api/Errors"
import * as MerchantList from "./MerchantList.js"
import * as Respond from "./Respond.js"

/** The resources a history can be asked of: the domain's (the simulator's terminals are the CLI's). */
const catalog = Histories.make()

/** The stream an id names (a resource id or a stream id), or the id itself when none does. */
const streamIdOf = (id: string): string =>
  Option.match(Histories.resolve(catalog, id), { onNone: () => id, onSome: (r) => r.streamId })

/** The path of a resource's history. */
export const historyUrl = (id: string): string =>
  `/admin/v1/streams/${encodeURIComponent(streamIdOf(id))}/history`

const iso = (date: Date): string => date.toISOString()

/** A checkpoint as the events list writes it: `<transaction id>-<global position>`. */
export const positionOf = (checkpoint: EventStore.Checkpoint): string =>
  `${checkpoint.transactionId}-${checkpoint.globalPosition}`

/** The checkpoint of a position the schema has checked (`<digits>-<digits>`). */
const checkpointOf = (position: string): EventStore.Checkpoint => {
  const [transactionId, globalPosition] = position.split("-") as [string, string]
  return { transactionId: BigInt(transactionId), globalPosition: BigInt(globalPosition) }
}

const merchantRow = (r: Listings.MerchantRow): typeof AdminListEndpoints.MerchantRow.Type => ({
  id: r.merchantId,
  name: r.name,
  status: r.status,
  created_at: iso(r.createdAt),
  history_url: historyUrl(r.merchantId)
})

const paymentRow = (r: Listings.TransactionRow): typeof AdminListEndpoints.PaymentRow.Type => ({
  id: r.transactionId,
  kind: r.kind,
  resource_id: r.resourceId,
  merchant_id: r.merchantId,
  mode: r.mode,
  status: r.status,
  amount: r.amount,
  currency: r.currency,
  reference: r.reference,
  created_at: iso(r.createdAt),
  updated_at: iso(r.updatedAt),
  history_url: historyUrl(r.resourceId)
})

const linkRow = (r: Listings.LinkRow): typeof AdminListEndpoints.LinkRow.Type => ({
  id: r.linkId,
  merchant_id: r.merchantId,
  mode: r.mode,
  status: r.status,
  amount_type: r.amountType,
  amount: r.amount,
  currency: r.currency,
  description: r.description,
  reference: r.reference,
  created_at: iso(r.createdAt),
  expires_at: r.expiresAt === null ? null : iso(r.expiresAt),
  updated_at: iso(r.updatedAt),
  history_url: historyUrl(r.linkId)
})

const notificationRow = (r: Listings.NotificationRow): typeof AdminListEndpoints.NotificationRow.Type => ({
  id: r.notificationId,
  merchant_id: r.merchantId,
  mode: r.mode,
  subject: r.subject,
  type: r.type,
  delivery: r.delivery,
  attempts: r.attempts,
  last_status_code: r.lastStatusCode,
  created_at: iso(r.createdAt),
  updated_at: iso(r.updatedAt),
  history_url: historyUrl(r.notificationId),
  attempts_url: `/admin/v1/notifications/${encodeURIComponent(r.notificationId)}/attempts`
})

const refundRow = (r: Listings.RefundRow): typeof AdminListEndpoints.RefundRow.Type => ({
  id: r.refundId,
  transaction_id: r.transactionId,
  merchant_id: r.merchantId,
  mode: r.mode,
  status: r.status,
  amount: r.amount,
  currency: r.currency,
  created_at: iso(r.createdAt),
  updated_at: iso(r.updatedAt),
  history_url: historyUrl(r.refundId)
})

const metadataBody = (m: EventStore.EventMetadata): typeof AdminListEndpoints.MetadataBody.Type => ({
  actor: m.actor ?? null,
  causation_id: m.causationId ?? null,
  correlation_id: m.correlationId ?? null,
  request_id: m.requestId ?? null
})

const eventRow = (e: EventStore.LoggedEvent) => ({
  position: positionOf(e.checkpoint),
  event_id: e.eventId,
  stream_id: e.streamId,
  version: e.streamVersion,
  type: e.type,
  schema_version: e.schemaVersion,
  recorded_at: iso(e.recordedAt),
  metadata: metadataBody(e.metadata),
  // Shown, not stored: sealed secrets are redacted (`Histories.redact`); the log keeps them.
  data: Histories.redact(e.data)
})

const streamNotFound = (message: string) => Errors.NotFound.of(Codes.StreamNotFound, message, "stream_id")

/**
 * A resource's history: the events of the stream an id names, each with the state after it. An
 * event this build cannot decode is a broken log (or a newer writer), a defect, as in the CLI.
 */
const history = Effect.fn("AdminListHandlers.history")(function* (id: string) {
  const resolved = Histories.resolve(catalog, id)
  if (Option.isNone(resolved)) {
    return yield* streamNotFound(
      "names no resource: give a stream id (PaymentLink-LNK_…) or a resource id (MER_…, LNK_…, INT_…, TRX_…, RFD_…, USR_…, a notification's UUID, MER_…:test:<reference_id>)"
    )
  }
  const { entry, streamId } = resolved.value
  const store = yield* EventStore.EventStore
  const events = yield* store.readStream(streamId)
  if (events.length === 0) return yield* streamNotFound(`no ${entry.resource} with this id is in the log`)
  const steps = yield* Either.match(Histories.replay(entry.aggregate, events), {
    onLeft: Effect.die,
    onRight: Effect.succeed
  })
  return Respond.json({
    object: "history",
    stream_id: streamId,
    resource: entry.resource,
    aggregate: entry.aggregate.name,
    events: steps.map((step) => ({
      event_id: step.recorded.eventId,
      version: step.recorded.streamVersion,
      type: step.recorded.type,
      recorded_at: iso(step.recorded.recordedAt),
      actor: step.recorded.metadata.actor ?? null,
      metadata: metadataBody(step.recorded.metadata),
      data: Histories.redact(step.recorded.data),
      state: Histories.redact(Histories.toJson(step.state))
    }))
  } satisfies typeof AdminListEndpoints.HistoryBody.Encoded)
})

/** The log in commit order; `stream` may name a resource, as the history does. */
const events = Effect.fn("AdminListHandlers.events")(function* (
  params: typeof AdminListEndpoints.EventsParams.Type
) {
  const listings = yield* Listings.Listings
  const page = yield* listings.events({
    limit: params.limit ?? Pagination.DEFAULT_LIMIT,
    ...(params.after === undefined ? {} : { after: checkpointOf(params.after) }),
    ...(params.stream === undefined ? {} : { stream: streamIdOf(params.stream) }),
    ...(params.type === undefined ? {} : { type: params.type })
  })
  // Event data is stored JSON, but written exactly (`bigint`s) whatever the store hands back.
  return Respond.json({
    object: "list",
    data: page.data.map(eventRow),
    has_more: page.hasMore,
    url: "/admin/v1/events",
    next_after: positionOf(page.next)
  } satisfies typeof AdminListEndpoints.EventList.Encoded)
})

/** `exactOptionalPropertyTypes`: a filter carries only the fields a query gave. */
const defined = <A extends Record<string, unknown>>(fields: A) =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as {
    [K in keyof A]: Exclude<A[K], undefined>
  }

/** The handler's answer of one merchant's list, under the span `AdminListHandlers.<list>`. */
const merchantList = <A, B>(
  merchantId: string,
  list: string,
  params: MerchantList.PageParams,
  row: (a: A) => B,
  query: MerchantList.Query<A>
) =>
  MerchantList.make(merchantId, list, params, query, row).pipe(Effect.withSpan(`AdminListHandlers.${list}`))

/** The handlers of the operator's lists. */
export const layer = HttpApiBuilder.group(CobroApi, "adminLists", (handlers) =>
  handlers
    .handle(
      "listMerchants",
      Effect.fn("AdminListHandlers.merchants")(function* ({ urlParams }) {
        const page = yield* MerchantList.pageRequest(urlParams)
        const listings = yield* Listings.Listings
        const found = yield* listings
          .merchants(defined({ name: urlParams.name, status: urlParams.status }), page)
          .pipe(Effect.mapError(MerchantList.unknownCursor))
        return MerchantList.listBody("/admin/v1/merchants", found, merchantRow)
      })
    )
    .handle("listPayments", ({ path, urlParams }) =>
      merchantList(path.merchant_id, "payments", urlParams, paymentRow, (listings, page) =>
        listings.transactions(
          path.merchant_id,
          defined({
            mode: urlParams.mode,
            kind: urlParams.kind,
            status: urlParams.status,
            createdGte: urlParams["created[gte]"],
            createdLt: urlParams["created[lt]"],
            reference: urlParams.reference
          }),
          page
        )
      )
    )
    .handle("listLinks", ({ path, urlParams }) =>
      merchantList(path.merchant_id, "links", urlParams, linkRow, (listings, page) =>
        listings.links(path.merchant_id, defined({ mode: urlParams.mode, status: urlParams.status }), page)
      )
    )
    .handle("listNotifications", ({ path, urlParams }) =>
      merchantList(path.merchant_id, "notifications", urlParams, notificationRow, (listings, page) =>
        listings.notifications(
          path.merchant_id,
          defined({ mode: urlParams.mode, delivery: urlParams.delivery, subject: urlParams.subject }),
          page
        )
      )
    )
    .handle("listRefunds", ({ path, urlParams }) =>
      merchantList(path.merchant_id, "refunds", urlParams, refundRow, (listings, page) =>
        listings.refunds(path.merchant_id, defined({ mode: urlParams.mode, status: urlParams.status }), page)
      )
    )
    .handle("listEvents", ({ urlParams }) => events(urlParams))
    .handle("streamHistory", ({ path }) => history(path.stream_id))
)
