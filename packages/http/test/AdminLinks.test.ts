/**
 * `POST /admin/v1/links/{payment_link}/cancel` through the real handler on a socket: the answer for
 * each status a link can have (admin-decisions AL-1), what a cancelled link then answers (B3, the
 * hosted checkout page over a plain HTTP GET, a payment attempt), and a property: the call answers
 * exactly by the status B3 reads before it, and CANCELLED is final.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as EventStore from "@cobro/domain/EventStore"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Nanos from "@cobro/domain/Nanos"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Text from "@cobro/pages/CheckoutPageText"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const BOUNDS = { min: 1_000, max: 5_000_000 }

/** A merchant offering a card and PSE on links; its payment-button keys. */
const merchant = Effect.gen(function* () {
  const m = yield* TestApp.createMerchant()
  yield* TestApp.setLinkMethods(m.merchantId, { CREDIT_CARD: BOUNDS, PSE: BOUNDS })
  return m
})

/** A CLOSE link of COP 50,000 (and `extra`). */
const createLink = (key: string, extra: Record<string, unknown> = {}) =>
  Calls.newLink(key, { amount_type: "CLOSE", amount: { total_amount: 50_000 }, ...extra })

/** Given the merchant, one of its test links: the merchant, and the link's id and checkout path. */
const givenLink = Effect.gen(function* () {
  const m = yield* merchant
  return { m, ...(yield* createLink(m.button.test)) }
})

const cancel = (id: string) => TestApp.admin("POST", `/admin/v1/links/${id}/cancel`)
const statusOf = Calls.linkStatus
const post = Calls.postForm
const cardForm = Bodies.cardForm()

/** Starts a PSE payment on the checkout page: the link is PROCESSING; returns the bank step's path. */
const startPse = (path: string) =>
  Effect.gen(function* () {
    const started = yield* post(path, { method: "PSE", bank: "1007" })
    expect(started.status, started.text).toBe(303)
    return started.headers.location!.split("?")[0]!
  })

/** A plain HTTP GET with the platform's `fetch`, outside Effect's client, to the app's socket. */
const plainGet = (path: string) =>
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("the test app is not on TCP")
    return yield* Effect.promise(async () => {
      const response = await fetch(`http://127.0.0.1:${address.port}${path}`)
      return {
        status: response.status,
        contentType: response.headers.get("content-type"),
        text: await response.text()
      }
    })
  })

/** Cancelling the link is refused, 409 LinkNotInState saying `message`, and records nothing. */
const expectNotCancelled = (id: string, message: string) =>
  Effect.gen(function* () {
    const reply = yield* TestApp.storesNothing(cancel(id), id)
    expect(reply.status).toBe(409)
    expect(reply.json).toEqual({ payload: {}, errors: [{ code: "LinkNotInState", message }] })
  })

