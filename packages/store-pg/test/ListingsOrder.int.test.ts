/**
 * The lists' order on a real PostgreSQL server while rows are inserted (issue 31, item 4): newest
 * first by the log position of the event that created each row, under the log's visibility rule
 * (`internal/Keyset`). A sale decided earlier but committed later never lands behind a page already
 * read: a walk never skips a row that sorts between the first and the last row it returned, shows
 * none twice, and a reader polling for newer rows with `ending_before` receives every row. And the
 * created range takes every instant PostgreSQL holds (item 6), on PGlite as on the server.
 */
import type { MerchantId } from "@cobro/domain/Ids"
import * as Listings from "@cobro/domain/Listings"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as Pagination from "@cobro/domain/Pagination"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as W from "../../domain/test/listings/Workload.js"
import * as PgListings from "../src/PgListings.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { randomIds } from "./support/Fixtures.js"
import { given, storeSuite } from "./support/StoreTest.js"
import { sale } from "./support/TerminalSales.js"

type Row = Listings.TransactionRow

/** One merchant, with its terminal, and no payment yet. */
const merchant = Effect.map(
  W.givenMerchants.pipe(Effect.provide(Layer.merge(W.ports, randomIds))),
  (merchants) => merchants.paying[0]!
)

/**
 * A sale decided now and appended in a transaction that commits only once `release` is done: its
 * `created_at` and its place in the log come before those of sales that commit meanwhile.
 */
const heldSale = (merchantId: MerchantId, i: number, release: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const appended = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(
      sql.withTransaction(
        Effect.zipRight(sale(merchantId, i), Effect.zipRight(Deferred.succeed(appended, undefined), release))
      )
    )
    yield* Deferred.await(appended)
    return fiber
  })

const listings = Effect.provide(Listings.Listings, PgListings.layer)

/** Every row of the merchant's list, once all that was written is visible. */
const everyRow = (merchantId: string, count: number) =>
  Effect.gen(function* () {
    const pg = yield* listings
    return yield* Eventually.eventually(
      (rows: ReadonlyArray<Row>) => `all ${count} sales listed; ${rows.length} are`,
      Effect.map(pg.transactions(merchantId, {}, { limit: Pagination.MAX_LIMIT }), (page) => page.data),
      (rows) => rows.length >= count
    )
  })

/** A walk through the list with `starting_after`, `limit` rows a page, pausing between pages. */
const walk = (merchantId: string, limit: number, pause: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const pg = yield* listings
    const seen: Array<Row> = []
    let page = yield* pg.transactions(merchantId, {}, { limit })
    seen.push(...page.data)
    while (page.hasMore) {
      yield* pause
      page = yield* pg.transactions(
        merchantId,
        {},
        { limit, startingAfter: seen[seen.length - 1]!.transactionId }
      )
      seen.push(...page.data)
    }
    return seen
  })

/** One poll for rows newer than `cursor` with `ending_before`: every page until none lies beyond. */
const poll = (merchantId: string, cursor: string, limit: number) =>
  Effect.gen(function* () {
    const pg = yield* listings
    const received: Array<Row> = []
    let newest = cursor
    for (;;) {
      const page = yield* pg.transactions(merchantId, {}, { limit, endingBefore: newest })
      // Newest first: the page's first row is the newest it holds, the next poll's cursor.
      received.push(...[...page.data].reverse())
      if (page.data.length > 0) newest = page.data[0]!.transactionId
      if (!page.hasMore) return { received, newest }
    }
  })

/** The walk skipped no row of `final` between its first and its last row, and showed none twice. */
const expectNoGap = (walked: ReadonlyArray<Row>, final: ReadonlyArray<Row>) => {
  const ids = walked.map((r) => r.transactionId)
  expect(new Set(ids).size, "a row shown twice").toBe(ids.length)
  if (walked.length === 0) return
  const order = final.map((r) => r.transactionId)
  const from = order.indexOf(ids[0]!)
  const to = order.indexOf(ids[ids.length - 1]!)
  expect(from).toBeGreaterThanOrEqual(0)
  expect(to).toBeGreaterThanOrEqual(from)
  expect(ids, "the walk, against the list once every sale committed").toEqual(order.slice(from, to + 1))
}

/** Newest first by position, each row once. */
const expectNewestFirst = (rows: ReadonlyArray<Row>) => {
  for (let i = 1; i < rows.length; i++) {
    expect(ListingsFromLog.comparePositions(rows[i - 1]!.position, rows[i]!.position)).toBe(1)
  }
}

