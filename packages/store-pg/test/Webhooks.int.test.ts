/**
 * The webhook dispatcher's store adapters (spec D, A4; issue 5): the notification log over the read
 * models and the due-delivery queue with leases and `FOR UPDATE SKIP LOCKED`, on PGlite and on a
 * real PostgreSQL, checked against the domain's log-scanning versions.
 */
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId } from "@cobro/domain/Ids"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as Notifications from "@cobro/domain/Notifications"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PgDeliveryQueue from "../src/PgDeliveryQueue.js"
import * as PgNotificationLog from "../src/PgNotificationLog.js"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Subscription from "../src/Subscription.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import * as F from "@cobro/domain/testing/WebhookFixtures"

const PROD = "https://merchant.example/webhooks"
const TEST = "https://merchant.example/test-webhooks"

/** The notifier and the read models catch up with the log (once all of it is visible to catch-up reads). */
const catchUp = Effect.gen(function* () {
  yield* Eventually.logVisible
  // The notifier as the server runs it: a log consumer whose schedules commit with its checkpoint.
  yield* Subscription.catchUp(
    Subscription.make("webhooks:notifier", (event) => Effect.asVoid(Notifications.schedule(event)))
  )
  // The notifier appended delivery events: the read models (and a log scan) must see those too.
  yield* Eventually.logVisible
  for (const projection of ReadModels.all) yield* Projection.catchUp(projection)
})

const withDatabase = (database: Layer.Layer<Databases.StoreServices>) =>
  Layer.mergeAll(PgDeliveryQueue.layer, PgNotificationLog.layer, IdGenerator.layerSequential).pipe(
    Layer.provideMerge(database)
  )

const logFromScan = Effect.provide(NotificationLog.NotificationLog, NotificationLog.layerFromLog)

const owner = (merchantId: string, sandbox: boolean): NotificationLog.Owner => ({
  merchantId: MerchantId.make(merchantId),
  sandbox
})

const now = Effect.map(DateTime.now, (t) => DateTime.add(t, { seconds: 1 }))

/** The live clock moved to `F.T0` (10:00 Bogotá) when the suite starts: voids stay within their window. */
const shiftedClock = (): Clock.Clock => {
  const base = Clock.make()
  const offset = F.T0 - base.unsafeCurrentTimeMillis()
  const millis = () => base.unsafeCurrentTimeMillis() + offset
  const nanos = () => base.unsafeCurrentTimeNanos() + BigInt(offset) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    sleep: (duration) => base.sleep(duration)
  }
}

const clock = shiftedClock()

