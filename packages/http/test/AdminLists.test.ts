/**
 * The operator's lists (issue 22, "The operator's API") through the real handler on a socket:
 * every endpoint, filter and error; Stripe's list shape; the paging as properties over HTTP (every
 * row once, newest first, `has_more` exact, across inserts made during the walk); the log paged in
 * commit order and resumed exactly; a paid link's history with actors and states.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import { MerchantId, NotificationId, TransactionId } from "@cobro/domain/Ids"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const get = (path: string) => TestApp.admin("GET", path)

/** A list that must answer 200: its body. */
const list = (path: string) =>
  Effect.gen(function* () {
    const reply = yield* get(path)
    expect(reply.status, `${path} → ${reply.text}`).toBe(200)
    return reply.json as {
      object: string
      data: Array<any>
      has_more: boolean
      url: string
      next_after?: string
    }
  })

const idsOf = (path: string) => Effect.map(list(path), (body) => body.data.map((row) => row.id as string))

/** Moves the virtual clock on, so the next row is strictly newer. */
const later = (millis = 1_000) => Effect.flatMap(TestClock.VirtualTime, (clock) => clock.advance(millis))

const nowIso = Effect.map(TestClock.VirtualTime, (clock) => new Date(clock.now()).toISOString())

/** A merchant whose keys answer, with the card and PSE on links and a terminal selected for the API. */
const merchant = (name?: string) =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchant(name)
    yield* TestApp.setLinkMethods(m.merchantId, { CREDIT_CARD: { min: 1_000, max: 5_000_000 } })
    for (const key of [m.button.test, m.button.production]) {
      yield* TestApp.send("GET", "/v1/payment/pse/banks", { key })
    }
    return m
  })

/** An online payment (C1 + C4) of `total`: its transaction id. */
const onlinePayment = (key: string, reference: string, total = 555_040) =>
  Effect.gen(function* () {
    expect((yield* Calls.createIntent(key, Bodies.intent(reference, total))).status).toBe(201)
    const attempt = yield* Calls.attempt(key, Bodies.cardAttempt(reference))
    expect(attempt.status, attempt.text).toBe(201)
    return (attempt.json.transaction_id ?? attempt.json.payload.transaction_id) as string
  })

/** A CLOSE link of COP 50,000, paid on its checkout page with the card: its id. */
const paidLink = (key: string, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const link = yield* Calls.newLink(key, {
      amount_type: "CLOSE",
      amount: { total_amount: 50_000 },
      ...extra
    })
    const paid = yield* Calls.postForm(link.path, Bodies.cardForm())
    expect(paid.status, paid.text).toBe(303)
    return link.id
  })

const LIST_KEYS = ["object", "data", "has_more", "url"]

describe("GET /admin/v1/merchants", () => {
  it.live(
    "lists merchant accounts newest first in Stripe's list shape: object, data, has_more, url",
    TestApp.fresh(function* () {
      const first = yield* TestApp.createMerchant("Tienda Uno")
      const createdFirst = yield* nowIso
      yield* later()
      const second = yield* TestApp.createMerchant("Café Dos")
      const body = yield* list("/admin/v1/merchants")
      expect(Object.keys(body).sort()).toEqual([...LIST_KEYS].sort())
      expect(body.object).toBe("list")
      expect(body.url).toBe("/admin/v1/merchants")
      expect(body.has_more).toBe(false)
      expect(body.data.map((row) => row.id)).toEqual([second.merchantId, first.merchantId])
      expect(body.data[1]).toEqual({
        id: first.merchantId,
        name: "Tienda Uno",
        status: "ENABLED",
        created_at: createdFirst,
        history_url: `/admin/v1/streams/Merchant-${first.merchantId}/history`
      })
    })
  )

  it.live(
    "filters by name (a part of it, in any case) and by status",
    TestApp.fresh(function* () {
      const uno = yield* TestApp.createMerchant("Tienda Uno")
      const dos = yield* TestApp.createMerchant("Café Dos")
      const tres = yield* TestApp.createMerchant("TIENDA Tres")
      yield* TestApp.disable(tres.merchantId)
      expect(new Set(yield* idsOf("/admin/v1/merchants?name=tienda"))).toEqual(
        new Set([uno.merchantId, tres.merchantId])
      )
      expect(yield* idsOf("/admin/v1/merchants?name=caf%C3%A9")).toEqual([dos.merchantId])
      expect(yield* idsOf("/admin/v1/merchants?status=DISABLED")).toEqual([tres.merchantId])
      expect(new Set(yield* idsOf("/admin/v1/merchants?status=ENABLED"))).toEqual(
        new Set([uno.merchantId, dos.merchantId])
      )
      expect(yield* idsOf("/admin/v1/merchants?status=ENABLED&name=TIENDA")).toEqual([uno.merchantId])
      expect(yield* idsOf("/admin/v1/merchants?name=nadie")).toEqual([])
    })
  )

  it.live(
    "a known path with the list added: DELETE /admin/v1/merchants is a 405 that allows GET and POST",
    TestApp.fresh(function* () {
      const reply = yield* TestApp.send("DELETE", "/admin/v1/merchants")
      TestApp.expectError(reply, 405, "MethodNotAllowed")
      expect(new Set(reply.headers["allow"]!.split(", "))).toEqual(new Set(["GET", "POST"]))
    })
  )
})

