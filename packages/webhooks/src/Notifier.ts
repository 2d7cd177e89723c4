/**
 * The notifier (spec D, "Notifications arise from the event log"): a consumer of the log that turns
 * each event raising a notification into a `DeliveryScheduled` on its own WebhookDelivery stream.
 * Idempotent (the stream is derived from the event id), so at-least-once consumption is enough.
 * Over PostgreSQL the server runs `handle` (or, reading less, the handler of `makeHandler`; or,
 * writing once per batch, that of `makeBatchHandler`) as a `Subscription` consumer named
 * `CONSUMER_NAME` (its checkpoint commits with the schedule); `runFromLog` is the in-memory loop.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Notifications from "@cobro/domain/Notifications"
import type * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as StreamReplays from "./StreamReplays.js"

/** The checkpoint name of the notifier as a log consumer. */
export const CONSUMER_NAME = "webhooks:notifier"

/**
 * A defect of the store itself (a lost connection, a statement that timed out, a deadlock): not the
 * event's fault, so it is never a reason to skip the event. It fails the handler, so that the
 * consumer's batch is not checkpointed and is tried again (`Subscription` rests, then starts again
 * from the saved checkpoint): a notification is late, never lost.
 */
class StoreFailure extends Error {
  constructor(defect: unknown) {
    super(`the event store failed: ${defect instanceof Error ? defect.message : String(defect)}`, {
      cause: defect
    })
    this.name = "StoreFailure"
  }
}

const markStoreFailure = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.catchAllDefect(effect, (defect) =>
    Effect.die(defect instanceof StoreFailure ? defect : new StoreFailure(defect))
  )

/** The store as the notifier plans and writes with it: its defects marked as {@link StoreFailure}s. */
const marked = (store: EventStore.EventStore["Type"]): EventStore.EventStore["Type"] =>
  EventStore.EventStore.of({
    ...store,
    append: (streamId, events, expected) => markStoreFailure(store.append(streamId, events, expected)),
    appendBatch: (items) => markStoreFailure(store.appendBatch(items)),
    readStream: (streamId, options) => markStoreFailure(store.readStream(streamId, options)),
    readStreams: (streamIds) => markStoreFailure(store.readStreams(streamIds)),
    readAll: (options) => markStoreFailure(store.readAll(options))
  })

/** Runs `effect` with the store's defects marked (W18). */
const withStoreMarked = <A, E>(
  effect: Effect.Effect<A, E, EventStore.EventStore>
): Effect.Effect<A, E, EventStore.EventStore> =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.provideService(effect, EventStore.EventStore, marked(store))
  )

/**
 * Skips an event whose notification cannot be planned (a defect of the domain decoding or folding
 * its stream: an event the log holds that this version cannot read), logged, so that one bad event
 * cannot stop every webhook. A {@link StoreFailure} is not skipped: it goes on failing the handler.
 */
const skipped = (event: EventStore.RecordedEvent) => (defect: unknown) =>
  defect instanceof StoreFailure
    ? Effect.die(defect)
    : Effect.logError("notifier: event skipped, its notification could not be planned", defect).pipe(
        Effect.annotateLogs({ eventId: event.eventId, streamId: event.streamId })
      )

/**
 * Schedules the notification an event raises, if any. An event whose notification cannot be planned
 * (its stream cannot be decoded) is logged and skipped; a failure of the store fails the handler, so
 * that its consumer tries the event again (W18).
 */
export const handle = (event: EventStore.RecordedEvent): Effect.Effect<void, never, EventStore.EventStore> =>
  Notifications.mayRaise(event)
    ? withStoreMarked(
        Notifications.schedule(event).pipe(Effect.asVoid, Effect.catchAllDefect(skipped(event)))
      )
    : Effect.void

/** How many streams a handler made by {@link makeHandler} keeps in memory; default 10,000. */
export interface HandlerOptions {
  readonly streams?: number
}

type Plan = Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Notifications.Unscheduled>>

