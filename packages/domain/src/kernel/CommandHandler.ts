/**
 * Runs a command against an aggregate: read its stream, fold, decide, append with the expected
 * version. A `ConcurrencyConflict` means another writer got there first: read and decide again.
 *
 * Its functions are `Effect.fnUntraced`: they run inside use cases, whose `Effect.fn` spans enclose
 * them. A traced function costs about 11 µs per call even with tracing off (it captures a stack
 * trace and sets its span in the fiber's context), and a request makes tens of these calls.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { Aggregate } from "./Aggregate.js"
import { streamId as streamIdOf } from "./Aggregate.js"
import { fold } from "./Decider.js"
import * as EventStore from "./EventStore.js"
import { IdGenerator } from "./IdGenerator.js"
import * as KnownStates from "./KnownStates.js"
import * as Outbox from "./Outbox.js"

/** What an aggregate's commands, events and states have in common: a tag. */
type Tagged = { readonly _tag: string }

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

/** A stream's records decoded and folded: the state, the stream's version and the events. */
const replay = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const decodeEvent = Schema.decodeUnknownSync(aggregate.Event)
  return (data: ReadonlyArray<unknown>, version: number) => {
    // A stored event that no longer decodes is a corrupted log: a defect, not a user error.
    const events = data.map((d) => decodeEvent(d))
    return { state: fold(aggregate, events), version, events }
  }
}

const versionOf = (recorded: ReadonlyArray<EventStore.RecordedEvent>) =>
  recorded.length === 0 ? 0 : recorded[recorded.length - 1]!.streamVersion

const dataOf = (recorded: ReadonlyArray<EventStore.RecordedEvent>) => recorded.map((r) => r.data)

/**
 * Folds a stream's records read after a known state onto it: the state after them, at the last
 * one's version (the known state itself when there are none).
 */
const advance = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const decodeEvent = Schema.decodeUnknownSync(aggregate.Event)
  return (known: Known<S>, recorded: ReadonlyArray<EventStore.RecordedEvent>): Known<S> =>
    recorded.length === 0
      ? known
      : {
          state: fold(
            aggregate,
            recorded.map((r) => decodeEvent(r.data)),
            known.state
          ),
          version: versionOf(recorded)
        }
}

/**
 * Runs a use case's read–decide–commit again, from fresh reads, while it fails with
 * `ConcurrencyConflict`: at most {@link MAX_RETRIES} more times, as {@link make} does. Each conflict
 * means another writer committed, so the retries end as soon as the writers on a stream do.
 */
export const retryOnConflict = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(effect, {
    while: (error) => Predicate.isTagged(error, "ConcurrencyConflict"),
    schedule: Schedule.recurs(MAX_RETRIES)
  })

/** Fresh UUIDs cannot collide with stored ones; if they do, the id generator is broken: a defect. */
const dieOnReusedId = <A, E, R>(
  effect: Effect.Effect<A, E | EventStore.EventIdReused, R>
): Effect.Effect<A, Exclude<E, EventStore.EventIdReused>, R> =>
  Effect.catchIf(
    effect,
    (error): error is EventStore.EventIdReused => Predicate.isTagged(error, "EventIdReused"),
    Effect.die
  ) as Effect.Effect<A, Exclude<E, EventStore.EventIdReused>, R>

/**
 * A state from its stream's events as stored (their `data`, in order) and the stream's version: for
 * an adapter that reads a stream's events with another row of its own (the delivery queue's claim).
 */
export const fromStored = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const fromData = replay(aggregate)
  return (data: ReadonlyArray<unknown>, version: number): Known<S> => ({
    state: fromData(data, version).state,
    version
  })
}

/** Loads an aggregate's state from its stream: the state and the stream's version. */
export const load = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const fromRecords = replay(aggregate)
  return Effect.fnUntraced(function* (id: string, options?: EventStore.ReadStreamOptions) {
    const store = yield* EventStore.EventStore
    const recorded = yield* store.readStream(streamIdOf(aggregate, id), options)
    return fromRecords(dataOf(recorded), versionOf(recorded))
  })
}

/**
 * Loads an aggregate's current state and version for a hot path, through `KnownStates`: when the
 * process already holds a state of the stream, only the events after its version are read and folded
 * onto it; otherwise the stream is replayed, and the result kept. Either way the store is read, so
 * the state is as fresh as {@link load}'s, and the CPU of a load does not grow with the stream's age.
 */
