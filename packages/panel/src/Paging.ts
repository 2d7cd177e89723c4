/**
 * The panel's lists paged in Stripe's convention (issue 22): `starting_after` (older) and
 * `ending_before` (newer) in the query, read into a `Pagination.PageRequest`, and the "newer" and
 * "older" links of a page drawn from where the page stands. The pages read `Listings`, so their
 * order is the operator's: newest first by the log position that created each row.
 */
import type * as Pagination from "@cobro/domain/Pagination"
import * as Html from "./PanelHtml.js"
import * as Text from "./PanelText.js"

/** Rows per page of the panel's lists. */
export const PAGE_SIZE = 20

/** The page a query asks for: at most one cursor (`starting_after` wins), ids of at most 128 characters. */
export const requestOf = (query: URLSearchParams, limit = PAGE_SIZE): Pagination.PageRequest => {
  const cursor = (name: string) => {
    const value = (query.get(name) ?? "").trim()
    return value === "" || value.length > 128 ? undefined : value
  }
  const after = cursor("starting_after")
  if (after !== undefined) return { limit, startingAfter: after }
  const before = cursor("ending_before")
  if (before !== undefined) return { limit, endingBefore: before }
  return { limit }
}

/**
 * The "newer" and "older" links of a page (`params`: the list's filters, kept). A page reached
 * through a cursor has rows on the cursor's side; `hasMore` says whether there are more in the
 * direction of travel.
 */
export const pager = <A>(
  context: Html.Context,
  path: string,
  params: Readonly<Record<string, string | undefined>>,
  request: Pagination.PageRequest,
  page: Pagination.Page<A>,
  idOf: (row: A) => string
): string => {
  const t = Text.messages[context.locale]
  const first = page.data[0]
  const last = page.data[page.data.length - 1]
  const newer =
    first !== undefined &&
    (request.startingAfter !== undefined || (request.endingBefore !== undefined && page.hasMore))
  const older = last !== undefined && (request.endingBefore !== undefined || page.hasMore)
  const link = (id: string, label: string, cursor: Record<string, string>) =>
    `<a class="button secondary" id="${id}" rel="${id === "page-newer" ? "prev" : "next"}" href="${Html.escape(
      Html.href(context, path, { ...params, ...cursor })
    )}">${Html.escape(label)}</a>`
  const restart =
    page.data.length === 0 && (request.startingAfter !== undefined || request.endingBefore !== undefined)
      ? `<a class="button secondary" id="page-first" href="${Html.escape(Html.href(context, path, params))}">${Html.escape(t.firstPage)}</a>`
      : ""
  if (!newer && !older && restart === "") return ""
  return `<nav class="pager" aria-label="${Html.escape(t.pagesLabel)}"><span>${
    newer ? link("page-newer", t.newer, { ending_before: idOf(first!) }) : ""
  }${restart}</span><span>${older ? link("page-older", t.older, { starting_after: idOf(last!) }) : ""}</span></nav>`
}
