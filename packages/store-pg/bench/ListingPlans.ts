/**
 * `npm run bench -- listing-plans`: the query plan of every list query of `PgListings` on a log of
 * about 1,000,000 events (`LISTING_EVENTS` scales it), on a throwaway database of the PostgreSQL of
 * `DATABASE_URL` (or the default). It writes the log with plain `INSERT … SELECT generate_series`
 * statements into `cobro_events` (events of the shapes the domain encodes, interleaved in 20 slices
 * of every kind, 30% of them of one big merchant), so the store's triggers write the read models as
 * appends do; then `ANALYZE`, and prints `EXPLAIN (ANALYZE, BUFFERS)` of each list query for the big
 * merchant: first pages, deep cursors both ways, and each filter. The hash columns are left empty:
 * this log is for plans, not for an audit.
 */
import * as EventStore from "@cobro/domain/EventStore"
import type * as Listings from "@cobro/domain/Listings"
import type * as Pagination from "@cobro/domain/Pagination"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { performance } from "node:perf_hooks"
import * as Database from "../../../bench/Database.js"
import * as Settings from "../../../bench/Settings.js"
import * as PgEventStore from "../src/PgEventStore.js"
import * as PgListings from "../src/PgListings.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as Links from "../src/readModels/Links.js"
import * as MerchantRefunds from "../src/readModels/MerchantRefunds.js"
import * as Merchants from "../src/readModels/Merchants.js"
import * as Notifications from "../src/readModels/Notifications.js"
import * as PanelUsers from "../src/readModels/PanelUsers.js"
import * as Transactions from "../src/readModels/Transactions.js"

const SLICES = 20
/** Per slice: each kind's instances (events per instance in brackets) — about 51,000 events. */
const perSlice = (scale: number) => ({
  checkouts: Math.round(6_000 * scale), // [3]
  payments: Math.round(5_000 * scale), // [2]
  links: Math.round(3_000 * scale), // [3]
  deliveries: Math.round(6_000 * scale), // [2]
  refunds: Math.round(1_000 * scale), // [2]
  users: Math.round(100 * scale) // [3, 5% 4]
})
const MERCHANTS = 1_000
const BIG = "MER_big"

/** The merchant of instance `i`: 30% the big one, the rest spread over the others. */
const merchantOf = (i: string) =>
  `CASE WHEN ${i} % 10 < 3 THEN '${BIG}' ELSE 'MER_' || (${i} % ${MERCHANTS - 1}) END`
/** Instance `i`'s creation instant, ISO: 10 seconds apart from 2025-01-01 on, each kind offset. */
const instant = (i: string, plusSeconds = 0) =>
  `to_json(timestamptz '2025-01-01T00:00:00Z' + (${i} * 10 + ${plusSeconds}) * interval '1 second')#>>'{}'`

/** One statement writing one event per `i` of `from..to`, as the store would for stream `stream`. */
const events = (
  from: number,
  to: number,
  stream: string,
  version: number,
  type: string,
  data: string
) => `INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
    recorded_at, prev_hash, hash)
  SELECT ${stream}, ${version}, gen_random_uuid(), '${type}', 1, jsonb_build_object('_tag', '${type}', ${data}),
    '{}'::jsonb, now(), '', ''
  FROM generate_series(${from}, ${to}) AS g(i)`

