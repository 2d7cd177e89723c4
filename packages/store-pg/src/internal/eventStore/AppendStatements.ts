/**
 * The SQL of the appends and their parameters: the calls of the append functions of the migrations,
 * the prepared insert of one event to a new stream, and each event's JSON encoded once for them.
 * @internal
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as HashChain from "../../HashChain.js"

/**
 * The call of `cobro_append` (migration `2_append_function`), its
 * text built once: the whole append in one autocommit statement, one round trip.
 */
export const appendStatement =
  "SELECT next_version, first_position, last_position FROM cobro_append(" +
  "$1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)"

/**
 * The call of `cobro_append_new` (migration `4_append_new_stream_function`): one event to a new
 * stream, outside a transaction, with scalar parameters.
 */
export const appendNewStatement =
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
export const appendNewPrepared = {
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
 * The call of `cobro_append_batch` (migration `16_append_batch_guards`, set-based since migration 6):
 * a whole `appendBatch` in one statement, the items flattened into arrays, guards (items of no
 * events) included.
 */
export const appendBatchStatement =
  "SELECT next_version, first_position, last_position FROM cobro_append_batch(" +
  "$1::text[], $2::text[], $3::integer[], $4::integer[], $5::timestamptz, $6::uuid[], $7::text[], " +
  "$8::integer[], $9::jsonb[], $10::jsonb[], $11::text[], $12::text[], $13)"

/**
 * The statements above with a `traceparent` (issue 34): the recording instant passes through
 * `cobro_traced` (migration `18_trace_context`), which sets `cobro.traceparent` for the rest of the
 * transaction before the append runs, so that the read models' triggers keep it beside a delivery's
 * schedule or a push's claim (never in the events). Its last parameter is the traceparent. Sent only
 * when a recorded span appends: with tracing off, the appends are the statements above.
 */
export const traced = {
  append: appendStatement.replace("$4::timestamptz", "cobro_traced($4, $13)::timestamptz"),
  appendNew: appendNewStatement.replace("$7::timestamptz", "cobro_traced($7, $10)::timestamptz"),
  appendNewPrepared: {
    name: "cobro_append_new_traced_1",
    text: appendNewPrepared.text.replace("$7::timestamptz", "cobro_traced($7, $9)::timestamptz")
  },
  appendBatch: appendBatchStatement.replace("$5::timestamptz", "cobro_traced($5, $14)::timestamptz")
} as const

/** What `cobro_append` returns: null positions when the stream is not at the expected version. */
export interface AppendRow {
  readonly next_version: number
  readonly first_position: string | null
  readonly last_position: string | null
}

/** What {@link appendNewStatement} and {@link appendNewPrepared} return: null when the stream exists. */
export interface AppendNewRow {
  readonly position: string | null
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

/** The hash of an event at version 1, from its canonical text's halves. */
const firstHash = (before: string, after: string) => HashChain.hashAround(HashChain.genesis, before, 1, after)

/**
 * The parameters of `cobro_append_new` or, `prepared`, of {@link appendNewPrepared}: the same with
 * the version-1 hash in place of its two halves.
 */
export const appendNewParams = (
  streamId: string,
  event: EventStore.NewEvent,
  recordedAt: Date,
  prepared: boolean
): ReadonlyArray<unknown> => {
  const { after, before, data, eventId, metadata } = encodeEvent(streamId, event, recordedAt)
  const at = recordedAt.toISOString()
  return prepared
    ? [streamId, eventId, event.type, event.schemaVersion, data, metadata, at, firstHash(before, after)]
    : [streamId, eventId, event.type, event.schemaVersion, data, metadata, at, before, after]
}

/**
 * The per-event parameters that `cobro_append` and `cobro_append_batch` share: one array per column,
 * the events of every stream one after the other, each encoded once.
 */
class EventColumns {
  readonly ids: Array<string>
  readonly types: Array<string>
  readonly schemaVersions: Array<number>
  readonly data: Array<string>
  readonly metadata: Array<string>
  readonly before: Array<string>
  readonly after: Array<string>

  constructor(size: number) {
    this.ids = new Array<string>(size)
    this.types = new Array<string>(size)
    this.schemaVersions = new Array<number>(size)
    this.data = new Array<string>(size)
    this.metadata = new Array<string>(size)
    this.before = new Array<string>(size)
    this.after = new Array<string>(size)
  }

  /** Encodes `event`, appended to `streamId`, as the `index`-th event. */
  set(index: number, streamId: string, event: EventStore.NewEvent, recordedAt: Date): void {
    const encoded = encodeEvent(streamId, event, recordedAt)
    this.ids[index] = encoded.eventId
    this.types[index] = event.type
    this.schemaVersions[index] = event.schemaVersion
    this.data[index] = encoded.data
    this.metadata[index] = encoded.metadata
    this.before[index] = encoded.before
    this.after[index] = encoded.after
  }

  /** A call's parameters: its `leading` ones, then the event columns, then whether it NOTIFYs. */
  params(leading: Array<unknown>, notify: boolean): ReadonlyArray<unknown> {
    leading.push(
      this.ids,
      this.types,
      this.schemaVersions,
      this.data,
      this.metadata,
      this.before,
      this.after,
      notify
    )
    return leading
  }
}

/** The parameters of `cobro_append`. */
export const appendParams = (
  streamId: string,
  events: ReadonlyArray<EventStore.NewEvent>,
  expected: EventStore.ExpectedVersion,
  recordedAt: Date,
  notify: boolean
): ReadonlyArray<unknown> => {
  const columns = new EventColumns(events.length)
  for (let i = 0; i < events.length; i++) columns.set(i, streamId, events[i]!, recordedAt)
  const version = expected._tag === "Exact" ? expected.version : 0
  return columns.params([streamId, expected._tag, version, recordedAt.toISOString()], notify)
}

/** The parameters of `cobro_append_batch`: each event encoded once, `Exact(0)` as `NoStream` (as `append`). */
export const appendBatchParams = (
  items: ReadonlyArray<EventStore.BatchAppend>,
  recordedAt: Date,
  notify: boolean
): ReadonlyArray<unknown> => {
  const streamIds = new Array<string>(items.length)
  const expectedTags = new Array<string>(items.length)
  const expectedVersions = new Array<number>(items.length)
  const counts = new Array<number>(items.length)
  let size = 0
  for (const item of items) size += item.events.length
  const columns = new EventColumns(size)
  let next = 0
  for (let i = 0; i < items.length; i++) {
    const { events, expected, streamId } = items[i]!
    const exact = expected._tag === "Exact" && expected.version !== 0
    streamIds[i] = streamId
    expectedTags[i] = exact ? "Exact" : expected._tag === "Any" ? "Any" : "NoStream"
    expectedVersions[i] = exact ? expected.version : 0
    counts[i] = events.length
    for (const event of events) columns.set(next++, streamId, event, recordedAt)
  }
  const leading = [streamIds, expectedTags, expectedVersions, counts, recordedAt.toISOString()]
  return columns.params(leading, notify)
}