/** Claims every delivery due now for an hour, so that a test sees only the deliveries it makes. */
const drain = Effect.gen(function* () {
  const queue = yield* DeliveryQueue.DeliveryQueue
  return yield* queue.claim({ now: yield* now, limit: 10_000, lease: Duration.hours(1), owner: "drain" })
})

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  layer(withDatabase(database), { excludeTestServices: true, timeout: 120_000 })(
    `webhook adapters on ${name}`,
    (it) => {
      it.scoped("A4: the last notification of a payment, only for its own merchant and mode", () =>
        Effect.gen(function* () {
          yield* F.merchant("MER_1", { production: PROD, test: TEST })
          yield* F.merchant("MER_2", { production: PROD, keyBase: 10 })
          yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
          yield* F.checkoutOutcome(1, "void")
          yield* F.approvedSale({ merchantId: "MER_1", n: 2, sandbox: true })
          yield* catchUp
          const pg = yield* NotificationLog.NotificationLog
          const scan = yield* logFromScan
          for (const log of [pg, scan]) {
            const last = yield* log.lastByPaymentId(owner("MER_1", false), "TRX_1")
            expect(Option.map(last, (b) => JSON.parse(b).type)).toEqual(Option.some("VOID_APPROVED"))
            expect(yield* log.lastByPaymentId(owner("MER_2", false), "TRX_1")).toEqual(Option.none())
            expect(yield* log.lastByPaymentId(owner("MER_1", true), "TRX_1")).toEqual(Option.none())
            expect(yield* log.lastByPaymentId(owner("MER_1", false), "TRX_2")).toEqual(Option.none())
            expect(Option.isSome(yield* log.lastByPaymentId(owner("MER_1", true), "TRX_2"))).toBe(true)
          }
          expect(yield* pg.lastByPaymentId(owner("MER_1", false), "TRX_1")).toEqual(
            yield* scan.lastByPaymentId(owner("MER_1", false), "TRX_1")
          )
        }).pipe(Effect.withClock(clock))
      )

      it.scoped("A4 by external reference: more than 10 payments give the 10 newest, one each", () =>
        Effect.gen(function* () {
          yield* F.merchant("MER_3", { production: PROD, keyBase: 20 })
          for (let n = 101; n <= 112; n++) {
            yield* F.approvedSale({ merchantId: "MER_3", n, reference: "shared-ref" })
            yield* Effect.sleep(Duration.millis(2))
          }
          yield* F.checkoutOutcome(103, "void")
          yield* F.approvedSale({ merchantId: "MER_3", n: 113, reference: "other-ref" })
          yield* catchUp
          const pg = yield* NotificationLog.NotificationLog
          const scan = yield* logFromScan
          const fromPg = yield* pg.lastByExternalReference(owner("MER_3", false), "shared-ref", 10)
          const subjects = fromPg.map((b) => JSON.parse(b).subject)
          expect(subjects).toHaveLength(10)
          expect(new Set(subjects).size).toBe(10)
          // TRX_3 was voided last: its last notification is the newest.
          expect(subjects[0]).toBe("TRX_103")
          expect(JSON.parse(fromPg[0]!).type).toBe("VOID_APPROVED")
          expect(subjects.slice(1)).toEqual(
            [112, 111, 110, 109, 108, 107, 106, 105, 104].map((n) => `TRX_${n}`)
          )
          expect(yield* scan.lastByExternalReference(owner("MER_3", false), "shared-ref", 10)).toEqual(fromPg)
          expect(yield* pg.lastByExternalReference(owner("MER_3", true), "shared-ref", 10)).toEqual([])
          expect(yield* pg.lastByExternalReference(owner("MER_1", false), "shared-ref", 10)).toEqual([])
        }).pipe(Effect.withClock(clock))
      )

      it.scoped("a claimed delivery is leased: no other dispatcher gets it until released or expired", () =>
        Effect.gen(function* () {
          yield* catchUp
          yield* drain
          yield* F.merchant("MER_4", { production: PROD, keyBase: 30 })
          yield* F.approvedSale({ merchantId: "MER_4", n: 201 })
          yield* catchUp
          const queue = yield* DeliveryQueue.DeliveryQueue
          const t = yield* now
          const lease = Duration.seconds(30)
          const first = yield* queue.claim({ now: t, limit: 10, lease, owner: "d1" })
          expect(first).toHaveLength(1)
          expect(yield* queue.claim({ now: t, limit: 10, lease, owner: "d2" })).toEqual([])
          expect(
            yield* queue.claim({ now: DateTime.add(t, { seconds: 30 }), limit: 10, lease, owner: "d2" })
          ).toEqual(first)
          yield* queue.release(first[0]!, "d1") // not d1's any more: changes nothing
          expect(
            yield* queue.claim({ now: DateTime.add(t, { seconds: 31 }), limit: 10, lease, owner: "d3" })
          ).toEqual([])
          yield* queue.release(first[0]!, "d2")
          expect(
            yield* queue.claim({ now: DateTime.add(t, { seconds: 31 }), limit: 10, lease, owner: "d3" })
          ).toEqual(first)
          // Not due before its due time.
          expect(
            yield* queue.claim({ now: DateTime.subtract(t, { minutes: 10 }), limit: 10, lease, owner: "d4" })
          ).toEqual([])
        }).pipe(Effect.withClock(clock))
      )

      it.scoped("concurrent claims never hand one notification to two dispatchers", () =>
        Effect.gen(function* () {
          yield* catchUp
          yield* drain
          yield* F.merchant("MER_5", { production: PROD, keyBase: 40 })
          for (let n = 301; n <= 340; n++) yield* F.approvedSale({ merchantId: "MER_5", n })
          yield* catchUp
          const queue = yield* DeliveryQueue.DeliveryQueue
          const t = yield* now
          const claims = yield* Effect.all(
            Array.from({ length: 16 }, (_, i) =>
              queue.claim({ now: t, limit: 5, lease: Duration.seconds(30), owner: `d${i}` })
            ),
            { concurrency: "unbounded" }
          )
          const all = claims.flat()
          expect(new Set(all).size).toBe(all.length)
          expect(all.length).toBe(40)
          const scanned = yield* DeliveryQueue.scanDeliveries
          const pending = [...scanned.entries()].filter(
            ([, state]) => state._tag === "PENDING" && state.notification.merchantId === "MER_5"
          )
          expect(new Set(all)).toEqual(new Set(pending.map(([id]) => id)))
        }).pipe(Effect.withClock(clock))
      )
    }
  )
}

describe("the notification id", () => {
  it("is derived from the id of the event that raised it", () => {
    const id = "0b6f3f0e-6a55-4c3f-9c1c-1c8f6a1b2c3d"
    expect(Notifications.notificationIdOf(id)).toBe(Notifications.notificationIdOf(id.toUpperCase()))
  })
})