/**
 * The stream memory of {@link makeHandler} and {@link makeBatchHandler}: `plan(event)` follows the
 * log with `event` (to be called on every event, in log order) and plans the delivery it leads to
 * from the streams kept, or read. A defect while planning is logged and the event skipped (`None`);
 * one of the store (run it with the store marked) fails the plan (W18).
 * Each stream is kept as a `StreamReplays.Replay`, so that its events are decoded and folded once,
 * not again for every notification that needs them (a merchant's, for each of its sales).
 */
const makePlanner = (options?: HandlerOptions) => {
  const limit = options?.streams ?? 10_000
  const streams = new Map<string, StreamReplays.Replay>()
  const keep = (replay: StreamReplays.Replay) => {
    streams.delete(replay.streamId)
    streams.set(replay.streamId, replay)
    if (streams.size > limit) streams.delete(streams.keys().next().value!)
  }
  /** Follows the log: extends a kept stream, starts one at version 1, forgets one with a gap. */
  const follow = (event: EventStore.RecordedEvent) => {
    if (!StreamReplays.isFollowed(event)) return
    const known = streams.get(event.streamId)
    if (event.streamVersion === 1) return keep(StreamReplays.replayOf(event.streamId, [event]))
    if (known === undefined) return
    if (event.streamVersion <= known.records.length) return // read from the store already
    if (event.streamVersion === known.records.length + 1) {
      known.records.push(event)
      return keep(known)
    }
    streams.delete(event.streamId)
  }
  /**
   * A stream kept, or read (and then kept, as read now, when it has no gap), with how many of its
   * records are the stream up to `version` (all of them without one).
   */
  const history = (streamId: string, version?: number) =>
    Effect.gen(function* () {
      const known = streams.get(streamId)
      if (known !== undefined && (version === undefined || known.records.length >= version)) {
        return { replay: known, length: version ?? known.records.length }
      }
      const store = yield* EventStore.EventStore
      const read = [...(yield* store.readStream(streamId))]
      const replay = StreamReplays.replayOf(streamId, read)
      if (read.every((e, i) => e.streamVersion === i + 1)) keep(replay)
      return { replay, length: version === undefined ? read.length : Math.min(version, read.length) }
    })
  const none: Effect.Effect<Plan> = Effect.succeed(Option.none())
  return (event: EventStore.RecordedEvent): Effect.Effect<Plan, never, EventStore.EventStore> => {
    follow(event)
    if (!Notifications.mayRaise(event)) return none
    return Effect.gen(function* () {
      const own = yield* history(event.streamId, event.streamVersion)
      const notice = StreamReplays.noticeFromReplay(event, own.replay, own.length)
      if (Option.isNone(notice)) return Option.none()
      const { replay: merchant } = yield* history(Notifications.merchantStreamOf(notice.value.merchantId))
      // The merchant as it was when the event was recorded, as `Notifications.planFromHistory` takes it.
      return Option.some(
        Notifications.deliveryOf(
          event.eventId,
          notice.value,
          StreamReplays.merchantAsOf(merchant, event.recordedAt)
        )
      )
    }).pipe(Effect.catchAllDefect((defect) => Effect.as(skipped(event)(defect), Option.none())))
  }
}

/**
 * `handle` with a memory of the streams it needs, kept from the log it consumes: the notifier reads
 * the whole log in commit order, so the events of a checkout, link or payment, and of its merchant,
 * pass through it before the outcome that raises a notification. Each such stream is kept (up to
 * `streams` of them, least recently used dropped) while it is known from version 1 without a gap;
 * otherwise it is read from the store (a stream begun before the notifier's checkpoint, or dropped).
 * The delivery planned is the one `handle` plans: the event's stream up to it, the merchant as it
 * was when the event was recorded; only the store reads are saved.
 */
export const makeHandler = (
  options?: HandlerOptions
): Effect.Effect<(event: EventStore.RecordedEvent) => Effect.Effect<void, never, EventStore.EventStore>> =>
  Effect.sync(() => {
    const plan = makePlanner(options)
    return (event: EventStore.RecordedEvent) => {
      const planned = plan(event)
      if (!Notifications.mayRaise(event)) return Effect.void
      return withStoreMarked(
        Effect.flatMap(planned, (p) =>
          Option.isNone(p)
            ? Effect.void
            : Notifications.schedule(event, p).pipe(Effect.asVoid, Effect.catchAllDefect(skipped(event)))
        )
      )
    }
  })

