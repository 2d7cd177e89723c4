/**
 * The domain's `EventStore` port over `@effect/sql` on PostgreSQL (or PGlite): optimistic appends
 * with a per-stream hash chain, reads by stream and in commit order (brief, "The event log").
 */
import * as EventStore from "@cobro/domain/EventStore"
import type * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as HashChain from "./HashChain.js"
import * as Rows from "./internal/Rows.js"
import * as Migrations from "./Migrations.js"
import * as PgPool from "./PgPool.js"

/** The page size of `readAll` and `streamAll` when none is given. */
export const defaultLimit = 1000

/**
 * The call of `cobro_append` (migration `2_append_function`), its
 * text built once: the whole append in one autocommit statement, one round trip.
 */
const appendStatement =
  "SELECT next_version, first_position, last_position FROM cobro_append(" +
  "$1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)"

/**
 * The call of `cobro_append_new` (migration `4_append_new_stream_function`): one event to a new
 * stream, outside a transaction, with scalar parameters.
 */
const appendNewStatement =
  "SELECT cobro_append_new($1, $2::uuid, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz, $8, $9) AS position"

/**
 * The same append as `cobro_append_new`, as one data-modifying statement that the `pg` pool prepares
 * once per connection (`PgPool.query` with a name): create the head (`ON CONFLICT DO NOTHING` waits
 * for a concurrent creator of the stream), insert the event only if the head was created, return its
 * position or null. The writer computes the version-1 hash (`HashChain.hashAround`), the recipe of
 * `cobro_append_new`. Prepared, it costs the server about 30 % less CPU than the PL/pgSQL call
 * (`AppendSql.ts`, `docs/benchmarks.md`); unprepared (PGlite, `@effect/sql`) it would be planned on
 * every call, so there the function stays.
 */
const appendNewPrepared = {
  name: "cobro_append_new_1",
  text:
    "WITH head AS (INSERT INTO cobro_streams (stream_id, version, last_hash) VALUES ($1, 1, $8) " +
    "ON CONFLICT (stream_id) DO NOTHING RETURNING stream_id), " +
    "event AS (INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, " +
    "metadata, recorded_at, prev_hash, hash) SELECT stream_id, 1, $2::uuid, $3, $4::integer, $5::jsonb, " +
    "$6::jsonb, $7::timestamptz, '', $8 FROM head RETURNING global_position) " +
    "SELECT (SELECT global_position FROM event) AS position"
} as const

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
 * The call of `cobro_append_batch` (migration `6_append_batch_set_based`): a whole `appendBatch` in
 * one statement, the items flattened into arrays.
 */
const appendBatchStatement =
  "SELECT next_version, first_position, last_position FROM cobro_append_batch(" +
  "$1::text[], $2::text[], $3::integer[], $4::integer[], $5::timestamptz, $6::uuid[], $7::text[], " +
  "$8::integer[], $9::jsonb[], $10::jsonb[], $11::text[], $12::text[], $13)"

/**
 * A page of the whole log in commit order: after a checkpoint, and only below the snapshot's xmin
 * (a transaction still running may commit events that sort before later ones).
 */
const readPageStatement = `SELECT ${Rows.columns} FROM cobro_events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY transaction_id, global_position
  LIMIT $3`

/** The shortest time between two wake-up NOTIFYs sent after autocommit appends. */
export const notifyInterval: Duration.DurationInput = "5 millis"

// Wall-clock time, not the Clock in context: a test's virtual clock must not stall wake-ups.
const throttle = Effect.withClock(Effect.sleep(notifyInterval), Clock.make())

/** What `cobro_append` returns: null positions when the stream is not at the expected version. */
interface AppendRow {
  readonly next_version: number
  readonly first_position: string | null
  readonly last_position: string | null
}

/** One event as the append functions take it. */
interface EncodedEvent {
  readonly eventId: string
  readonly data: string
  readonly metadata: string
  readonly before: string
  readonly after: string
}

