/**
 * The store bench's event, for every bench that appends it (the store bench, its side measurements
 * `AppendCost.ts` and `AppendSql.ts`, and the audit bench's tree part): as the store takes it, and as
 * the plain SQL that appends one to a new stream, the floor's insert into a plain table and the
 * store's own append function.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import { randomUUID } from "node:crypto"
import * as HashChain from "../src/HashChain.js"

export const type = "BenchEvent"

export const data = (amount: number) => ({ _tag: type, amount, note: "a bench event of modest size" })

export const metadata = { requestId: "bench" }

/** `count` events as the store appends them. */
export const newEvents = (count: number): Array<EventStore.NewEvent> =>
  Array.from({ length: count }, (_, i) => ({
    eventId: randomUUID(),
    type,
    schemaVersion: 1,
    data: data(i),
    metadata
  }))

/** The floor: the store's columns in a plain table, with no hash chain, stream heads or read models. */
export const rawTable = `CREATE TABLE raw_events (
  global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
  event_id uuid NOT NULL UNIQUE, type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL,
  metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version))`

export interface Statement {
  readonly text: string
  readonly values: Array<unknown>
}

// The one-event statements' event: made once, so that no client CPU per append goes to making it.
const one = data(1)

/** Version 1 of the new stream `stream`, as the hash chain reads it. */
export const first = (stream: string) => ({
  streamId: stream,
  eventId: randomUUID(),
  type,
  schemaVersion: 1,
  data: one,
  metadata,
  recordedAt: new Date()
})

/** One event inserted into {@link rawTable} as version 1 of `stream`. */
export const rawInsert = (stream: string): Statement => ({
  text: "INSERT INTO raw_events (stream_id, stream_version, event_id, type, schema_version, data, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
  values: [stream, 1, randomUUID(), type, 1, JSON.stringify(one), JSON.stringify(metadata)]
})

/** One event appended to the new stream `stream` by the store's SQL function, as the store calls it. */
export const cobroAppend = (stream: string): Statement => {
  const event = first(stream)
  const [before, after] = HashChain.canonicalEventAround(event)
  return {
    text: "SELECT next_version, first_position, last_position FROM cobro_append($1, $2, $3, $4::timestamptz, $5::uuid[], $6::text[], $7::integer[], $8::jsonb[], $9::jsonb[], $10::text[], $11::text[], $12)",
    values: [
      stream,
      "NoStream",
      0,
      event.recordedAt.toISOString(),
      [event.eventId],
      [type],
      [1],
      [JSON.stringify(one)],
      [JSON.stringify(metadata)],
      [before],
      [after],
      false
    ]
  }
}