export const loadCurrent = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const onto = advance(aggregate)
  return Effect.fnUntraced(function* (id: string) {
    const store = yield* EventStore.EventStore
    const cache = yield* KnownStates.KnownStates
    const streamId = streamIdOf(aggregate, id)
    const kept = cache.get(streamId) as Known<S> | undefined
    const recorded = yield* store.readStream(
      streamId,
      kept === undefined ? undefined : { fromVersion: kept.version + 1 }
    )
    if (recorded.length === 0) return kept ?? fresh(aggregate)
    const known = onto(kept ?? fresh(aggregate), recorded)
    cache.set(streamId, known)
    return known
  })
}

/**
 * Loads an aggregate's state for a decision that is written with an expected version ({@link commit}),
 * without reading when this process knows the stream's state already (`KnownStates`: it wrote or read
 * it last); else as {@link loadCurrent}. A state another writer has moved on makes the commit conflict;
 * the commit then forgets it, so the retry ({@link retryOnConflict}) reads. For streams this process
 * writes in a row (a checkout it has just created, then records the terminal's answer on), or that
 * a commit guards (`Outbox.guard`: the merchant a sale's webhook is decided on); never for a decision
 * that writes nothing or that commits without the stream.
 */
export const loadKnown = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const current = loadCurrent(aggregate)
  return (id: string): Effect.Effect<Known<S>, never, EventStore.EventStore> =>
    Effect.flatMap(KnownStates.KnownStates, (cache) => {
      const kept = cache.get(streamIdOf(aggregate, id)) as Known<S> | undefined
      return kept === undefined ? current(id) : Effect.succeed(kept)
    })
}

/**
 * Loads several aggregates of one kind with one read of the store (`readStreams`): for a writer
 * about to act on many of them at once (the dispatcher's claimed deliveries). Each id's state and
 * version, as `load` gives them.
 */
export const loadMany = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const onto = advance(aggregate)
  return Effect.fnUntraced(function* (ids: ReadonlyArray<string>) {
    const store = yield* EventStore.EventStore
    const read = yield* store.readStreams(ids.map((id) => streamIdOf(aggregate, id)))
    const loaded = new Map<string, Known<S>>()
    for (const id of ids) loaded.set(id, onto(fresh(aggregate), read.get(streamIdOf(aggregate, id)) ?? []))
    return loaded as ReadonlyMap<string, Known<S>>
  })
}

/**
 * Brings a state the caller holds up to date: reads only the events after `known.version` and folds
 * them onto it. For a long stream whose state the caller keeps between commands (a simulated
 * terminal's), this reads and decodes the few new events instead of the whole history.
 */
export const refresh = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const onto = advance(aggregate)
  return Effect.fnUntraced(function* (id: string, known: Known<S>) {
    const store = yield* EventStore.EventStore
    return onto(known, yield* store.readStream(streamIdOf(aggregate, id), { fromVersion: known.version + 1 }))
  })
}

/**
 * How a decision is written: each event with a fresh id from `IdGenerator`, the aggregate's schema
 * version and the command's metadata, at the version the state was folded at (`NoStream` for 0).
 */
const appendOf = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const encodeEvent = Schema.encodeSync(aggregate.Event)
  return (id: string, events: ReadonlyArray<E>, metadata: EventStore.EventMetadata, version: number) =>
    Effect.flatMap(IdGenerator, (ids) =>
      Effect.map(
        Effect.forEach(events, (event) =>
          Effect.map(ids.uuid, (eventId): EventStore.NewEvent => ({
            eventId,
            type: event._tag,
            schemaVersion: aggregate.schemaVersion,
            data: encodeEvent(event),
            metadata
          }))
        ),
        (toAppend): EventStore.BatchAppend => ({
          streamId: streamIdOf(aggregate, id),
          events: toAppend,
          expected:
            version === 0
              ? EventStore.ExpectedVersion.NoStream()
              : EventStore.ExpectedVersion.Exact({ version })
        })
      )
    )
}

/** A decision's append, with what the `Outbox` needs of it: the state decided on and the events. */
interface Write {
  readonly append: EventStore.BatchAppend
  readonly before: unknown
  readonly events: ReadonlyArray<Tagged>
}

/**
 * The appends of one commit: the writes' own, then those the `Outbox` makes them cause, with the
 * guards of the states it decided them on (`Outbox.guard`).
 */
const withCaused = (writes: ReadonlyArray<Write>) =>
  Effect.flatMap(Outbox.Outbox, (outbox) =>
    Effect.map(
      outbox.follow(
        writes.map(({ append, before, events }) => ({
          streamId: append.streamId,
          before,
          events,
          appended: append.events
        }))
      ),
      (caused) => [...writes.map((w) => w.append), ...caused]
    )
  )

/** Whether a conflict is on a guard only: a stream the `Outbox` decided on, not one the commit writes. */
const onGuard = (appends: ReadonlyArray<EventStore.BatchAppend>, conflict: EventStore.ConcurrencyConflict) =>
  appends.some((append) => append.streamId === conflict.streamId && Outbox.isGuard(append))