storeSuite(Databases.postgres, "600 seconds")(
  "listings on PostgreSQL, while sales commit out of the order they were decided in",
  (it) => {
    it.effect(
      "a sale decided before another but committed after it is neither skipped by a walk with starting_after nor missed by a reader polling with ending_before",
      given(merchant, function* (merchantId) {
        yield* sale(merchantId, 0)
        const [oldest] = yield* everyRow(merchantId, 1)
        const release = yield* Deferred.make<void>()
        // Decided first, committed last.
        const late = yield* heldSale(merchantId, 1, Deferred.await(release))
        yield* Effect.sleep(5)
        yield* sale(merchantId, 2)
        const walked = yield* walk(merchantId, 1, Effect.void)
        const before = yield* poll(merchantId, oldest!.transactionId, 1)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(late)
        const final = yield* everyRow(merchantId, 3)
        expect(final.map((r) => r.reference)).toEqual(["ord-2", "ord-1", "ord-0"])
        expectNewestFirst(final)
        expectNoGap(walked, final)
        const after = yield* Eventually.eventually(
          "the poller receives both later sales",
          poll(merchantId, before.newest, 1),
          (next) => before.received.length + next.received.length >= 2
        )
        expect([...before.received, ...after.received].map((r) => r.reference)).toEqual(["ord-1", "ord-2"])
      })
    )

    it.effect.prop(
      "while sales commit in any order: every walk shows a row once and skips none between its first and last rows; a poller with ending_before receives every sale once, oldest first",
      [
        FastCheck.array(FastCheck.integer({ min: 0, max: 40 }), { minLength: 8, maxLength: 16 }),
        FastCheck.integer({ min: 1, max: 4 })
      ],
      ([holds, limit]) =>
        Effect.gen(function* () {
          const merchantId = yield* merchant
          yield* sale(merchantId, 0)
          const [oldest] = yield* everyRow(merchantId, 1)
          const done = yield* Ref.make(false)
          // Each sale's transaction stays open for its hold (ms) after its append: commits overtake.
          const writers = yield* Effect.fork(
            Effect.forEach(
              holds.map((hold, i) => [hold, i + 1] as const),
              ([hold, i]) => Effect.flatMap(heldSale(merchantId, i, Effect.sleep(hold)), Fiber.join),
              { concurrency: 4, discard: true }
            ).pipe(Effect.ensuring(Ref.set(done, true)))
          )
          const walks: Array<ReadonlyArray<Row>> = []
          const received: Array<Row> = []
          let cursor = oldest!.transactionId
          while (!(yield* Ref.get(done))) {
            walks.push(yield* walk(merchantId, limit, Effect.sleep(2)))
            const polled = yield* poll(merchantId, cursor, limit)
            received.push(...polled.received)
            cursor = polled.newest
          }
          yield* Fiber.join(writers)
          const final = yield* everyRow(merchantId, holds.length + 1)
          expect(final).toHaveLength(holds.length + 1)
          expectNewestFirst(final)
          for (const walked of walks) expectNoGap(walked, final)
          const rest = yield* Eventually.eventually(
            "the poller receives every sale",
            poll(merchantId, cursor, limit),
            (next) => received.length + next.received.length >= holds.length
          )
          received.push(...rest.received)
          expect(received.map((r) => r.transactionId)).toEqual(
            final
              .slice(0, -1)
              .map((r) => r.transactionId)
              .reverse()
          )
        }),
      { fastCheck: { numRuns: 6 } }
    )
  }
)

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  storeSuite(database, "300 seconds")(name, (it) => {
    it.effect(
      "the created range takes every instant PostgreSQL holds: year 0000 and past 9999, from either side",
      given(merchant, function* (merchantId) {
        yield* sale(merchantId, 0)
        const [row] = yield* everyRow(merchantId, 1)
        const pg = yield* listings
        const ids = (filter: Listings.TransactionFilter) =>
          Effect.map(pg.transactions(merchantId, filter, { limit: 10 }), (page) =>
            page.data.map((r) => r.transactionId)
          )
        const yearZero = new Date("0000-01-01T00:00:00Z")
        const beforeYearZero = new Date("-000001-12-31T23:59:00Z")
        const year10000 = new Date("+010000-01-01T00:00:00Z")
        expect(yield* ids({ createdGte: yearZero })).toEqual([row!.transactionId])
        expect(yield* ids({ createdGte: beforeYearZero, createdLt: year10000 })).toEqual([row!.transactionId])
        expect(yield* ids({ createdLt: yearZero })).toEqual([])
        expect(yield* ids({ createdGte: year10000 })).toEqual([])
        // Exact to the millisecond on both sides of the row's instant.
        const at = row!.createdAt.getTime()
        expect(yield* ids({ createdGte: new Date(at) })).toEqual([row!.transactionId])
        expect(yield* ids({ createdGte: new Date(at + 1) })).toEqual([])
        expect(yield* ids({ createdLt: new Date(at) })).toEqual([])
        expect(yield* ids({ createdLt: new Date(at + 1) })).toEqual([row!.transactionId])
      })
    )
  })

suite("created range on PGlite", Databases.pglite)
suite("created range on PostgreSQL", Databases.postgres)
