/**
 * An in-memory `EventStore` for tests of the domain and of programs that embed it. It keeps the
 * port's contract (expected versions, idempotent event ids, commit order) but no hash chain and
 * nothing durable: production uses `@cobro/store-pg`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
import * as EventStore from "./EventStore.js"

interface Log {
  readonly events: ReadonlyArray<EventStore.LoggedEvent>
}

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
export const make: Effect.Effect<EventStore.EventStore["Type"]> = Effect.gen(function* () {
  const log = yield* Ref.make<Log>({ events: [] })

  const append: EventStore.EventStore["Type"]["append"] = (streamId, events, expected) =>
    Effect.gen(function* () {
      const now = new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
      return yield* Ref.modify(
        log,
        (
          current
        ): readonly [
          Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused>,
          Log
        ] => {
          const existing = current.events.filter((e) => e.streamId === streamId)
          const version = existing.length
          // Idempotent re-append: every event id already stored with the same content.
          const stored = events.map((e) => current.events.find((s) => s.eventId === e.eventId))
          if (stored.length > 0 && stored.every((s) => s !== undefined)) {
            const clash = events.find((e, i) => !sameContent(e, stored[i]!))
            if (clash) return [Effect.fail(new EventStore.EventIdReused({ eventId: clash.eventId })), current]
            return [
              Effect.succeed({
                nextVersion: stored[stored.length - 1]!.streamVersion,
                firstPosition: stored[0]!.globalPosition,
                lastPosition: stored[stored.length - 1]!.globalPosition
              }),
              current
            ]
          }
          const reused = stored.find((s) => s !== undefined)
          if (reused) return [Effect.fail(new EventStore.EventIdReused({ eventId: reused.eventId })), current]
          const conflict = EventStore.ExpectedVersion.$match(expected, {
            NoStream: () => version !== 0,
            Exact: (e) => e.version !== version,
            Any: () => false
          })
          if (conflict) {
            return [
              Effect.fail(
                new EventStore.ConcurrencyConflict({
                  streamId,
                  expected: expectedLabel(expected),
                  actual: version
                })
              ),
              current
            ]
          }
          const base = BigInt(current.events.length)
          // Each append is one "transaction": its number orders the log like PostgreSQL's xid8.
          const transactionId = base + 1n
          const appended = events.map((e, i): EventStore.LoggedEvent => ({
            ...e,
            globalPosition: base + BigInt(i) + 1n,
            streamId,
            streamVersion: version + i + 1,
            recordedAt: now,
            prevHash: "",
            hash: "",
            checkpoint: { transactionId, globalPosition: base + BigInt(i) + 1n }
          }))
          if (appended.length === 0) {
            return [
              Effect.succeed({ nextVersion: version, firstPosition: base, lastPosition: base }),
              current
            ]
          }
          return [
            Effect.succeed({
              nextVersion: version + appended.length,
              firstPosition: appended[0]!.globalPosition,
              lastPosition: appended[appended.length - 1]!.globalPosition
            }),
            { events: [...current.events, ...appended] }
          ]
        }
      ).pipe(Effect.flatten)
    })

  const readStream: EventStore.EventStore["Type"]["readStream"] = (streamId, options = {}) =>
    Effect.map(Ref.get(log), ({ events }) =>
      events.filter(
        (e) =>
          e.streamId === streamId &&
          e.streamVersion >= (options.fromVersion ?? 1) &&
          (options.toVersion === undefined || e.streamVersion <= options.toVersion) &&
          (options.asOf === undefined || e.recordedAt.getTime() <= options.asOf.getTime())
      )
    )

  const readAll: EventStore.EventStore["Type"]["readAll"] = (options = {}) =>
    Effect.map(Ref.get(log), ({ events }) => {
      const after = options.after ?? EventStore.Start
      return events.filter((e) => e.globalPosition > after.globalPosition).slice(0, options.limit ?? 1000)
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

  return { append, readStream, readAll, streamAll }
})

/** The in-memory store as a layer: a fresh, empty log each time it is built. */
export const layer: Layer.Layer<EventStore.EventStore> = Layer.effect(EventStore.EventStore, make)
