/**
 * Who each event of a payment names (`metadata.actor`, the merchant panel's "who"), through the real
 * handler on a socket: the merchant of the key for what its API calls cause (`MER_…`), the payer for
 * the hosted checkout and challenge pages (`payer`), the terminal for what it reports
 * (`terminal:<serial>`), the operator for the refund review (`admin`), the sandbox for its own refund
 * review (`sandbox`), and the timeout sweeper for an abandoned payment (`sweeper`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as Effect from "effect/Effect"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

/** Every event of the streams whose id starts with `prefix`, in log order: its type and its actor ("" for none). */
const historyOf = (prefix: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 1_000_000 }), (events) =>
      events.filter((e) => e.streamId.startsWith(prefix)).map((e) => [e.type, e.metadata.actor ?? ""])
    )
  )

/** The id of the one stream of the log whose id starts with `prefix`, without the prefix. */
const onlyIdOf = (prefix: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readAll({ limit: 1_000_000 }), (events) => {
      const ids = [...new Set(events.filter((e) => e.streamId.startsWith(prefix)).map((e) => e.streamId))]
      expect(ids).toHaveLength(1)
      return ids[0]!.slice(prefix.length)
    })
  )

/** A merchant with a terminal (SN-0001) and CREDIT_CARD links, its keys warmed up (one read each). */
const merchant = () =>
  Effect.gen(function* () {
    const m = yield* TestApp.createMerchantWithTerminal()
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.test })
    yield* TestApp.send("GET", "/v1/payment/pse/banks", { key: m.button.production })
    return m
  })

/** C1 then C4 with a card of `total` on `reference`: the attempt's reply (201). */
const attempted = (key: string, reference: string, total: number) =>
  Effect.gen(function* () {
    expect((yield* Calls.createIntent(key, Bodies.intent(reference, total))).status).toBe(201)
    const attempt = yield* Calls.attempt(key, Bodies.cardAttempt(reference))
    expect(attempt.status, attempt.text).toBe(201)
    return attempt
  })

const transactionOf = (reply: TestApp.Reply): string =>
  reply.json.transaction_id ?? reply.json.payload.transaction_id

