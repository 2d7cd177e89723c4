/**
 * The operator's lists of one merchant's rows (the admin lists and the panel users), in Stripe's
 * shape: the page a query asks for, the merchant's 404 `MerchantNotFound`, and a 400 naming the
 * cursor that names no row of the list.
 */
import * as Listings from "@cobro/domain/Listings"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import * as Pagination from "@cobro/domain/Pagination"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Errors from "@cobro/api/Errors"

const invalid = (field: string, message: string) =>
  Errors.BadRequest.of(Errors.Codes.ValidationError, message, field)

/** The page parameters every list takes. */
export interface PageParams {
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/** The page a query asks for; both cursors at once is a 400. */
export const pageRequest = (params: PageParams): Effect.Effect<Pagination.PageRequest, Errors.BadRequest> => {
  const limit = params.limit ?? Pagination.DEFAULT_LIMIT
  if (params.starting_after !== undefined && params.ending_before !== undefined) {
    return Effect.fail(invalid("ending_before", "give starting_after or ending_before, not both"))
  }
  if (params.starting_after !== undefined)
    return Effect.succeed({ limit, startingAfter: params.starting_after })
  if (params.ending_before !== undefined) return Effect.succeed({ limit, endingBefore: params.ending_before })
  return Effect.succeed({ limit })
}

/** The 400 of a cursor that names no row of the list. */
export const unknownCursor = (error: Pagination.UnknownCursor) =>
  invalid(error.parameter, `${error.parameter} names no row of this list: give the id of one of its rows`)

/** Fails with the admin API's 404 unless the merchant exists. */
export const existingMerchant = (merchantId: string) =>
  MerchantAdmin.getMerchant(merchantId).pipe(
    Effect.asVoid,
    Effect.mapError(() => Errors.NotFound.of(Errors.Codes.MerchantNotFound, "no merchant with this id"))
  )

/** A list in Stripe's shape. */
export const listBody = <A, B>(url: string, page: Pagination.Page<A>, row: (a: A) => B) => ({
  object: "list" as const,
  data: page.data.map(row),
  has_more: page.hasMore,
  url
})

/** How a list reads one page of its rows from the `Listings` port. */
export type Query<A> = (
  listings: Context.Tag.Service<typeof Listings.Listings>,
  page: Pagination.PageRequest
) => Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>

/**
 * A list of one merchant's rows at `/admin/v1/merchants/{merchantId}/{list}`: its page request, the
 * merchant's 404, the cursor's 400.
 */
export const make = <A, B>(
  merchantId: string,
  list: string,
  params: PageParams,
  query: Query<A>,
  row: (a: A) => B
) =>
  Effect.gen(function* () {
    const page = yield* pageRequest(params)
    yield* existingMerchant(merchantId)
    const listings = yield* Listings.Listings
    const found = yield* query(listings, page).pipe(Effect.mapError(unknownCursor))
    return listBody(`/admin/v1/merchants/${merchantId}/${list}`, found, row)
  })
