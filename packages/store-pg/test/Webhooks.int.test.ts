/**
 * The webhook dispatcher's store adapters (spec D, A4; issue 5): the notification log over the read
 * models and the due-delivery queue with leases and `FOR UPDATE SKIP LOCKED`, on PGlite and on a
 * real PostgreSQL, checked against the domain's log-scanning versions.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as DeliveryQueue from "@cobro/domain/DeliveryQueue"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId } from "@cobro/domain/Ids"
import type { NotificationId } from "@cobro/domain/Ids"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as Notifications from "@cobro/domain/Notifications"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
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
import { storeSuite } from "./support/StoreTest.js"
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
  for (const projection of ReadModels.asynchronous) yield* Projection.catchUp(projection)
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

/** The numbers `from` to `to`, both included. */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/**
 * A test's own deliveries: the earlier tests' drained, then `merchantId` (its webhook at `PROD`)
 * with its approved sales `ns`, their notifications scheduled.
 */
const freshSales = (merchantId: string, keyBase: number, ns: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    yield* catchUp
    yield* drain
    yield* F.merchant(merchantId, { production: PROD, keyBase })
    for (const n of ns) yield* F.approvedSale({ merchantId, n })
    yield* catchUp
  })

/** A claim's notification ids, in its order. */
const idsOf = (claims: ReadonlyArray<DeliveryQueue.Claim>) => claims.map((c) => c.notificationId)

/** Claims for `owner` (the test's lease and limit), returning the notification ids. */
const claimIds = (options: DeliveryQueue.ClaimOptions) =>
  Effect.flatMap(DeliveryQueue.DeliveryQueue, (queue) => Effect.map(queue.claim(options), idsOf))

/**
 * A test's own deliveries (`freshSales`), claimed at once at the test's `now` by `owner` for `lease`
 * (through `queue`, the service by default): all of them, none of another test's.
 */
const claimFreshSales = (
  merchantId: string,
  keyBase: number,
  sales: ReadonlyArray<number>,
  owner: string,
  lease: Duration.Duration,
  queue?: DeliveryQueue.DeliveryQueue["Type"]
) =>
  Effect.gen(function* () {
    yield* freshSales(merchantId, keyBase, sales)
    const t = yield* now
    const claims = yield* (queue ?? (yield* DeliveryQueue.DeliveryQueue)).claim({
      now: t,
      limit: 10,
      lease,
      owner
    })
    expect(claims).toHaveLength(sales.length)
    return { t, claims, claimed: idsOf(claims) }
  })

/** Records a failed attempt (a 500: its retry is due 15 minutes later) on a delivery's stream. */
const failedAttempt = (id: NotificationId, at: DateTime.Utc, attempt = 1) =>
  CommandHandler.make(WebhookDelivery.WebhookDelivery)(
    id,
    new WebhookDelivery.RecordAttempt({
      attempt,
      result: { _tag: "Answered", statusCode: 500, snippet: "" },
      latencyMs: 5,
      now: at
    })
  )

