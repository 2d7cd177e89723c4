/**
 * The notifier (spec D, "Notifications arise from the event log"): a consumer of the log that turns
 * each event raising a notification into a `DeliveryScheduled` on its own WebhookDelivery stream.
 * Idempotent (the stream is derived from the event id), so at-least-once consumption is enough.
 * Over PostgreSQL the server runs `handle` as a `Subscription` consumer named `CONSUMER_NAME` (its
 * checkpoint commits with the schedule); `runFromLog` is the in-memory loop.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Notifications from "@cobro/domain/Notifications"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/** The checkpoint name of the notifier as a log consumer. */
export const CONSUMER_NAME = "webhooks:notifier"

/**
 * Schedules the notification an event raises, if any. A defect while reading the event's stream (a
 * corrupted log) is logged and the event skipped, so that one bad event cannot stop every webhook.
 */
export const handle = (event: EventStore.RecordedEvent): Effect.Effect<void, never, EventStore.EventStore> =>
  Notifications.mayRaise(event)
    ? Notifications.schedule(event).pipe(
        Effect.asVoid,
        Effect.catchAllDefect((defect) =>
          Effect.logError("notifier: event skipped, its stream could not be read", defect).pipe(
            Effect.annotateLogs({ eventId: event.eventId, streamId: event.streamId })
          )
        )
      )
    : Effect.void

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