describe("GET /admin/v1/merchants/{merchant_id}/payments", () => {
  it.live(
    "lists terminal checkouts, link payments and online payments, newest first, each with its kind, resource and history",
    TestApp.withTerminal(function* (m) {
      for (const key of [m.button.test]) yield* TestApp.send("GET", "/v1/payment/pse/banks", { key })
      const checkout = yield* Calls.checkout(m.terminal.test, Bodies.terminalSale(m.serial))
      expect(checkout.status, checkout.text).toBe(201)
      const integrationId = checkout.json.payload.integration_id as string
      const checkoutAt = yield* nowIso
      yield* later()
      const linkId = yield* paidLink(m.button.test, { reference: "link-7" })
      yield* later()
      const online = yield* onlinePayment(m.button.test, "order-9")
      const onlineAt = yield* nowIso
      const body = yield* list(`/admin/v1/merchants/${m.merchantId}/payments`)
      expect(body.url).toBe(`/admin/v1/merchants/${m.merchantId}/payments`)
      expect(body.has_more).toBe(false)
      expect(body.data.map((row) => [row.kind, row.resource_id])).toEqual([
        ["online", online],
        ["link", linkId],
        ["terminal", integrationId]
      ])
      expect(body.data[0]).toEqual({
        id: online,
        kind: "online",
        resource_id: online,
        merchant_id: m.merchantId,
        mode: "test",
        status: "APPROVED",
        amount: 555_040,
        currency: "COP",
        reference: "order-9",
        created_at: onlineAt,
        updated_at: onlineAt,
        history_url: `/admin/v1/streams/Payment-${online}/history`
      })
      expect(body.data[1]).toMatchObject({
        kind: "link",
        status: "PAID",
        amount: 50_000,
        reference: "link-7",
        history_url: `/admin/v1/streams/PaymentLink-${linkId}/history`
      })
      expect(body.data[2]).toMatchObject({
        kind: "terminal",
        mode: "test",
        amount: 11_900,
        currency: "COP",
        reference: "order-42",
        created_at: checkoutAt,
        history_url: `/admin/v1/streams/TerminalCheckout-${integrationId}/history`
      })
      // Every row's history answers.
      for (const row of body.data) {
        const history = yield* get(row.history_url)
        expect(history.status, history.text).toBe(200)
        expect(history.json.events.length).toBeGreaterThan(0)
      }
    })
  )

  it.live(
    "filters by mode, kind, status, created[gte] / created[lt] (bracketed, encoded or not) and a reference's start",
    TestApp.given(merchant(), function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}/payments`
      const a = yield* onlinePayment(m.button.test, "order-a1")
      yield* later(3_600_000)
      const middle = yield* nowIso
      const rejected = yield* onlinePayment(m.button.test, "order-b1", 555_042)
      yield* later(3_600_000)
      const end = yield* nowIso
      const prod = yield* onlinePayment(m.button.production, "order-a2")
      const link = yield* paidLink(m.button.test)
      expect((yield* list(base)).data.length).toBe(4)
      expect(yield* idsOf(`${base}?mode=production`)).toEqual([prod])
      const test = yield* list(`${base}?mode=test`)
      expect(test.data.every((row) => row.mode === "test")).toBe(true)
      expect(new Set(test.data.map((row) => row.id))).toEqual(
        new Set([a, rejected, ...(yield* idsOf(`${base}?kind=link`))])
      )
      expect((yield* list(`${base}?kind=link`)).data.map((row) => row.resource_id)).toEqual([link])
      expect(yield* idsOf(`${base}?kind=terminal`)).toEqual([])
      expect(yield* idsOf(`${base}?status=REJECTED`)).toEqual([rejected])
      expect(yield* idsOf(`${base}?kind=online&status=APPROVED&mode=test`)).toEqual([a])
      expect(yield* idsOf(`${base}?created[gte]=${middle}&created[lt]=${end}`)).toEqual([rejected])
      expect(
        yield* idsOf(
          `${base}?created%5Bgte%5D=${encodeURIComponent(middle)}&created%5Blt%5D=${encodeURIComponent(end)}`
        )
      ).toEqual([rejected])
      // An offset names the same instant: 15:00Z + 1 h is 11:00 in Bogotá.
      expect(yield* idsOf(`${base}?created[lt]=2026-11-21T11:00:00.000-05:00`)).toEqual([a])
      expect(yield* idsOf(`${base}?kind=online&created[gte]=${end}`)).toEqual([prod])
      expect(new Set(yield* idsOf(`${base}?reference=order-a`))).toEqual(new Set([a, prod]))
      expect(yield* idsOf(`${base}?reference=order-b1`)).toEqual([rejected])
      expect(yield* idsOf(`${base}?reference=rder`)).toEqual([])
    })
  )
})

describe("GET /admin/v1/merchants/{merchant_id}/links", () => {
  it.live(
    "lists the merchant's links with every field, filtered by mode and status",
    TestApp.given(merchant(), function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}/links`
      const active = yield* Calls.newLink(m.button.test, {
        amount_type: "CLOSE",
        amount: { total_amount: 20_000 },
        description: "Dos cafés",
        reference: "mesa-4"
      })
      const createdAt = yield* nowIso
      yield* later()
      const paid = yield* paidLink(m.button.test)
      yield* later()
      const prod = yield* Calls.newLink(m.button.production, { amount_type: "OPEN" })
      const other = yield* merchant("Otra")
      yield* Calls.newLink(other.button.test, { amount_type: "OPEN" })
      const body = yield* list(base)
      expect(body.url).toBe(base)
      expect(body.data.map((row) => row.id)).toEqual([prod.id, paid, active.id])
      expect(body.data[2]).toEqual({
        id: active.id,
        merchant_id: m.merchantId,
        mode: "test",
        status: "ACTIVE",
        amount_type: "CLOSE",
        amount: 20_000,
        currency: "COP",
        description: "Dos cafés",
        reference: "mesa-4",
        created_at: createdAt,
        expires_at: body.data[2].expires_at,
        updated_at: createdAt,
        history_url: `/admin/v1/streams/PaymentLink-${active.id}/history`
      })
      expect(body.data[0]).toMatchObject({ mode: "production", amount_type: "OPEN", amount: 0 })
      expect(yield* idsOf(`${base}?mode=production`)).toEqual([prod.id])
      expect(yield* idsOf(`${base}?mode=test`)).toEqual([paid, active.id])
      expect(yield* idsOf(`${base}?status=PAID`)).toEqual([paid])
      expect(yield* idsOf(`${base}?status=ACTIVE&mode=test`)).toEqual([active.id])
    })
  )
})

