/**
 * The panel's payments (issue 22, "Payments"): every transaction of the merchant in the page's mode —
 * terminal checkouts, link payments, online payments — newest first, filtered by status, kind,
 * creation day (Bogotá's calendar) and reference, paged "newer"/"older". Each row opens the
 * transaction's page (`PaymentDetail`).
 */
import * as Listings from "@cobro/domain/Listings"
import * as Effect from "effect/Effect"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import { startOfDay } from "./PanelDates.js"
import * as Paging from "./Paging.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The list's path. */
export const PATH = `${Html.PREFIX}/payments`

/** The statuses a transaction row may have, over the three kinds (see `ListingsFromLog`). */
export const STATUSES = [
  "PENDING",
  "SENDING",
  "SENT",
  "HELD",
  "UNREACHABLE",
  "RUNNING",
  "CHALLENGE",
  "PROCESSING",
  "APPROVED",
  "PAID",
  "REJECTED",
  "EXPIRED",
  "CANCELLED",
  "VOIDED",
  "REFUNDED"
] as const

const KINDS: ReadonlyArray<Listings.TransactionKind> = ["terminal", "link", "online"]

/** The page of a transaction: its id, kind and resource in the address. */
export const detailHref = (
  context: Html.Context,
  row: Pick<Listings.TransactionRow, "transactionId" | "kind" | "resourceId">
) =>
  Html.href(context, `${PATH}/${encodeURIComponent(row.transactionId)}`, {
    kind: row.kind,
    resource: row.kind === "online" ? undefined : row.resourceId
  })

/** The list's filters as the query holds them (kept as typed, for the form and the pager). */
interface Filters {
  readonly status: string
  readonly kind: string
  readonly created_from: string
  readonly created_to: string
  readonly reference: string
}

const filtersOf = (query: URLSearchParams): Filters => {
  const get = (name: string, max: number) => (query.get(name) ?? "").trim().slice(0, max)
  return {
    status: get("status", 20),
    kind: get("kind", 20),
    created_from: get("created_from", 10),
    created_to: get("created_to", 10),
    reference: get("reference", 255)
  }
}

/** The port's filter, and the fields whose value could not be used (shown beside them, then ignored). */
const filterOf = (
  mode: Listings.Mode,
  filters: Filters
): {
  readonly filter: Listings.TransactionFilter
  readonly invalid: ReadonlyArray<"created_from" | "created_to">
} => {
  const from = filters.created_from === "" ? undefined : startOfDay(filters.created_from)
  // "To" a day includes that day: the filter stops where the next day starts.
  const to = filters.created_to === "" ? undefined : startOfDay(filters.created_to, 1)
  const invalid: Array<"created_from" | "created_to"> = []
  if (filters.created_from !== "" && from === undefined) invalid.push("created_from")
  if (filters.created_to !== "" && to === undefined) invalid.push("created_to")
  return {
    filter: {
      mode,
      ...((STATUSES as ReadonlyArray<string>).includes(filters.status) ? { status: filters.status } : {}),
      ...(KINDS.includes(filters.kind as Listings.TransactionKind)
        ? { kind: filters.kind as Listings.TransactionKind }
        : {}),
      ...(from !== undefined ? { createdGte: from } : {}),
      ...(to !== undefined ? { createdLt: to } : {}),
      ...(filters.reference !== "" ? { reference: filters.reference } : {})
    },
    invalid
  }
}

const filterForm = (context: Html.Context, filters: Filters, invalid: ReadonlyArray<string>): string => {
  const t = Text.messages[context.locale]
  return `<form method="get" action="${PATH}" id="payment-filters" class="filters" role="search">
<input type="hidden" name="mode" value="${context.mode}">${context.langChosen ? `<input type="hidden" name="lang" value="${context.locale}">` : ""}
${Html.select("status", t.payments.status, [["", t.any], ...STATUSES.map((s) => [s, s] as const)], filters.status)}
${Html.select("kind", t.payments.kind, [["", t.any], ...KINDS.map((k) => [k, t.kinds[k]] as const)], filters.kind)}
${Html.field({ name: "created_from", label: t.payments.from, type: "date", value: filters.created_from, error: invalid.includes("created_from") ? t.payments.badDate : undefined })}
${Html.field({ name: "created_to", label: t.payments.to, type: "date", value: filters.created_to, error: invalid.includes("created_to") ? t.payments.badDate : undefined })}
${Html.field({ name: "reference", label: t.payments.reference, type: "search", value: filters.reference, maxlength: 255 })}
<div class="field"><button type="submit" class="primary" id="apply-filters">${Html.escape(t.payments.apply)}</button>
<a class="button secondary" id="clear-filters" href="${Html.escape(Html.href(context, PATH))}">${Html.escape(t.payments.clear)}</a></div>
</form>`
}

const row = (context: Html.Context, r: Listings.TransactionRow): string => {
  const t = Text.messages[context.locale]
  return `<tr data-testid="payment-row" data-transaction-id="${Html.escape(r.transactionId)}" data-kind="${r.kind}" data-status="${Html.escape(r.status)}">
<td class="nowrap">${Html.time(r.createdAt, context.locale)}</td>
<td><a href="${Html.escape(detailHref(context, r))}" data-testid="payment-link">${Html.escape(r.reference ?? r.transactionId)}</a><br><span class="meta"><code>${Html.escape(r.transactionId)}</code></span></td>
<td>${Html.escape(t.kinds[r.kind])}</td>
<td class="num">${Html.money(r.amount, r.currency, context.locale)}</td>
<td>${Html.status(r.status)}</td>
</tr>`
}

/** GET: the list. A cursor that names no row of the merchant's is a 400 page. */
export const list = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const listings = yield* Listings.Listings
    const filters = filtersOf(context.query)
    const { filter, invalid } = filterOf(context.mode, filters)
    const request = Paging.requestOf(context.query)
    return yield* listings.transactions(session.merchantId, filter, request).pipe(
      Effect.map((page) =>
        Request.respond(
          Html.layout(
            context,
            "payments",
            t.payments.title,
            `<div class="card"><h1>${Html.escape(t.payments.title)}</h1>
${filterForm(context, filters, invalid)}
${Html.table(
  "payments",
  [t.payments.created, t.payments.reference, t.payments.kind, t.payments.amount, t.payments.status],
  page.data.map((r) => row(context, r)),
  t.payments.empty
)}
${Paging.pager(context, PATH, { ...filters }, request, page, (r) => r.transactionId)}</div>`
          )
        )
      ),
      Effect.catchTag("UnknownCursor", () =>
        Effect.succeed(Request.respond(Html.messagePage(context, "badRequest"), 400))
      )
    )
  })
)
