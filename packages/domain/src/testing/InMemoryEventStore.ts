/**
 * An in-memory `EventStore` for tests of the domain and of programs that embed it. It keeps the
 * port's contract (expected versions, idempotent event ids, commit order) but no hash chain and
 * nothing durable: production uses `@cobro/store-pg`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
import * as AppendFence from "../kernel/AppendFence.js"
import * as EventStore from "../kernel/EventStore.js"
import * as IdGenerator from "../kernel/IdGenerator.js"

const sameContent = (a: EventStore.NewEvent, b: EventStore.NewEvent): boolean =>
  a.type === b.type &&
  a.schemaVersion === b.schemaVersion &&
  JSON.stringify(a.data) === JSON.stringify(b.data) &&
  JSON.stringify(a.metadata) === JSON.stringify(b.metadata)

const expectedLabel = (expected: EventStore.ExpectedVersion): string =>
  EventStore.ExpectedVersion.$match(expected, {
    NoStream: () => "no stream",
    Exact: ({ version }) => `version ${version}`,
    Any: () => "any"
  })

/** Makes an in-memory event store; `recordedAt` comes from Effect's `Clock`. */
export const make: Effect.Effect<EventStore.EventStore["Type"]> = Effect.sync(() => {
  // The log in commit order (event `i` at global position `i + 1`), indexed by stream and by event
  // id, so that reads and appends cost what they touch, not the size of the log. Each append runs
  // synchronously from check to write: one append is one atomic "transaction".
  const events: Array<EventStore.LoggedEvent> = []
  const streams = new Map<string, Array<EventStore.LoggedEvent>>()
  const byEventId = new Map<string, EventStore.LoggedEvent>()

  const decide = (
    streamId: string,
    batch: ReadonlyArray<EventStore.NewEvent>,
    expected: EventStore.ExpectedVersion,
    now: Date,
    transaction?: bigint
  ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused> => {
    const existing = streams.get(streamId) ?? []
    const version = existing.length
    // Idempotent re-append: every event id already stored with the same content.
    const stored = batch.map((e) => byEventId.get(e.eventId))
    if (stored.length > 0 && stored.every((s) => s !== undefined)) {
      const clash = batch.find((e, i) => !sameContent(e, stored[i]!))
      if (clash) return Effect.fail(new EventStore.EventIdReused({ eventId: clash.eventId }))
      return Effect.succeed({
        nextVersion: stored[stored.length - 1]!.streamVersion,
        firstPosition: stored[0]!.globalPosition,
        lastPosition: stored[stored.length - 1]!.globalPosition
      })
    }
    const reused = stored.find((s) => s !== undefined)
    if (reused) return Effect.fail(new EventStore.EventIdReused({ eventId: reused.eventId }))
    const conflict = EventStore.ExpectedVersion.$match(expected, {
      NoStream: () => version !== 0,
      Exact: (e) => e.version !== version,
      Any: () => false
    })
    if (conflict) {
      return Effect.fail(
        new EventStore.ConcurrencyConflict({ streamId, expected: expectedLabel(expected), actual: version })
      )
    }
    const base = BigInt(events.length)
    if (batch.length === 0) {
      return Effect.succeed({ nextVersion: version, firstPosition: base, lastPosition: base })
    }
    // Each append is one "transaction": its number orders the log like PostgreSQL's xid8.
    const transactionId = transaction ?? base + 1n
    const appended = batch.map((e, i): EventStore.LoggedEvent => ({
      ...e,
      globalPosition: base + BigInt(i) + 1n,
      streamId,
      streamVersion: version + i + 1,
      recordedAt: now,
      prevHash: "",
      hash: "",
      checkpoint: { transactionId, globalPosition: base + BigInt(i) + 1n }
    }))
    for (const event of appended) {
      events.push(event)
      byEventId.set(event.eventId, event)
    }
    if (streams.has(streamId)) existing.push(...appended)
    else streams.set(streamId, appended)
    return Effect.succeed({
      nextVersion: version + appended.length,
      firstPosition: appended[0]!.globalPosition,
      lastPosition: appended[appended.length - 1]!.globalPosition
    })
  }

  // An append of events runs under the fiber's fence (an Idempotency-Key's), an empty one writes nothing.
  const append: EventStore.EventStore["Type"]["append"] = (streamId, batch, expected) => {
    const decided = Effect.clockWith((clock) =>
      Effect.suspend(() => decide(streamId, batch, expected, new Date(clock.unsafeCurrentTimeMillis())))
    )
    return batch.length === 0
      ? decided
      : Effect.flatMap(AppendFence.AppendFence, (fence) => fence.around(streamId, decided))
  }

  /** Undoes the appends made since the log held `length` events (a failed batch). */
  const truncate = (length: number) => {
    for (const event of events.splice(length)) {
      byEventId.delete(event.eventId)
      const stream = streams.get(event.streamId)!
      stream.pop()
      if (stream.length === 0) streams.delete(event.streamId)
    }
  }

  // One "transaction": every item decided in order on what the previous ones wrote, then kept or undone.
  // An item of no events (a guard) is `decide`'s version check alone: it writes nothing.
  const appendBatch: EventStore.EventStore["Type"]["appendBatch"] = (items) =>
    items.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(AppendFence.AppendFence, (fence) =>
          fence.around(items[0]!.streamId, appendBatchUnfenced(items))
        )

  const appendBatchUnfenced: EventStore.EventStore["Type"]["appendBatch"] = (items) =>
    Effect.clockWith((clock) =>
      Effect.suspend(
        (): Effect.Effect<
          ReadonlyArray<EventStore.AppendResult>,
          EventStore.ConcurrencyConflict | EventStore.EventIdReused
        > => {
          const now = new Date(clock.unsafeCurrentTimeMillis())
          const length = events.length
          const transaction = BigInt(length) + 1n
          const results: Array<EventStore.AppendResult> = []
          for (const item of items) {
            const decided = Effect.runSyncExit(
              decide(item.streamId, item.events, item.expected, now, transaction)
            )
            if (decided._tag === "Failure") {
              truncate(length)
              return Effect.failCause(decided.cause)
            }
            results.push(decided.value)
          }
          return Effect.succeed(results)
        }
      )
    )

  const readStream: EventStore.EventStore["Type"]["readStream"] = (streamId, options = {}) =>
    Effect.sync(() => {
      // A stream's event of version `v` is at index `v - 1`.
      const window = (streams.get(streamId) ?? []).slice(
        Math.max(0, (options.fromVersion ?? 1) - 1),
        options.toVersion === undefined ? undefined : Math.max(0, options.toVersion)
      )
      const asOf = options.asOf
      return asOf === undefined ? window : window.filter((e) => e.recordedAt.getTime() <= asOf.getTime())
    })

  const readStreams: EventStore.EventStore["Type"]["readStreams"] = (streamIds) =>
    Effect.sync(() => new Map(streamIds.map((id) => [id, [...(streams.get(id) ?? [])]])))

  const readAll: EventStore.EventStore["Type"]["readAll"] = (options = {}) =>
    Effect.sync(() => {
      // Global positions are 1-based indexes into the log.
      const from = Number((options.after ?? EventStore.Start).globalPosition)
      return events.slice(from, from + (options.limit ?? 1000))
    })

  const streamAll: EventStore.EventStore["Type"]["streamAll"] = (options = {}) =>
    Stream.paginateChunkEffect(options.after ?? EventStore.Start, (after) =>
      Effect.map(readAll({ after, limit: options.limit ?? 1000 }), (page) => {
        const last = page[page.length - 1]
        return [
          Chunk.unsafeFromArray(page),
          last === undefined || page.length < (options.limit ?? 1000)
            ? Option.none()
            : Option.some(last.checkpoint)
        ] as const
      })
    )

  return { append, appendBatch, readStream, readStreams, readAll, streamAll }
})

/**
 * The in-memory store as a layer: a fresh, empty log each time it is built.
 *
 * @category layers
 */
export const layer: Layer.Layer<EventStore.EventStore> = Layer.effect(EventStore.EventStore, make)

/**
 * The in-memory store with the sequential id generator (`LNK_1`, `TRX_1`, …): what a test of a
 * decider over the store runs on. Fresh each time it is built.
 *
 * @category layers
 */
export const layerWithSequentialIds: Layer.Layer<EventStore.EventStore | IdGenerator.IdGenerator> =
  Layer.merge(layer, IdGenerator.layerSequential)
