/**
 * The log in commit order as a stream read a page at a time: memory bounded by a page, whatever the
 * log's size. The read path's `streamAll` and the auditor's `Export` share it.
 * @internal
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * The events after `start`, `page(after)` reading at most `limit` of them after a checkpoint; a page
 * shorter than `limit` is the last.
 */
export const stream = <R>(
  start: EventStore.Checkpoint,
  limit: number,
  page: (after: EventStore.Checkpoint) => Effect.Effect<ReadonlyArray<EventStore.LoggedEvent>, never, R>
): Stream.Stream<EventStore.LoggedEvent, never, R> =>
  Stream.paginateChunkEffect(start, (after) =>
    Effect.map(page(after), (events) => {
      const last = events[events.length - 1]
      return [
        Chunk.unsafeFromArray(events),
        events.length < limit || last === undefined ? Option.none() : Option.some(last.checkpoint)
      ] as const
    })
  )
