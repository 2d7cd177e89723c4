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

const nextCursor = <A extends { readonly id: string }>(page: Page<A>): Option.Option<string> =>
  page.has_more && page.data.length > 0 ? Option.some(page.data[page.data.length - 1]!.id) : Option.none()

/**
 * Every row of a list, page after page from `startingAfter` (the start when absent).
 *
 * @category streams
 */
export const stream = <A extends { readonly id: string }, E, R>(
  page: (startingAfter: string | undefined) => Effect.Effect<Page<A>, E, R>,
  startingAfter?: string
): Stream.Stream<A, E, R> =>
  Stream.paginateChunkEffect(startingAfter, (cursor) =>
    Effect.map(page(cursor), (p) => [Chunk.fromIterable(p.data), nextCursor(p)] as const)
  )

/**
 * Every event of the log from `after` (the start when absent), following `next_after`.
 *
 * @category streams
 */
export const eventStream = <A, E, R>(
  page: (after: string | undefined) => Effect.Effect<EventPage<A>, E, R>,
  after?: string
): Stream.Stream<A, E, R> =>
  Stream.paginateChunkEffect(after, (cursor) =>
    Effect.map(
      page(cursor),
      (p) =>
        [
          Chunk.fromIterable(p.data),
          p.has_more && p.data.length > 0 ? Option.some(p.next_after) : Option.none()
        ] as const
    )
  )

/**
 * Every row of a list for `for await`, a page fetched when the previous one is used up.
 *
 * @category iterables
 */
export async function* iterate<A extends { readonly id: string }>(
  page: (startingAfter: string | undefined) => Promise<Page<A>>,
  startingAfter?: string
): AsyncGenerator<A, void, undefined> {
  let cursor = startingAfter
  for (;;) {
    const p = await page(cursor)
    yield* p.data
    const next = nextCursor(p)
    if (Option.isNone(next)) return
    cursor = next.value
  }
}

/**
 * Every event of the log for `for await`, following `next_after`.
 *
 * @category iterables
 */
export async function* iterateEvents<A>(
  page: (after: string | undefined) => Promise<EventPage<A>>,
  after?: string
): AsyncGenerator<A, void, undefined> {
  let cursor = after
  for (;;) {
    const p = await page(cursor)
    yield* p.data
    if (!p.has_more || p.data.length === 0) return
    cursor = p.next_after
  }
}