describe("POST /admin/v1/links/{payment_link}/cancel", () => {
  it.live(
    "an ACTIVE link is cancelled: 200 with its B3 record, status CANCELLED; B3 then reads CANCELLED",
    TestApp.given(merchant, function* (m) {
      const { id } = yield* createLink(m.button.test, { description: "Dos cafés", reference: "order-7" })
      const before = yield* TestApp.logSize
      const reply = yield* cancel(id)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers["content-type"]).toMatch(/^application\/json/)
      expect(reply.json).toMatchObject({
        api_version: 1,
        id,
        status: "CANCELLED",
        total: 50_000,
        description: "Dos cafés",
        reference: "order-7",
        is_sandbox: true,
        transaction_id: null
      })
      expect(yield* TestApp.logSize).toBe(before + 1)
      // The audit trail names who cancelled it.
      const stored = yield* Effect.flatMap(EventStore.EventStore, (store) =>
        store.readStream(`PaymentLink-${id}`)
      )
      expect(stored.at(-1)).toMatchObject({ type: "LinkCancelled", metadata: { actor: "admin" } })
      const b3 = yield* Calls.readLink(m.button.test, id)
      expect(b3.status).toBe(200)
      // The same record B3 gives, nanoseconds exact.
      expect(b3.json).toEqual(reply.json)
    })
  )

  it.live(
    "a cancelled link cannot be paid: GET /checkout/{link} shows it cancelled without the form, a payment is 409",
    TestApp.fresh(function* () {
      const { m, id, path } = yield* givenLink
      expect(path).toBe(`/checkout/${id}`)
      const open = yield* plainGet(path)
      expect(open.text).toContain('id="pay-form"')
      expect((yield* cancel(id)).status).toBe(200)
      const page = yield* plainGet(path)
      expect(page.status).toBe(200)
      expect(page.contentType).toMatch(/^text\/html/)
      expect(page.text).toContain('data-status="CANCELLED"')
      expect(page.text).toContain(Text.messages.es.status.CANCELLED!)
      expect(page.text).not.toContain('id="pay-form"')
      const before = yield* TestApp.logSize
      const paid = yield* post(path, cardForm)
      expect(paid.status).toBe(409)
      expect(paid.text).toContain('data-status="CANCELLED"')
      expect(yield* TestApp.logSize).toBe(before)
      expect(yield* statusOf(m.button.test, id)).toBe("CANCELLED")
    })
  )

  it.live(
    "cancelling a CANCELLED link again is a 200 with the same record and records nothing",
    TestApp.fresh(function* () {
      const { id } = yield* givenLink
      const first = yield* cancel(id)
      expect(first.status).toBe(200)
      const before = yield* TestApp.logSize
      const again = yield* cancel(id)
      expect(again.status).toBe(200)
      expect(again.json).toEqual(first.json)
      expect(yield* TestApp.logSize).toBe(before)
    })
  )

  it.live(
    "an unknown link is 404 LinkNotFound in the admin envelope and records nothing",
    TestApp.fresh(function* () {
      const before = yield* TestApp.logSize
      for (const id of ["LNK_nope", "not-a-link-id"]) {
        const reply = yield* cancel(id)
        TestApp.expectOnlyError(reply, 404, "LinkNotFound", "no payment link with this id")
      }
      expect(yield* TestApp.logSize).toBe(before)
    })
  )

  it.live(
    "a PAID link is 409 LinkNotInState in the admin envelope and stays PAID",
    TestApp.fresh(function* () {
      const { m, id, path } = yield* givenLink
      expect((yield* post(path, cardForm)).status).toBe(303)
      expect(yield* statusOf(m.button.test, id)).toBe("PAID")
      yield* expectNotCancelled(id, "a PAID link cannot be cancelled: only an ACTIVE link can")
      expect(yield* statusOf(m.button.test, id)).toBe("PAID")
    })
  )

  it.live(
    "an EXPIRED link is 409 LinkNotInState, whether the expiry is recorded or the link is only overdue",
    TestApp.given(merchant, function* (m) {
      const expiry = { expiration_date: Nanos.fromEpochMillis(TestClock.START + 3_600_000) }
      const overdue = yield* createLink(m.button.test, expiry)
      const recorded = yield* createLink(m.button.test, expiry)
      const clock = yield* TestClock.VirtualTime
      yield* clock.advance(2 * 3_600_000)
      // The sweeper's step records one expiry; the other link is only overdue (B3 reads EXPIRED).
      yield* LinkPayments.expire(recorded.id)
      for (const link of [overdue, recorded]) {
        yield* expectNotCancelled(link.id, "a EXPIRED link cannot be cancelled: only an ACTIVE link can")
        expect(yield* statusOf(m.button.test, link.id)).toBe("EXPIRED")
      }
    })
  )

  it.live(
    "a PROCESSING link is 409 'a link being paid cannot be cancelled'; the payment under way then completes",
    TestApp.fresh(function* () {
      const { m, id, path } = yield* givenLink
      const bank = yield* startPse(path)
      expect(yield* statusOf(m.button.test, id)).toBe("PROCESSING")
      yield* expectNotCancelled(id, "a link being paid cannot be cancelled")
      expect((yield* post(bank, { decision: "approve" })).status).toBe(303)
      expect(yield* statusOf(m.button.test, id)).toBe("PAID")
    })
  )

  it.live(
    "a REJECTED link (its payment failed after it expired) is 409 LinkNotInState",
    TestApp.given(merchant, function* (m) {
      const { id, path } = yield* createLink(m.button.test, {
        expiration_date: Nanos.fromEpochMillis(TestClock.START + 3_600_000)
      })
      const bank = yield* startPse(path)
      const clock = yield* TestClock.VirtualTime
      yield* clock.advance(2 * 3_600_000)
      expect((yield* post(bank, { decision: "decline" })).status).toBe(303)
      expect(yield* statusOf(m.button.test, id)).toBe("REJECTED")
      yield* expectNotCancelled(id, "a REJECTED link cannot be cancelled: only an ACTIVE link can")
    })
  )

  it.live(
    "the admin cancels links of both modes: a production link and a sandbox link",
    TestApp.given(merchant, function* (m) {
      const live = yield* createLink(m.button.production)
      const sandbox = yield* createLink(m.button.test)
      const liveReply = yield* cancel(live.id)
      expect([liveReply.status, liveReply.json.is_sandbox, liveReply.json.status]).toEqual([
        200,
        false,
        "CANCELLED"
      ])
      expect(yield* statusOf(m.button.production, live.id)).toBe("CANCELLED")
      const sandboxReply = yield* cancel(sandbox.id)
      expect([sandboxReply.status, sandboxReply.json.is_sandbox]).toEqual([200, true])
    })
  )

  it.live(
    "without the Bearer ADMIN_TOKEN it is 401 and the link stays ACTIVE (a merchant's key is not enough)",
    TestApp.fresh(function* () {
      const { m, id } = yield* givenLink
      for (const options of [{}, { key: m.button.test }, { headers: { authorization: "Bearer nope" } }]) {
        const reply = yield* TestApp.send("POST", `/admin/v1/links/${id}/cancel`, options)
        TestApp.expectError(reply, 401, "Unauthorized")
      }
      expect(yield* statusOf(m.button.test, id)).toBe("ACTIVE")
    })
  )

  it.live(
    "a repeated cancel with the same Idempotency-Key replays the first answer",
    TestApp.fresh(function* () {
      const { id } = yield* givenLink
      const send = () =>
        TestApp.send("POST", `/admin/v1/links/${id}/cancel`, { admin: true, idempotencyKey: "cancel-1" })
      const first = yield* send()
      const second = yield* send()
      expect(first.status).toBe(200)
      expect(second.status).toBe(200)
      expect(second.text).toBe(first.text)
      expect(second.headers["idempotent-replayed"]).toBe("true")
    })
  )

  type Action = "cancel" | "card" | "pse" | "approve" | "decline" | "advance"

  it.live.prop(
    "whatever happened to a link, cancel answers by the status B3 read before it (ACTIVE or CANCELLED: 200, else 409) and CANCELLED is final",
    [
      FastCheck.array(
        FastCheck.constantFrom<Action>(
          "cancel",
          "cancel",
          "advance",
          "advance",
          "card",
          "pse",
          "approve",
          "decline"
        ),
        { minLength: 2, maxLength: 8, size: "max" }
      ),
      FastCheck.boolean()
    ],
    ([actions, expires]) =>
      TestApp.run(
        Effect.gen(function* () {
          const m = yield* merchant
          const key = m.button.test
          const clock = yield* TestClock.VirtualTime
          const link = yield* createLink(
            key,
            expires ? { expiration_date: Nanos.fromEpochMillis(TestClock.START + 3_600_000) } : {}
          )
          let bank: string | undefined
          let cancelled = false
          for (const action of actions) {
            const before = yield* statusOf(key, link.id)
            if (cancelled) expect(before).toBe("CANCELLED")
            switch (action) {
              case "cancel": {
                const reply = yield* cancel(link.id)
                if (before === "ACTIVE" || before === "CANCELLED") {
                  expect(reply.status, `${before}: ${reply.text}`).toBe(200)
                  expect(reply.json.status).toBe("CANCELLED")
                  cancelled = true
                } else {
                  expect(reply.status, `${before}: ${reply.text}`).toBe(409)
                  expect(reply.json.errors[0].code).toBe("LinkNotInState")
                  expect(yield* statusOf(key, link.id)).toBe(before)
                }
                break
              }
              case "card":
                yield* post(link.path, cardForm)
                break
              case "pse": {
                const started = yield* post(link.path, { method: "PSE", bank: "1007" })
                if (started.status === 303) bank = started.headers.location!.split("?")[0]!
                break
              }
              case "approve":
              case "decline":
                if (bank !== undefined) yield* post(bank, { decision: action })
                break
              case "advance":
                yield* clock.advance(2 * 3_600_000)
                break
            }
          }
          if (cancelled) {
            expect(yield* statusOf(key, link.id)).toBe("CANCELLED")
            expect((yield* post(link.path, cardForm)).status).toBe(409)
          }
        })
      ),
    { fastCheck: { numRuns: 40 }, timeout: 180_000 }
  )
})