/**
 * Each event's JSON is encoded once: its text is what `jsonb` stores, and its parse is the
 * normalised value (`HashChain.normalizeJson`) that the hash covers.
 */
const encodeEvent = (streamId: string, event: EventStore.NewEvent, recordedAt: Date): EncodedEvent => {
  const eventId = event.eventId.toLowerCase()
  const data = JSON.stringify(event.data) ?? "null"
  const metadata = JSON.stringify(event.metadata ?? {}) ?? "null"
  const [before, after] = HashChain.canonicalEventAround({
    streamId,
    eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: JSON.parse(data),
    metadata: JSON.parse(metadata),
    recordedAt
  })
  return { eventId, data, metadata, before, after }
}

/** The parameters of `cobro_append_new`. */
const appendNewParams = (
  streamId: string,
  event: EventStore.NewEvent,
  recordedAt: string,
  encoded: EncodedEvent
): ReadonlyArray<unknown> => [
  streamId,
  encoded.eventId,
  event.type,
  event.schemaVersion,
  encoded.data,
  encoded.metadata,
  recordedAt,
  encoded.before,
  encoded.after
]

/** The parameters of {@link appendNewPrepared}: those of `cobro_append_new` with the hash in place of the halves. */
const appendNewPreparedParams = (
  streamId: string,
  event: EventStore.NewEvent,
  recordedAt: string,
  encoded: EncodedEvent
): ReadonlyArray<unknown> => [
  streamId,
  encoded.eventId,
  event.type,
  event.schemaVersion,
  encoded.data,
  encoded.metadata,
  recordedAt,
  HashChain.hashAround(HashChain.genesis, encoded.before, 1, encoded.after)
]

/** The parameters of `cobro_append`. */
const appendParams = (
  streamId: string,
  events: ReadonlyArray<EventStore.NewEvent>,
  expected: EventStore.ExpectedVersion,
  recordedAt: Date,
  notify: boolean
): ReadonlyArray<unknown> => {
  const n = events.length
  const ids = new Array<string>(n)
  const types = new Array<string>(n)
  const schemaVersions = new Array<number>(n)
  const data = new Array<string>(n)
  const metadata = new Array<string>(n)
  const before = new Array<string>(n)
  const after = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    const event = events[i]!
    const encoded = encodeEvent(streamId, event, recordedAt)
    ids[i] = encoded.eventId
    types[i] = event.type
    schemaVersions[i] = event.schemaVersion
    data[i] = encoded.data
    metadata[i] = encoded.metadata
    before[i] = encoded.before
    after[i] = encoded.after
  }
  return [
    streamId,
    expected._tag,
    expected._tag === "Exact" ? expected.version : 0,
    recordedAt.toISOString(),
    ids,
    types,
    schemaVersions,
    data,
    metadata,
    before,
    after,
    notify
  ]
}

/** The parameters of `cobro_append_batch`: each event encoded once, `Exact(0)` as `NoStream` (as `append`). */
const appendBatchParams = (
  items: ReadonlyArray<EventStore.BatchAppend>,
  recordedAt: Date,
  notify: boolean
): ReadonlyArray<unknown> => {
  const streamIds = new Array<string>(items.length)
  const expectedTags = new Array<string>(items.length)
  const expectedVersions = new Array<number>(items.length)
  const counts = new Array<number>(items.length)
  const ids: Array<string> = []
  const types: Array<string> = []
  const schemaVersions: Array<number> = []
  const data: Array<string> = []
  const metadata: Array<string> = []
  const before: Array<string> = []
  const after: Array<string> = []
  for (let i = 0; i < items.length; i++) {
    const { events, expected, streamId } = items[i]!
    const exact = expected._tag === "Exact" && expected.version !== 0
    streamIds[i] = streamId
    expectedTags[i] = exact ? "Exact" : expected._tag === "Any" ? "Any" : "NoStream"
    expectedVersions[i] = exact ? expected.version : 0
    counts[i] = events.length
    for (const event of events) {
      const encoded = encodeEvent(streamId, event, recordedAt)
      ids.push(encoded.eventId)
      types.push(event.type)
      schemaVersions.push(event.schemaVersion)
      data.push(encoded.data)
      metadata.push(encoded.metadata)
      before.push(encoded.before)
      after.push(encoded.after)
    }
  }
  return [
    streamIds,
    expectedTags,
    expectedVersions,
    counts,
    recordedAt.toISOString(),
    ids,
    types,
    schemaVersions,
    data,
    metadata,
    before,
    after,
    notify
  ]
}

