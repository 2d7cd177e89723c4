/**
 * The delivery queue port (spec D, Retries): which webhook deliveries are due, handed to one
 * dispatcher at a time by a lease, so that several dispatchers share the work and never
 * attempt one notification together. The store implements it over PostgreSQL (`FOR UPDATE SKIP
 * LOCKED` and a lease table); `layerFromLog` scans the log, for tests and the in-memory server.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { fold } from "./Decider.js"
import * as EventStore from "./EventStore.js"
import type { NotificationId } from "./Ids.js"
import * as WebhookDelivery from "./WebhookDelivery.js"

/** What a dispatcher asks for. */
export interface ClaimOptions {
  /** The dispatcher's clock: deliveries due at or before it are claimed. */
  readonly now: DateTime.Utc
  /** At most this many. */
  readonly limit: number
  /** How long the claim holds if the dispatcher dies: another may take the delivery after it. */
  readonly lease: Duration.Duration
  /** Who claims (unique per dispatcher). */
  readonly owner: string
}

/** What a dispatcher knows when it gives a claim back. */
export interface ReleaseOptions {
  /**
   * How many attempts the delivery's stream records now (after the one just made, if any). The
   * queue's view of the deliveries is a projection of the log and lags behind it: until the view
   * has caught up with this many attempts, the delivery is not handed out again (it would only be
   * read, found not due, and given back). Absent: the delivery may be handed out at once.
   */
  readonly attemptsRecorded?: number
}

/** One claim given back by {@link DeliveryQueue} `releaseAll`: `release`'s arguments for one notification. */
export interface Release extends ReleaseOptions {
  readonly notificationId: NotificationId
}

/** The delivery queue port. */
export class DeliveryQueue extends Context.Tag("@cobro/domain/DeliveryQueue")<
  DeliveryQueue,
  {
    /**
     * Claims up to `limit` deliveries due at `now` that no live lease holds, leasing them to `owner`
     * until `now + lease`: returns their notification ids, earliest due first. Two concurrent
     * claims never return the same notification.
     */
    readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<NotificationId>>
    /** Ends `owner`'s lease of a notification (after its attempt was recorded, or skipped). */
    readonly release: (
      notificationId: NotificationId,
      owner: string,
      options?: ReleaseOptions
    ) => Effect.Effect<void>
    /**
     * `release` for many of `owner`'s claims at once (a dispatcher's round): one write instead of one
     * per notification, each release with the same effect as `release` alone.
     */
    readonly releaseAll: (releases: ReadonlyArray<Release>, owner: string) => Effect.Effect<void>
  }
>() {}

const prefix = `${WebhookDelivery.WebhookDelivery.name}-`
const decodeEvent = Schema.decodeUnknownOption(WebhookDelivery.Event)

/** Every WebhookDelivery stream of the log, folded: notification id → state. Reads the whole log. */
export const scanDeliveries: Effect.Effect<
  ReadonlyMap<string, WebhookDelivery.State>,
  never,
  EventStore.EventStore
> = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const events = new Map<string, Array<WebhookDelivery.Event>>()
  let after = EventStore.Start
  while (true) {
    const page = yield* store.readAll({ after, limit: 1000 })
    if (page.length === 0) break
    for (const event of page) {
      if (!event.streamId.startsWith(prefix)) continue
      const decoded = decodeEvent(event.data)
      if (Option.isNone(decoded)) continue
      const id = event.streamId.slice(prefix.length)
      const list = events.get(id) ?? []
      list.push(decoded.value)
      events.set(id, list)
    }
    after = page[page.length - 1]!.checkpoint
  }
  const states = new Map<string, WebhookDelivery.State>()
  for (const [id, list] of events) states.set(id, fold(WebhookDelivery.WebhookDelivery, list))
  return states
})

/** The leases without `owner`'s of `ids` (another owner's lease stays). */
const without = (
  held: ReadonlyMap<string, { readonly owner: string; readonly until: number }>,
  ids: ReadonlyArray<string>,
  owner: string
) => {
  const next = new Map(held)
  for (const id of ids) if (next.get(id)?.owner === owner) next.delete(id)
  return next
}

/**
 * The queue by scanning the log on every claim, with leases in memory: for tests and a single
 * in-memory server. Linear in the size of the log; never behind it, so `attemptsRecorded` is moot.
 */
export const layerFromLog: Layer.Layer<DeliveryQueue, never, EventStore.EventStore> = Layer.effect(
  DeliveryQueue,
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const leases = yield* Ref.make(new Map<string, { owner: string; until: number }>())
    const lock = yield* Effect.makeSemaphore(1)
    return {
      claim: (options) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const states = yield* Effect.provideService(scanDeliveries, EventStore.EventStore, store)
            const now = DateTime.toEpochMillis(options.now)
            const held = yield* Ref.get(leases)
            const due = [...states.entries()]
              .flatMap(([id, state]) =>
                state._tag === "PENDING" &&
                Option.isSome(state.dueAt) &&
                DateTime.toEpochMillis(state.dueAt.value) <= now &&
                !((held.get(id)?.until ?? -Infinity) > now)
                  ? [{ id, due: DateTime.toEpochMillis(state.dueAt.value) }]
                  : []
              )
              .sort((a, b) => a.due - b.due)
              .slice(0, options.limit)
            const until = now + Duration.toMillis(options.lease)
            const next = new Map(held)
            for (const { id } of due) next.set(id, { owner: options.owner, until })
            yield* Ref.set(leases, next)
            return due.map(({ id }) => id as NotificationId)
          })
        ),
      release: (notificationId, owner) =>
        Ref.update(leases, (held) => without(held, [notificationId], owner)),
      releaseAll: (releases, owner) =>
        Ref.update(leases, (held) =>
          without(
            held,
            releases.map((r) => r.notificationId),
            owner
          )
        )
    }
  })
)
