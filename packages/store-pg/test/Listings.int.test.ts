/**
 * The listings over PostgreSQL (`PgListings` and the read models of migration 10): held to the
 * in-memory adapter that folds the log (`ListingsFromLog`) for workloads of real use cases, rebuilt
 * and backfilled to the same rows, paged without a row twice or missed while transactions are
 * inserted, and each list query on an index. On PGlite and on a real PostgreSQL server.
 * Slow by design: the workload properties list every generated log both from the read models and by
 * folding it in memory, on PGlite and on PostgreSQL.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Listings from "@cobro/domain/Listings"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as Pagination from "@cobro/domain/Pagination"
import * as PanelUser from "@cobro/domain/PanelUser"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as W from "../../domain/test/listings/Workload.js"
import * as Migrations from "../src/Migrations.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PgListings from "../src/PgListings.js"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Links from "../src/readModels/Links.js"
import * as MerchantRefunds from "../src/readModels/MerchantRefunds.js"
import * as Merchants from "../src/readModels/Merchants.js"
import * as Notifications from "../src/readModels/Notifications.js"
import * as PanelUsers from "../src/readModels/PanelUsers.js"
import * as Transactions from "../src/readModels/Transactions.js"
import * as Databases from "./support/Databases.js"
import * as Eventually from "./support/Eventually.js"
import { randomIds } from "./support/Fixtures.js"
import { storeSuite } from "./support/StoreTest.js"
import * as TerminalSales from "./support/TerminalSales.js"

/** The listing read models, as `cobro audit rebuild` rebuilds them among the others. */
const listingModels = [
  ReadModels.merchants,
  ReadModels.transactions,
  ReadModels.links,
  ReadModels.notifications,
  ReadModels.merchantRefunds,
  ReadModels.panelUsers
]

/** Runs a workload on the store in context, with fresh random ids; short real waits. */
const written = (load: W.Workload) =>
  Effect.gen(function* () {
    const merchants = yield* W.givenMerchants
    yield* W.run(merchants, load, (ms) => Effect.sleep(Math.min(ms, 3)))
    return merchants
  }).pipe(Effect.provide(Layer.merge(W.ports, randomIds)))

/** The two adapters: the store's, and the log folded by the aggregates (read once the log is visible). */
const adapters = Effect.gen(function* () {
  yield* Eventually.logVisible
  const pg = yield* Effect.provide(Listings.Listings, PgListings.layer)
  const log = yield* Effect.provide(Listings.Listings, ListingsFromLog.layer)
  return { pg, log }
})

/** Every row of a list, a page of `limit` at a time, forwards with `starting_after`. */
const walk = W.everyRow

/** The same pages from both adapters: the whole list, then walks by 3 forwards and backwards. */
const samePages = <A>(
  what: string,
  pg: (page: Pagination.PageRequest) => Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>,
  log: (page: Pagination.PageRequest) => Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>,
  idOf: (row: A) => string
) =>
  Effect.gen(function* () {
    const whole = yield* log({ limit: Pagination.MAX_LIMIT })
    expect(yield* pg({ limit: Pagination.MAX_LIMIT }), what).toEqual(whole)
    for (const row of whole.data.filter((_, i) => i % 2 === 0)) {
      for (const request of [
        { limit: 3, startingAfter: idOf(row) },
        { limit: 3, endingBefore: idOf(row) }
      ]) {
        expect(yield* pg(request), `${what} ${JSON.stringify(request)}`).toEqual(yield* log(request))
      }
    }
    return whole.data
  })