const deliveries = CommandHandler.make(WebhookDelivery.WebhookDelivery)

/** Schedules a notification to the merchant; returns its id. */
const scheduleNotification = (merchantId: string, id: string, sandbox: boolean, subject: string) =>
  Effect.gen(function* () {
    const now = DateTime.unsafeMake((yield* TestClock.VirtualTime).now())
    yield* deliveries(
      NotificationId.make(id),
      new WebhookDelivery.ScheduleDelivery({
        notificationId: NotificationId.make(id),
        merchantId: MerchantId.make(merchantId),
        url: "https://shop.example/hooks",
        type: "SALE_APPROVED",
        subject: TransactionId.make(subject),
        body: `{"id":"${id}"}`,
        signingKey: { integration: "terminal_api", mode: sandbox ? "test" : "production" },
        sandbox,
        now
      })
    )
    return id
  })

const attempt = (id: string, n: number, result: WebhookDelivery.AttemptResult) =>
  Effect.gen(function* () {
    const now = DateTime.unsafeMake((yield* TestClock.VirtualTime).now())
    yield* deliveries(
      NotificationId.make(id),
      new WebhookDelivery.RecordAttempt({ attempt: n, result, latencyMs: 50, now })
    )
  })

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`

describe("GET /admin/v1/merchants/{merchant_id}/notifications", () => {
  it.live(
    "lists notifications with where each delivery stands, filtered by delivery (failed, pending, delivered), mode and subject",
    TestApp.withMerchant(function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}/notifications`
      const pending = yield* scheduleNotification(m.merchantId, uuid(1), true, "TRX_1")
      yield* later()
      const delivered = yield* scheduleNotification(m.merchantId, uuid(2), true, "TRX_2")
      yield* attempt(delivered, 1, { _tag: "Failed", reason: "connection refused" })
      yield* later()
      yield* attempt(delivered, 2, { _tag: "Answered", statusCode: 200, snippet: "ok" })
      const deliveredAt = yield* nowIso
      yield* later()
      const failed = yield* scheduleNotification(m.merchantId, uuid(3), false, "TRX_3")
      yield* attempt(failed, 1, { _tag: "Answered", statusCode: 500, snippet: "oops" })
      yield* deliveries(
        NotificationId.make(failed),
        new WebhookDelivery.CancelDelivery({ now: DateTime.unsafeMake((yield* TestClock.VirtualTime).now()) })
      )
      const body = yield* list(base)
      expect(body.data.map((row) => row.id)).toEqual([failed, delivered, pending])
      expect(body.data[1]).toEqual({
        id: delivered,
        merchant_id: m.merchantId,
        mode: "test",
        subject: "TRX_2",
        type: "SALE_APPROVED",
        delivery: "delivered",
        attempts: 2,
        last_status_code: 200,
        created_at: new Date(TestClock.START + 1_000).toISOString(),
        updated_at: deliveredAt,
        history_url: `/admin/v1/streams/WebhookDelivery-${delivered}/history`,
        attempts_url: `/admin/v1/notifications/${delivered}/attempts`
      })
      expect(body.data[0]).toMatchObject({ delivery: "failed", mode: "production", last_status_code: 500 })
      expect(body.data[2]).toMatchObject({ delivery: "pending", attempts: 0, last_status_code: null })
      expect(yield* idsOf(`${base}?delivery=failed`)).toEqual([failed])
      expect(yield* idsOf(`${base}?delivery=pending`)).toEqual([pending])
      expect(yield* idsOf(`${base}?delivery=delivered`)).toEqual([delivered])
      expect(yield* idsOf(`${base}?mode=test`)).toEqual([delivered, pending])
      expect(yield* idsOf(`${base}?mode=production&delivery=pending`)).toEqual([])
      expect(yield* idsOf(`${base}?subject=TRX_3`)).toEqual([failed])
      // The attempts path answers for the row.
      expect((yield* get(body.data[1].attempts_url)).status).toBe(200)
    })
  )
})

