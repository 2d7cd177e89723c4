/**
 * The per-stream hash chain of the event log: the one definition of an event's canonical bytes and
 * of `hash = sha256(prev_hash ‖ canonical bytes)`, which the store writes and an auditor recomputes.
 *
 * ## How to recompute a hash (for auditors)
 *
 * 1. Build the JSON object
 *    `{ data, eventId, metadata, recordedAt, schemaVersion, streamId, streamVersion, type }` where
 *    `eventId` is the lower-case UUID as stored, `recordedAt` is the ISO-8601 UTC instant with
 *    milliseconds (`2024-01-31T12:00:00.000Z`), `data` and `metadata` are the stored JSON values.
 * 2. Serialise it canonically ({@link canonicalJson}): object keys sorted by UTF-16 code units,
 *    no whitespace, strings and numbers as ECMAScript's `JSON.stringify` writes them (the RFC 8785
 *    number form), `null` kept, no `undefined`.
 * 3. `hash = hex(sha256(utf8(prevHash) ‖ utf8(canonical)))`, where `prevHash` is the previous event's
 *    hex hash in the same stream and the empty string for version 1.
 */
import { hash } from "node:crypto"

/** The fields of an event that the hash covers. */
export interface HashedFields {
  readonly streamId: string
  readonly streamVersion: number
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: unknown
  readonly metadata: unknown
  readonly recordedAt: Date
}

/** The `prevHash` of a stream's first event. */
export const genesis = ""

/**
 * Canonical JSON of a JSON value (RFC 8785 style): sorted keys, no whitespace. `undefined` members
 * are dropped as `JSON.stringify` drops them; non-finite numbers, bigints and functions are refused
 * because PostgreSQL's `jsonb` could not store them faithfully.
 */
export const canonicalJson = (value: unknown): string => {
  try {
    // V8's own serializer over a copy with its keys inserted in order: about twice the speed of
    // writing value by value (appends and offline verification hash every event).
    return JSON.stringify(sortedCopy(value))
  } catch (cause) {
    if (cause === ORDER_SENSITIVE) return canonicalJsonReference(value)
    throw cause
  }
}

/** An object key whose place `JSON.stringify` does not take from insertion order. */
const ORDER_SENSITIVE = Symbol("ORDER_SENSITIVE")
// Integer-like keys come first in ascending numeric order whatever the insertion order.
const INDEX_LIKE = /^(?:0|[1-9][0-9]*)$/

/** `value` checked as {@link canonicalJson} checks it, with every object's keys inserted sorted. */
const sortedCopy = (value: unknown): unknown => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`)
      return value
    case "object": {
      if (value === null) return null
      if (value instanceof Date) return value.toISOString()
      if (Array.isArray(value))
        return value.map((item: unknown) => (item === undefined ? null : sortedCopy(item)))
      const record = value as Record<string, unknown>
      const copy: Record<string, unknown> = {}
      for (const key of Object.keys(record).sort()) {
        if (key === "__proto__" || INDEX_LIKE.test(key)) throw ORDER_SENSITIVE
        const member = record[key]
        if (member !== undefined) copy[key] = sortedCopy(member)
      }
      return copy
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`)
  }
}

/**
 * {@link canonicalJson} written value by value: the definition the fast path is tested against, and
 * the path for objects whose keys `JSON.stringify` would reorder. @internal
 */
export const canonicalJsonReference = (value: unknown): string => write(value, "")

/** {@link canonicalJsonReference} of `value` appended to `out`: one string grown, no arrays joined. */
const write = (value: unknown, out: string): string => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return out + JSON.stringify(value)
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`)
      return out + JSON.stringify(value)
    case "object": {
      if (value === null) return out + "null"
      if (value instanceof Date) return out + JSON.stringify(value.toISOString())
      if (Array.isArray(value)) {
        out += "["
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ","
          const item: unknown = value[i]
          out = item === undefined ? out + "null" : write(item, out)
        }
        return out + "]"
      }
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      out += "{"
      let first = true
      for (const key of keys) {
        const member = record[key]
        if (member === undefined) continue
        out += first ? JSON.stringify(key) + ":" : "," + JSON.stringify(key) + ":"
        first = false
        out = write(member, out)
      }
      return out + "}"
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`)
  }
}

/** The canonical bytes of one event (step 1 and 2 above), as a string to be UTF-8 encoded. */
export const canonicalEvent = (event: HashedFields): string =>
  canonicalJson({
    data: event.data,
    eventId: event.eventId,
    metadata: event.metadata,
    recordedAt: event.recordedAt.toISOString(),
    schemaVersion: event.schemaVersion,
    streamId: event.streamId,
    streamVersion: event.streamVersion,
    type: event.type
  })

/**
 * {@link canonicalEvent} split around the stream version: `before + String(streamVersion) + after`
 * is the canonical text (the version is the one member that follows `"streamVersion":`). The store
 * passes both halves to `cobro_append`, which knows the version only under the stream head's lock.
 */
export const canonicalEventAround = (
  event: Omit<HashedFields, "streamVersion">
): readonly [before: string, after: string] => [
  `{"data":${canonicalJson(event.data)},"eventId":${canonicalJson(event.eventId)},` +
    `"metadata":${canonicalJson(event.metadata)},"recordedAt":${canonicalJson(event.recordedAt.toISOString())},` +
    `"schemaVersion":${canonicalJson(event.schemaVersion)},"streamId":${canonicalJson(event.streamId)},` +
    `"streamVersion":`,
  `,"type":${canonicalJson(event.type)}}`
]

/**
 * The link of an event given its canonical text's halves ({@link canonicalEventAround}): the same
 * as {@link hashEvent}, without building the event again.
 */
export const hashAround = (prevHash: string, before: string, streamVersion: number, after: string): string =>
  hash("sha256", prevHash + before + String(streamVersion) + after, "hex")

/** `hex(sha256(utf8(prevHash) ‖ utf8(canonicalEvent(event))))`: the link of `event` in its chain. */
export const hashEvent = (prevHash: string, event: HashedFields): string =>
  // One string hashed at once: its UTF-8 is the two parts' UTF-8 one after the other.
  hash("sha256", prevHash + canonicalEvent(event), "hex")

/**
 * A JSON value as PostgreSQL's `jsonb` will give it back (through `JSON.parse`): what the hash is
 * computed over, so that the writer and a later verifier agree.
 */
export const normalizeJson = (value: unknown): unknown => {
  const text = JSON.stringify(value)
  return text === undefined ? null : JSON.parse(text)
}
