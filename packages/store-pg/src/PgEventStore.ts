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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as HashChain from "./HashChain.js"
import * as Rows from "./internal/Rows.js"
import * as Migrations from "./Migrations.js"

/** The page size of `readAll` and `streamAll` when none is given. */
export const defaultLimit = 1000

interface Hashed {
  readonly rows: ReadonlyArray<{
    readonly stream_id: string
    readonly stream_version: number
    readonly event_id: string
    readonly type: string
    readonly schema_version: number
    readonly data: string
    readonly metadata: string
    readonly recorded_at: string
    readonly prev_hash: string
    readonly hash: string
  }>
  readonly lastHash: string
  readonly nextVersion: number
}

/** Links `events` onto a stream at `version` whose last hash is `lastHash`. */
const chain = (
  streamId: string,
  events: ReadonlyArray<EventStore.NewEvent>,
  version: number,
  lastHash: string,
  recordedAt: Date
): Hashed => {
  let prevHash = lastHash
  const rows = events.map((event, index) => {
    const fields: HashChain.HashedFields = {
      streamId,
      streamVersion: version + index + 1,
      eventId: event.eventId.toLowerCase(),
      type: event.type,
      schemaVersion: event.schemaVersion,
      data: HashChain.normalizeJson(event.data),
      metadata: HashChain.normalizeJson(event.metadata ?? {}),
      recordedAt
    }
    const hash = HashChain.hashEvent(prevHash, fields)
    const row = {
      stream_id: streamId,
      stream_version: fields.streamVersion,
      event_id: fields.eventId,
      type: fields.type,
      schema_version: fields.schemaVersion,
      data: JSON.stringify(fields.data),
      metadata: JSON.stringify(fields.metadata),
      recorded_at: recordedAt.toISOString(),
      prev_hash: prevHash,
      hash
    }
    prevHash = hash
    return row
  })
  return { rows, lastHash: prevHash, nextVersion: version + events.length }
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

class Done {
  constructor(readonly result: EventStore.AppendResult) {}
}

/**
 * Builds the store over the `SqlClient` in context. Every `append` runs in one transaction: lock or
 * create the stream head, check the expected version, link the hash chain, insert, `pg_notify`.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

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
  ): Effect.Effect<Done, EventStore.ConcurrencyConflict | EventStore.EventIdReused | SqlError> =>
    Effect.flatMap(
      lookup(streamId, events),
      (found): Effect.Effect<Done, EventStore.ConcurrencyConflict | EventStore.EventIdReused> => {
        switch (found._tag) {
          case "Identical":
            return Effect.succeed(new Done(found.result))
          case "Reused":
            return Effect.fail(new EventStore.EventIdReused({ eventId: found.eventId }))
          case "None":
            return Effect.fail(
              new EventStore.ConcurrencyConflict({ streamId, expected: describeExpected(expected), actual })
            )
        }
      }
    )

  const insertEvents = (streamId: string, hashed: Hashed) =>
    Effect.map(
      sql<{ global_position: string }>`
        WITH inserted AS (
          INSERT INTO cobro_events ${sql.insert(hashed.rows)} RETURNING global_position
        ), notified AS (SELECT pg_notify(${Migrations.channel}, ${streamId}))
        SELECT global_position FROM inserted, notified`,
      (rows): EventStore.AppendResult => {
        const positions = rows.map((row) => BigInt(row.global_position))
        const first = positions.reduce((a, b) => (b < a ? b : a))
        const last = positions.reduce((a, b) => (b > a ? b : a))
        return { nextVersion: hashed.nextVersion, firstPosition: first, lastPosition: last }
      }
    )

  const appendInTransaction = (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    recordedAt: Date
  ) =>
    Effect.gen(function* () {
      if (expected._tag !== "Exact") {
        // A new stream: create its head with the final version and hash in one statement.
        const hashed = chain(streamId, events, 0, HashChain.genesis, recordedAt)
        const created = yield* sql`
          INSERT INTO cobro_streams (stream_id, version, last_hash)
          VALUES (${streamId}, ${hashed.nextVersion}, ${hashed.lastHash})
          ON CONFLICT (stream_id) DO NOTHING RETURNING stream_id`
        if (created.length === 1) return yield* insertEvents(streamId, hashed)
        if (expected._tag === "NoStream") {
          return yield* conflictOrNoop(streamId, events, expected, yield* currentVersion(streamId))
        }
      }
      const head = yield* sql<{ version: number; last_hash: string }>`
        SELECT version, last_hash FROM cobro_streams WHERE stream_id = ${streamId} FOR UPDATE`
      const current = head[0]
      if (current === undefined || (expected._tag === "Exact" && expected.version !== current.version)) {
        return yield* conflictOrNoop(streamId, events, expected, current?.version ?? 0)
      }
      const hashed = chain(streamId, events, current.version, current.last_hash, recordedAt)
      yield* sql`
        UPDATE cobro_streams SET version = ${hashed.nextVersion}, last_hash = ${hashed.lastHash}
        WHERE stream_id = ${streamId}`
      return yield* insertEvents(streamId, hashed)
    })

  const append = Effect.fn("PgEventStore.append")(function* (
    streamId: string,
    events: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion
  ) {
    yield* Effect.annotateCurrentSpan({
      streamId,
      events: events.length,
      expected: describeExpected(expected)
    })
    const normalized =
      expected._tag === "Exact" && expected.version === 0 ? EventStore.ExpectedVersion.NoStream() : expected
    if (events.length === 0) {
      const actual = yield* Effect.orDie(currentVersion(streamId))
      const ok =
        normalized._tag === "Any" ||
        (normalized._tag === "NoStream" ? actual === 0 : normalized.version === actual)
      if (!ok) {
        return yield* new EventStore.ConcurrencyConflict({
          streamId,
          expected: describeExpected(expected),
          actual
        })
      }
      return { nextVersion: actual, firstPosition: 0n, lastPosition: 0n }
    }
    const recordedAt = new Date(yield* Clock.currentTimeMillis)
    return yield* sql.withTransaction(appendInTransaction(streamId, events, normalized, recordedAt)).pipe(
      Effect.map((result) => (result instanceof Done ? result.result : result)),
      Effect.catchTag(
        "SqlError",
        (
          error
        ): Effect.Effect<
          EventStore.AppendResult,
          EventStore.ConcurrencyConflict | EventStore.EventIdReused
        > => {
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
      )
    )
  })

  const readStream = Effect.fn("PgEventStore.readStream")(function* (
    streamId: string,
    options?: EventStore.ReadStreamOptions
  ) {
    const from = options?.fromVersion ?? 1
    const to = options?.toVersion
    const asOf = options?.asOf
    const rows = yield* sql<Rows.EventRow>`
      SELECT ${sql.literal(Rows.columns)} FROM cobro_events
      WHERE stream_id = ${streamId} AND stream_version >= ${from}
      ${to === undefined ? sql`` : sql`AND stream_version <= ${to}`}
      ${asOf === undefined ? sql`` : sql`AND recorded_at <= ${asOf.toISOString()}::timestamptz`}
      ORDER BY stream_version`.pipe(Effect.orDie)
    return rows.map(Rows.toRecorded)
  })

  const readPage = (after: EventStore.Checkpoint, limit: number) =>
    sql<Rows.EventRow>`
      SELECT ${sql.literal(Rows.columns)} FROM cobro_events
      WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition.toString()}::bigint)
        AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY transaction_id, global_position
      LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(Rows.toLogged)),
      Effect.orDie
    )

  const readAll = Effect.fn("PgEventStore.readAll")(function* (options?: EventStore.ReadAllOptions) {
    return yield* readPage(options?.after ?? EventStore.Start, options?.limit ?? defaultLimit)
  })

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

  return EventStore.EventStore.of({ append, readStream, readAll, streamAll })
})

/** `EventStore` over the `SqlClient` in context. Run `Migrations.layer` first (or use `layerMigrated`). */
export const layer: Layer.Layer<EventStore.EventStore, never, SqlClient.SqlClient> = Layer.effect(
  EventStore.EventStore,
  make
)

/** `EventStore` over the `SqlClient` in context, after running the store's migrations. */
export const layerMigrated: Layer.Layer<
  EventStore.EventStore,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Layer.effect(EventStore.EventStore, Effect.zipRight(Migrations.run, make))