for (const [name, database] of [
  ["PGlite", Databases.pglite],
  ["PostgreSQL", Databases.postgres]
] as const) {
  storeSuite(withDatabase(database), 120_000)(`webhook adapters on ${name}`, (it) => {
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

    it.scoped(
      "A4 finds the notification of a merchant with no webhook registered; nothing is due to be sent (W15)",
      () =>
        Effect.gen(function* () {
          yield* catchUp
          yield* drain
          yield* F.merchant("MER_7", { keyBase: 60 })
          yield* F.approvedSale({ merchantId: "MER_7", n: 501, reference: "no-hook-ref" })
          yield* F.approvedSale({ merchantId: "MER_7", n: 502, sandbox: true })
          yield* catchUp
          const pg = yield* NotificationLog.NotificationLog
          const scan = yield* logFromScan
          const body = Option.getOrThrow(yield* pg.lastByPaymentId(owner("MER_7", false), "TRX_501"))
          const parsed = JSON.parse(body) as {
            type: string
            subject: string
            data: { merchant_id: string }
          }
          expect([parsed.type, parsed.subject, parsed.data.merchant_id]).toEqual([
            "SALE_APPROVED",
            "TRX_501",
            "MER_7"
          ])
          expect(yield* scan.lastByPaymentId(owner("MER_7", false), "TRX_501")).toEqual(Option.some(body))
          expect(yield* pg.lastByExternalReference(owner("MER_7", false), "no-hook-ref", 10)).toEqual([body])
          // The sandbox one too, for its own mode only.
          expect(Option.isSome(yield* pg.lastByPaymentId(owner("MER_7", true), "TRX_502"))).toBe(true)
          expect(yield* pg.lastByPaymentId(owner("MER_7", false), "TRX_502")).toEqual(Option.none())
          // Nothing to send: the queue never hands them out.
          const queue = yield* DeliveryQueue.DeliveryQueue
          const later = DateTime.add(yield* now, { hours: 48 })
          const claimed = idsOf(
            yield* queue.claim({ now: later, limit: 10_000, lease: Duration.seconds(1), owner: "x" })
          )
          const ids = [501, 502].map((n) => `TRX_${n}`)
          const states = yield* DeliveryQueue.scanDeliveries
          const mine = [...states.entries()].filter(
            ([, state]) => state._tag !== "Initial" && ids.includes(state.notification.subject)
          )
          expect(mine.map(([, state]) => state._tag)).toEqual(["CANCELLED", "CANCELLED"])
          for (const [id] of mine) expect(claimed).not.toContain(id)
        }).pipe(Effect.withClock(clock))
    )

    it.scoped(
      "a claimed delivery is leased, with its state: no other dispatcher gets it until released or expired",
      () =>
        Effect.gen(function* () {
          const lease = Duration.seconds(30)
          const { claims, t } = yield* claimFreshSales("MER_4", 30, [201], "d1", lease)
          const queue = yield* DeliveryQueue.DeliveryQueue
          // The state and version the claim gives are the stream's own.
          const loaded = yield* CommandHandler.load(WebhookDelivery.WebhookDelivery)(
            claims[0]!.notificationId
          )
          expect(claims[0]!.known).toEqual({ state: loaded.state, version: loaded.version })
          const first = idsOf(claims)
          expect(yield* claimIds({ now: t, limit: 10, lease, owner: "d2" })).toEqual([])
          expect(
            yield* claimIds({ now: DateTime.add(t, { seconds: 30 }), limit: 10, lease, owner: "d2" })
          ).toEqual(first)
          yield* queue.releaseAll(first, "d1") // not d1's any more: changes nothing
          expect(
            yield* claimIds({ now: DateTime.add(t, { seconds: 31 }), limit: 10, lease, owner: "d3" })
          ).toEqual([])
          yield* queue.releaseAll(first, "d2")
          expect(
            yield* claimIds({ now: DateTime.add(t, { seconds: 31 }), limit: 10, lease, owner: "d3" })
          ).toEqual(first)
          // Not due before its due time.
          expect(
            yield* claimIds({ now: DateTime.subtract(t, { minutes: 10 }), limit: 10, lease, owner: "d4" })
          ).toEqual([])
        }).pipe(Effect.withClock(clock))
    )

    it.scoped(
      "recording the attempt ends the lease with the stream's version, without a release: the delivery is handed out again when its retry is due, not before",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const lease = Duration.hours(1)
          const { claimed, t } = yield* claimFreshSales("MER_6", 50, [401], "d1", lease)
          const [id] = claimed
          yield* failedAttempt(id!, t)
          // The lease row is still there (never released), but no longer live.
          const rows = yield* sql<{ owner: string }>`SELECT owner FROM cobro_webhook_leases
              WHERE stream_id = ${Notifications.deliveryStreamOf(id!)}`
          expect(rows).toEqual([{ owner: "d1" }])
          // (Other tests' deliveries whose leases end by then may be handed out too: only `id` is checked.)
          const claim = (at: DateTime.Utc) => claimIds({ now: at, limit: 100, lease, owner: "d2" })
          expect(yield* claim(t)).not.toContain(id)
          const retry = yield* claim(DateTime.add(t, { minutes: 15, seconds: 1 }))
          expect(retry).toContain(id)
        }).pipe(Effect.withClock(clock))
    )

    it.scoped("releaseAll gives back the owner's claims in one statement; another owner's claims stay", () =>
      Effect.gen(function* () {
        const queue = yield* DeliveryQueue.DeliveryQueue
        const sql = yield* SqlClient.SqlClient
        const lease = Duration.seconds(30)
        const { claimed, t } = yield* claimFreshSales("MER_8", 70, range(601, 603), "d1", lease)
        const [free, held, other] = claimed as unknown as [NotificationId, NotificationId, NotificationId]
        // `other` passes to d9 (d1's lease expired): d1's release must leave it to d9.
        yield* sql`UPDATE cobro_webhook_leases SET owner = 'd9'
            WHERE stream_id = ${Notifications.deliveryStreamOf(other)}`
        // Not d2's claims: nothing changes.
        yield* queue.releaseAll([free, other], "d2")
        expect(yield* claimIds({ now: t, limit: 100, lease, owner: "d3" })).toEqual([])
        yield* queue.releaseAll([], "d1")
        yield* queue.releaseAll([free, other], "d1")
        const leases = yield* sql<{ stream_id: string; owner: string }>`
            SELECT stream_id, owner FROM cobro_webhook_leases
            WHERE stream_id IN ${sql.in(claimed.map(Notifications.deliveryStreamOf))}
            ORDER BY stream_id`
        expect(leases).toEqual(
          [
            { stream_id: Notifications.deliveryStreamOf(held), owner: "d1" },
            { stream_id: Notifications.deliveryStreamOf(other), owner: "d9" }
          ].sort((a, b) => a.stream_id.localeCompare(b.stream_id))
        )
        expect(yield* claimIds({ now: t, limit: 100, lease, owner: "d2" })).toEqual([free])
      }).pipe(Effect.withClock(clock))
    )

    it.scoped(
      "a claim deletes the leases no longer live (expired, or their stream moved on), at most once per PURGE_INTERVAL of its clock",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          // A queue of its own: its purge clock starts with this test.
          const queue = yield* PgDeliveryQueue.make
          // Longer than the test's claims: a claim held is never expired by them.
          const lease = Duration.hours(1)
          const { claimed, t } = yield* claimFreshSales("MER_10", 80, range(801, 802), "p1", lease, queue)
          const [first, second] = claimed as unknown as [NotificationId, NotificationId]
          const leased = () =>
            sql<{ stream_id: string }>`SELECT stream_id FROM cobro_webhook_leases
                WHERE stream_id IN ${sql.in(claimed.map(Notifications.deliveryStreamOf))}`.pipe(
              Effect.map((rows) => rows.map((r) => r.stream_id).sort())
            )
          const streams = (...ids: ReadonlyArray<NotificationId>) =>
            ids.map(Notifications.deliveryStreamOf).sort()
          // Only this test's deliveries: other tests' leases may end by then.
          const claimAt = (seconds: number) =>
            Effect.map(
              queue.claim({ now: DateTime.add(t, { seconds }), limit: 100, lease, owner: "p2" }),
              (c) => idsOf(c).filter((id) => claimed.includes(id))
            )
          const interval = Duration.toSeconds(PgDeliveryQueue.PURGE_INTERVAL)
          // This queue purged at its first claim (t). The first attempted: its lease is kept by a
          // claim within the interval, deleted by the first claim after it; the second, live, stays.
          yield* failedAttempt(first, t)
          expect(yield* claimAt(1)).toEqual([])
          expect(yield* leased()).toEqual(streams(first, second))
          expect(yield* claimAt(interval)).toEqual([])
          expect(yield* leased()).toEqual(streams(second))
          // The second attempted: the same, from that purge on.
          yield* failedAttempt(second, t)
          expect(yield* claimAt(interval + 1)).toEqual([])
          expect(yield* leased()).toEqual(streams(second))
          expect(yield* claimAt(2 * interval)).toEqual([])
          expect(yield* leased()).toEqual([])
        }).pipe(Effect.withClock(clock))
    )

    it.scoped(
      "a lease table of the earlier version is brought up to date: its leases, claimed at no version, are no longer live",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { claimed, t } = yield* claimFreshSales("MER_11", 90, [1101], "old", Duration.hours(1))
          const [id] = claimed
          // The earlier version's table, holding a live lease of this delivery.
          const leases = yield* sql<Record<string, unknown>>`SELECT * FROM cobro_webhook_leases`
          yield* sql`DROP TABLE cobro_webhook_leases`
          yield* sql`CREATE TABLE cobro_webhook_leases (stream_id text PRIMARY KEY, owner text NOT NULL,
              expires_at timestamptz NOT NULL, recorded_attempts integer NOT NULL DEFAULT 0)`
          for (const lease of leases) {
            yield* sql`INSERT INTO cobro_webhook_leases (stream_id, owner, expires_at)
                VALUES (${lease["stream_id"] as string}, ${lease["owner"] as string}, ${lease["expires_at"] as Date})`
          }
          yield* PgDeliveryQueue.setup
          const columns = yield* sql<{
            name: string
          }>`SELECT column_name AS name FROM information_schema.columns
              WHERE table_name = 'cobro_webhook_leases' AND table_schema = current_schema() ORDER BY column_name`
          expect(columns.map((c) => c.name)).toEqual(["claimed_version", "expires_at", "owner", "stream_id"])
          // Its lease is no longer live: another dispatcher takes the delivery at once.
          expect(yield* claimIds({ now: t, limit: 100, lease: Duration.hours(1), owner: "new" })).toContain(
            id
          )
        }).pipe(Effect.withClock(clock))
    )

    it.scoped("concurrent claims never hand one notification to two dispatchers", () =>
      Effect.gen(function* () {
        yield* freshSales("MER_5", 40, range(301, 340))
        const queue = yield* DeliveryQueue.DeliveryQueue
        const t = yield* now
        const claims = yield* Effect.all(
          Array.from({ length: 16 }, (_, i) =>
            queue.claim({ now: t, limit: 5, lease: Duration.seconds(30), owner: `d${i}` })
          ),
          { concurrency: "unbounded" }
        )
        const all = claims.flatMap(idsOf)
        expect(new Set(all).size).toBe(all.length)
        expect(all.length).toBe(40)
        const scanned = yield* DeliveryQueue.scanDeliveries
        const pending = [...scanned.entries()].filter(
          ([, state]) => state._tag === "PENDING" && state.notification.merchantId === "MER_5"
        )
        expect(new Set(all)).toEqual(new Set(pending.map(([id]) => id)))
      }).pipe(Effect.withClock(clock))
    )
  })
}

describe("the notification id", () => {
  it("is derived from the id of the event that raised it", () => {
    const id = "0b6f3f0e-6a55-4c3f-9c1c-1c8f6a1b2c3d"
    expect(Notifications.notificationIdOf(id)).toBe(Notifications.notificationIdOf(id.toUpperCase()))
  })
})
