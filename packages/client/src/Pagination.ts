/**
 * Walking the operator's lists (`AdminListEndpoints`): Stripe's pages, newest first, each the rows
 * after the previous page's last `id` (`starting_after`), until `has_more` is false; the event log
 * by `after` = the previous page's `next_after`. As a `Stream` for Effect programs and as an
 * `AsyncIterable` for `for await`.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * A page of a list: its rows and whether more lie beyond it.
 *
 * @category models
 */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
}

/**
 * A page of the event log: as {@link Page}, with the position to resume after.
 *
 * @category models
 */
export interface EventPage<A> extends Page<A> {
  readonly next_after: string
}

/** A list's next cursor: the last row's `id`, while more lie beyond. */
const nextCursor = <A extends { readonly id: string }>(page: Page<A>): Option.Option<string> =>
  page.has_more && page.data.length > 0 ? Option.some(page.data[page.data.length - 1]!.id) : Option.none()

/** The log's next cursor: the page's `next_after`, while more lie beyond. */
const nextAfter = <A>(page: EventPage<A>): Option.Option<string> =>
  page.has_more && page.data.length > 0 ? Option.some(page.next_after) : Option.none()

/** The rows of page after page from `from`, each page asked with the cursor `next` reads off the one before. */
const walkStream = <A, P extends Page<A>, E, R>(
  page: (cursor: string | undefined) => Effect.Effect<P, E, R>,
  next: (page: P) => Option.Option<string>,
  from: string | undefined
): Stream.Stream<A, E, R> =>
  Stream.paginateChunkEffect(from, (cursor) =>
    Effect.map(page(cursor), (p) => [Chunk.fromIterable(p.data), next(p)] as const)
  )

/** {@link walkStream} for `for await`: a page fetched when the previous one is used up. */
async function* walk<A, P extends Page<A>>(
  page: (cursor: string | undefined) => Promise<P>,
  next: (page: P) => Option.Option<string>,
  from: string | undefined
): AsyncGenerator<A, void, undefined> {
  let cursor = from
  for (;;) {
    const p = await page(cursor)
    yield* p.data
    const after = next(p)
    if (Option.isNone(after)) return
    cursor = after.value
  }
}

/**
 * Every row of a list, page after page from `startingAfter` (the start when absent).
 *
 * @category streams
 */
export const stream = <A extends { readonly id: string }, E, R>(
  page: (startingAfter: string | undefined) => Effect.Effect<Page<A>, E, R>,
  startingAfter?: string
): Stream.Stream<A, E, R> => walkStream(page, nextCursor<A>, startingAfter)

/**
 * Every event of the log from `after` (the start when absent), following `next_after`.
 *
 * @category streams
 */
export const eventStream = <A, E, R>(
  page: (after: string | undefined) => Effect.Effect<EventPage<A>, E, R>,
  after?: string
): Stream.Stream<A, E, R> => walkStream(page, nextAfter<A>, after)

/**
 * Every row of a list for `for await`, a page fetched when the previous one is used up.
 *
 * @category iterables
 */
export const iterate = <A extends { readonly id: string }>(
  page: (startingAfter: string | undefined) => Promise<Page<A>>,
  startingAfter?: string
): AsyncGenerator<A, void, undefined> => walk(page, nextCursor<A>, startingAfter)

/**
 * Every event of the log for `for await`, following `next_after`.
 *
 * @category iterables
 */
export const iterateEvents = <A>(
  page: (after: string | undefined) => Promise<EventPage<A>>,
  after?: string
): AsyncGenerator<A, void, undefined> => walk(page, nextAfter<A>, after)
