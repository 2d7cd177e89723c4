import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as Aggregate from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Listings from "@cobro/domain/Listings"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as Pagination from "@cobro/domain/Pagination"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { failure, freshly, T0 } from "../fixtures/Scenario.js"
import * as W from "./Workload.js"

const scenario = freshly(
  Layer.mergeAll(ListingsFromLog.layer, W.ports, IdGenerator.layerSequential).pipe(
    Layer.provideMerge(InMemoryEventStore.layer)
  ),
  TestClock.setTime(T0)
)

const wait = (ms: number) => TestClock.adjust(ms)
const all = { limit: Pagination.MAX_LIMIT }

/**
 * Given: the workload's merchants, and `operations` written for them; each notification they raise
 * is delivered at once, unless `deliveries` says otherwise.
 */
const givenWorkload = (
  operations: ReadonlyArray<W.Operation>,
  deliveries: ReadonlyArray<W.DeliveryOutcome> = ["delivered"]
) =>
  Effect.gen(function* () {
    const merchants = yield* W.givenMerchants
    yield* W.run(merchants, { operations, deliveries }, wait)
    return merchants
  })

describe("ListingsFromLog", () => {
  it.effect(
    "a merchant's transactions: each terminal checkout, each payment of a link and each online payment, with its kind, resource and state",
    () =>
      scenario(function* () {
        const merchants = yield* givenWorkload([
          W.terminalSale(0, "production", 11_900, "ord-1", "approve"),
          W.wait(1000),
          W.linkPayment(0, "test", 20_000, "CLOSE", "ord-12", "declinedThenPaid"),
          W.wait(1000),
          W.onlinePayment(0, "test", 30_000, "inv-9", "refundApproved"),
          W.wait(1000),
          W.linkPayment(1, "production", 40_000, "OPEN", "ord-2", "paid")
        ])
        const [merchant, other] = merchants.paying
        const listings = yield* Listings.Listings
        const { data, hasMore } = yield* listings.transactions(merchant, {}, all)
        expect(hasMore).toBe(false)
        // Newest first; the link's declined payment and the one that paid it are two transactions.
        expect(data.map((r) => [r.kind, r.mode, r.status, r.amount, r.currency, r.reference])).toEqual([
          ["online", "test", "REFUNDED", 30_000, "COP", expect.stringMatching(/^inv-9-/)],
          ["link", "test", "PAID", 20_000, "COP", "ord-12"],
          ["link", "test", "REJECTED", 20_000, "COP", "ord-12"],
          ["terminal", "production", "APPROVED", 11_900, "COP", "ord-1"]
        ])
        const [online, paid, declined, terminal] = data
        expect(online!.resourceId).toBe(online!.transactionId)
        expect(paid!.resourceId).toMatch(/^LNK_/)
        expect(declined!.resourceId).toBe(paid!.resourceId)
        expect(declined!.transactionId).not.toBe(paid!.transactionId)
        expect(terminal!.resourceId).toMatch(/^INT_/)
        expect(terminal!.transactionId).toMatch(/^TRX_/)
        expect(data.every((r) => r.merchantId === merchant)).toBe(true)
        // The other merchant's OPEN link: paid for the payer's amount.
        const theirs = yield* listings.transactions(other, {}, all)
        expect(theirs.data.map((r) => [r.kind, r.mode, r.status, r.amount])).toEqual([
          ["link", "production", "PAID", 40_000]
        ])
        expect(
          (yield* listings.links(other, {}, all)).data.map((r) => [r.amountType, r.amount, r.status])
        ).toEqual([["OPEN", 0, "PAID"]])
      })
  )

  it.effect(
    "refunds, links and notifications carry their aggregate's state; a notification's delivery stands pending, delivered or failed",
    () =>
      scenario(function* () {
        const merchants = yield* givenWorkload(
          [
            W.onlinePayment(0, "production", 10_000, "inv-9", "refundPending"),
            W.onlinePayment(0, "test", 20_000, "inv-9", "refundRejected"),
            W.linkPayment(0, "test", 5_000, "CLOSE", "ord-1", "cancelled"),
            W.linkPayment(0, "production", 5_000, "CLOSE", "ord-1", "atTheBank"),
            W.terminalSale(0, "production", 1_000, "ord-1", "approve"),
            W.terminalSale(0, "test", 1_000, "ord-1", "reject"),
            W.terminalSale(0, "production", 1_000, "ord-1", "void"),
            W.terminalSale(1, "production", 1_000, "ord-1", "approve")
          ],
          ["delivered", "failedOnce", "exhausted"]
        )
        const [merchant, silent] = merchants.paying
        const listings = yield* Listings.Listings
        const refunds = (yield* listings.refunds(merchant, {}, all)).data
        expect(refunds.map((r) => [r.mode, r.status, r.amount, r.currency]).sort()).toEqual([
          ["production", "PROCESSING", 10_000, "COP"],
          ["test", "REJECTED", 20_000, "COP"]
        ])
        const links = (yield* listings.links(merchant, {}, all)).data
        expect(links.map((r) => [r.mode, r.status]).sort()).toEqual([
          ["production", "PROCESSING"],
          ["test", "CANCELLED"]
        ])
        // The online payments and the terminal sales each raised notifications: one per outcome.
        const notifications = (yield* listings.notifications(merchant, {}, all)).data
        expect(notifications.map((n) => n.delivery).sort()).toEqual(
          ["delivered", "delivered", "failed", "failed", "pending", "pending"].sort()
        )
        for (const n of notifications) {
          expect(n.attempts).toBe(n.delivery === "failed" ? 6 : 1)
          expect(n.lastStatusCode).toBe(
            n.delivery === "delivered" ? 200 : n.delivery === "failed" ? 500 : 503
          )
        }
        const failed = yield* listings.notifications(merchant, { delivery: "failed" }, all)
        expect(failed.data.map((n) => n.notificationId)).toEqual(
          notifications.filter((n) => n.delivery === "failed").map((n) => n.notificationId)
        )
        // No webhook registered: the notification is recorded and never sent, so it did not arrive.
        const unsent = (yield* listings.notifications(silent, {}, all)).data
        expect(unsent.map((n) => [n.type, n.delivery, n.attempts, n.lastStatusCode])).toEqual([
          ["SALE_APPROVED", "failed", 0, null]
        ])
      })
  )

  it.effect("transactions filter by mode, kind, status, created range and reference prefix", () =>
    scenario(function* () {
      const operations: Array<W.Operation> = []
      for (const [i, reference] of ["ord-1", "ord-12", "ORD-1", "inv-9", "ord-123"].entries()) {
        operations.push(
          W.terminalSale(0, i % 2 === 0 ? "test" : "production", 1_000 + i, reference, "approve"),
          W.wait(60_000)
        )
      }
      const [merchant] = (yield* givenWorkload(operations)).paying
      const listings = yield* Listings.Listings
      const refs = (filter: Listings.TransactionFilter) =>
        Effect.map(listings.transactions(merchant, filter, all), (page) => page.data.map((r) => r.reference))
      expect(yield* refs({ reference: "ord-1" })).toEqual(["ord-123", "ord-12", "ord-1"])
      expect(yield* refs({ reference: "ord-12" })).toEqual(["ord-123", "ord-12"])
      expect(yield* refs({ mode: "test" })).toEqual(["ord-123", "ORD-1", "ord-1"])
      expect(yield* refs({ mode: "production", reference: "ord" })).toEqual(["ord-12"])
      expect(yield* refs({ kind: "link" })).toEqual([])
      expect(yield* refs({ status: "APPROVED" })).toHaveLength(5)
      expect(yield* refs({ status: "REJECTED" })).toEqual([])
      // [gte, lt): the second sale's minute alone.
      const second = new Date(T0 + 60_000)
      expect(yield* refs({ createdGte: second, createdLt: new Date(T0 + 120_000) })).toEqual(["ord-12"])
      expect(yield* refs({ createdLt: second })).toEqual(["ord-1"])
    })
  )

  it.effect(
    "merchants filter by a part of the name, whatever the case of its ASCII letters, and by status",
    () =>
      scenario(function* () {
        const merchants = yield* W.givenMerchants
        const listings = yield* Listings.Listings
        const names = (filter: Listings.MerchantFilter) =>
          Effect.map(listings.merchants(filter, all), (page) => page.data.map((r) => r.merchantId))
        const [cafe, tienda] = merchants.paying
        expect((yield* names({ name: "andin" })).sort()).toEqual([cafe, tienda, merchants.disabled].sort())
        expect(yield* names({ name: "CAFé" })).toEqual([cafe])
        expect(yield* names({ status: "DISABLED" })).toEqual([merchants.disabled])
        expect((yield* names({ status: "ENABLED", name: "Andin" })).sort()).toEqual([cafe, tienda].sort())
      })
  )

  it.effect(
    "a cursor is a row of the merchant's list: another merchant's row is unknown, a row the filter leaves out is not",
    () =>
      scenario(function* () {
        const merchants = yield* givenWorkload([
          W.terminalSale(0, "production", 1_000, "ord-1", "approve"),
          W.wait(1000),
          W.terminalSale(0, "production", 1_000, "ord-1", "sent"),
          W.wait(1000),
          W.terminalSale(0, "production", 1_000, "ord-1", "approve"),
          W.terminalSale(1, "production", 1_000, "ord-1", "approve")
        ])
        const [merchant, other] = merchants.paying
        const listings = yield* Listings.Listings
        const [newest, sent, oldest] = (yield* listings.transactions(merchant, {}, all)).data
        const [theirs] = (yield* listings.transactions(other, {}, all)).data
        expect(
          yield* failure(
            listings.transactions(merchant, {}, { limit: 10, startingAfter: theirs!.transactionId })
          )
        ).toEqual(new Pagination.UnknownCursor({ parameter: "starting_after", id: theirs!.transactionId }))
        expect(
          yield* failure(listings.refunds(merchant, {}, { limit: 10, endingBefore: "RFD_nope" }))
        ).toEqual(new Pagination.UnknownCursor({ parameter: "ending_before", id: "RFD_nope" }))
        // The SENT checkout is not APPROVED, yet it places a walk through the approved ones.
        const after = yield* listings.transactions(
          merchant,
          { status: "APPROVED" },
          { limit: 10, startingAfter: sent!.transactionId }
        )
        expect(after.data.map((r) => r.transactionId)).toEqual([oldest!.transactionId])
        const before = yield* listings.transactions(
          merchant,
          { status: "APPROVED" },
          { limit: 10, endingBefore: sent!.transactionId }
        )
        expect(before.data.map((r) => r.transactionId)).toEqual([newest!.transactionId])
      })
  )

  it.effect(
    "a merchant's panel users: role and status as the aggregate's, the last sign-in; a failed sign-in or a new password leaves the row as it was; filters by role and status",
    () =>
      scenario(function* () {
        const user = (
          who: W.Who,
          n: 0 | 1 | 2,
          action: W.UserAction,
          role: PanelUser.Role = "full_access"
        ): W.Operation => ({ _tag: "PanelUser", who, user: n, role, actions: [action] })
        const minute = W.wait(60_000)
        const merchants = yield* givenWorkload([
          user(0, 0, "create"),
          minute,
          user(0, 1, "create", "read_only"),
          user(1, 0, "create"),
          minute,
          user(0, 2, "create"),
          minute,
          user(0, 0, "signIn"),
          minute,
          user(0, 1, "toFullAccess"),
          minute,
          user(0, 2, "disable"),
          minute,
          // Neither changes a listed field: the rows keep their `updatedAt`.
          user(0, 0, "failedSignIn"),
          user(0, 0, "changePassword"),
          user(0, 1, "failedSignIn"),
          // Refused: a disabled user does not sign in, nor is one created twice.
          user(0, 2, "signIn"),
          user(0, 1, "create", "read_only")
        ])
        const [merchant, other] = merchants.paying
        const at = (minutes: number) => new Date(T0 + minutes * 60_000)
        const listings = yield* Listings.Listings
        const rows = (yield* listings.users(merchant, {}, all)).data
        const idOf = (n: number) => PanelUser.userIdOf(W.emailOf(merchant, n))
        const [ana, bob, eve] = [idOf(0), idOf(1), idOf(2)]
        expect(rows.map(({ position: _, ...row }) => row)).toEqual([
          {
            userId: eve,
            merchantId: merchant,
            email: W.emailOf(merchant, 2),
            role: "full_access",
            status: "DISABLED",
            createdAt: at(2),
            lastSignInAt: null,
            updatedAt: at(5)
          },
          {
            userId: bob,
            merchantId: merchant,
            email: W.emailOf(merchant, 1),
            role: "full_access",
            status: "ACTIVE",
            createdAt: at(1),
            lastSignInAt: null,
            updatedAt: at(4)
          },
          {
            userId: ana,
            merchantId: merchant,
            email: W.emailOf(merchant, 0),
            role: "full_access",
            status: "ACTIVE",
            createdAt: at(0),
            lastSignInAt: at(3),
            updatedAt: at(3)
          }
        ])
        // The failures and the new password are in the log all the same.
        const store = yield* EventStore.EventStore
        const types = (yield* store.readStream(`PanelUser-${ana}`)).map((e) => e.type)
        expect(types).toEqual(["PanelUserCreated", "SignedIn", "SignInFailed", "PasswordChanged"])
        const ids = (filter: Listings.UserFilter) =>
          Effect.map(listings.users(merchant, filter, all), (page) => page.data.map((r) => r.userId))
        expect(yield* ids({ status: "DISABLED" })).toEqual([eve])
        expect(yield* ids({ status: "ACTIVE", role: "full_access" })).toEqual([bob, ana])
        expect(yield* ids({ role: "read_only" })).toEqual([])
        // A disabled user's row still places a walk through the active ones.
        expect(
          (yield* listings.users(merchant, { status: "ACTIVE" }, { limit: 1, startingAfter: eve })).data.map(
            (r) => r.userId
          )
        ).toEqual([bob])
        const theirs = (yield* listings.users(other, {}, all)).data.map((r) => r.userId)
        expect(theirs).toEqual([PanelUser.userIdOf(W.emailOf(other, 0))])
        expect(
          yield* failure(listings.users(merchant, {}, { limit: 10, startingAfter: theirs[0]! }))
        ).toEqual(new Pagination.UnknownCursor({ parameter: "starting_after", id: theirs[0]! }))
      })
  )

  it.effect.prop(
    "for any workload, walking each list page by page gives every row once, newest first by the log position that created it",
    [W.workload(20), FastCheck.integer({ min: 1, max: 7 })],
    ([load, limit]) =>
      scenario(function* () {
        const merchants = yield* W.givenMerchants
        yield* W.run(merchants, load, wait)
        const listings = yield* Listings.Listings
        // Newest first by the log position of the event that created each row, each row once.
        const ordered = <A extends Listings.Positioned>(rows: ReadonlyArray<A>, idOf: (row: A) => string) => {
          expect(new Set(rows.map(idOf)).size).toBe(rows.length)
          for (let i = 1; i < rows.length; i++) {
            expect(ListingsFromLog.comparePositions(rows[i - 1]!.position, rows[i]!.position)).toBe(1)
          }
        }
        for (const merchant of merchants.paying) {
          const walked = yield* W.everyRow(
            (p) => listings.transactions(merchant, {}, p),
            (r) => r.transactionId,
            limit
          )
          ordered(walked, (r) => r.transactionId)
          expect(walked).toEqual((yield* listings.transactions(merchant, {}, all)).data)
          // Every payment written is listed: the checkouts, the links' payments, the online ones.
          const ops = load.operations.filter(
            (op) => op._tag !== "Wait" && merchants.paying[op.who] === merchant
          )
          expect(walked.filter((r) => r.kind === "terminal")).toHaveLength(
            ops.filter((op) => op._tag === "Terminal").length
          )
          expect(walked.filter((r) => r.kind === "online")).toHaveLength(
            ops.filter((op) => op._tag === "Online").length
          )
          const links = yield* W.everyRow(
            (p) => listings.links(merchant, {}, p),
            (r) => r.linkId,
            limit
          )
          ordered(links, (r) => r.linkId)
          expect(links).toHaveLength(ops.filter((op) => op._tag === "Link").length)
          const notifications = yield* W.everyRow(
            (p) => listings.notifications(merchant, {}, p),
            (r) => r.notificationId,
            limit
          )
          ordered(notifications, (r) => r.notificationId)
          const refunds = yield* W.everyRow(
            (p) => listings.refunds(merchant, {}, p),
            (r) => r.refundId,
            limit
          )
          ordered(refunds, (r) => r.refundId)
          // One row per user created, the first creation of each email (a second is refused).
          const users = yield* W.everyRow(
            (p) => listings.users(merchant, {}, p),
            (r) => r.userId,
            limit
          )
          ordered(users, (r) => r.userId)
          expect(users.map((r) => r.email).sort()).toEqual(
            [
              ...new Set(
                ops.flatMap((op) =>
                  op._tag === "PanelUser" && op.actions.includes("create")
                    ? [W.emailOf(merchant, op.user)]
                    : []
                )
              )
            ].sort()
          )
          // Walking back from the oldest row with ending_before meets the same rows.
          const oldest = walked[walked.length - 1]
          if (oldest !== undefined) {
            const back: Array<Listings.TransactionRow> = []
            let page = yield* listings.transactions(
              merchant,
              {},
              { limit, endingBefore: oldest.transactionId }
            )
            back.unshift(...page.data)
            while (page.hasMore) {
              page = yield* listings.transactions(
                merchant,
                {},
                { limit, endingBefore: page.data[0]!.transactionId }
              )
              back.unshift(...page.data)
            }
            expect(back).toEqual(walked.slice(0, -1))
          }
        }
      }),
    { fastCheck: { numRuns: 30 }, timeout: 60_000 }
  )

  it.effect(
    "the log in commit order after a checkpoint, of one stream or one type, resumed from `next`",
    () =>
      scenario(function* () {
        yield* givenWorkload([
          W.linkPayment(0, "test", 5_000, "CLOSE", "ord-1", "declinedThenPaid"),
          W.terminalSale(1, "production", 1_000, "ord-1", "approve")
        ])
        const store = yield* EventStore.EventStore
        const log = yield* store.readAll({ limit: 10_000 })
        const listings = yield* Listings.Listings
        // Paged by 3 from the start: the whole log, in order, and the last page says it is the last.
        const seen: Array<EventStore.LoggedEvent> = []
        let after = EventStore.Start
        for (;;) {
          const page = yield* listings.events({ after, limit: 3 })
          seen.push(...page.data)
          expect(page.next).toEqual(page.data[page.data.length - 1]?.checkpoint ?? after)
          after = page.next
          if (!page.hasMore) break
        }
        expect(seen.map((e) => e.globalPosition)).toEqual(log.map((e) => e.globalPosition))
        const end = yield* listings.events({ after, limit: 3 })
        expect(end).toEqual({ data: [], hasMore: false, next: after })
        // One stream, one type.
        const link = log.find((e) => e.type === "LinkCreated")!.streamId
        const ofLink = yield* listings.events({ stream: link, limit: 100 })
        expect(ofLink.data.map((e) => e.type)).toEqual([
          "LinkCreated",
          "LinkPaymentStarted",
          "LinkPaymentFailed",
          "LinkPaymentStarted",
          "LinkPaid"
        ])
        expect(link.startsWith(Aggregate.streamId(PaymentLink.PaymentLink, ""))).toBe(true)
        const started = yield* listings.events({ type: "LinkPaymentStarted", limit: 1 })
        expect(started.data.map((e) => e.type)).toEqual(["LinkPaymentStarted"])
        expect(started.hasMore).toBe(true)
        const next = yield* listings.events({ type: "LinkPaymentStarted", after: started.next, limit: 1 })
        expect(next.hasMore).toBe(false)
        expect(next.data[0]!.globalPosition).toBeGreaterThan(started.data[0]!.globalPosition)
      })
  )
})