describe("who the events of a payment name (metadata.actor)", () => {
  it.live(
    "an online payment: the intent, its update, the attempt and the acquirer's answer name the merchant of the key",
    TestApp.given(merchant(), function* (m) {
      const key = m.button.test
      expect((yield* Calls.createIntent(key, Bodies.intent("order-1", 555040))).status).toBe(201)
      expect(
        (yield* Calls.updateIntent(key, Bodies.intent("order-1", 555040, { description: "Pedido" }))).status
      ).toBe(200)
      const attempt = yield* Calls.attempt(key, Bodies.cardAttempt("order-1"))
      expect(attempt.status, attempt.text).toBe(201)
      const transactionId = transactionOf(attempt)
      expect(yield* historyOf("PaymentIntent-")).toEqual([
        ["IntentCreated", m.merchantId],
        ["IntentUpdated", m.merchantId],
        ["IntentPaymentStarted", m.merchantId],
        ["IntentPaid", m.merchantId]
      ])
      expect(yield* historyOf(`Payment-${transactionId}`)).toEqual([
        ["PaymentStarted", m.merchantId],
        ["PaymentApproved", m.merchantId]
      ])
    })
  )

  it.live(
    "a 3DS challenge: the attempt names the merchant, the cardholder's decision on Cobro's page names the payer",
    TestApp.given(merchant(), function* (m) {
      const attempt = yield* attempted(m.button.test, "order-1", 555020)
      const path = Calls.challengePath(attempt)
      expect((yield* TestApp.send("GET", path)).status).toBe(200)
      expect((yield* Calls.decide(path, "approve")).status).toBeLessThan(400)
      expect(yield* historyOf(`Payment-${transactionOf(attempt)}`)).toEqual([
        ["PaymentStarted", m.merchantId],
        ["PaymentChallengeRequired", m.merchantId],
        ["PaymentApproved", "payer"]
      ])
      expect((yield* historyOf("PaymentIntent-")).slice(-2)).toEqual([
        ["IntentPaymentStarted", m.merchantId],
        ["IntentPaid", "payer"]
      ])
    })
  )

  it.live(
    "a void names the merchant of the key",
    TestApp.given(merchant(), function* (m) {
      const transactionId = transactionOf(yield* attempted(m.button.test, "order-1", 555040))
      expect((yield* Calls.voidPayment(m.button.test, transactionId)).status).toBe(204)
      expect((yield* historyOf(`Payment-${transactionId}`)).at(-1)).toEqual(["PaymentVoided", m.merchantId])
    })
  )

  it.live(
    "a refund: the request names the merchant, the operator's review admin, the sandbox's own review sandbox",
    TestApp.given(merchant(), function* (m) {
      const time = yield* TestClock.VirtualTime
      // Production: the operator reviews.
      const live = transactionOf(yield* attempted(m.button.production, "order-1", 50000))
      const requested = yield* Calls.requestRefund(m.button.production, {
        reference_id: "order-1",
        transaction_id: live
      })
      expect(requested.status).toBe(204)
      const refundId = yield* onlyIdOf("Refund-")
      expect(
        (yield* TestApp.admin("POST", `/admin/v1/refunds/${live}/review`, { outcome: "APPROVED" })).status
      ).toBe(200)
      expect(yield* historyOf(`Refund-${refundId}`)).toEqual([
        ["RefundRequested", m.merchantId],
        ["RefundApproved", "admin"]
      ])
      expect((yield* historyOf(`Payment-${live}`)).slice(-2)).toEqual([
        ["PaymentRefundRequested", m.merchantId],
        ["PaymentRefunded", "admin"]
      ])
      // Sandbox: the review falls due after 60 s and is the sandbox's, whichever command writes it.
      const test = transactionOf(yield* attempted(m.button.test, "order-2", 50000))
      yield* Calls.requestRefund(m.button.test, { reference_id: "order-2", transaction_id: test })
      yield* time.advance(60_000)
      expect(
        (yield* TestApp.admin("POST", `/admin/v1/refunds/${test}/review`, { outcome: "APPROVED" })).status
      ).toBe(200)
      expect((yield* historyOf(`Payment-${test}`)).slice(-2)).toEqual([
        ["PaymentRefundRequested", m.merchantId],
        ["PaymentRefunded", "sandbox"]
      ])
      expect((yield* historyOf("Refund-")).filter(([type]) => type !== "RefundRequested")).toEqual([
        ["RefundApproved", "admin"],
        ["RefundApproved", "sandbox"]
      ])
    })
  )

  it.live(
    "an abandoned payment expired by the timeout sweeper names the sweeper",
    TestApp.given(merchant(), function* (m) {
      const time = yield* TestClock.VirtualTime
      const transactionId = transactionOf(yield* attempted(m.button.test, "order-1", 555020))
      yield* time.advance(16 * 60_000)
      const { payment } = yield* OnlinePayments.expirePayment(transactionId)
      expect(payment._tag).toBe("EXPIRED")
      expect((yield* historyOf(`Payment-${transactionId}`)).at(-1)).toEqual(["PaymentRejected", "sweeper"])
      expect((yield* historyOf("PaymentIntent-")).at(-1)).toEqual(["IntentPaymentFailed", "sweeper"])
    })
  )

  it.live(
    "a link payment abandoned, and a link overdue, are expired in the name of the sweeper",
    TestApp.given(merchant(), function* (m) {
      const time = yield* TestClock.VirtualTime
      const abandoned = yield* Calls.newLink(m.button.test, { amount_type: "OPEN" })
      const pending = yield* Calls.postForm(abandoned.path, Bodies.cardForm({ amount: "555020" }))
      expect(pending.status, pending.text).toBe(303)
      const overdue = yield* Calls.newLink(m.button.test, {
        amount_type: "OPEN",
        expiration_date: BigInt(TestClock.START + 60_000) * 1_000_000n
      })
      yield* time.advance(16 * 60_000)
      const [started] = yield* Effect.flatMap(EventStore.EventStore, (store) =>
        store.readStream(`PaymentLink-${abandoned.id}`, { fromVersion: 2 })
      )
      const transactionId = TransactionId.make((started!.data as { transactionId: string }).transactionId)
      yield* LinkPayments.expirePayment(abandoned.id, transactionId)
      yield* LinkPayments.expire(overdue.id)
      expect((yield* historyOf(`PaymentLink-${abandoned.id}`)).at(-1)).toEqual([
        "LinkPaymentFailed",
        "sweeper"
      ])
      expect(yield* historyOf(`PaymentLink-${overdue.id}`)).toEqual([
        ["LinkCreated", m.merchantId],
        ["LinkExpired", "sweeper"]
      ])
    })
  )

  it.live(
    "a terminal checkout: the checkout and its push name the merchant, what the terminal reports names terminal:<serial>",
    TestApp.given(merchant(), function* (m) {
      const terminal = `terminal:${m.serial}`
      const created = yield* Calls.checkout(m.terminal.test, Bodies.terminalSale(m.serial))
      expect(created.status, created.text).toBe(201)
      const integrationId = created.json.payload.integration_id as string
      expect(yield* historyOf(`TerminalCheckout-${integrationId}`)).toEqual([
        ["CheckoutCreated", m.merchantId],
        ["PushAttempted", m.merchantId],
        ["CheckoutSent", terminal],
        ["SaleApproved", terminal]
      ])
      // The sale voided on the terminal: its report.
      const [first] = yield* Effect.flatMap(EventStore.EventStore, (store) =>
        store.readStream(`TerminalCheckout-${integrationId}`)
      )
      const transactionId = TransactionId.make((first!.data as { transactionId: string }).transactionId)
      yield* TerminalPayments.approveVoid(IntegrationId.make(integrationId), transactionId)
      expect((yield* historyOf(`TerminalCheckout-${integrationId}`)).at(-1)).toEqual(["SaleVoided", terminal])
    })
  )

  it.live(
    "a terminal that cannot be reached: the failed push names the merchant, the push again on power_on and the outcome the terminal",
    TestApp.given(merchant(), function* (m) {
      const terminal = `terminal:${m.serial}`
      expect((yield* Calls.action(m.terminal.test, m.serial, "power_off")).status).toBe(200)
      const created = yield* Calls.checkout(m.terminal.test, Bodies.terminalSale(m.serial))
      expect(created.status, created.text).toBe(201)
      const integrationId = created.json.payload.integration_id as string
      expect((yield* Calls.action(m.terminal.test, m.serial, "power_on")).status).toBe(200)
      expect(yield* historyOf(`TerminalCheckout-${integrationId}`)).toEqual([
        ["CheckoutCreated", m.merchantId],
        ["PushAttempted", m.merchantId],
        ["DeliveryFailed", m.merchantId],
        ["PushAttempted", terminal],
        ["CheckoutSent", terminal],
        ["SaleApproved", terminal]
      ])
    })
  )

  it.live(
    "a link payment: the link names the merchant, the payment on the checkout page and its answers the payer",
    TestApp.given(merchant(), function* (m) {
      const link = yield* Calls.newLink(m.button.test, { amount_type: "OPEN" })
      const paid = yield* Calls.postForm(link.path, Bodies.cardForm({ amount: "50000" }))
      expect(paid.status, paid.text).toBe(303)
      expect(yield* historyOf(`PaymentLink-${link.id}`)).toEqual([
        ["LinkCreated", m.merchantId],
        ["LinkPaymentStarted", "payer"],
        ["LinkPaid", "payer"]
      ])
      // A 3DS challenge on another link: the payer's decision on the transaction page.
      const other = yield* Calls.newLink(m.button.test, { amount_type: "OPEN" })
      const pending = yield* Calls.postForm(other.path, Bodies.cardForm({ amount: "555020" }))
      expect(pending.status, pending.text).toBe(303)
      const page = new URL(pending.headers["location"]!, "http://cobro.test").pathname
      expect((yield* Calls.decide(page, "decline")).status).toBe(303)
      expect(yield* historyOf(`PaymentLink-${other.id}`)).toEqual([
        ["LinkCreated", m.merchantId],
        ["LinkPaymentStarted", "payer"],
        ["LinkPaymentFailed", "payer"]
      ])
    })
  )
})
