/**
 * What an append the database refused means: a retry of events already stored (a no-op, answered
 * with their positions), a reused event id, or a concurrency conflict. Only these paths cost a
 * second statement; a successful append never comes here.
 * @internal
 */
import * as EventStore from "@cobro/domain/EventStore"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as HashChain from "../../HashChain.js"
import * as Rows from "../Rows.js"

/** The errors of an append, as the port types them. */
export type AppendError = EventStore.ConcurrencyConflict | EventStore.EventIdReused

const describeExpected = (expected: EventStore.ExpectedVersion): string =>
  expected._tag === "Exact" ? `Exact(${expected.version})` : expected._tag

/** What a refused append asked for. */
export interface Request {
  readonly streamId: string
  readonly events: ReadonlyArray<EventStore.NewEvent>
  readonly expected: EventStore.ExpectedVersion
}

/** The conflict of a stream at version `actual` with the version an append expected. */
export const conflict = (
  streamId: string,
  expected: EventStore.ExpectedVersion,
  actual: number
): EventStore.ConcurrencyConflict =>
  new EventStore.ConcurrencyConflict({ streamId, expected: describeExpected(expected), actual })

/** The stream's version: 0 when it does not exist. */
export const currentVersion = (sql: SqlClient.SqlClient, streamId: string) =>
  Effect.map(
    sql<{ version: number }>`SELECT version FROM cobro_streams WHERE stream_id = ${streamId}`,
    (rows) => rows[0]?.version ?? 0
  )

type Lookup =
  | { readonly _tag: "None" }
  | { readonly _tag: "Identical"; readonly result: EventStore.AppendResult }
  | { readonly _tag: "Reused"; readonly eventId: string }

/** What is stored under the event ids of `events`: nothing, the same events, or something else. */
const lookup = (sql: SqlClient.SqlClient, streamId: string, events: ReadonlyArray<EventStore.NewEvent>) =>
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
        HashChain.canonicalJson(row.data) === HashChain.canonicalJson(HashChain.normalizeJson(event.data)) &&
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

/** After a version mismatch: a retry of events already stored is a no-op, anything else conflicts. */
export const conflictOrNoop = (
  sql: SqlClient.SqlClient,
  { events, expected, streamId }: Request,
  actual: number
): Effect.Effect<EventStore.AppendResult, AppendError | SqlError> =>
  Effect.flatMap(
    lookup(sql, streamId, events),
    (found): Effect.Effect<EventStore.AppendResult, AppendError> => {
      switch (found._tag) {
        case "Identical":
          return Effect.succeed(found.result)
        case "Reused":
          return Effect.fail(new EventStore.EventIdReused({ eventId: found.eventId }))
        case "None":
          return Effect.fail(conflict(streamId, expected, actual))
      }
    }
  )

interface PgErrorLike {
  readonly code?: string
  readonly constraint?: string
}

const uniqueViolation = (error: SqlError): string | undefined => {
  const cause = error.cause as PgErrorLike | undefined
  return cause?.code === "23505" ? (cause.constraint ?? "") : undefined
}

/** What a failed statement means: a retry of stored events, a reused event id, a conflict, or a defect. */
export const onSqlError = (
  sql: SqlClient.SqlClient,
  { events, expected, streamId }: Request,
  error: SqlError
): Effect.Effect<EventStore.AppendResult, AppendError> => {
  const constraint = uniqueViolation(error)
  if (constraint === "cobro_events_event_id_key") {
    // An event id stored elsewhere, or a retry of events already stored: look after rollback.
    return Effect.flatMap(Effect.orDie(lookup(sql, streamId, events)), (found) =>
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
    return Effect.flatMap(Effect.orDie(currentVersion(sql, streamId)), (actual) =>
      Effect.fail(conflict(streamId, expected, actual))
    )
  }
  return Effect.die(error)
}
