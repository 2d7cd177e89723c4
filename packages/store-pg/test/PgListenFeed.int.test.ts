/**
 * The listen feed (`PgListenFeed`, `cobro listen`): one merchant's sandbox notifications, with the
 * exact body, in the log's commit order, past a position; and on a server, a notification that
 * commits after a later one (a lower transaction id committing late) is neither skipped nor sent
 * twice. On PGlite and on a real PostgreSQL server.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as ListenFeed from "@cobro/domain/ListenFeed"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { expect } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as PgListenFeed from "../src/PgListenFeed.js"
import * as Databases from "./support/Databases.js"
import { storeSuite, withStore } from "./support/StoreTest.js"

const encode = Schema.encodeSync(WebhookDelivery.Event)
const at = DateTime.unsafeMake(Date.UTC(2026, 11, 2, 12))

/** A delivery scheduled for `merchant`, in its own stream; its body names `reference` (a nanosecond `time` kept exact). */
const schedule = (
  merchant: string,
  reference: string,
  options: { readonly sandbox?: boolean; readonly type?: WebhookDelivery.NotificationType } = {}
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const notificationId = randomUUID()
    const body = `{"id":"${notificationId}","time":1764676800123456789,"data":{"metadata":{"reference":"${reference}"}}}`
    const event = new WebhookDelivery.DeliveryScheduled({
      notificationId: notificationId as never,
      merchantId: merchant as never,
      type: options.type ?? "SALE_APPROVED",
      subject: `TRX_${reference}` as never,
      body,
      signingKey: "EMPTY",
      sandbox: options.sandbox ?? true,
      dueAt: at,
      createdAt: at
    })
    yield* store.append(
      Aggregate.streamId(WebhookDelivery.WebhookDelivery, notificationId),
      [{ eventId: randomUUID(), type: event._tag, schemaVersion: 1, data: encode(event), metadata: {} }],
      EventStore.ExpectedVersion.NoStream()
    )
    return { notificationId, body }
  })

/** The feed under test, each delivery's headers naming it. */
const Feed = PgListenFeed.layer({
  headers: (notification) => Effect.succeed({ "x-test-id": notification.notificationId })
})

const references = (batch: ListenFeed.Batch) =>
  batch.items.map((item) => JSON.parse(item.body).data.metadata.reference as string)

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, options: { server: boolean }) =>
  storeSuite(Feed.pipe(Layer.provideMerge(database)), "120 seconds")(name, (it) => {
    it.effect(
      "a merchant's sandbox notifications after a position, with the exact body, in order; never production ones nor another merchant's",
      () =>
        Effect.gen(function* () {
          const feed = yield* ListenFeed.ListenFeed
          const merchant = `MER_${randomUUID().slice(0, 8)}` as never
          const start = yield* feed.now
          const first = yield* schedule(merchant, "a")
          yield* schedule(merchant, "live", { sandbox: false })
          yield* schedule(`MER_other${randomUUID().slice(0, 8)}`, "other")
          yield* schedule(merchant, "b", { type: "VOID_APPROVED" })
          const all = yield* feed.since({ merchantId: merchant, after: start, limit: 100 })
          expect(references(all)).toEqual(["a", "b"])
          expect(all.items[0]!.body).toBe(first.body)
          expect(all.items[0]).toMatchObject({
            notificationId: first.notificationId,
            type: "SALE_APPROVED",
            headers: { "x-test-id": first.notificationId }
          })
          // Nothing more after the cursor; paged one at a time, the same two.
          expect((yield* feed.since({ merchantId: merchant, after: all.cursor, limit: 100 })).items).toEqual(
            []
          )
          const one = yield* feed.since({ merchantId: merchant, after: start, limit: 1 })
          expect(references(one)).toEqual(["a"])
          const two = yield* feed.since({ merchantId: merchant, after: one.cursor, limit: 1 })
          expect(references(two)).toEqual(["b"])
          // Filtered by type: the cursor still moves past what the filter left out.
          const ofTypes = (types: ReadonlyArray<WebhookDelivery.NotificationType>) =>
            feed.since({ merchantId: merchant, after: start, limit: 100, types })
          const voids = yield* ofTypes(["VOID_APPROVED"])
          expect(references(voids)).toEqual(["b"])
          const none = yield* ofTypes(["SALE_REJECTED"])
          expect(none.items).toEqual([])
          expect(ListenFeed.later(none.cursor, two.cursor)).toBe(none.cursor)
          // What was recorded before the stream opened is not sent.
          const later = yield* feed.now
          expect((yield* feed.since({ merchantId: merchant, after: later, limit: 100 })).items).toEqual([])
        })
    )

    if (options.server) {
      it.effect(
        "a notification whose transaction commits after a later one's is sent once, first, and the later one is held back until then",
        withStore(function* ({ sql }) {
          const feed = yield* ListenFeed.ListenFeed
          const merchant = `MER_${randomUUID().slice(0, 8)}` as never
          const start = yield* feed.now
          const appended = yield* Deferred.make<void>()
          const commit = yield* Deferred.make<void>()
          // The early one: appended in a transaction that stays open (a lower xid, committing late).
          const early = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`SELECT pg_current_xact_id()`
                yield* schedule(merchant, "early")
                yield* Deferred.succeed(appended, undefined)
                yield* Deferred.await(commit)
              })
            )
          )
          yield* Deferred.await(appended)
          yield* schedule(merchant, "late")
          // "late" has committed, but a transaction below it is open: the feed waits.
          const held = yield* feed.since({ merchantId: merchant, after: start, limit: 100 })
          expect(held.items).toEqual([])
          yield* Deferred.succeed(commit, undefined)
          yield* Fiber.join(early)
          const both = yield* feed.since({ merchantId: merchant, after: held.cursor, limit: 100 })
          expect(references(both)).toEqual(["early", "late"])
          expect((yield* feed.since({ merchantId: merchant, after: both.cursor, limit: 100 })).items).toEqual(
            []
          )
        })
      )
    }
  })

suite("the listen feed on PGlite", Databases.pglite, { server: false })
suite("the listen feed on PostgreSQL", Databases.postgres, { server: true })