/** Every statement of slice `s`. */
const slice = (s: number, n: ReturnType<typeof perSlice>) => {
  const range = (count: number) => [s * count, s * count + count - 1] as const
  const [c0, c1] = range(n.checkouts)
  const [p0, p1] = range(n.payments)
  const [l0, l1] = range(n.links)
  const [d0, d1] = range(n.deliveries)
  const [r0, r1] = range(n.refunds)
  const [u0, u1] = range(n.users)
  const sandbox = "i % 5 = 0"
  return [
    // Terminal checkouts: created, pushed, then approved (2% rejected).
    events(
      c0,
      c1,
      "'TerminalCheckout-INT_' || i",
      1,
      "CheckoutCreated",
      `'integrationId', 'INT_' || i,
      'transactionId', 'TRX_t' || i, 'merchantId', ${merchantOf("i")}, 'sandbox', ${sandbox},
      'reference', 'ord-' || i, 'amount', jsonb_build_object('currency', 'COP', 'total', 1000 + i % 9000,
      'tip', 0, 'taxes', '[]'::jsonb), 'createdAt', ${instant("i")}`
    ),
    events(c0, c1, "'TerminalCheckout-INT_' || i", 2, "PushAttempted", `'attempt', 1, 'at', ${instant("i")}`),
    events(
      c0,
      c1,
      "'TerminalCheckout-INT_' || i",
      3,
      "SaleApproved",
      `'transactionId', 'TRX_t' || i,
      'at', ${instant("i", 5)}`
    ) + " WHERE i % 50 <> 0",
    events(
      c0,
      c1,
      "'TerminalCheckout-INT_' || i",
      3,
      "SaleRejected",
      `'transactionId', 'TRX_t' || i,
      'reason', 'declined', 'at', ${instant("i", 5)}`
    ) + " WHERE i % 50 = 0",
    // Online payments: started, approved.
    events(
      p0,
      p1,
      "'Payment-TRX_p' || i",
      1,
      "PaymentStarted",
      `'transactionId', 'TRX_p' || i,
      'merchantId', ${merchantOf("i")}, 'sandbox', ${sandbox}, 'referenceId', 'inv-' || i,
      'amount', jsonb_build_object('currency', 'COP', 'total', 2000 + i % 9000, 'tip', 0, 'taxes', '[]'::jsonb),
      'paymentMethod', 'CREDIT_CARD', 'attemptedAt', ${instant("i", 1)}`
    ),
    events(
      p0,
      p1,
      "'Payment-TRX_p' || i",
      2,
      "PaymentApproved",
      `'approvalNumber', '123456', 'threeDs', false,
      'at', ${instant("i", 2)}`
    ),
    // Links: created, a payment started, paid.
    events(
      l0,
      l1,
      "'PaymentLink-LNK_' || i",
      1,
      "LinkCreated",
      `'linkId', 'LNK_' || i,
      'merchantId', ${merchantOf("i")}, 'sandbox', ${sandbox}, 'amountType', 'CLOSE',
      'amount', jsonb_build_object('currency', 'COP', 'total', 5000, 'tip', 0, 'taxes', '[]'::jsonb),
      'reference', 'lnk-' || i, 'paymentMethods', '["CREDIT_CARD"]'::jsonb, 'createdAt', ${instant("i", 3)}`
    ),
    events(
      l0,
      l1,
      "'PaymentLink-LNK_' || i",
      2,
      "LinkPaymentStarted",
      `'transactionId', 'TRX_l' || i,
      'paymentMethod', 'CREDIT_CARD', 'amount', 5000, 'at', ${instant("i", 4)}`
    ),
    events(
      l0,
      l1,
      "'PaymentLink-LNK_' || i",
      3,
      "LinkPaid",
      `'transactionId', 'TRX_l' || i,
      'at', ${instant("i", 5)}`
    ),
    // Notifications: scheduled, then delivered (1% exhausted after a failure).
    events(
      d0,
      d1,
      "'WebhookDelivery-' || md5('n' || i)",
      1,
      "DeliveryScheduled",
      `'notificationId', md5('n' || i),
      'merchantId', ${merchantOf("i")}, 'sandbox', ${sandbox}, 'subject', 'TRX_t' || i, 'type', 'SALE_APPROVED',
      'body', '{}', 'signingKey', 'EMPTY', 'dueAt', ${instant("i", 6)}, 'createdAt', ${instant("i", 6)}`
    ),
    events(
      d0,
      d1,
      "'WebhookDelivery-' || md5('n' || i)",
      2,
      "AttemptSucceeded",
      `'attempt', 1, 'statusCode', 200,
      'snippet', 'ok', 'latencyMs', 10, 'at', ${instant("i", 7)}`
    ) + " WHERE i % 100 <> 0",
    events(
      d0,
      d1,
      "'WebhookDelivery-' || md5('n' || i)",
      2,
      "AttemptFailed",
      `'attempt', 1,
      'outcome', jsonb_build_object('_tag', 'Answered', 'statusCode', 500, 'snippet', 'no'), 'latencyMs', 10,
      'at', ${instant("i", 7)}`
    ) + " WHERE i % 100 = 0",
    events(
      d0,
      d1,
      "'WebhookDelivery-' || md5('n' || i)",
      3,
      "DeliveryExhausted",
      `'at', ${instant("i", 7)}`
    ) + " WHERE i % 100 = 0",
    // Refunds of the online payments: requested, approved.
    events(
      r0,
      r1,
      "'Refund-RFD_' || i",
      1,
      "RefundRequested",
      `'refundId', 'RFD_' || i,
      'transactionId', 'TRX_p' || i, 'merchantId', ${merchantOf("i")}, 'sandbox', ${sandbox},
      'referenceId', 'inv-' || i, 'amount', 2000 + i % 9000, 'reason', 'asked', 'requestedAt', ${instant("i", 8)}`
    ),
    events(r0, r1, "'Refund-RFD_' || i", 2, "RefundApproved", `'dateApplied', ${instant("i", 9)}`),
    // Panel users: created (a third read_only), signed in, a failed sign-in (5% disabled after it).
    events(
      u0,
      u1,
      "'PanelUser-USR_' || i",
      1,
      "PanelUserCreated",
      `'userId', 'USR_' || i,
      'merchantId', ${merchantOf("i")}, 'email', 'user' || i || '@shop.example',
      'role', CASE WHEN i % 3 = 0 THEN 'read_only' ELSE 'full_access' END, 'passwordHash', 'x',
      'createdAt', ${instant("i")}`
    ),
    events(u0, u1, "'PanelUser-USR_' || i", 2, "SignedIn", `'at', ${instant("i", 1)}, 'address', '10.0.0.1'`),
    events(
      u0,
      u1,
      "'PanelUser-USR_' || i",
      3,
      "SignInFailed",
      `'at', ${instant("i", 2)}, 'address', '10.0.0.1'`
    ),
    events(u0, u1, "'PanelUser-USR_' || i", 4, "PanelUserDisabled", `'at', ${instant("i", 3)}`) +
      " WHERE i % 20 = 0"
  ]
}