/** Every list of the merchants' with every filter the rows suggest: the same rows from both adapters. */
const agree = (merchants: W.Merchants) =>
  Effect.gen(function* () {
    const { log, pg } = yield* adapters
    const merchantRows = yield* walk(
      (p) => log.merchants({}, p),
      (r) => r.merchantId,
      Pagination.MAX_LIMIT
    )
    expect(
      yield* walk(
        (p) => pg.merchants({}, p),
        (r) => r.merchantId,
        Pagination.MAX_LIMIT
      )
    ).toEqual(merchantRows)
    for (const filter of [{ name: "andin" }, { name: "CAFé" }, { status: "DISABLED" as const }]) {
      expect(
        yield* walk(
          (p) => pg.merchants(filter, p),
          (r) => r.merchantId,
          50
        )
      ).toEqual(
        yield* walk(
          (p) => log.merchants(filter, p),
          (r) => r.merchantId,
          50
        )
      )
    }
    for (const merchant of merchants.paying) {
      /**
       * The merchant's list, whole and with each of the filters its rows suggest: the same pages
       * from both adapters. (Every member of a filter is optional: `{}` is the whole list.)
       */
      const sameList = <F extends object, A>(
        name: string,
        list: (
          listings: Listings.Listings["Type"]
        ) => (
          merchantId: string,
          filter: F,
          page: Pagination.PageRequest
        ) => Effect.Effect<Pagination.Page<A>, Pagination.UnknownCursor>,
        idOf: (row: A) => string,
        filters: (whole: ReadonlyArray<A>) => ReadonlyArray<F>
      ) =>
        Effect.gen(function* () {
          const same = (what: string, filter: F) =>
            samePages(
              what,
              (p) => list(pg)(merchant, filter, p),
              (p) => list(log)(merchant, filter, p),
              idOf
            )
          const whole = yield* same(name, {} as F)
          for (const filter of filters(whole)) yield* same(`${name} ${JSON.stringify(filter)}`, filter)
        })
      yield* sameList(
        "transactions",
        (l) => l.transactions,
        (r) => r.transactionId,
        (transactions): ReadonlyArray<Listings.TransactionFilter> => {
          const middle = transactions[Math.floor(transactions.length / 2)]?.createdAt ?? new Date()
          return [
            { mode: "test" },
            { mode: "production" },
            { kind: "terminal" },
            { kind: "link" },
            { kind: "online" },
            ...[...new Set(transactions.map((r) => r.status))].map((status) => ({ status })),
            { reference: "ord-1" },
            { reference: "ord-12" },
            { reference: "ORD" },
            { reference: "inv-9" },
            { createdGte: middle },
            { createdLt: middle },
            { createdGte: middle, createdLt: new Date(middle.getTime() + 5) },
            { mode: "test", reference: "ord", status: "PAID" }
          ]
        }
      )
      yield* sameList(
        "links",
        (l) => l.links,
        (r) => r.linkId,
        (links): ReadonlyArray<Listings.LinkFilter> => [
          { mode: "test" },
          { mode: "production" },
          ...[...new Set(links.map((r) => r.status))].map((status) => ({ status }))
        ]
      )
      yield* sameList(
        "notifications",
        (l) => l.notifications,
        (r) => r.notificationId,
        (notifications): ReadonlyArray<Listings.NotificationFilter> => [
          { mode: "test" },
          { delivery: "pending" },
          { delivery: "delivered" },
          { delivery: "failed", mode: "production" },
          ...notifications.slice(0, 1).map((n) => ({ subject: n.subject }))
        ]
      )
      yield* sameList(
        "refunds",
        (l) => l.refunds,
        (r) => r.refundId,
        (): ReadonlyArray<Listings.RefundFilter> => [
          { mode: "test" },
          { status: "PROCESSING" },
          { status: "APPROVED" }
        ]
      )
      yield* sameList(
        "users",
        (l) => l.users,
        (r) => r.userId,
        (): ReadonlyArray<Listings.UserFilter> => [
          { role: "full_access" },
          { role: "read_only" },
          { status: "ACTIVE" },
          { status: "DISABLED", role: "read_only" }
        ]
      )
    }
  })

/** Every row the store lists for these merchants, to compare before and after a rebuild. */
const snapshot = (merchants: W.Merchants) =>
  Effect.gen(function* () {
    const { pg } = yield* adapters
    const all = { limit: Pagination.MAX_LIMIT }
    return yield* Effect.forEach(merchants.paying, (merchant) =>
      Effect.all([
        pg.transactions(merchant, {}, all),
        pg.links(merchant, {}, all),
        pg.notifications(merchant, {}, all),
        pg.refunds(merchant, {}, all),
        pg.users(merchant, {}, all)
      ])
    )
  })

