/**
 * Cursor pagination in Stripe's convention, for the operator's and the panel's lists: newest first,
 * `limit` 1–100 (default 10), `starting_after` (the rows after a row id, older) or `ending_before`
 * (the rows before it, newer, still newest first), answered as `{data, has_more}`.
 *
 * A cursor is a row's id; its position is the row's sort key (the log position of the event that
 * created it, `Listings.Positioned`), which no insert changes and behind which no later commit
 * lands, so paging through a list never shows a row twice nor misses one between its first and last
 * rows, whatever is inserted meanwhile. {@link paginate} is the rule over a list already in order:
 * the in-memory adapters use it, and the property tests hold the SQL adapters to it.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** The default and the largest page. */
export const DEFAULT_LIMIT = 10
export const MAX_LIMIT = 100

/**
 * Which page: at most one of the two cursors.
 *
 * @category models
 */
export type PageRequest =
  | { readonly limit: number; readonly startingAfter?: undefined; readonly endingBefore?: undefined }
  | { readonly limit: number; readonly startingAfter: string; readonly endingBefore?: undefined }
  | { readonly limit: number; readonly startingAfter?: undefined; readonly endingBefore: string }

/**
 * One page, newest first. `hasMore`: more rows lie beyond the page in the direction of travel
 * (older ones for a first page or `starting_after`, newer ones for `ending_before`).
 *
 * @category models
 */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
}

/**
 * A cursor that names no row of the list (Stripe answers 400 `resource_missing`): a row of another
 * merchant or another list is not a cursor either.
 *
 * @category errors
 */
export class UnknownCursor extends Schema.TaggedError<UnknownCursor>()("UnknownCursor", {
  parameter: Schema.Literal("starting_after", "ending_before"),
  id: Schema.String
}) {}

/**
 * The page of `rows` (already newest first, ids unique) that `request` asks for.
 *
 * @category pagination
 */
export const paginate = <A>(
  rows: ReadonlyArray<A>,
  idOf: (row: A) => string,
  request: PageRequest
): Either.Either<Page<A>, UnknownCursor> => {
  if (request.startingAfter !== undefined) {
    const at = rows.findIndex((row) => idOf(row) === request.startingAfter)
    if (at === -1)
      return Either.left(new UnknownCursor({ parameter: "starting_after", id: request.startingAfter }))
    const rest = rows.slice(at + 1)
    return Either.right({ data: rest.slice(0, request.limit), hasMore: rest.length > request.limit })
  }
  if (request.endingBefore !== undefined) {
    const at = rows.findIndex((row) => idOf(row) === request.endingBefore)
    if (at === -1)
      return Either.left(new UnknownCursor({ parameter: "ending_before", id: request.endingBefore }))
    const before = rows.slice(0, at)
    const from = Math.max(0, before.length - request.limit)
    return Either.right({ data: before.slice(from), hasMore: from > 0 })
  }
  return Either.right({ data: rows.slice(0, request.limit), hasMore: rows.length > request.limit })
}