/**
 * Writes a commit: the writes with what they cause ({@link withCaused}), in one `appendBatch` (for
 * {@link make}, one `append` when it is one write and nothing is caused); results in item order. A
 * conflict forgets the conflicting stream's kept state (`KnownStates`), so that the next decision on
 * it reads. A conflict on a guard means only what the `Outbox` caused was decided on a stale state
 * (the store checks the items in order, the writes first, so they held): it is decided again on the
 * stream as read now, at most {@link MAX_RETRIES} more times, without deciding the writes again. So a
 * guard's conflict never reaches a caller that did not write the guarded stream (the terminal's
 * answers, online payments, links), unless that stream keeps moving.
 */
const appendWithCaused = (
  writes: ReadonlyArray<Write>,
  options: { readonly single: boolean }
): Effect.Effect<
  ReadonlyArray<EventStore.AppendResult>,
  EventStore.ConcurrencyConflict | EventStore.EventIdReused,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const cache = yield* KnownStates.KnownStates
    for (let retries = 0; ; retries++) {
      const appends = yield* withCaused(writes)
      const only = appends[0]!
      const appended = yield* Effect.either(
        // Nothing caused: the one append needs no batch.
        options.single && appends.length === 1
          ? Effect.map(store.append(only.streamId, only.events, only.expected), (result) => [result])
          : store.appendBatch(appends)
      )
      if (Either.isRight(appended)) return appended.right
      const error = appended.left
      if (error._tag === "ConcurrencyConflict") {
        cache.forget(error.streamId)
        if (retries < MAX_RETRIES && onGuard(appends, error)) continue
      }
      return yield* Effect.fail(error)
    }
  })

/**
 * Makes the handler of one aggregate: `handle(id, command, metadata, known)`. The first decision uses
 * `known` when given (no read); after a conflict the command is decided again on the fresh state.
 */
export const make = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const loadState = load(aggregate)
  const toAppend = appendOf(aggregate)
  return Effect.fnUntraced(function* (
    id: string,
    command: C,
    metadata: EventStore.EventMetadata = {},
    known?: Known<S>
  ) {
    let seed = known
    const attempt = Effect.gen(function* () {
      const { state, version } = seed ?? (yield* loadState(id))
      // Only the first attempt may use the caller's state: a conflict proves it stale.
      seed = undefined
      const events = yield* aggregate.decide(command, state)
      if (events.length === 0) return { events, state, version } satisfies Handled<E, S>
      const write = yield* toAppend(id, events, metadata, version)
      const [result] = yield* dieOnReusedId(
        appendWithCaused([{ append: write, before: state, events }], { single: true })
      )
      return {
        events,
        state: fold(aggregate, events, state),
        version: result!.nextVersion
      } satisfies Handled<E, S>
    })
    return yield* retryOnConflict(attempt)
  })
}

/**
 * A decision on one aggregate that is not written yet: what the command came to (`Handled`, as
 * {@link make} would return it once written) and the append that writes it (none for a no-op).
 * Several of them, on different aggregates, are written together by {@link commit}.
 */
export interface Decided<E, S> {
  readonly handled: Handled<E, S>
  readonly append: EventStore.BatchAppend | undefined
  /** The state the decision was made on (what the `Outbox` folds the events onto). */
  readonly before: S
}

/**
 * Makes the decider of several commands in a row on one aggregate: each is decided on the state the
 * previous one left, and all their events form one decision (one append: every command is recorded
 * or none). The first refusal is the result. For a use case whose steps on one stream need no
 * external call between them (a checkout created and its push claimed).
 */
export const deciderOfAll = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const toAppend = appendOf(aggregate)
  return Effect.fnUntraced(function* (
    id: string,
    commands: ReadonlyArray<C>,
    known: Known<S>,
    metadata: EventStore.EventMetadata = {}
  ) {
    let state = known.state
    const events: Array<E> = []
    for (const command of commands) {
      const decided = yield* aggregate.decide(command, state)
      state = fold(aggregate, decided, state)
      events.push(...decided)
    }
    return {
      handled: { events, state, version: known.version + events.length },
      append: events.length === 0 ? undefined : yield* toAppend(id, events, metadata, known.version),
      before: known.state
    } as Decided<E, S>
  })
}

/**
 * Makes the decider of one aggregate for a use case that decides on several: `decide(id, command,
 * known, metadata)` decides on the state the caller read, without writing. Stale is safe: the
 * append's expected version makes {@link commit} fail with `ConcurrencyConflict`, and the use case,
 * wrapped in {@link retryOnConflict}, reads and decides again.
 */
