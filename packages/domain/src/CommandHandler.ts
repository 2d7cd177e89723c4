/**
 * Runs a command against an aggregate: read its stream, fold, decide, append with the expected
 * version. A `ConcurrencyConflict` means another writer got there first: read and decide again.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { Aggregate } from "./Aggregate.js"
import { streamId as streamIdOf } from "./Aggregate.js"
import { fold } from "./Decider.js"
import * as EventStore from "./EventStore.js"
import { IdGenerator } from "./IdGenerator.js"

/** The result of a handled command. */
export interface Handled<Event, State> {
  /** The events appended (none for a no-op). */
  readonly events: ReadonlyArray<Event>
  /** The state after them. */
  readonly state: State
  /** The stream's version after them. */
  readonly version: number
}

/**
 * A state the caller already holds with the stream's version it was folded at, usually the `Handled`
 * of its previous command on the same aggregate: the next command is decided on it without reading
 * the stream again. Stale is safe: the append's expected version turns it into a conflict, and the
 * retry reads the stream.
 */
export interface Known<State> {
  readonly state: State
  readonly version: number
}

/**
 * The state of a stream that does not exist yet, for a command on an id the caller has just made
 * (a fresh random id): the creation is decided without reading. Should the stream exist after all,
 * the append's `NoStream` conflicts and the command is decided again on what is stored.
 */
export const fresh = <S>(aggregate: { readonly initialState: S }): Known<S> => ({
  state: aggregate.initialState,
  version: 0
})

/** How many times a command is decided again after a conflict before the conflict is returned. */
export const MAX_RETRIES = 5

/** Loads an aggregate's state from its stream: the state and the stream's version. */
export const load = <C extends { _tag: string }, E extends { _tag: string }, S extends { _tag: string }, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const decodeEvent = Schema.decodeUnknownSync(aggregate.Event)
  return Effect.fn(`${aggregate.name}.load`)(function* (id: string, options?: EventStore.ReadStreamOptions) {
    const store = yield* EventStore.EventStore
    const recorded = yield* store.readStream(streamIdOf(aggregate, id), options)
    // A stored event that no longer decodes is a corrupted log: a defect, not a user error.
    const events = recorded.map((r) => decodeEvent(r.data))
    const version = recorded.length === 0 ? 0 : recorded[recorded.length - 1]!.streamVersion
    return { state: fold(aggregate, events), version, events }
  })
}

/**
 * Brings a state the caller holds up to date: reads only the events after `known.version` and folds
 * them onto it. For a long stream whose state the caller keeps between commands (a simulated
 * terminal's), this reads and decodes the few new events instead of the whole history.
 */
export const refresh = <
  C extends { _tag: string },
  E extends { _tag: string },
  S extends { _tag: string },
  Err
>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const decodeEvent = Schema.decodeUnknownSync(aggregate.Event)
  return Effect.fn(`${aggregate.name}.refresh`)(function* (id: string, known: Known<S>) {
    const store = yield* EventStore.EventStore
    const recorded = yield* store.readStream(streamIdOf(aggregate, id), { fromVersion: known.version + 1 })
    if (recorded.length === 0) return known
    return {
      state: fold(
        aggregate,
        recorded.map((r) => decodeEvent(r.data)),
        known.state
      ),
      version: recorded[recorded.length - 1]!.streamVersion
    } satisfies Known<S>
  })
}

/**
 * Makes the handler of one aggregate: `handle(id, command, metadata, known)`. The first decision uses
 * `known` when given (no read); after a conflict the command is decided again on the fresh state.
 */
export const make = <C extends { _tag: string }, E extends { _tag: string }, S extends { _tag: string }, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const loadState = load(aggregate)
  const encodeEvent = Schema.encodeSync(aggregate.Event)
  return Effect.fn(`${aggregate.name}.handle`)(function* (
    id: string,
    command: C,
    metadata: EventStore.EventMetadata = {},
    known?: Known<S>
  ) {
    const store = yield* EventStore.EventStore
    const ids = yield* IdGenerator
    let seed = known
    const attempt = Effect.gen(function* () {
      const { state, version } = seed ?? (yield* loadState(id))
      // Only the first attempt may use the caller's state: a conflict proves it stale.
      seed = undefined
      const events = yield* aggregate.decide(command, state)
      if (events.length === 0) return { events, state, version } satisfies Handled<E, S>
      const toAppend = yield* Effect.forEach(events, (event) =>
        Effect.map(ids.uuid, (eventId) => ({
          eventId,
          type: event._tag,
          schemaVersion: aggregate.schemaVersion,
          data: encodeEvent(event),
          metadata
        }))
      )
      const expected =
        version === 0 ? EventStore.ExpectedVersion.NoStream() : EventStore.ExpectedVersion.Exact({ version })
      const result = yield* (
        store
          .append(streamIdOf(aggregate, id), toAppend, expected)
          // Fresh UUIDs cannot collide with stored ones; if they do, the id generator is broken.
          .pipe(Effect.catchTag("EventIdReused", Effect.die))
      )
      return {
        events,
        state: fold(aggregate, events, state),
        version: result.nextVersion
      } satisfies Handled<E, S>
    })
    return yield* attempt.pipe(
      Effect.retry({
        while: (error) => Predicate.isTagged(error, "ConcurrencyConflict"),
        schedule: Schedule.recurs(MAX_RETRIES)
      })
    )
  })
}