describe("GET /admin/v1/merchants/{merchant_id}/refunds", () => {
  it.live(
    "lists refunds with their payment, filtered by mode and status",
    TestApp.given(merchant(), function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}/refunds`
      const test = yield* onlinePayment(m.button.test, "order-1")
      const prod = yield* onlinePayment(m.button.production, "order-2")
      for (const [key, reference_id, transaction_id] of [
        [m.button.test, "order-1", test],
        [m.button.production, "order-2", prod]
      ] as const) {
        const requested = yield* Calls.requestRefund(key, {
          reference_id,
          transaction_id,
          reason: "returned"
        })
        expect(requested.status, requested.text).toBe(204)
        yield* later()
      }
      const requestedAt = new Date(TestClock.START).toISOString()
      const reviewed = yield* TestApp.admin("POST", `/admin/v1/refunds/${prod}/review`, {
        outcome: "APPROVED"
      })
      expect(reviewed.status, reviewed.text).toBe(200)
      const body = yield* list(base)
      expect(body.url).toBe(base)
      expect(body.data.map((row) => row.transaction_id)).toEqual([prod, test])
      expect(body.data[1]).toEqual({
        id: body.data[1].id,
        transaction_id: test,
        merchant_id: m.merchantId,
        mode: "test",
        status: "PROCESSING",
        amount: 555_040,
        currency: "COP",
        created_at: requestedAt,
        updated_at: requestedAt,
        history_url: `/admin/v1/streams/Refund-${body.data[1].id}/history`
      })
      expect(body.data[0]).toMatchObject({ mode: "production", status: "APPROVED" })
      expect((yield* list(`${base}?mode=test`)).data.map((row) => row.transaction_id)).toEqual([test])
      expect((yield* list(`${base}?mode=production`)).data.map((row) => row.transaction_id)).toEqual([prod])
      expect((yield* list(`${base}?status=APPROVED`)).data.map((row) => row.transaction_id)).toEqual([prod])
      expect((yield* list(`${base}?status=APPROVED&mode=test`)).data).toEqual([])
      expect((yield* get(body.data[0].history_url)).json.resource).toBe("refund")
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const MERCHANT_LISTS = ["payments", "links", "notifications", "refunds"] as const

/** Checks a 400 `ValidationError` whose one item names `field`. */
const expectInvalid = (reply: TestApp.Reply, field: string) => {
  expect(reply.status, reply.text).toBe(400)
  expect(reply.json.payload).toEqual({})
  expect(reply.json.errors, reply.text).toHaveLength(1)
  expect(reply.json.errors[0], reply.text).toMatchObject({ code: "ValidationError", field })
  expect(reply.json.errors[0].message).toContain(field)
}

describe("the lists' errors", () => {
  it.live(
    "an unknown merchant is 404 MerchantNotFound in the admin envelope, on every merchant list",
    TestApp.fresh(function* () {
      for (const name of MERCHANT_LISTS) {
        for (const id of ["MER_nope", "nope", "Merchant-MER_1"]) {
          const reply = yield* get(`/admin/v1/merchants/${id}/${name}`)
          TestApp.expectOnlyError(reply, 404, "MerchantNotFound", "no merchant with this id")
        }
      }
    })
  )

  it.live(
    "without the admin token every list is 401 Unauthorized, with a merchant's key too",
    TestApp.withMerchant(function* (m) {
      for (const path of [
        "/admin/v1/merchants",
        ...MERCHANT_LISTS.map((name) => `/admin/v1/merchants/${m.merchantId}/${name}`),
        "/admin/v1/events",
        `/admin/v1/streams/Merchant-${m.merchantId}/history`
      ]) {
        TestApp.expectError(yield* TestApp.send("GET", path), 401, "Unauthorized")
        TestApp.expectError(yield* TestApp.send("GET", path, { key: m.button.test }), 401, "Unauthorized")
      }
    })
  )

  it.live(
    "a limit that is not 1 to 100 (0, 101, abc, -1, 01, 1.5, empty, repeated) is 400 naming limit, on every list",
    TestApp.withMerchant(function* (m) {
      const paths = [
        "/admin/v1/merchants",
        ...MERCHANT_LISTS.map((name) => `/admin/v1/merchants/${m.merchantId}/${name}`),
        "/admin/v1/events"
      ]
      for (const path of paths) {
        for (const bad of [
          "limit=0",
          "limit=101",
          "limit=abc",
          "limit=-1",
          "limit=01",
          "limit=1.5",
          "limit=",
          "limit=1&limit=2"
        ]) {
          expectInvalid(yield* get(`${path}?${bad}`), "limit")
        }
        for (const good of ["limit=1", "limit=100"]) expect((yield* get(`${path}?${good}`)).status).toBe(200)
      }
    })
  )

  it.live(
    "a mode, kind, delivery or status outside its values is 400 naming it",
    TestApp.withMerchant(function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}`
      for (const name of MERCHANT_LISTS) {
        for (const mode of ["live", "TEST", "", "sandbox"])
          expectInvalid(yield* get(`${base}/${name}?mode=${mode}`), "mode")
      }
      expectInvalid(yield* get(`${base}/payments?kind=card`), "kind")
      expectInvalid(yield* get(`${base}/notifications?delivery=exhausted`), "delivery")
      expectInvalid(yield* get("/admin/v1/merchants?status=enabled"), "status")
    })
  )

  it.live(
    "a created bound that is not an ISO 8601 date-time with a zone is 400 naming it",
    TestApp.withMerchant(function* (m) {
      const base = `/admin/v1/merchants/${m.merchantId}/payments`
      for (const name of ["created[gte]", "created[lt]"]) {
        for (const bad of [
          "yesterday",
          "2026-11-21",
          "2026-11-21T10:00:00",
          "2026-02-30T00:00:00Z",
          "2026-11-21T24:00:00Z",
          "2026-13-01T00:00:00Z",
          "1763737200",
          ""
        ]) {
          expectInvalid(yield* get(`${base}?${name}=${encodeURIComponent(bad)}`), name)
        }
        for (const good of [
          "2026-11-21T10:00Z",
          "2026-11-21T10:00:00.123456-05:00",
          "2024-02-29T23:59:59Z"
        ]) {
          expect((yield* get(`${base}?${name}=${encodeURIComponent(good)}`)).status).toBe(200)
        }
      }
    })
  )

  it.live(
    "starting_after with ending_before is 400; a cursor that names no row of the list (or another merchant's row) is 400 naming it",
    TestApp.given(merchant(), function* (m) {
      const other = yield* merchant("Otra")
      const own = yield* Calls.newLink(m.button.test, { amount_type: "OPEN" })
      const theirs = yield* Calls.newLink(other.button.test, { amount_type: "OPEN" })
      const base = `/admin/v1/merchants/${m.merchantId}/links`
      expectInvalid(yield* get(`${base}?starting_after=${own.id}&ending_before=${own.id}`), "ending_before")
      for (const parameter of ["starting_after", "ending_before"]) {
        for (const cursor of ["LNK_nope", theirs.id, m.merchantId, ""]) {
          expectInvalid(yield* get(`${base}?${parameter}=${cursor}`), parameter)
        }
        expect((yield* get(`${base}?${parameter}=${own.id}`)).json.data).toEqual([])
      }
      for (const path of [
        "/admin/v1/merchants",
        ...MERCHANT_LISTS.map((n) => `/admin/v1/merchants/${m.merchantId}/${n}`)
      ]) {
        expectInvalid(yield* get(`${path}?starting_after=NOPE_1`), "starting_after")
        expectInvalid(yield* get(`${path}?ending_before=NOPE_1`), "ending_before")
      }
    })
  )

  it.live(
    "a query parameter with a NUL or a control character is 400 before the route runs, never a 500",
    TestApp.fresh(function* () {
      const reply = yield* get("/admin/v1/merchants?name=a%00b")
      TestApp.expectError(reply, 400, "ValidationError")
      expect(reply.json.errors[0].field).toBe("name")
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Paging as properties
// ---------------------------------------------------------------------------------------------

/** Walks a list from its first page towards older rows, then from its oldest row back to the newest. */
const walk = (
  base: string,
  limits: ReadonlyArray<number>,
  during: (step: number) => Effect.Effect<void, never, any> = () => Effect.void
) =>
  Effect.gen(function* () {
    const sep = base.includes("?") ? "&" : "?"
    const forward: Array<any> = []
    let cursor: string | undefined
    for (let step = 0; ; step++) {
      const limit = limits[step % limits.length]!
      const page = yield* list(
        `${base}${sep}limit=${limit}${cursor === undefined ? "" : `&starting_after=${cursor}`}`
      )
      expect(page.data.length).toBeLessThanOrEqual(limit)
      // has_more was exact on the page before: rows did lie beyond it.
      if (step > 0) expect(page.data.length).toBeGreaterThan(0)
      forward.push(...page.data)
      if (!page.has_more) break
      expect(page.data.length).toBe(limit)
      cursor = page.data[page.data.length - 1].id
      yield* during(step)
    }
    const backward: Array<any> = []
    cursor = forward[forward.length - 1]?.id
    for (let step = 0; cursor !== undefined; step++) {
      const limit = limits[(step + 1) % limits.length]!
      const page = yield* list(`${base}${sep}limit=${limit}&ending_before=${cursor}`)
      expect(page.data.length).toBeLessThanOrEqual(limit)
      if (step > 0) expect(page.data.length).toBeGreaterThan(0)
      backward.unshift(...page.data)
      if (!page.has_more) break
      expect(page.data.length).toBe(limit)
      cursor = page.data[0].id
    }
    return { forward, backward }
  })

/**
 * Newest first: in the reverse of the order the rows were created in (their log positions), so
 * `created_at` never grows along a page; rows created at the same instant are in that order too.
 */
const isNewestFirst = (rows: ReadonlyArray<{ readonly id: string; readonly created_at: string }>) =>
  rows.every((row, i) => i === 0 || rows[i - 1]!.created_at >= row.created_at)

const limitsArb = FastCheck.array(FastCheck.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 })

describe("paging in Stripe's convention, as properties over HTTP", () => {
  it.live.prop(
    "walking the merchants forward with starting_after and back with ending_before, in random limits, shows every row once, newest first, has_more exact, whatever is inserted during the walk",
    [
      FastCheck.array(FastCheck.boolean(), { minLength: 0, maxLength: 16 }),
      limitsArb,
      FastCheck.array(FastCheck.boolean(), { maxLength: 6 })
    ],
    ([ticks, limits, inserts]) =>
      TestApp.run(
        Effect.gen(function* () {
          const created: Array<string> = []
          for (const tick of ticks) {
            // Equal instants too: the order they were created in breaks the tie.
            if (tick) yield* later()
            created.push((yield* TestApp.createMerchant()).merchantId)
          }
          const { forward, backward } = yield* walk("/admin/v1/merchants", limits, (step) =>
            inserts[step] === true ? Effect.asVoid(TestApp.createMerchant("Nueva")) : Effect.void
          )
          const ids = forward.map((row) => row.id)
          // No row twice, none of those there at the start missed, newest first.
          expect(new Set(ids).size).toBe(ids.length)
          for (const id of created) expect(ids).toContain(id)
          expect(isNewestFirst(forward)).toBe(true)
          expect(ids.filter((id) => created.includes(id))).toEqual([...created].reverse())
          // The walk back ends at the newest row and sees every row before the oldest once.
          const back = backward.map((row) => row.id)
          expect(new Set(back).size).toBe(back.length)
          expect(isNewestFirst(backward)).toBe(true)
          const now = (yield* list("/admin/v1/merchants?limit=100")).data.map((row) => row.id)
          expect(back).toEqual(now.slice(0, now.indexOf(ids[ids.length - 1]!)))
          if (inserts.every((i) => !i)) {
            expect(ids).toEqual(now)
            expect(ids.length).toBe(created.length)
          }
        })
      ),
    { timeout: 120_000, fastCheck: { numRuns: 20 } }
  )

  it.live.prop(
    "a merchant's links in both modes: the mode filter pages through exactly that mode's links, once each, newest first, has_more exact",
    [
      FastCheck.array(FastCheck.tuple(FastCheck.boolean(), FastCheck.boolean()), { maxLength: 14 }),
      limitsArb
    ],
    ([links, limits]) =>
      TestApp.run(
        Effect.gen(function* () {
          const m = yield* merchant()
          const byMode: Record<"test" | "production", Array<string>> = { test: [], production: [] }
          for (const [production, tick] of links) {
            if (tick) yield* later()
            const link = yield* Calls.newLink(production ? m.button.production : m.button.test, {
              amount_type: "OPEN"
            })
            byMode[production ? "production" : "test"].push(link.id)
          }
          for (const mode of ["test", "production"] as const) {
            const base = `/admin/v1/merchants/${m.merchantId}/links?mode=${mode}`
            const { forward, backward } = yield* walk(base, limits)
            expect(forward.every((row) => row.mode === mode)).toBe(true)
            expect(forward.map((row) => row.id)).toEqual([...byMode[mode]].reverse())
            expect(isNewestFirst(forward)).toBe(true)
            expect(backward).toEqual(forward.slice(0, -1))
          }
        })
      ),
    { timeout: 120_000, fastCheck: { numRuns: 15 } }
  )

  it.live(
    "has_more on a first page is exact: false at exactly limit rows, true at limit + 1",
    TestApp.fresh(function* () {
      for (let i = 0; i < 3; i++) yield* TestApp.createMerchant()
      expect((yield* list("/admin/v1/merchants?limit=3")).has_more).toBe(false)
      expect((yield* list("/admin/v1/merchants?limit=2")).has_more).toBe(true)
      yield* TestApp.createMerchant()
      expect((yield* list("/admin/v1/merchants")).data.length).toBe(4)
      for (let i = 0; i < 8; i++) yield* TestApp.createMerchant()
      const page = yield* list("/admin/v1/merchants")
      expect(page.data.length).toBe(10)
      expect(page.has_more).toBe(true)
    })
  )
})

// ---------------------------------------------------------------------------------------------
// The log
// ---------------------------------------------------------------------------------------------

const wholeLog = Effect.flatMap(EventStore.EventStore, (store) => store.readAll({ limit: 1_000_000 }))

/** Reads the events list page by page from the start: the pages, concatenated, and the last next_after. */
const followLog = (query: string, limits: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const events: Array<any> = []
    let after: string | undefined
    for (let step = 0; step < 10_000; step++) {
      const limit = limits[step % limits.length]!
      const page = yield* list(
        `/admin/v1/events?limit=${limit}${query}${after === undefined ? "" : `&after=${after}`}`
      )
      expect(page.url).toBe("/admin/v1/events")
      expect(page.data.length).toBeLessThanOrEqual(limit)
      events.push(...page.data)
      if (page.data.length > 0) expect(page.next_after).toBe(page.data[page.data.length - 1].position)
      else expect(page.next_after).toBe(after ?? "0-0")
      after = page.next_after
      if (!page.has_more) break
      expect(page.data.length).toBe(limit)
    }
    return { events, after: after! }
  })

describe("GET /admin/v1/events", () => {
  it.live.prop(
    "the pages, resumed with next_after in random limits, are the whole log in commit order, each event once",
    [FastCheck.integer({ min: 1, max: 4 }), limitsArb],
    ([merchants, limits]) =>
      TestApp.run(
        Effect.gen(function* () {
          for (let i = 0; i < merchants; i++) {
            const m = yield* TestApp.createMerchant()
            yield* TestApp.disable(m.merchantId)
          }
          const { events, after } = yield* followLog("", limits)
          const log = yield* wholeLog
          expect(events.map((e) => e.event_id)).toEqual(log.map((e) => e.eventId))
          expect(events.map((e) => e.position)).toEqual(
            log.map((e) => `${e.checkpoint.transactionId}-${e.checkpoint.globalPosition}`)
          )
          // Resuming at the end finds nothing, until something is written: then exactly that.
          const end = yield* list(`/admin/v1/events?after=${after}`)
          expect(end).toMatchObject({ data: [], has_more: false, next_after: after })
          const m = yield* TestApp.createMerchant()
          const written = (yield* wholeLog).slice(log.length)
          expect(written.map((e) => e.streamId)).toContain(`Merchant-${m.merchantId}`)
          const next = yield* list(`/admin/v1/events?after=${after}&limit=100`)
          expect(next.data.map((e) => e.event_id)).toEqual(written.map((e) => e.eventId))
        })
      ),
    { timeout: 120_000, fastCheck: { numRuns: 15 } }
  )

  it.live(
    "each event: position, event_id, stream_id, version, type, schema_version, recorded_at, metadata (actor …) and the stored data",
    TestApp.withMerchant(function* (m) {
      const log = yield* wholeLog
      const stored = log.find((e) => e.streamId === `Merchant-${m.merchantId}`)
      const page = yield* list(`/admin/v1/events?limit=1&stream=Merchant-${m.merchantId}`)
      expect(Object.keys(page).sort()).toEqual([...LIST_KEYS, "next_after"].sort())
      expect(page.has_more).toBe(log.filter((e) => e.streamId === stored!.streamId).length > 1)
      expect((yield* list("/admin/v1/events?limit=1")).has_more).toBe(log.length > 1)
      expect(page.data).toEqual([
        {
          position: `${stored!.checkpoint.transactionId}-${stored!.checkpoint.globalPosition}`,
          event_id: stored!.eventId,
          stream_id: `Merchant-${m.merchantId}`,
          version: 1,
          type: stored!.type,
          schema_version: stored!.schemaVersion,
          recorded_at: stored!.recordedAt.toISOString(),
          metadata: { actor: "admin", causation_id: null, correlation_id: null, request_id: null },
          data: JSON.parse(JSON.stringify(stored!.data))
        }
      ])
    })
  )

  it.live(
    "stream (a stream id or a resource id) and type filter the log; paged and resumed, still exact",
    TestApp.withMerchant(function* (a) {
      const b = yield* TestApp.createMerchant()
      for (const m of [a, b, a]) {
        yield* TestApp.disable(m.merchantId)
        yield* TestApp.setStatus(m.merchantId, "ENABLED")
      }
      const log = yield* wholeLog
      const ofA = log.filter((e) => e.streamId === `Merchant-${a.merchantId}`).map((e) => e.eventId)
      expect(ofA.length).toBeGreaterThan(3)
      for (const stream of [`Merchant-${a.merchantId}`, a.merchantId]) {
        const { events } = yield* followLog(`&stream=${stream}`, [2])
        expect(events.map((e) => e.event_id)).toEqual(ofA)
        expect(events.map((e) => e.version)).toEqual(ofA.map((_, i) => i + 1))
      }
      const type = log[log.length - 1]!.type
      const ofType = log.filter((e) => e.type === type).map((e) => e.eventId)
      expect((yield* followLog(`&type=${type}`, [1, 3])).events.map((e) => e.event_id)).toEqual(ofType)
      const both = log.filter((e) => e.type === type && e.streamId === `Merchant-${b.merchantId}`)
      expect(
        (yield* followLog(`&type=${type}&stream=${b.merchantId}`, [5])).events.map((e) => e.event_id)
      ).toEqual(both.map((e) => e.eventId))
      expect((yield* list("/admin/v1/events?stream=Nothing-1")).data).toEqual([])
      expect((yield* list("/admin/v1/events?type=NoSuchEvent")).data).toEqual([])
    })
  )

  it.live(
    "an after that is not a position (a row id, a number, a sign, repeated) is 400 naming after",
    TestApp.fresh(function* () {
      for (const bad of [
        "abc",
        "12",
        "1-",
        "-1",
        "1-2-3",
        "01-2",
        "1--2",
        "",
        "1-2&after=3-4",
        "99999999999999999999-1",
        "9223372036854775808-1",
        "1-9223372036854775808"
      ]) {
        expectInvalid(yield* get(`/admin/v1/events?after=${bad}`), "after")
      }
      expect((yield* get("/admin/v1/events?after=0-0")).status).toBe(200)
      const last = yield* list("/admin/v1/events?after=9223372036854775807-9223372036854775807")
      expect(last).toMatchObject({
        data: [],
        has_more: false,
        next_after: "9223372036854775807-9223372036854775807"
      })
    })
  )
})

// ---------------------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------------------

describe("GET /admin/v1/streams/{stream_id}/history", () => {
  it.live(
    "a paid link's history: every event in order with its time, actor, data and the state after it, by link id or stream id",
    TestApp.given(merchant(), function* (m) {
      const linkId = yield* paidLink(m.button.test, { description: "Dos cafés" })
      const stored = yield* Effect.flatMap(EventStore.EventStore, (store) =>
        store.readStream(`PaymentLink-${linkId}`)
      )
      expect(stored.length).toBeGreaterThanOrEqual(3)
      const byId = yield* get(`/admin/v1/streams/${linkId}/history`)
      expect(byId.status, byId.text).toBe(200)
      const body = byId.json
      expect(Object.keys(body).sort()).toEqual(["aggregate", "events", "object", "resource", "stream_id"])
      expect(body).toMatchObject({
        object: "history",
        stream_id: `PaymentLink-${linkId}`,
        resource: "payment link",
        aggregate: "PaymentLink"
      })
      expect(body.events.map((e: any) => [e.version, e.type, e.event_id])).toEqual(
        stored.map((e) => [e.streamVersion, e.type, e.eventId])
      )
      for (const [i, event] of body.events.entries()) {
        const recorded = stored[i]!
        expect(Object.keys(event).sort()).toEqual(
          ["actor", "data", "event_id", "metadata", "recorded_at", "state", "type", "version"].sort()
        )
        expect(event.recorded_at).toBe(recorded.recordedAt.toISOString())
        expect(event.actor).toBe(recorded.metadata.actor ?? null)
        expect(event.metadata.actor).toBe(event.actor)
        expect(event.data).toEqual(JSON.parse(JSON.stringify(recorded.data)))
        expect(typeof event.state._tag).toBe("string")
      }
      // The merchant created it; the states walk from ACTIVE to PAID.
      expect(body.events[0]).toMatchObject({ type: "LinkCreated", actor: m.merchantId })
      expect(body.events[0].state).toMatchObject({ _tag: "ACTIVE" })
      expect(body.events[0].state.link).toMatchObject({ linkId, description: "Dos cafés" })
      expect(body.events[body.events.length - 1].state._tag).toBe("PAID")
      // The same history by its stream id, encoded or not.
      for (const path of [`PaymentLink-${linkId}`, encodeURIComponent(`PaymentLink-${linkId}`)]) {
        expect((yield* get(`/admin/v1/streams/${path}/history`)).json).toEqual(body)
      }
    })
  )

  it.live(
    "a merchant's, a notification's and an intent's history by their resource ids",
    TestApp.given(merchant(), function* (m) {
      const merchantHistory = yield* get(`/admin/v1/streams/${m.merchantId}/history`)
      expect(merchantHistory.json).toMatchObject({
        stream_id: `Merchant-${m.merchantId}`,
        resource: "merchant"
      })
      expect(merchantHistory.json.events[0]).toMatchObject({ version: 1, actor: "admin" })
      const id = yield* scheduleNotification(m.merchantId, uuid(7), true, "TRX_7")
      const notification = yield* get(`/admin/v1/streams/${id.toUpperCase()}/history`)
      expect(notification.json).toMatchObject({
        stream_id: `WebhookDelivery-${id}`,
        resource: "notification"
      })
      expect(notification.json.events[0].state._tag).toBe("PENDING")
      yield* onlinePayment(m.button.test, "order-5")
      const intent = yield* get(
        `/admin/v1/streams/${encodeURIComponent(`${m.merchantId}:test:order-5`)}/history`
      )
      expect(intent.status, intent.text).toBe(200)
      expect(intent.json.resource).toBe("payment intent")
    })
  )

  it.live(
    "an id that names no resource, or a resource with no event, is 404 StreamNotFound in the envelope",
    TestApp.fresh(function* () {
      for (const id of [
        "LNK_nope",
        "Merchant-MER_nope",
        "nothing-at-all",
        "PaymentLink-",
        "00000000-0000-4000-8000-000000000999"
      ]) {
        const reply = yield* get(`/admin/v1/streams/${encodeURIComponent(id)}/history`)
        TestApp.expectError(reply, 404, "StreamNotFound")
        expect(reply.json.errors[0].field).toBe("stream_id")
      }
    })
  )
})

describe("the lists in the OpenAPI document", () => {
  it.live(
    "every list endpoint appears with its query parameters",
    TestApp.fresh(function* () {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      const params = (path: string) =>
        (spec.paths[path].get.parameters as Array<{ name: string; in: string }>)
          .filter((p) => p.in === "query")
          .map((p) => p.name)
          .sort()
      const paging = ["ending_before", "limit", "starting_after"]
      expect(params("/admin/v1/merchants")).toEqual([...paging, "name", "status"].sort())
      expect(params("/admin/v1/merchants/{merchant_id}/payments")).toEqual(
        [...paging, "mode", "kind", "status", "created[gte]", "created[lt]", "reference"].sort()
      )
      expect(params("/admin/v1/merchants/{merchant_id}/links")).toEqual([...paging, "mode", "status"].sort())
      expect(params("/admin/v1/merchants/{merchant_id}/notifications")).toEqual(
        [...paging, "mode", "delivery", "subject"].sort()
      )
      expect(params("/admin/v1/merchants/{merchant_id}/refunds")).toEqual(
        [...paging, "mode", "status"].sort()
      )
      expect(params("/admin/v1/events")).toEqual(["after", "limit", "stream", "type"])
      expect(spec.paths["/admin/v1/streams/{stream_id}/history"].get.security).toEqual([{ bearer: [] }])
      expect(spec.paths["/admin/v1/merchants"].get.security).toEqual([{ bearer: [] }])
    })
  )
})