export const decider = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const all = deciderOfAll(aggregate)
  return (id: string, command: C, known: Known<S>, metadata: EventStore.EventMetadata = {}) =>
    all(id, [command], known, metadata)
}

/**
 * Writes the decisions of one use case on several aggregates with one `appendBatch`: all of them or
 * none. A `ConcurrencyConflict` on any stream they write fails the whole commit; nothing was
 * written, and the conflicting stream's kept state (`KnownStates`) is forgotten, so that a retry
 * reads it. A conflict on a stream the `Outbox` only guards is retried here (see
 * {@link appendWithCaused}). Once written, each stream's new state is kept ({@link loadKnown} then
 * decides on it without a read).
 */
export const commit = (
  decisions: ReadonlyArray<Decided<unknown, unknown>>
): Effect.Effect<void, EventStore.ConcurrencyConflict, EventStore.EventStore> => {
  const written = decisions.filter((d) => d.append !== undefined)
  if (written.length === 0) return Effect.void
  return Effect.gen(function* () {
    const cache = yield* KnownStates.KnownStates
    yield* dieOnReusedId(
      appendWithCaused(
        written.map((d) => ({
          append: d.append!,
          before: d.before,
          events: d.handled.events as ReadonlyArray<Tagged>
        })),
        { single: false }
      )
    )
    for (const d of written) {
      cache.set(d.append!.streamId, { state: d.handled.state, version: d.handled.version })
    }
  })
}

/** One command of a batch ({@link makeBatch}): the aggregate's id, the command and the state held. */
export interface BatchItem<C, S> {
  readonly id: string
  readonly command: C
  readonly metadata?: EventStore.EventMetadata
  /** The state the command is decided on (stale is safe: the batch then falls back, see below). */
  readonly known: Known<S>
}

/** What a command of a batch came to: the aggregate's refusal (or a conflict retried out), or `Handled`. */
export type BatchResult<E, S, Err> = Either.Either<Handled<E, S>, Err | EventStore.ConcurrencyConflict>

/**
 * Makes the batch handler of one aggregate: many commands, each on its own stream with the state the
 * caller holds, written with one `appendBatch` (one round trip and one commit for all). Each command
 * is decided on its `known` state; the events are built as {@link make} builds them (ids from
 * `IdGenerator` in item order, schema version, metadata, expected version). A refusal or a no-op is
 * that item's result and does not fail the others. If the batch fails (a conflict: some `known` was
 * stale), every item that had events is handled alone by {@link make} (on its `known`, re-read on
 * conflict), so each item ends as if handled alone. An id already in the batch is handled after it,
 * alone and on its stream as read then (a stream appears once in an `appendBatch`). Results in item
 * order.
 */
export const makeBatch = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
) => {
  const handle = make(aggregate)
  const toAppend = appendOf(aggregate)
  return Effect.fnUntraced(function* (items: ReadonlyArray<BatchItem<C, S>>) {
    const results: Array<BatchResult<E, S, Err> | undefined> = items.map(() => undefined)
    const seen = new Set<string>()
    const later: Array<number> = []
    const pending: Array<
      Write & { readonly index: number; readonly events: ReadonlyArray<E>; readonly before: S }
    > = []
    for (const [index, item] of items.entries()) {
      if (seen.has(item.id)) {
        later.push(index)
        continue
      }
      seen.add(item.id)
      const { state, version } = item.known
      const decided = aggregate.decide(item.command, state)
      if (Either.isLeft(decided)) {
        results[index] = Either.left(decided.left)
        continue
      }
      const events = decided.right
      if (events.length === 0) {
        results[index] = Either.right({ events, state, version })
        continue
      }
      pending.push({
        index,
        events,
        before: state,
        append: yield* toAppend(item.id, events, item.metadata ?? {}, version)
      })
    }
    const alone = (index: number, known?: Known<S>) => {
      const item = items[index]!
      return Effect.map(Effect.either(handle(item.id, item.command, item.metadata, known)), (result) => {
        results[index] = result
      })
    }
    if (pending.length > 0) {
      const written = yield* Effect.either(appendWithCaused(pending, { single: false }))
      if (Either.isRight(written)) {
        for (const [i, { before, events, index }] of pending.entries()) {
          results[index] = Either.right({
            events,
            state: fold(aggregate, events, before),
            version: written.right[i]!.nextVersion
          })
        }
      } else {
        // All or none was written: none. Each item alone, as `make` would have handled it.
        yield* Effect.annotateCurrentSpan("fallback", written.left._tag)
        for (const { index } of pending) yield* alone(index, items[index]!.known)
      }
    }
    for (const index of later) yield* alone(index)
    return results as ReadonlyArray<BatchResult<E, S, Err>>
  })
}
