/**
 * The log as JSON lines for an auditor (issue 7, `cobro audit export`): every event in commit order,
 * a page at a time (memory bounded by a page, whatever the log's size), optionally only those
 * recorded in `[since, until)`. Each line carries what the hash covers, so `Verify.checkStream` can
 * check an export's streams without the database.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as LogPages from "./internal/LogPages.js"
import * as Rows from "./internal/Rows.js"

/** Which events, and how many per read. */
export interface Options {
  /** Only events recorded at or after this instant. */
  readonly since?: Date | undefined
  /** Only events recorded before this instant. */
  readonly until?: Date | undefined
  /** Events per page; default 1000. */
  readonly pageSize?: number | undefined
}

/**
 * The log in commit order (the catch-up order of `readAll`: only transactions below the snapshot's
 * xmin, so an export taken while writers run never skips an event that commits late), filtered by
 * recording time in SQL, in pages.
 */
export const events = (
  options: Options = {}
): Stream.Stream<EventStore.LoggedEvent, never, SqlClient.SqlClient> =>
  Stream.unwrap(
    Effect.map(SqlClient.SqlClient, (sql) => {
      const limit = options.pageSize ?? 1000
      const { since, until } = options
      const page = (after: EventStore.Checkpoint) =>
        sql<Rows.EventRow>`
          SELECT ${sql.literal(Rows.columns)} FROM cobro_events
          WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition.toString()}::bigint)
            AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
            ${since === undefined ? sql`` : sql`AND recorded_at >= ${since.toISOString()}::timestamptz`}
            ${until === undefined ? sql`` : sql`AND recorded_at < ${until.toISOString()}::timestamptz`}
          ORDER BY transaction_id, global_position
          LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map(Rows.toLogged)),
          Effect.orDie
        )
      return LogPages.stream(EventStore.Start, limit, page)
    })
  ).pipe(Stream.withSpan("Export.events"))

/** One event as an export line's object: positions as decimal text, the instant in ISO 8601. */
export const toJson = (event: EventStore.RecordedEvent) => ({
  globalPosition: event.globalPosition.toString(),
  streamId: event.streamId,
  streamVersion: event.streamVersion,
  eventId: event.eventId,
  type: event.type,
  schemaVersion: event.schemaVersion,
  recordedAt: event.recordedAt.toISOString(),
  data: event.data,
  metadata: event.metadata,
  prevHash: event.prevHash,
  hash: event.hash
})

/** One event as an export line (no trailing newline). */
export const toLine = (event: EventStore.RecordedEvent): string => JSON.stringify(toJson(event))

/** An export line read back as a `RecordedEvent`, e.g. for `Verify.checkStream`. */
export const fromLine = (line: string): EventStore.RecordedEvent => {
  const json = JSON.parse(line) as ReturnType<typeof toJson>
  return {
    ...json,
    globalPosition: BigInt(json.globalPosition),
    recordedAt: new Date(json.recordedAt)
  }
}