/**
 * The handler of {@link makeHandler} for a batch of the log at once (a `Subscription` consumer's
 * batch, in log order): the same stream memory and the same deliveries, but every delivery the batch
 * schedules is appended with one `appendBatch` (one round trip and one commit, or one savepoint in
 * the consumer's transaction, instead of one per notification). If that batch fails (one of them was
 * scheduled already with other content, or another notifier raced it), each is appended alone as
 * `Notifications.schedule` does, which takes "scheduled already" as done: a replay schedules nothing
 * twice, and one delivery scheduled already does not keep the others from being scheduled.
 */
export const makeBatchHandler = (
  options?: HandlerOptions
): Effect.Effect<
  (events: ReadonlyArray<EventStore.LoggedEvent>) => Effect.Effect<void, never, EventStore.EventStore>
> =>
  Effect.sync(() => {
    const plan = makePlanner(options)
    const handleBatch = Effect.fn("Notifier.handleBatch")(function* (
      events: ReadonlyArray<EventStore.LoggedEvent>
    ) {
      const toAppend: Array<{ event: EventStore.RecordedEvent; command: WebhookDelivery.ScheduleDelivery }> =
        []
      const streams = new Set<string>()
      for (const event of events) {
        const planned = plan(event)
        if (!Notifications.mayRaise(event)) continue // followed, nothing to plan
        const command = yield* Effect.flatMap(planned, (p) => Notifications.toSchedule(event, p))
        if (Option.isNone(command)) continue
        // One append per stream in a batch; a delivery stream is one source event's, so never twice.
        const stream = Notifications.deliveryStreamOf(command.value.notificationId)
        if (streams.has(stream)) continue
        streams.add(stream)
        toAppend.push({ event, command: command.value })
      }
      if (toAppend.length === 0) return
      yield* Effect.annotateCurrentSpan("scheduled", toAppend.length)
      const store = yield* EventStore.EventStore
      const written = yield* store
        .appendBatch(toAppend.map(({ event, command }) => Notifications.scheduleAppend(event, command)))
        .pipe(
          Effect.as(true),
          Effect.catchAll(() => Effect.succeed(false))
        )
      if (written) return
      yield* Effect.annotateCurrentSpan("fallback", true)
      for (const { event, command } of toAppend) yield* Notifications.appendSchedule(event, command)
    })
    return (events: ReadonlyArray<EventStore.LoggedEvent>) => withStoreMarked(handleBatch(events))
  })

/** Applies `handle` to every event after `checkpoint`, advancing it; returns how many events were read. */
export const catchUpFromLog = (
  checkpoint: Ref.Ref<EventStore.Checkpoint>,
  batchSize = 500
): Effect.Effect<number, never, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    let total = 0
    while (true) {
      const page = yield* store.readAll({ after: yield* Ref.get(checkpoint), limit: batchSize })
      if (page.length === 0) return total
      for (const event of page) yield* handle(event)
      yield* Ref.set(checkpoint, page[page.length - 1]!.checkpoint)
      total += page.length
    }
  })

/**
 * The notifier for an in-memory store: catch up from the start of the log, then poll. Re-reading the
 * log after a restart schedules nothing twice.
 */
export const runFromLog = (options?: {
  readonly pollInterval?: Duration.DurationInput
}): Effect.Effect<never, never, EventStore.EventStore> =>
  Effect.gen(function* () {
    const checkpoint = yield* Ref.make(EventStore.Start)
    const interval = options?.pollInterval ?? Duration.millis(200)
    return yield* catchUpFromLog(checkpoint).pipe(Effect.zipRight(Effect.sleep(interval)), Effect.forever)
  })

/** Whether an event raises a notification (for wiring and tests). */
export const raises = (
  event: EventStore.RecordedEvent
): Effect.Effect<boolean, never, EventStore.EventStore> =>
  Effect.map(Notifications.noticeOf(event), Option.isSome)
