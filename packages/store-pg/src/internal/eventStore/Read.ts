/**
 * The event store's read path: a stream's events, several streams' at once, and the whole log in
 * commit order. Every read is one statement, through the pool directly outside a caller's
 * transaction. Untraced: the callers' spans (the use case's, `Subscription.processBatch`) enclose it.
 * @internal
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as PgPool from "../../PgPool.js"
import * as LogPages from "../LogPages.js"
import * as Rows from "../Rows.js"

/** The page size of `readAll` and `streamAll` when none is given. */
export const defaultLimit = 1000

/**
 * `readStreams`: each stream looked up on its own through the `(stream_id, stream_version)` index, as
 * `readStream` does. `OFFSET 0` keeps the planner from flattening the lateral subquery into a join,
 * which, without fresh statistics (a log that grew since the last ANALYZE, or no autovacuum), it
 * planned as a parallel scan of the whole log: 60–70 ms for 100 streams in a log of 130,000 events,
 * against 2–3 ms this way (`docs/benchmarks.md`, Webhooks).
 */
export const readStreamsStatement =
  `SELECT ${Rows.columns} ` +
  "FROM unnest($1::text[]) AS s(id) CROSS JOIN LATERAL " +
  "(SELECT * FROM cobro_events WHERE stream_id = s.id ORDER BY stream_version OFFSET 0) e " +
  "ORDER BY e.stream_id, e.stream_version"

/**
 * The events a reader of the log in commit order may see: those of transactions below the
 * snapshot's xmin (a transaction still running may commit events that sort before later ones).
 */
export const committedInOrder = "transaction_id < pg_snapshot_xmin(pg_current_snapshot())"

/** A page of the whole log in commit order: after a checkpoint, and only {@link committedInOrder}. */
const readPageStatement = `SELECT ${Rows.columns} FROM cobro_events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND ${committedInOrder}
  ORDER BY transaction_id, global_position
  LIMIT $3`

/** The port's reads over `statement` (`PgPool.statement`). */
export const make = (
  statement: PgPool.Statement
): Pick<EventStore.EventStore["Type"], "readStream" | "readStreams" | "readAll" | "streamAll"> => {
  const readStream = Effect.fnUntraced(function* (streamId: string, options?: EventStore.ReadStreamOptions) {
    const params: Array<unknown> = [streamId, options?.fromVersion ?? 1]
    let text = `SELECT ${Rows.columns} FROM cobro_events WHERE stream_id = $1 AND stream_version >= $2`
    if (options?.toVersion !== undefined) {
      params.push(options.toVersion)
      text += ` AND stream_version <= $${params.length}`
    }
    if (options?.asOf !== undefined) {
      params.push(options.asOf.toISOString())
      text += ` AND recorded_at <= $${params.length}::timestamptz`
    }
    text += " ORDER BY stream_version"
    const rows = yield* statement<Rows.EventRow>(text, params).pipe(Effect.orDie)
    return rows.map(Rows.toRecorded)
  })

  // One statement for all the streams.
  const readStreams = (
    streamIds: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyMap<string, ReadonlyArray<EventStore.RecordedEvent>>> => {
    const byStream = new Map<string, Array<EventStore.RecordedEvent>>(streamIds.map((id) => [id, []]))
    if (streamIds.length === 0) return Effect.succeed(byStream)
    return statement<Rows.EventRow>(readStreamsStatement, [[...byStream.keys()]]).pipe(
      Effect.map((rows) => {
        for (const row of rows) byStream.get(row.stream_id)?.push(Rows.toRecorded(row))
        return byStream
      }),
      Effect.orDie
    )
  }

  // Through `statement`: log consumers read pages outside their transactions too (`Subscription`).
  const readPage = (after: EventStore.Checkpoint, limit: number) =>
    statement<Rows.EventRow>(readPageStatement, [
      after.transactionId.toString(),
      after.globalPosition.toString(),
      limit
    ]).pipe(
      Effect.map((rows) => rows.map(Rows.toLogged)),
      Effect.orDie
    )

  const readAll = (options?: EventStore.ReadAllOptions) =>
    readPage(options?.after ?? EventStore.Start, options?.limit ?? defaultLimit)

  const streamAll = (options?: EventStore.ReadAllOptions): Stream.Stream<EventStore.LoggedEvent> => {
    const limit = options?.limit ?? defaultLimit
    return LogPages.stream(options?.after ?? EventStore.Start, limit, (after) => readPage(after, limit)).pipe(
      Stream.withSpan("PgEventStore.streamAll")
    )
  }

  return { readStream, readStreams, readAll, streamAll }
}
