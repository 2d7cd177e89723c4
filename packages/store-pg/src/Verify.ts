/**
 * The auditor's check of the event log: walks every stream's hash chain and reports, per stream,
 * the first link that does not hold (an altered, removed or reordered event, a wrong `prev_hash`).
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HashChain from "./HashChain.js"
import * as Rows from "./internal/Rows.js"

/** The first broken link of one stream. */
export type ChainBreak = Data.TaggedEnum<{
  /** The version found is not the next one: an event was removed, or versions were reordered. */
  MissingEvent: {
    readonly streamId: string
    readonly expectedVersion: number
    readonly foundVersion: number
    readonly globalPosition: bigint
  }
  /** `prev_hash` is not the previous event's hash: an event was removed, replaced or reordered. */
  BrokenLink: {
    readonly streamId: string
    readonly streamVersion: number
    readonly globalPosition: bigint
    readonly expectedPrevHash: string
    readonly storedPrevHash: string
  }
  /** The stored hash is not the hash of the stored content: the event was altered. */
  AlteredEvent: {
    readonly streamId: string
    readonly streamVersion: number
    readonly globalPosition: bigint
    readonly storedHash: string
    readonly computedHash: string
  }
  /** The stream's head (`cobro_streams`) disagrees with its last event: its tail was removed. */
  HeadMismatch: {
    readonly streamId: string
    readonly headVersion: number
    readonly lastVersion: number
  }
}>
export const ChainBreak = Data.taggedEnum<ChainBreak>()

/** What `verify` found. */
export interface Report {
  readonly streams: number
  readonly events: number
  /** At most one per stream, ordered by stream id. Empty: every chain holds. */
  readonly breaks: ReadonlyArray<ChainBreak>
  /** Checkpoints that name an event the log does not hold, ordered by name. */
  readonly checkpoints: ReadonlyArray<CheckpointBreak>
}

/** A walker over one stream's events in version order: feed it each event, it reports the first break. */
export class StreamWalk {
  version = 0
  prevHash = HashChain.genesis
  broken = false
  constructor(readonly streamId: string) {}

  /** Checks the next event; returns the break it shows, once per stream. */
  next(event: EventStore.RecordedEvent): ChainBreak | undefined {
    if (this.broken) return undefined
    const found = this.check(event)
    if (found !== undefined) this.broken = true
    this.version = event.streamVersion
    this.prevHash = event.hash
    return found
  }

  private check(event: EventStore.RecordedEvent): ChainBreak | undefined {
    const { globalPosition, streamId, streamVersion } = event
    if (streamVersion !== this.version + 1) {
      return ChainBreak.MissingEvent({
        streamId,
        expectedVersion: this.version + 1,
        foundVersion: streamVersion,
        globalPosition
      })
    }
    if (event.prevHash !== this.prevHash) {
      return ChainBreak.BrokenLink({
        streamId,
        streamVersion,
        globalPosition,
        expectedPrevHash: this.prevHash,
        storedPrevHash: event.prevHash
      })
    }
    const computedHash = HashChain.hashEvent(event.prevHash, event)
    if (computedHash !== event.hash) {
      return ChainBreak.AlteredEvent({
        streamId,
        streamVersion,
        globalPosition,
        storedHash: event.hash,
        computedHash
      })
    }
    return undefined
  }
}

/**
 * Checks one stream's events, given in version order (as `readStream` returns them, or from an
 * export): the first broken link, if any. Needs no database: an auditor can run it on a dump.
 */
export const checkStream = (events: Iterable<EventStore.RecordedEvent>): ChainBreak | undefined => {
  let walk: StreamWalk | undefined
  for (const event of events) {
    walk ??= new StreamWalk(event.streamId)
    const found = walk.next(event)
    if (found !== undefined) return found
  }
  return undefined
}

/** A projection's or consumer's checkpoint that does not hold. */
export type CheckpointBreak = Data.TaggedEnum<{
  /**
   * The checkpoint names an event that is not in the log (removed, or the checkpoint altered): the
   * read model claims to have applied something the log does not hold.
   */
  UnknownPosition: {
    readonly name: string
    readonly transactionId: bigint
    readonly globalPosition: bigint
  }
}>
export const CheckpointBreak = Data.taggedEnum<CheckpointBreak>()

/** What a walk has done so far, for a progress display. */
export interface Progress {
  readonly events: number
  readonly streams: number
}

/** How {@link verifyWith} walks. */
export interface Options {
  /** Events per page (default 1000): memory is bounded by a page or two, whatever the log's size. */
  readonly pageSize?: number
  /** Called after each page. */
  readonly onProgress?: (progress: Progress) => Effect.Effect<void>
}