/** The query plan of a statement, with sequential scans priced out (the test tables are small). */
const plan = (statement: Statement.Statement<unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SET LOCAL enable_seqscan = off`
        const rows = yield* sql.unsafe<Record<string, string>>(`EXPLAIN ${text}`, params as Array<unknown>)
        return rows.map((row) => Object.values(row)[0]).join("\n")
      })
    )
  })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, options: { server: boolean }) =>
  storeSuite(database, "600 seconds")(name, (it) => {
    it.effect.prop(
      "for workloads of real use cases, every list and filter pages the same rows as the log folded by the aggregates",
      [W.workload(25)],
      ([load]) =>
        Effect.gen(function* () {
          const merchants = yield* written(load)
          yield* agree(merchants)
        }),
      // Twenty workloads on PGlite take 40 s alone, more beside other suites.
      { fastCheck: { numRuns: options.server ? 12 : 20 }, timeout: 300_000 }
    )

    it.effect("a rebuild of the listings (as `cobro audit rebuild`) gives the rows the appends wrote", () =>
      Effect.gen(function* () {
        const merchants = yield* written({
          operations: FastCheck.sample(W.operation, { numRuns: 40, seed: 22 }),
          deliveries: ["delivered", "failedOnce", "exhausted"]
        })
        const before = yield* snapshot(merchants)
        expect(before.flat().some((page) => page.data.length > 0)).toBe(true)
        const sql = yield* SqlClient.SqlClient
        // The rebuild starts from nothing: what it writes, it wrote.
        for (const projection of listingModels) {
          for (const table of projection.tables) yield* sql`DELETE FROM ${sql(table)}`
        }
        expect((yield* snapshot(merchants)).flat().every((page) => page.data.length === 0)).toBe(true)
        yield* Projection.rebuildAll(ReadModels.all, { batchSize: 200 })
        expect(yield* snapshot(merchants)).toEqual(before)
        yield* agree(merchants)
      })
    )

    it.effect(
      "filters: mode, status, created range, reference prefix and delivery; an unknown cursor is refused",
      () =>
        Effect.gen(function* () {
          const operations: Array<W.Operation> = []
          for (const [i, reference] of ["ord-1", "ord-12", "ORD-1", "inv-9", "ord-123"].entries()) {
            operations.push(
              {
                _tag: "Terminal",
                who: 0,
                sandbox: i % 2 === 0,
                total: 1_000 + i,
                reference,
                outcome: "approve"
              },
              { _tag: "Wait", ms: 3 }
            )
          }
          operations.push({
            _tag: "Terminal",
            who: 1,
            sandbox: false,
            total: 1_000,
            reference: "x",
            outcome: "reject"
          })
          const merchants = yield* written({
            operations,
            deliveries: ["delivered", "failedOnce", "exhausted"]
          })
          const [merchant, other] = merchants.paying
          const { pg } = yield* adapters
          const all = { limit: Pagination.MAX_LIMIT }
          const refs = (filter: Listings.TransactionFilter) =>
            Effect.map(pg.transactions(merchant, filter, all), (page) => page.data.map((r) => r.reference))
          expect(yield* refs({ reference: "ord-1" })).toEqual(["ord-123", "ord-12", "ord-1"])
          expect(yield* refs({ mode: "test" })).toEqual(["ord-123", "ORD-1", "ord-1"])
          expect(yield* refs({ mode: "production", reference: "ord" })).toEqual(["ord-12"])
          expect(yield* refs({ status: "APPROVED" })).toHaveLength(5)
          expect(yield* refs({ status: "REJECTED" })).toEqual([])
          const rows = (yield* pg.transactions(merchant, {}, all)).data
          const second = rows[3]!.createdAt
          expect(yield* refs({ createdGte: second, createdLt: rows[2]!.createdAt })).toEqual(["ord-12"])
          expect(yield* refs({ createdLt: second })).toEqual(["ord-1"])
          // One notification per sale: delivered, failed once (pending), exhausted (failed), in turn.
          const deliveries = (yield* pg.notifications(merchant, {}, all)).data
          expect(deliveries.map((n) => n.delivery).sort()).toEqual(
            ["delivered", "delivered", "pending", "pending", "failed"].sort()
          )
          const failed = yield* pg.notifications(merchant, { delivery: "failed" }, all)
          expect(failed.data.map((n) => [n.attempts, n.lastStatusCode])).toEqual([[6, 500]])
          const theirs = (yield* pg.transactions(other, {}, all)).data[0]!
          for (const request of [
            { limit: 10, startingAfter: theirs.transactionId },
            { limit: 10, endingBefore: "TRX_nope" }
          ] as const) {
            const refused = yield* Effect.flip(pg.transactions(merchant, {}, request))
            expect(refused).toEqual(
              new Pagination.UnknownCursor({
                parameter: request.startingAfter === undefined ? "ending_before" : "starting_after",
                id: request.startingAfter ?? request.endingBefore
              })
            )
          }
          // A cursor's row that the filter leaves out still places the page.
          const after = yield* pg.transactions(
            merchant,
            { mode: "production" },
            { limit: 10, startingAfter: rows[0]!.transactionId }
          )
          expect(after.data.map((r) => r.reference)).toEqual(["inv-9", "ord-12"])
        })
    )

    it.effect("each list query reads an index, never the whole table", () =>
      Effect.gen(function* () {
        const merchants = yield* written({
          operations: [
            {
              _tag: "Terminal",
              who: 0,
              sandbox: false,
              total: 1_000,
              reference: "ord-1",
              outcome: "approve"
            },
            {
              _tag: "Link",
              who: 0,
              sandbox: true,
              total: 2_000,
              open: false,
              reference: "ord-2",
              outcome: "paid"
            },
            {
              _tag: "Online",
              who: 0,
              sandbox: true,
              total: 3_000,
              reference: "inv-9",
              outcome: "refundApproved"
            },
            { _tag: "PanelUser", who: 0, user: 0, role: "read_only", actions: ["create"] }
          ],
          deliveries: ["delivered"]
        })
        const [merchant] = merchants.paying
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ transaction_id: string }>`SELECT transaction_id FROM cobro_rm_transactions
          WHERE merchant_id = ${merchant} LIMIT 1`
        const cursor = row!.transaction_id
        const pages: ReadonlyArray<Pagination.PageRequest> = [
          { limit: 10 },
          { limit: 10, startingAfter: cursor },
          { limit: 10, endingBefore: cursor }
        ]
        const statements: Array<[string, Statement.Statement<unknown>]> = []
        for (const page of pages) {
          for (const filter of [
            {},
            { mode: "test" as const },
            { reference: "ord-1" },
            { status: "APPROVED", createdGte: new Date(0), createdLt: new Date() }
          ]) {
            statements.push([
              `transactions ${JSON.stringify(filter)}`,
              yield* Transactions.statement(merchant, filter, page)
            ])
          }
          statements.push(["links", yield* Links.statement(merchant, { mode: "production" }, page)])
          statements.push(["links", yield* Links.statement(merchant, {}, page)])
          statements.push(["notifications", yield* Notifications.statement(merchant, {}, page)])
          statements.push([
            "notifications failed",
            yield* Notifications.statement(merchant, { delivery: "failed" }, page)
          ])
          statements.push(["refunds", yield* MerchantRefunds.statement(merchant, { mode: "test" }, page)])
          statements.push(["users", yield* PanelUsers.statement(merchant, {}, page)])
          statements.push([
            "users read_only, DISABLED",
            yield* PanelUsers.statement(merchant, { role: "read_only", status: "DISABLED" }, page)
          ])
        }
        statements.push(["merchants", yield* Merchants.statement({ name: "andin" }, { limit: 10 })])
        statements.push(["merchants", yield* Merchants.statement({}, { limit: 10, startingAfter: merchant })])
        for (const query of [
          { limit: 10 },
          { limit: 10, stream: `Merchant-${merchant}` },
          { limit: 10, type: "LinkPaid", after: { transactionId: 1n, globalPosition: 1n } }
        ]) {
          statements.push([
            `events ${JSON.stringify(query, (_, v) => (typeof v === "bigint" ? `${v}` : v))}`,
            PgListings.eventsStatement(sql, query)
          ])
        }
        for (const [what, statement] of statements) {
          const text = yield* plan(statement)
          expect(text, `${what}:\n${text}`).toMatch(/Index/)
          expect(text, `${what}:\n${text}`).not.toMatch(/Seq Scan/)
        }
      })
    )

    it.effect(
      "a panel user's failed sign-ins and new password write nothing to its row; the events that change it apply once, however often replayed",
      () =>
        Effect.gen(function* () {
          const merchants = yield* written({
            operations: [{ _tag: "PanelUser", who: 0, user: 0, role: "full_access", actions: ["create"] }],
            deliveries: ["delivered"]
          })
          const [merchant] = merchants.paying
          const userId = PanelUser.userIdOf(W.emailOf(merchant, 0))
          const stream = `PanelUser-${userId}`
          const sql = yield* SqlClient.SqlClient
          // `xmin`: the transaction that wrote the row's current version; an UPDATE, even a no-op, moves it.
          const row = Effect.map(
            sql<{ xmin: string; version: number; status: string; last_sign_in_at: Date | null }>`
              SELECT xmin::text AS xmin, version, status, last_sign_in_at FROM cobro_rm_panel_users
              WHERE user_id = ${userId}`,
            (rows) => rows[0]
          )
          const types = Effect.map(
            sql<{
              type: string
            }>`SELECT type FROM cobro_events WHERE stream_id = ${stream} ORDER BY stream_version`,
            (rows) => rows.map((r) => r.type)
          )
          const act = (...actions: ReadonlyArray<W.UserAction>) =>
            W.run(
              merchants,
              {
                operations: [{ _tag: "PanelUser", who: 0, user: 0, role: "full_access", actions }],
                deliveries: ["delivered"]
              },
              () => Effect.void
            ).pipe(Effect.provide(Layer.merge(W.ports, randomIds)))
          const created = yield* row
          expect(created).toMatchObject({ version: 1, status: "ACTIVE", last_sign_in_at: null })
          yield* act("failedSignIn", "changePassword", "failedSignIn")
          expect(yield* types).toEqual([
            "PanelUserCreated",
            "SignInFailed",
            "PasswordChanged",
            "SignInFailed"
          ])
          expect(yield* row).toEqual(created)
          yield* act("signIn", "toReadOnly", "failedSignIn", "disable")
          const changed = yield* row
          expect(changed).toMatchObject({ version: 8, status: "DISABLED" })
          expect(changed!.last_sign_in_at).not.toBeNull()
          // Replayed whole, as a rebuild or a repeated backfill would: nothing is written again.
          yield* sql`SELECT cobro_rm_panel_users(e) FROM (SELECT e FROM cobro_events e
            WHERE stream_id = ${stream} ORDER BY stream_version OFFSET 0) AS log(e)`
          expect(yield* row).toEqual(changed)
          const { log, pg } = yield* adapters
          const all = { limit: Pagination.MAX_LIMIT }
          const listed = yield* pg.users(merchant, {}, all)
          expect(listed).toEqual(yield* log.users(merchant, {}, all))
          expect(listed.data[0]).toMatchObject({ role: "read_only", status: "DISABLED" })
        })
    )

    it.effect("the log in commit order, resumed from `next`, as the in-memory adapter pages it", () =>
      Effect.gen(function* () {
        const merchants = yield* written({
          operations: [
            {
              _tag: "Link",
              who: 0,
              sandbox: true,
              total: 2_000,
              open: false,
              reference: "ord-2",
              outcome: "declinedThenPaid"
            }
          ],
          deliveries: ["delivered"]
        })
        const { log, pg } = yield* adapters
        const stream = `Merchant-${merchants.paying[0]}`
        for (const query of [
          { stream, limit: 2 },
          { type: "LinkPaid", limit: 1 },
          { type: "MerchantCreated", limit: 3 }
        ]) {
          let pgNext = EventStore.Start
          let logNext = EventStore.Start
          for (let i = 0; i < 50; i++) {
            const fromPg = yield* pg.events({ ...query, after: pgNext })
            const fromLog = yield* log.events({ ...query, after: logNext })
            expect(fromPg).toEqual(fromLog)
            pgNext = fromPg.next
            logNext = fromLog.next
            if (!fromPg.hasMore) break
          }
        }
      })
    )

    if (options.server) {
      it.effect(
        "paging with starting_after while transactions are inserted: no row twice, none of those there at the start missed, newest first",
        () =>
          Effect.gen(function* () {
            const merchants = yield* written({ operations: [], deliveries: ["delivered"] })
            const [merchant] = merchants.paying
            const checkout = (i: number) => TerminalSales.sale(merchant, i, i % 3 === 0)
            yield* Effect.forEach(
              Array.from({ length: 60 }, (_, i) => i),
              checkout,
              { concurrency: 6 }
            )
            const { pg } = yield* adapters
            const before = yield* walk(
              (p) => pg.transactions(merchant, {}, p),
              (r) => r.transactionId,
              100
            )
            expect(before).toHaveLength(60)
            const inserted = yield* Ref.make(0)
            const inserting = yield* Effect.fork(
              Effect.forEach(
                Array.from({ length: 40 }, (_, i) => 100 + i),
                (i) =>
                  Effect.zipRight(
                    checkout(i),
                    Ref.update(inserted, (n) => n + 1)
                  ),
                { concurrency: 4 }
              )
            )
            // Slow pages of 4, some while the writers write.
            const seen: Array<Listings.TransactionRow> = []
            let page = yield* pg.transactions(merchant, {}, { limit: 4 })
            seen.push(...page.data)
            while (page.hasMore) {
              yield* Effect.sleep(5)
              page = yield* pg.transactions(
                merchant,
                {},
                { limit: 4, startingAfter: seen[seen.length - 1]!.transactionId }
              )
              seen.push(...page.data)
            }
            const duringWalk = yield* Ref.get(inserted)
            yield* Fiber.join(inserting)
            const ids = seen.map((r) => r.transactionId)
            expect(new Set(ids).size).toBe(ids.length)
            for (const row of before) expect(ids).toContain(row.transactionId)
            for (let i = 1; i < seen.length; i++) {
              expect(ListingsFromLog.comparePositions(seen[i - 1]!.position, seen[i]!.position)).toBe(1)
            }
            // The writers did write while the walk went on (else this proves nothing about them).
            expect(duringWalk).toBeGreaterThan(0)
            expect(yield* Ref.get(inserted)).toBe(40)
          })
      )
    }
  })

suite("listings on PGlite", Databases.pglite, { server: false })
suite("listings on PostgreSQL", Databases.postgres, { server: true })

const upgrade = (name: string, database: Layer.Layer<Databases.StoreServicesUnmigrated>) =>
  storeSuite(database, "300 seconds")(name, (it) => {
    it.effect("migration 10 lists what the log held before it, and each append after it", () =>
      Effect.gen(function* () {
        yield* Databases.migrateTo(9)
        const load = (seed: number): W.Workload => ({
          operations: FastCheck.sample(W.operation, { numRuns: 30, seed }),
          deliveries: ["failedOnce", "delivered", "exhausted"]
        })
        // Written as an earlier version wrote it: untraced (a traced append needs migration 18).
        const before = yield* written(load(10)).pipe(
          Effect.provide(PgEventStore.layer),
          Effect.withTracerEnabled(false)
        )
        const ran = yield* Migrations.run
        expect(ran.map(([id]) => id).filter((id) => id <= 10)).toEqual([10])
        yield* agree(before).pipe(Effect.provide(PgEventStore.layer))
        const after = yield* written(load(11)).pipe(Effect.provide(PgEventStore.layer))
        yield* agree(after).pipe(Effect.provide(PgEventStore.layer))
      })
    )
  })

upgrade("upgrading to the listings on PGlite", Databases.pgliteUnmigrated)
upgrade("upgrading to the listings on PostgreSQL", Databases.postgresUnmigrated)