const describeExpected = (expected: EventStore.ExpectedVersion): string =>
  expected._tag === "Exact" ? `Exact(${expected.version})` : expected._tag

interface PgErrorLike {
  readonly code?: string
  readonly constraint?: string
}

const uniqueViolation = (error: SqlError): string | undefined => {
  const cause = error.cause as PgErrorLike | undefined
  return cause?.code === "23505" ? (cause.constraint ?? "") : undefined
}

type Lookup =
  | { readonly _tag: "None" }
  | { readonly _tag: "Identical"; readonly result: EventStore.AppendResult }
  | { readonly _tag: "Reused"; readonly eventId: string }

/**
 * Builds the store over the `SqlClient` in context. One event to a new stream outside a transaction
 * (the commonest append) is one autocommit statement (prepared on a `pg` pool, `cobro_append_new` elsewhere); every other append is one
 * call of `cobro_append` (lock or create the stream head, check the expected version, link the hash
 * chain, insert): one round trip when no transaction is open, then a wake-up NOTIFY off the
 * caller's path; inside a caller's transaction, a savepoint around it and a NOTIFY that its commit
 * delivers. Only a version mismatch or a reused event id costs a second statement, to tell a retry
 * of events already stored (a no-op) from a conflict. A batch (`appendBatch`) is one call of
 * `cobro_append_batch` the same way. The scope holds the NOTIFY fiber.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Single statements: through the `pg` pool directly outside a caller's transaction (`PgPool`).
  const statement = yield* PgPool.statement
  // The same, for the callers that already know no transaction is open (no second look).
  const pool = yield* Effect.serviceOption(PgPool.PgPool)
  const autocommit = Option.match(pool, {
    onNone: () => statement,
    onSome:
      (pool): PgPool.Statement =>
      (text, params) =>
        PgPool.query(pool, text, params)
  })
  // One event to a new stream, outside a transaction: the prepared statement on a pool, else the function.
  const appendNewStatementFor = Option.match(pool, {
    onNone: () => (streamId: string, event: EventStore.NewEvent, recordedAt: string, encoded: EncodedEvent) =>
      statement<{ readonly position: string | null }>(
        appendNewStatement,
        appendNewParams(streamId, event, recordedAt, encoded)
      ),
    onSome:
      (pool) => (streamId: string, event: EventStore.NewEvent, recordedAt: string, encoded: EncodedEvent) =>
        PgPool.query<{ readonly position: string | null }>(
          pool,
          appendNewPrepared.text,
          appendNewPreparedParams(streamId, event, recordedAt, encoded),
          appendNewPrepared.name
        )
  })

  // Wake-ups after autocommit appends, sent once they have committed, at most one per
  // `notifyInterval` (`LogNotifications` may merge signals): appends never wait for the NOTIFY
  // lock, and a burst of appends costs a few NOTIFYs, not one each. The first one goes at once.
  const committed = yield* Queue.sliding<string>(1)
  yield* Queue.take(committed).pipe(
    Effect.flatMap((streamId) => autocommit("SELECT pg_notify($1, $2)", [Migrations.channel, streamId])),
    Effect.catchAllCause((cause) =>
      Effect.logDebug("PgEventStore: NOTIFY failed; consumers poll meanwhile", cause)
    ),
    Effect.zipRight(throttle),
    Effect.forever,
    Effect.forkScoped
  )

  /** What is stored under the event ids of `events`: nothing, the same events, or something else. */
  const lookup = (streamId: string, events: ReadonlyArray<EventStore.NewEvent>) =>
    Effect.gen(function* () {
      const ids = events.map((event) => event.eventId.toLowerCase())
      const rows = yield* sql<Rows.EventRow>`
        SELECT ${sql.literal(Rows.columns)} FROM cobro_events
        WHERE event_id = ANY(${ids}::uuid[]) ORDER BY global_position`
      if (rows.length === 0) return { _tag: "None" } as Lookup
      const byId = new Map(rows.map((row) => [row.event_id, row]))
      for (const event of events) {
        const row = byId.get(event.eventId.toLowerCase())
        const same =
          row !== undefined &&
          row.stream_id === streamId &&
          row.type === event.type &&
          row.schema_version === event.schemaVersion &&
          HashChain.canonicalJson(row.data) ===
            HashChain.canonicalJson(HashChain.normalizeJson(event.data)) &&
          HashChain.canonicalJson(row.metadata) ===
            HashChain.canonicalJson(HashChain.normalizeJson(event.metadata ?? {}))
        if (!same) return { _tag: "Reused", eventId: (row ?? rows[0]!).event_id } as Lookup
      }
      const first = rows[0]!
      const last = rows[rows.length - 1]!
      return {
        _tag: "Identical",
        result: {
          nextVersion: Math.max(...rows.map((row) => row.stream_version)),
          firstPosition: BigInt(first.global_position),
          lastPosition: BigInt(last.global_position)
        }
      } as Lookup
    })

  const currentVersion = (streamId: string) =>
    Effect.map(
      sql<{ version: number }>`SELECT version FROM cobro_streams WHERE stream_id = ${streamId}`,
      (rows) => rows[0]?.version ?? 0
    )

  /** After a version mismatch: a retry of events already stored is a no-op, anything else conflicts. */
  const conflictOrNoop = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    actual: number
  ): Effect.Effect<
    EventStore.AppendResult,
    EventStore.ConcurrencyConflict | EventStore.EventIdReused | SqlError
  > =>
    Effect.flatMap(
      lookup(streamId, events),
      (
        found
      ): Effect.Effect<
        EventStore.AppendResult,
        EventStore.ConcurrencyConflict | EventStore.EventIdReused
      > => {
        switch (found._tag) {
          case "Identical":
            return Effect.succeed(found.result)
          case "Reused":
            return Effect.fail(new EventStore.EventIdReused({ eventId: found.eventId }))
          case "None":
            return Effect.fail(
              new EventStore.ConcurrencyConflict({ streamId, expected: describeExpected(expected), actual })
            )
        }
      }
    )

  /** What a failed statement means: a retry of stored events, a reused event id, a conflict, or a defect. */
  const onSqlError = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    error: SqlError
  ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused> => {
    const constraint = uniqueViolation(error)
    if (constraint === "cobro_events_event_id_key") {
      // An event id stored elsewhere, or a retry of events already stored: look after rollback.
      return Effect.flatMap(Effect.orDie(lookup(streamId, events)), (found) =>
        found._tag === "Identical"
          ? Effect.succeed(found.result)
          : Effect.fail(
              new EventStore.EventIdReused({
                eventId: found._tag === "Reused" ? found.eventId : (events[0]?.eventId ?? "")
              })
            )
      )
    }
    if (constraint !== undefined) {
      // A writer created the stream or took the version between our check and our insert.
      return Effect.flatMap(Effect.orDie(currentVersion(streamId)), (actual) =>
        Effect.fail(
          new EventStore.ConcurrencyConflict({ streamId, expected: describeExpected(expected), actual })
        )
      )
    }
    return Effect.die(error)
  }

  /** A wake-up for the NOTIFY fiber: synchronous, it never waits (a sliding queue of one). */
  const signal = (streamId: string) => {
    committed.unsafeOffer(streamId)
  }

  /**
   * One event to a new stream, outside a transaction: one autocommit statement (`appendNewPrepared` on
   * a pool, else `cobro_append_new`).
   * The commonest append, and the benchmark's W1, so it is kept to a few Effect steps.
   */
  const appendNew = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    recordedAt: Date
  ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused> =>
    appendNewStatementFor(
      streamId,
      events[0]!,
      recordedAt.toISOString(),
      encodeEvent(streamId, events[0]!, recordedAt)
    ).pipe(
      Effect.flatMap(
        (
          rows
        ): Effect.Effect<
          EventStore.AppendResult,
          EventStore.ConcurrencyConflict | EventStore.EventIdReused | SqlError
        > => {
          const position = rows[0]?.position
          if (position === null || position === undefined) {
            // The stream exists: a retry of this event (a no-op) or a conflict.
            return Effect.flatMap(currentVersion(streamId), (actual) =>
              conflictOrNoop(streamId, events, expected, actual)
            )
          }
          signal(streamId)
          const globalPosition = BigInt(position)
          return Effect.succeed({
            nextVersion: 1,
            firstPosition: globalPosition,
            lastPosition: globalPosition
          })
        }
      ),
      Effect.catchTag("SqlError", (error) => onSqlError(streamId, events, expected, error))
    )

  /** Any append of one or more events: one call of `cobro_append`, under a savepoint in a transaction. */
  const appendAny = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    recordedAt: Date,
    inTransaction: boolean
  ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused> => {
    // Inside a caller's transaction, a savepoint keeps a failed append (a reused event id) from
    // aborting it, as the nested transaction of the multi-statement append did; and the NOTIFY
    // must wait for that transaction's commit.
    const params = appendParams(streamId, events, expected, recordedAt, inTransaction)
    const call = Effect.flatMap(
      (inTransaction ? statement : autocommit)<AppendRow>(appendStatement, params),
      (
        rows
      ): Effect.Effect<
        EventStore.AppendResult,
        EventStore.ConcurrencyConflict | EventStore.EventIdReused | SqlError
      > => {
        const row = rows[0]!
        if (row.first_position === null || row.last_position === null) {
          return conflictOrNoop(streamId, events, expected, row.next_version)
        }
        if (!inTransaction) signal(streamId)
        return Effect.succeed({
          nextVersion: row.next_version,
          firstPosition: BigInt(row.first_position),
          lastPosition: BigInt(row.last_position)
        })
      }
    )
    return (inTransaction ? sql.withTransaction(call) : call).pipe(
      Effect.catchTag("SqlError", (error) => onSqlError(streamId, events, expected, error))
    )
  }

  /** An append of no events: checks the expected version, writes nothing. */
  const appendNothing = (streamId: string, expected: EventStore.ExpectedVersion) =>
    Effect.flatMap(
      Effect.orDie(currentVersion(streamId)),
      (actual): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict> =>
        expected._tag === "Any" || (expected._tag === "NoStream" ? actual === 0 : expected.version === actual)
          ? Effect.succeed({ nextVersion: actual, firstPosition: 0n, lastPosition: 0n })
          : Effect.fail(
              new EventStore.ConcurrencyConflict({ streamId, expected: describeExpected(expected), actual })
            )
    )

  // No span of its own, not `Effect.fn`: the append is the store's hot path, where client CPU is the
  // bottleneck; a span cost about 28 µs of the ~150 µs of client CPU per append (`AppendCost.ts`), a
  // traced function more. The use case's span encloses it.
  const append = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion
  ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused> => {
    const normalized =
      expected._tag === "Exact" && expected.version === 0 ? EventStore.ExpectedVersion.NoStream() : expected
    const body =
      events.length === 0
        ? appendNothing(streamId, expected)
        : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
            Effect.clockWith((clock) => {
              const recordedAt = new Date(clock.unsafeCurrentTimeMillis())
              return Option.isNone(transaction) && normalized._tag === "NoStream" && events.length === 1
                ? appendNew(streamId, events, normalized, recordedAt)
                : appendAny(streamId, events, normalized, recordedAt, Option.isSome(transaction))
            })
          )
    return body
  }

  /** Every item appended in order inside one transaction: the port's definition of a batch. */
  const appendBatchReference = (
    items: ReadonlyArray<EventStore.BatchAppend>
  ): Effect.Effect<
    ReadonlyArray<EventStore.AppendResult>,
    EventStore.ConcurrencyConflict | EventStore.EventIdReused
  > =>
    sql
      .withTransaction(Effect.forEach(items, (item) => append(item.streamId, item.events, item.expected)))
      .pipe(Effect.catchTag("SqlError", Effect.die))

  /**
   * A batch in one statement (`cobro_append_batch`): autocommit outside a transaction, under a
   * savepoint inside one, as `appendAny`. Any failure (a version mismatch, a reused event id, a
   * retry of stored events) rolls it back whole and replays the batch on the reference path, whose
   * appends tell a no-op from a conflict and give the first failing item's error: failures cost two
   * round trips, successes one. Items of no events take the reference path (a version check only).
   * No span of its own, as `append`: the caller's encloses it.
   */
  const appendBatch = (
    items: ReadonlyArray<EventStore.BatchAppend>
  ): Effect.Effect<
    ReadonlyArray<EventStore.AppendResult>,
    EventStore.ConcurrencyConflict | EventStore.EventIdReused
  > => {
    if (items.length === 0) return Effect.succeed([])
    if (items.some((item) => item.events.length === 0)) return appendBatchReference(items)
    return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
      Effect.clockWith((clock) => {
        const inTransaction = Option.isSome(transaction)
        const params = appendBatchParams(items, new Date(clock.unsafeCurrentTimeMillis()), inTransaction)
        const call = Effect.map(
          (inTransaction ? statement : autocommit)<AppendRow>(appendBatchStatement, params),
          (rows) => {
            if (!inTransaction) signal(items[0]!.streamId)
            return rows.map((row): EventStore.AppendResult => ({
              nextVersion: row.next_version,
              firstPosition: BigInt(row.first_position!),
              lastPosition: BigInt(row.last_position!)
            }))
          }
        )
        return (inTransaction ? sql.withTransaction(call) : call).pipe(
          Effect.catchTag("SqlError", () => appendBatchReference(items))
        )
      })
    )
  }

  // Untraced for the same reason: the use case's span encloses it.
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

  // One statement for all the streams; untraced like `readStream`.
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

  // Untraced, as the other reads: its callers' spans (`Subscription.processBatch`) enclose it.
  const readAll = (options?: EventStore.ReadAllOptions) =>
    readPage(options?.after ?? EventStore.Start, options?.limit ?? defaultLimit)

  const streamAll = (options?: EventStore.ReadAllOptions): Stream.Stream<EventStore.LoggedEvent> => {
    const limit = options?.limit ?? defaultLimit
    return Stream.paginateChunkEffect(options?.after ?? EventStore.Start, (after) =>
      Effect.map(readPage(after, limit), (page) => {
        const last = page[page.length - 1]
        return [
          Chunk.unsafeFromArray(page),
          page.length < limit || last === undefined ? Option.none() : Option.some(last.checkpoint)
        ] as const
      })
    ).pipe(Stream.withSpan("PgEventStore.streamAll"))
  }

  return EventStore.EventStore.of({ append, appendBatch, readStream, readStreams, readAll, streamAll })
})

/** `EventStore` over the `SqlClient` in context. Run `Migrations.layer` first (or use `layerMigrated`). */
export const layer: Layer.Layer<EventStore.EventStore, never, SqlClient.SqlClient> = Layer.scoped(
  EventStore.EventStore,
  make
)

/** `EventStore` over the `SqlClient` in context, after running the store's migrations. */
export const layerMigrated: Layer.Layer<
  EventStore.EventStore,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Layer.scoped(EventStore.EventStore, Effect.zipRight(Migrations.run, make))