/** The number of events in the log (for a progress display's total). */
export const countEvents: Effect.Effect<number, never, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM cobro_events`
).pipe(
  Effect.map((rows) => Number(rows[0]?.n ?? 0)),
  Effect.orDie
)

/**
 * Every checkpoint of `cobro_checkpoints` (projections' and consumers') that names an event the
 * log does not hold. The start (`0`, `0`) names none and always holds.
 */
export const verifyCheckpoints: Effect.Effect<
  ReadonlyArray<CheckpointBreak>,
  never,
  SqlClient.SqlClient
> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string; transaction_id: string; global_position: string }>`
      SELECT c.name, c.transaction_id::text AS transaction_id, c.global_position::text AS global_position
      FROM cobro_checkpoints c
      WHERE c.global_position <> 0 AND NOT EXISTS (
        SELECT 1 FROM cobro_events e
        WHERE e.global_position = c.global_position AND e.transaction_id = c.transaction_id)
      ORDER BY c.name`
).pipe(
  Effect.map((rows) =>
    rows.map((row) =>
      CheckpointBreak.UnknownPosition({
        name: row.name,
        transactionId: BigInt(row.transaction_id),
        globalPosition: BigInt(row.global_position)
      })
    )
  ),
  Effect.orDie,
  Effect.withSpan("Verify.verifyCheckpoints")
)

/**
 * Walks the whole log, stream by stream in version order, a page at a time (bounded memory; the
 * next page is read while the current one is hashed), then compares each stream's head with its
 * last event and checks the checkpoints. Reports the first break of each stream: after it, a
 * stream's later links cannot be told apart from consequences of the first.
 */
export const verifyWith = (options: Options = {}): Effect.Effect<Report, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pageSize = options.pageSize ?? 1000
    const breaks = new Map<string, ChainBreak>()
    let streams = 0
    let events = 0
    let walk: StreamWalk | undefined
    const page = (after: { streamId: string; version: number } | undefined) =>
      sql<Rows.EventRow>`
        SELECT ${sql.literal(Rows.columns)} FROM cobro_events
        ${after === undefined ? sql`` : sql`WHERE (stream_id, stream_version) > (${after.streamId}, ${after.version})`}
        ORDER BY stream_id, stream_version LIMIT ${pageSize}`.pipe(Effect.orDie)
    let next = yield* Effect.fork(page(undefined))
    while (true) {
      const rows = yield* Fiber.join(next)
      const last = rows[rows.length - 1]
      const more = last !== undefined && rows.length >= pageSize
      if (more) next = yield* Effect.fork(page({ streamId: last.stream_id, version: last.stream_version }))
      for (const row of rows) {
        const event = Rows.toRecorded(row)
        if (walk?.streamId !== event.streamId) {
          walk = new StreamWalk(event.streamId)
          streams++
        }
        events++
        const found = walk.next(event)
        if (found !== undefined) breaks.set(event.streamId, found)
      }
      if (options.onProgress !== undefined) yield* options.onProgress({ events, streams })
      if (!more) break
    }
    // Heads whose last event is gone (or that have no events left), and events whose head is gone.
    const heads = yield* sql<{ stream_id: string; head_version: number | null; last_version: number | null }>`
      SELECT COALESCE(s.stream_id, e.stream_id) AS stream_id, s.version AS head_version, e.stream_version AS last_version
      FROM cobro_streams s
      FULL JOIN (
        SELECT DISTINCT ON (stream_id) stream_id, stream_version, hash
        FROM cobro_events ORDER BY stream_id, stream_version DESC
      ) e ON e.stream_id = s.stream_id
      WHERE s.version IS DISTINCT FROM e.stream_version OR s.last_hash IS DISTINCT FROM e.hash
      ORDER BY 1`.pipe(Effect.orDie)
    for (const head of heads) {
      if (breaks.has(head.stream_id)) continue
      if (head.last_version === null) streams++
      breaks.set(
        head.stream_id,
        ChainBreak.HeadMismatch({
          streamId: head.stream_id,
          headVersion: head.head_version ?? 0,
          lastVersion: head.last_version ?? 0
        })
      )
    }
    const ordered = [...breaks.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, found]) => found)
    const checkpoints = yield* verifyCheckpoints
    return { streams, events, breaks: ordered, checkpoints }
  }).pipe(Effect.withSpan("Verify.verify"))

/** {@link verifyWith} with the default page size and no progress. */
export const verify: Effect.Effect<Report, never, SqlClient.SqlClient> = verifyWith()