const fill = (scale: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(
      events(
        0,
        MERCHANTS - 1,
        "'Merchant-' || (CASE WHEN i = 0 THEN 'MER_big' ELSE 'MER_' || i END)",
        1,
        "MerchantCreated",
        `'merchantId', CASE WHEN i = 0 THEN '${BIG}' ELSE 'MER_' || i END,
        'name', 'Comercio ' || i || CASE WHEN i % 7 = 0 THEN ' Andino' ELSE '' END, 'createdAt', ${instant("i")}`
      )
    )
    const n = perSlice(scale)
    for (let s = 0; s < SLICES; s++) {
      const started = performance.now()
      for (const statement of slice(s, n)) yield* sql.unsafe(statement)
      console.error(`slice ${s + 1}/${SLICES} written in ${Math.round(performance.now() - started)} ms`)
    }
    yield* sql`ANALYZE`
  })

/** `EXPLAIN (ANALYZE, BUFFERS)` of a statement, as text. */
const explain = (statement: Statement.Statement<unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<Record<string, string>>(
      `EXPLAIN (ANALYZE, BUFFERS) ${text}`,
      params as Array<unknown>
    )
    return rows.map((row) => Object.values(row)[0]).join("\n")
  })

const plans = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const counts = yield* sql<{ table: string; rows: string }>`
    SELECT 'cobro_events' AS table, count(*)::text AS rows FROM cobro_events
    UNION ALL SELECT 'cobro_rm_transactions', count(*)::text FROM cobro_rm_transactions
    UNION ALL SELECT 'cobro_rm_transactions of ${sql.literal(BIG)}', count(*)::text FROM cobro_rm_transactions
      WHERE merchant_id = ${BIG}
    UNION ALL SELECT 'cobro_rm_links', count(*)::text FROM cobro_rm_links
    UNION ALL SELECT 'cobro_rm_notifications', count(*)::text FROM cobro_rm_notifications
    UNION ALL SELECT 'cobro_rm_merchant_refunds', count(*)::text FROM cobro_rm_merchant_refunds
    UNION ALL SELECT 'cobro_rm_merchants', count(*)::text FROM cobro_rm_merchants
    UNION ALL SELECT 'cobro_rm_panel_users', count(*)::text FROM cobro_rm_panel_users
    UNION ALL SELECT 'cobro_rm_panel_users of ${sql.literal(BIG)}', count(*)::text FROM cobro_rm_panel_users
      WHERE merchant_id = ${BIG}`
  for (const { rows, table } of counts) console.log(`${table}: ${rows} rows`)
  // Cursors deep in the big merchant's lists: its 5,000th transaction and notification, newest first.
  const [tx] = yield* sql<{ id: string }>`SELECT transaction_id AS id FROM cobro_rm_transactions
    WHERE merchant_id = ${BIG} ORDER BY created_xid DESC, created_position DESC
    OFFSET (SELECT least(5000, count(*) / 2) FROM cobro_rm_transactions WHERE merchant_id = ${BIG}) LIMIT 1`
  const [nt] = yield* sql<{ id: string }>`SELECT notification_id AS id FROM cobro_rm_notifications
    WHERE merchant_id = ${BIG} ORDER BY created_xid DESC, created_position DESC
    OFFSET (SELECT least(5000, count(*) / 2) FROM cobro_rm_notifications WHERE merchant_id = ${BIG}) LIMIT 1`
  const [us] = yield* sql<{ id: string }>`SELECT user_id AS id FROM cobro_rm_panel_users
    WHERE merchant_id = ${BIG} ORDER BY created_xid DESC, created_position DESC
    OFFSET (SELECT count(*) / 2 FROM cobro_rm_panel_users WHERE merchant_id = ${BIG}) LIMIT 1`
  const [middle] = yield* sql<{ at: Date }>`SELECT created_at AS at FROM cobro_rm_transactions
    WHERE merchant_id = ${BIG} ORDER BY created_at DESC
    OFFSET (SELECT least(20000, count(*) / 2) FROM cobro_rm_transactions WHERE merchant_id = ${BIG}) LIMIT 1`
  const [half] = yield* sql<{ transaction_id: string; global_position: string }>`
    SELECT transaction_id::text, global_position::text FROM cobro_events
    ORDER BY transaction_id, global_position OFFSET (SELECT count(*) / 2 FROM cobro_events) LIMIT 1`
  const first: Pagination.PageRequest = { limit: 10 }
  const after: Pagination.PageRequest = { limit: 10, startingAfter: tx!.id }
  const before: Pagination.PageRequest = { limit: 10, endingBefore: tx!.id }
  const day = middle!.at
  const transactions: ReadonlyArray<[string, Listings.TransactionFilter, Pagination.PageRequest]> = [
    ["transactions, first page", {}, first],
    ["transactions, starting_after the 5,000th", {}, after],
    ["transactions, ending_before the 5,000th", {}, before],
    ["transactions, mode=test, starting_after the 5,000th", { mode: "test" }, after],
    ["transactions, status=REJECTED (2%)", { status: "REJECTED" }, first],
    ["transactions, kind=link", { kind: "link" }, first],
    [
      "transactions, created in one day",
      { createdGte: day, createdLt: new Date(day.getTime() + 86_400_000) },
      first
    ],
    ["transactions, reference prefix 'ord-12345'", { reference: "ord-12345" }, first],
    [
      "transactions, mode=production, reference prefix 'inv-9'",
      { mode: "production", reference: "inv-9" },
      first
    ]
  ]
  const statements: Array<[string, Statement.Statement<unknown>]> = []
  for (const [what, filter, page] of transactions) {
    statements.push([what, yield* Transactions.statement(BIG, filter, page)])
  }
  statements.push(["links, first page", yield* Links.statement(BIG, {}, first)])
  statements.push([
    "links, mode=production, status=PAID",
    yield* Links.statement(BIG, { mode: "production", status: "PAID" }, first)
  ])
  statements.push(["notifications, first page", yield* Notifications.statement(BIG, {}, first)])
  statements.push([
    "notifications, starting_after the 5,000th",
    yield* Notifications.statement(BIG, {}, { limit: 10, startingAfter: nt!.id })
  ])
  statements.push([
    "notifications, delivery=failed (1%)",
    yield* Notifications.statement(BIG, { delivery: "failed" }, first)
  ])
  statements.push([
    "notifications of one payment",
    yield* Notifications.statement(BIG, { subject: "TRX_t30" }, first)
  ])
  statements.push(["refunds, mode=test", yield* MerchantRefunds.statement(BIG, { mode: "test" }, first)])
  statements.push(["users, first page", yield* PanelUsers.statement(BIG, {}, first)])
  statements.push([
    "users, starting_after the middle one",
    yield* PanelUsers.statement(BIG, {}, { limit: 10, startingAfter: us!.id })
  ])
  statements.push(["users, role=read_only", yield* PanelUsers.statement(BIG, { role: "read_only" }, first)])
  statements.push([
    "users, status=DISABLED (5%), role=read_only",
    yield* PanelUsers.statement(BIG, { status: "DISABLED", role: "read_only" }, first)
  ])
  statements.push([
    "merchants, name contains 'andino'",
    yield* Merchants.statement({ name: "andino" }, first)
  ])
  const checkpoint: EventStore.Checkpoint = {
    transactionId: BigInt(half!.transaction_id),
    globalPosition: BigInt(half!.global_position)
  }
  statements.push([
    "events, after the middle of the log",
    PgListings.eventsStatement(sql, { after: checkpoint, limit: 100 })
  ])
  statements.push([
    "events of one stream",
    PgListings.eventsStatement(sql, { after: EventStore.Start, stream: "PaymentLink-LNK_77", limit: 100 })
  ])
  statements.push([
    "events of one type (LinkPaid), after the middle of the log",
    PgListings.eventsStatement(sql, { after: checkpoint, type: "LinkPaid", limit: 100 })
  ])
  for (const [what, statement] of statements) {
    console.log(`\n### ${what}\n`)
    console.log(yield* explain(statement))
  }
})

const main = async () => {
  const scale = Settings.number("LISTING_EVENTS", 1_000_000) / 1_000_000
  await Database.scoped("listing_plans", async (database) => {
    const runtime = ManagedRuntime.make(
      PgEventStore.layerMigrated.pipe(
        Layer.provideMerge(PostgresClient.layer({ url: Redacted.make(database.url), maxConnections: 4 }))
      )
    )
    try {
      const started = performance.now()
      await runtime.runPromise(fill(scale))
      console.log(
        `log written (with its read models) in ${Math.round((performance.now() - started) / 1000)} s`
      )
      await runtime.runPromise(plans)
    } finally {
      await runtime.dispose()
    }
  })
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
