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
import type * as CommandHandler from "../kernel/CommandHandler.js"
import { fold } from "../kernel/Decider.js"
import * as EventStore from "../kernel/EventStore.js"
import type { NotificationId } from "../shared/Ids.js"
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

/**
 * A delivery handed to a dispatcher: its state and stream version as its queue row gives them with
 * the claim (no stream load per attempt). The lease holds while the stream stays at this version:
 * the attempt's record moves the stream on and ends the lease with it, without a release.
 */
export interface Claim {
  readonly notificationId: NotificationId
  readonly known: CommandHandler.Known<WebhookDelivery.State>
  /**
   * The W3C `traceparent` of the span that scheduled the delivery, where the queue keeps one (trace
   * metadata beside the queue row, never in the events): the attempt's span links to it.
   */
  readonly traceparent?: string | undefined
}

/**
 * The delivery queue port.
 *
 * @category services
 */
export class DeliveryQueue extends Context.Tag("@cobro/domain/DeliveryQueue")<
  DeliveryQueue,
  {
    /**
     * Claims up to `limit` deliveries due at `now` that no live lease holds, leasing them to `owner`
     * until `now + lease` or until their streams move on, whichever comes first: returns them with
     * their state, earliest due first. Two concurrent claims never return the same notification.
     */
    readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<Claim>>
    /**
     * Ends `owner`'s leases of these notifications, for the claims not attempted (skipped, or the
     * lease about to end): one write for many. Another owner's lease stays.
     */
    readonly releaseAll: (
      notificationIds: ReadonlyArray<NotificationId>,
      owner: string
    ) => Effect.Effect<void>
  }
>() {}

const prefix = `${WebhookDelivery.WebhookDelivery.name}-`
const decodeEvent = Schema.decodeUnknownOption(WebhookDelivery.Event)

/** Every WebhookDelivery stream of the log, folded: notification id → state and version. */
const scanKnown: Effect.Effect<
  ReadonlyMap<string, CommandHandler.Known<WebhookDelivery.State>>,
  never,
  EventStore.EventStore
> = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const streams = new Map<string, { events: Array<WebhookDelivery.Event>; version: number }>()
  let after = EventStore.Start
  while (true) {
    const page = yield* store.readAll({ after, limit: 1000 })
    if (page.length === 0) break
    for (const event of page) {
      if (!event.streamId.startsWith(prefix)) continue
      const id = event.streamId.slice(prefix.length)
      const stream = streams.get(id) ?? { events: [], version: 0 }
      stream.version = event.streamVersion
      const decoded = decodeEvent(event.data)
      if (Option.isSome(decoded)) stream.events.push(decoded.value)
      streams.set(id, stream)
    }
    after = page[page.length - 1]!.checkpoint
  }
  const known = new Map<string, CommandHandler.Known<WebhookDelivery.State>>()
  for (const [id, { events, version }] of streams) {
    known.set(id, { state: fold(WebhookDelivery.WebhookDelivery, events), version })
  }
  return known
})

/** Every WebhookDelivery stream of the log, folded: notification id → state. Reads the whole log. */
export const scanDeliveries: Effect.Effect<
  ReadonlyMap<string, WebhookDelivery.State>,
  never,
  EventStore.EventStore
> = Effect.map(scanKnown, (known) => new Map([...known].map(([id, { state }]) => [id, state])))

interface Lease {
  readonly owner: string
  readonly until: number
  /** The stream's version when claimed: the lease ends when the stream moves on. */
  readonly version: number
}

/**
 * The queue by scanning the log on every claim, with leases in memory: for tests and a single
 * in-memory server. Linear in the size of the log.
 *
 * @category layers
 */
export const layerFromLog: Layer.Layer<DeliveryQueue, never, EventStore.EventStore> = Layer.effect(
  DeliveryQueue,
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const leases = yield* Ref.make(new Map<string, Lease>())
    const lock = yield* Effect.makeSemaphore(1)
    return {
      claim: (options) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const known = yield* Effect.provideService(scanKnown, EventStore.EventStore, store)
            const now = DateTime.toEpochMillis(options.now)
            const held = yield* Ref.get(leases)
            const live = (id: string, version: number) => {
              const lease = held.get(id)
              return lease !== undefined && lease.until > now && lease.version === version
            }
            const due = [...known.entries()]
              .flatMap(([id, { state, version }]) =>
                state._tag === "PENDING" &&
                Option.isSome(state.dueAt) &&
                DateTime.toEpochMillis(state.dueAt.value) <= now &&
                !live(id, version)
                  ? [{ id, due: DateTime.toEpochMillis(state.dueAt.value), known: { state, version } }]
                  : []
              )
              .sort((a, b) => a.due - b.due)
              .slice(0, options.limit)
            const until = now + Duration.toMillis(options.lease)
            const next = new Map(held)
            for (const { id, known } of due)
              next.set(id, { owner: options.owner, until, version: known.version })
            yield* Ref.set(leases, next)
            return due.map(({ id, known }): Claim => ({ notificationId: id as NotificationId, known }))
          })
        ),
      releaseAll: (notificationIds, owner) =>
        Ref.update(leases, (held) => {
          const next = new Map(held)
          for (const id of notificationIds) if (next.get(id)?.owner === owner) next.delete(id)
          return next
        })
    }
  })
)
