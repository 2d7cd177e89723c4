/**
 * The event store port: an append-only log of streams with optimistic concurrency, read by stream
 * and in commit order. `@cobro/store-pg` implements it over PostgreSQL and PGlite; the domain's
 * in-memory store implements it for tests.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"

/**
 * Why an event was written: the causal chain and who asked. Every field is optional.
 *
 * @category schemas
 */
export const EventMetadata = Schema.Struct({
  causationId: Schema.optional(Schema.String),
  correlationId: Schema.optional(Schema.String),
  actor: Schema.optional(Schema.String),
  requestId: Schema.optional(Schema.String)
})
export type EventMetadata = typeof EventMetadata.Type

/** An event about to be appended. `data` is the event's JSON encoding (it carries `_tag`). */
export interface NewEvent {
  /** Unique id; re-appending an event id already stored with the same content is a no-op. */
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: unknown
  readonly metadata: EventMetadata
}

/** An event as stored. Versions start at 1; a stream's version is its number of events. */
export interface RecordedEvent extends NewEvent {
  readonly globalPosition: bigint
  readonly streamId: string
  readonly streamVersion: number
  /** When the append transaction recorded it, from the writer's clock. */
  readonly recordedAt: Date
  /** Hex SHA-256 of the previous event of the stream ("" for the first). */
  readonly prevHash: string
  /** Hex SHA-256 of `prevHash ‖ canonical bytes of this event`. */
  readonly hash: string
}

/** What the writer believes the stream's version to be. */
export type ExpectedVersion = Data.TaggedEnum<{
  /** The stream must not exist yet. */
  NoStream: {}
  /** The stream must be at exactly this version. */
  Exact: { readonly version: number }
  /** Append whatever the version. */
  Any: {}
}>
/** The constructors and matchers of {@link ExpectedVersion}: `NoStream()`, `Exact({ version })`, `Any()`. */
export const ExpectedVersion = Data.taggedEnum<ExpectedVersion>()

/** The result of an append: the stream's version after it and the positions written. */
export interface AppendResult {
  readonly nextVersion: number
  readonly firstPosition: bigint
  readonly lastPosition: bigint
}

/** One stream's part of an {@link EventStore} `appendBatch`. */
export interface BatchAppend {
  readonly streamId: string
  readonly events: ReadonlyArray<NewEvent>
  readonly expected: ExpectedVersion
}

/**
 * Another writer appended first: read again, decide again, retry.
 *
 * @category errors
 */
export class ConcurrencyConflict extends Schema.TaggedError<ConcurrencyConflict>()("ConcurrencyConflict", {
  streamId: Schema.String,
  expected: Schema.String,
  actual: Schema.Number
}) {}

/**
 * An event id already stored with other content: a bug in the caller, never retried.
 *
 * @category errors
 */
export class EventIdReused extends Schema.TaggedError<EventIdReused>()("EventIdReused", {
  eventId: Schema.String
}) {}

/**
 * A place in the whole log's commit order. Catch-up readers resume after it; the store decides what
 * it holds (PostgreSQL: the writing transaction's id and the global position).
 */
export interface Checkpoint {
  readonly transactionId: bigint
  readonly globalPosition: bigint
}

/** The checkpoint before the first event. */
export const Start: Checkpoint = { transactionId: 0n, globalPosition: 0n }

/** A recorded event with the checkpoint that resumes after it. */
export interface LoggedEvent extends RecordedEvent {
  readonly checkpoint: Checkpoint
}

/** Which of a stream's events `readStream` returns. */
export interface ReadStreamOptions {
  /** First version to return (inclusive); default 1. */
  readonly fromVersion?: number
  /** Last version to return (inclusive). */
  readonly toVersion?: number
  /** Only events recorded at or before this instant: the stream as it was then. */
  readonly asOf?: Date
}

/** Where `readAll` and `streamAll` start in the log, and how much a page holds. */
export interface ReadAllOptions {
  /** Resume after this checkpoint; default `Start`. */
  readonly after?: Checkpoint
  /** At most this many events; default 1000. */
  readonly limit?: number
}

/**
 * The event store port.
 *
 * @category services
 */
export class EventStore extends Context.Tag("@cobro/domain/EventStore")<
  EventStore,
  {
    /** Appends events to one stream atomically, if the stream is at `expected`. */
    readonly append: (
      streamId: string,
      events: ReadonlyArray<NewEvent>,
      expected: ExpectedVersion
    ) => Effect.Effect<AppendResult, ConcurrencyConflict | EventIdReused>
    /**
     * Appends to several streams in one atomic write, as if each item were appended in order
     * (`append`'s rules: expected versions, an identical re-append a no-op) inside one transaction:
     * every item is written or none, and the first item that fails gives the error. Results in
     * item order. For writers with many streams to extend at once (the notifier, the dispatcher):
     * one round trip and one commit instead of one per stream. A stream appears at most once.
     * An item of no events checks its stream's version only (a guard, `Outbox.guard`): it writes
     * nothing, takes no lock that would hold off the stream's writers, and fails the batch with
     * `ConcurrencyConflict` on its stream when the stream is not at `expected`.
     */
    readonly appendBatch: (
      items: ReadonlyArray<BatchAppend>
    ) => Effect.Effect<ReadonlyArray<AppendResult>, ConcurrencyConflict | EventIdReused>
    /** One stream's events in version order. An unknown stream reads as empty. */
    readonly readStream: (
      streamId: string,
      options?: ReadStreamOptions
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>>
    /**
     * Several whole streams at once, each in version order: one read for a writer about to act on
     * many streams (the dispatcher's claimed deliveries). Every id asked is in the map; an unknown
     * stream reads as empty.
     */
    readonly readStreams: (
      streamIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<RecordedEvent>>>
    /**
     * The next events of the whole log in commit order. Never skips an event whose transaction
     * commits after one with a higher global position: a reader that resumes from the last
     * checkpoint it saw sees every committed event exactly once.
     */
    readonly readAll: (options?: ReadAllOptions) => Effect.Effect<ReadonlyArray<LoggedEvent>>
    /** The whole log from `after`, in commit order, in bounded memory. */
    readonly streamAll: (options?: ReadAllOptions) => Stream.Stream<LoggedEvent>
  }
>() {}
