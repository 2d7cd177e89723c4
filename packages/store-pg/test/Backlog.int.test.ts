/**
 * The queue statistics behind the gauges of `/metrics` (issue 34): the webhook queue's depth (the
 * deliveries neither delivered nor abandoned: due, scheduled for a retry, or leased) and the age of
 * its oldest due delivery (`PgDeliveryQueue.backlog`), and the terminal pushes waiting for their
 * terminal (`ReadModels.pendingPushes`), test and production alike. On PGlite and PostgreSQL, each
 * suite on a database of its own.
 */
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import { IntegrationId, MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as Notifications from "@cobro/domain/Notifications"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { describe, expect } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as PgDeliveryQueue from "../src/PgDeliveryQueue.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"
import * as Fixtures from "./support/Fixtures.js"
import { storeSuite } from "./support/StoreTest.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (seconds: number) => DateTime.unsafeMake(T0 + seconds * 1000)

/** A clock stopped at `seconds` after T0. */
const clockAt = (seconds: number): Clock.Clock => {
  const millis = T0 + seconds * 1000
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.succeed(millis),
    unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(millis) * 1_000_000n),
    sleep: () => Effect.void
  }
}

const backlogAt = (seconds: number) => Effect.withClock(PgDeliveryQueue.backlog, clockAt(seconds))

const encodeDelivery = Schema.encodeSync(WebhookDelivery.Event)

const record = Fixtures.recordEvents

const deliveryEvent = (event: WebhookDelivery.Event) => ({ type: event._tag, data: encodeDelivery(event) })

/** A delivery scheduled at T0 + `dueSeconds`, then `then` (its later events); returns its stream. */
const delivery = (
  dueSeconds: number,
  options: { readonly sandbox?: boolean; readonly then?: ReadonlyArray<WebhookDelivery.Event> } = {}
) =>
  Effect.gen(function* () {
    const notificationId = NotificationId.make(randomUUID())
    const streamId = Notifications.deliveryStreamOf(notificationId)
    yield* record(streamId, [
      deliveryEvent(
        new WebhookDelivery.DeliveryScheduled({
          notificationId,
          merchantId: MerchantId.make("MER_BACKLOG"),
          url: "https://merchant.example/hook",
          type: "SALE_APPROVED",
          subject: TransactionId.make("TRX_backlog"),
          body: '{"ok":true}',
          signingKey: "EMPTY",
          sandbox: options.sandbox ?? false,
          dueAt: at(dueSeconds),
          createdAt: at(dueSeconds)
        })
      )
    ])
    if (options.then !== undefined && options.then.length > 0) {
      yield* record(streamId, options.then.map(deliveryEvent))
    }
    return notificationId
  })

const failed = (attempt: number, atSeconds: number, nextDueSeconds: number | undefined) =>
  new WebhookDelivery.AttemptFailed({
    attempt,
    at: at(atSeconds),
    outcome: { _tag: "Answered", statusCode: 500, snippet: "no" },
    latencyMs: 5,
    nextDueAt: nextDueSeconds === undefined ? Option.none() : Option.some(at(nextDueSeconds))
  })

const checkoutCreated = (integrationId: IntegrationId, sandbox: boolean) =>
  Fixtures.checkoutCreated({ integrationId, merchantId: "MER_BACKLOG", sandbox: sandbox, createdAt: at(0) })

/** A checkout with its push claimed at T0, then `then`; returns its stream. */
const pushed = (sandbox: boolean, then: ReadonlyArray<TerminalCheckout.Event> = []) =>
  Effect.gen(function* () {
    const integrationId = IntegrationId.make(`INT_${randomUUID().slice(0, 8)}`)
    const streamId = `TerminalCheckout-${integrationId}`
    yield* record(streamId, [
      Fixtures.checkoutEvent(checkoutCreated(integrationId, sandbox)),
      Fixtures.checkoutEvent(new TerminalCheckout.PushAttempted({ attempt: 1, at: at(0) }))
    ])
    if (then.length > 0) yield* record(streamId, then.map(Fixtures.checkoutEvent))
    return integrationId
  })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  storeSuite(PgDeliveryQueue.layer.pipe(Layer.provideMerge(database)), 60_000)(name, (it) => {
    it.effect(
      "the depth counts what is due, leased or scheduled for a retry; the age is the oldest due now's",
      () =>
        Effect.gen(function* () {
          expect(yield* backlogAt(0)).toEqual({ depth: 0, oldestDueAgeSeconds: 0 })
          // Due at T0 and at T0 + 30 s (a test-mode one), a retry not due before T0 + 1 h.
          yield* delivery(0)
          yield* delivery(30, { sandbox: true })
          yield* delivery(-600, { then: [failed(1, -600, 3600)] })
          // Neither delivered, abandoned nor cancelled ones count.
          yield* delivery(-900, {
            then: [
              new WebhookDelivery.AttemptSucceeded({
                attempt: 1,
                at: at(-900),
                statusCode: 200,
                snippet: "ok",
                latencyMs: 3
              })
            ]
          })
          yield* delivery(-900, {
            then: [failed(1, -900, undefined), new WebhookDelivery.DeliveryExhausted({ at: at(-900) })]
          })
          yield* delivery(-900, { then: [new WebhookDelivery.DeliveryCancelled({ at: at(-900) })] })

          // Before anything is due: the depth alone.
          expect(yield* backlogAt(-1)).toEqual({ depth: 3, oldestDueAgeSeconds: 0 })
          // At T0 + 90 s: two due, the oldest for 90 s; the retry counts in the depth only.
          expect(yield* backlogAt(90)).toEqual({ depth: 3, oldestDueAgeSeconds: 90 })
          expect(yield* backlogAt(90.5)).toEqual({ depth: 3, oldestDueAgeSeconds: 90.5 })

          // Leased (claimed by a dispatcher, not yet attempted): still in the queue, still due.
          const queue = yield* DeliveryQueue.DeliveryQueue
          const claimed = yield* queue.claim({
            now: at(90),
            limit: 10,
            lease: Duration.minutes(5),
            owner: "backlog-test"
          })
          expect(claimed).toHaveLength(2)
          expect(yield* backlogAt(90)).toEqual({ depth: 3, oldestDueAgeSeconds: 90 })

          // The retry comes due at T0 + 1 h and is then the oldest due.
          expect(yield* backlogAt(3600 + 10)).toEqual({ depth: 3, oldestDueAgeSeconds: 3610 })
        })
    )

    it.effect("pending pushes are the checkouts whose push no terminal has answered yet", () =>
      Effect.gen(function* () {
        const before = yield* ReadModels.pendingPushes
        yield* pushed(false)
        yield* pushed(true)
        // A busy terminal that an earlier version read as unreachable is still the pusher's.
        yield* pushed(false, [
          new TerminalCheckout.DeliveryFailed({
            reason: TerminalCheckout.BUSY_READ_AS_UNREACHABLE,
            at: at(1)
          })
        ])
        // Answered: on the terminal, or unreachable.
        yield* pushed(false, [new TerminalCheckout.CheckoutSent({ lockedSince: Option.none(), at: at(1) })])
        yield* pushed(true, [new TerminalCheckout.DeliveryFailed({ reason: "powered off", at: at(1) })])
        expect((yield* ReadModels.pendingPushes) - before).toBe(3)
      })
    )
  })

describe("queue statistics for the gauges", () => {
  suite("on PGlite", Databases.pglite)
  suite("on PostgreSQL", Databases.postgres)
})
