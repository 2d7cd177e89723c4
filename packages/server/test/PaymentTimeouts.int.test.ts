/**
 * The payment timeout sweeper inside the server's own composition (`Server.layerStore`,
 * `layerPorts`, `layerBackground`, the HTTP app), on the virtual clock: a payment link left at the
 * 3DS challenge or the bank is payable again once the timeout has passed, an online payment left at
 * its 3DS challenge reads REJECTED through C5 with its intent ACTIVE again, both are notified
 * SALE_REJECTED, and a payer who comes back is told the payment expired. On PGlite, and on
 * PostgreSQL with two nodes sweeping the same payments at once.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Payment from "@cobro/domain/Payment"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PaymentTimeouts from "../src/PaymentTimeouts.js"
import { eventually, streamTypes, suite, untilRecorded } from "./support/Sweepers.js"

const TIMEOUT_SECONDS = Duration.toSeconds(Payment.ABANDONED_PAYMENT_TIMEOUT)

const {
  send,
  onPglite,
  onTwoPostgresNodes,
  givenMerchant: merchantWith,
  advance
} = suite("payment-timeouts-admin-token", PaymentTimeouts.run({ pollInterval: "200 millis", batchSize: 7 }))

/** A merchant with card and PSE link methods and a test webhook; returns its test button key. */
const givenMerchant = Effect.gen(function* () {
  const key = yield* merchantWith(["CREDIT_CARD", "PSE"])
  // One warm-up read: the log-backed directory answers the first lookup of a new key late.
  yield* eventually(
    Effect.flatMap(send("GET", "/v1/payment/pse/banks", { key }), (r) =>
      r.status === 200 ? Effect.void : Effect.fail("key not known yet")
    )
  )
  return key
})

const cardForm = {
  method: "CREDIT_CARD",
  card_number: "4111111111111111",
  card_name: "Ana Gómez",
  card_expiry: "12/30",
  card_cvc: "123",
  installments: "1"
}

/** B2 a CLOSE link of `total`, then its payment started on the checkout page; the step's path. */
const abandonedLinkPayment = (key: string, total: number, form: Record<string, string>) =>
  Effect.gen(function* () {
    const created = yield* send("POST", "/online/link/v1", {
      key,
      body: { amount_type: "CLOSE", amount: { total_amount: total } }
    })
    expect(created.status).toBe(201)
    const linkId = created.json.payload.payment_link as string
    const started = yield* send("POST", `/checkout/${linkId}`, { form })
    expect(started.status).toBe(303)
    const stepPath = started.location!.split("?")[0]!
    const step = yield* send("GET", stepPath)
    expect(step.text).toContain('id="approve"')
    const transactionId = stepPath.split("/").pop()!
    return { linkId, stepPath, transactionId }
  })

/** C1 an intent of 555020 and C4 a card attempt: the 3DS challenge (sandbox), abandoned. */
const abandonedChallenge = (key: string, reference: string) =>
  Effect.gen(function* () {
    const intent = yield* send("POST", "/v1/payment-intent", {
      key,
      body: {
        reference_id: reference,
        amount: { currency: "COP", total_amount: 555020 },
        callback_url: "https://shop.example/back"
      }
    })
    expect(intent.status).toBe(201)
    const attempt = yield* send("POST", "/v1/payment", {
      key,
      body: {
        reference_id: reference,
        payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111" }
      }
    })
    expect(attempt.status).toBe(201)
    const payload = attempt.json.payload ?? attempt.json
    const challengePath = new URL(payload.next_actions.redirect_url).pathname
    return { transactionId: payload.transaction_id as string, challengePath }
  })

const linkStatus = (key: string, linkId: string) =>
  Effect.map(send("GET", `/online/link/v1/${linkId}`, { key }), (r) => r.json.status as string)

/** The notification types scheduled for a transaction (the subject of its deliveries). */
const notifiedTypes = (transactionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const all = yield* store.readAll({ limit: 1_000_000 })
    return all
      .filter((e) => e.type === "DeliveryScheduled")
      .map((e) => e.data as { readonly subject: string; readonly type: string })
      .filter((d) => d.subject === transactionId)
      .map((d) => d.type)
  })

describe("payment timeout sweeper", { timeout: 240_000 }, () => {
  it.live(
    "an abandoned link payment (3DS challenge, PSE bank) is payable again after the timeout; an abandoned online 3DS challenge reads REJECTED in C5 with its intent ACTIVE; both are notified SALE_REJECTED and a late decision is told 'expired'",
    () =>
      onPglite(
        Effect.gen(function* () {
          const key = yield* givenMerchant
          const card = yield* abandonedLinkPayment(key, 555020, cardForm)
          const pse = yield* abandonedLinkPayment(key, 80000, { method: "PSE", bank: "1007" })
          const online = yield* abandonedChallenge(key, "order-timeout-1")
          expect(yield* linkStatus(key, card.linkId)).toBe("PROCESSING")
          expect(yield* linkStatus(key, pse.linkId)).toBe("PROCESSING")

          // Before the timeout (the virtual clock also runs with real time: a margin of 5 minutes
          // keeps a slow machine from crossing it), nothing is failed.
          yield* advance(TIMEOUT_SECONDS - 300)
          yield* Effect.sleep("1 second")
          expect(yield* linkStatus(key, card.linkId)).toBe("PROCESSING")
          expect((yield* send("GET", "/v1/payment/order-timeout-1", { key })).json.status).toBe("RUNNING")

          yield* advance(300)
          for (const link of [card, pse]) {
            yield* eventually(
              Effect.flatMap(linkStatus(key, link.linkId), (status) =>
                status === "ACTIVE" ? Effect.void : Effect.fail(`${link.linkId} still ${status}`)
              )
            )
            expect(yield* streamTypes(`PaymentLink-${link.linkId}`)).toEqual([
              "LinkCreated",
              "LinkPaymentStarted",
              "LinkPaymentFailed"
            ])
          }
          // C5: the online payment is REJECTED, its intent ACTIVE again.
          const c5 = yield* eventually(
            Effect.flatMap(send("GET", "/v1/payment/order-timeout-1", { key }), (r) =>
              r.json.status === "REJECTED" ? Effect.succeed(r) : Effect.fail(`still ${r.json.status}`)
            )
          )
          expect(c5.status).toBe(200)
          expect(c5.json.transaction_id).toBe(online.transactionId)
          const c2 = yield* eventually(
            Effect.flatMap(send("GET", "/v1/payment-intent/order-timeout-1", { key }), (r) => {
              const status = (r.json.payload ?? r.json).status
              return status === "ACTIVE" ? Effect.succeed(status) : Effect.fail(`intent ${status}`)
            })
          )
          expect(c2).toBe("ACTIVE")

          // The payers come back: each is told the payment expired, never a 500, and nothing changes.
          const lateLink = yield* send("POST", card.stepPath, { form: { decision: "approve", lang: "en" } })
          expect(lateLink.status).toBe(409)
          expect(lateLink.text).toContain('data-status="EXPIRED"')
          expect(lateLink.text).toContain("This payment expired")
          expect(lateLink.text).toContain('id="pay-again"')
          const shownLink = yield* send("GET", `${pse.stepPath}?lang=en`)
          expect(shownLink.status).toBe(200)
          expect(shownLink.text).toContain('data-status="EXPIRED"')
          const lateChallenge = yield* send("POST", online.challengePath, { form: { decision: "approve" } })
          expect(lateChallenge.status).toBe(409)
          expect(lateChallenge.text).toContain('data-status="EXPIRED"')
          expect(lateChallenge.text).toContain("This payment expired")
          const shownChallenge = yield* send("GET", online.challengePath)
          expect(shownChallenge.status).toBe(200)
          expect(shownChallenge.text).toContain('data-status="EXPIRED"')
          expect((yield* send("GET", "/v1/payment/order-timeout-1", { key })).json.status).toBe("REJECTED")
          expect(yield* linkStatus(key, card.linkId)).toBe("ACTIVE")

          // Notified as any failure: SALE_REJECTED, once each.
          for (const transactionId of [card.transactionId, pse.transactionId, online.transactionId]) {
            const types = yield* eventually(
              Effect.flatMap(notifiedTypes(transactionId), (types) =>
                types.length > 0 ? Effect.succeed(types) : Effect.fail("not notified yet")
              )
            )
            expect(types).toEqual(["SALE_REJECTED"])
          }

          // The link is payable again, and the intent takes a new attempt.
          const paid = yield* send("POST", `/checkout/${pse.linkId}`, { form: cardForm })
          expect(paid.status).toBe(303)
          expect(yield* linkStatus(key, pse.linkId)).toBe("PAID")
          const retry = yield* send("POST", "/v1/payment", {
            key,
            body: {
              reference_id: "order-timeout-1",
              payment_method: { name: "CREDIT_CARD", card_number: "4111111111111111" }
            }
          })
          expect(retry.status).toBe(201)

          // Later rounds record nothing more.
          yield* Effect.sleep("1 second")
          expect(yield* streamTypes(`Payment-${online.transactionId}`)).toEqual([
            "PaymentStarted",
            "PaymentChallengeRequired",
            "PaymentRejected"
          ])
        })
      )
  )

  it.live("two nodes on one PostgreSQL sweep the same abandoned payments: each is failed exactly once", () =>
    onTwoPostgresNodes(
      Effect.gen(function* () {
        const key = yield* givenMerchant
        const links: Array<{ readonly linkId: string }> = []
        for (let i = 0; i < 10; i++)
          links.push(yield* abandonedLinkPayment(key, 80000 + i, { method: "PSE", bank: "1007" }))
        const challenges: Array<{ readonly transactionId: string }> = []
        for (let i = 0; i < 10; i++) challenges.push(yield* abandonedChallenge(key, `order-two-nodes-${i}`))
        yield* advance(TIMEOUT_SECONDS + 60)
        yield* Effect.forEach(links, ({ linkId }) =>
          untilRecorded(`PaymentLink-${linkId}`, "LinkPaymentFailed")
        )
        yield* Effect.forEach(challenges, ({ transactionId }) =>
          untilRecorded(`Payment-${transactionId}`, "PaymentRejected")
        )
        // Both sweepers keep running a little longer: nothing is recorded twice.
        yield* Effect.sleep("2 seconds")
        for (const { linkId } of links) {
          expect(yield* streamTypes(`PaymentLink-${linkId}`)).toEqual([
            "LinkCreated",
            "LinkPaymentStarted",
            "LinkPaymentFailed"
          ])
          expect(yield* linkStatus(key, linkId)).toBe("ACTIVE")
        }
        for (let i = 0; i < challenges.length; i++) {
          expect(yield* streamTypes(`Payment-${challenges[i]!.transactionId}`)).toEqual([
            "PaymentStarted",
            "PaymentChallengeRequired",
            "PaymentRejected"
          ])
          const c5 = yield* send("GET", `/v1/payment/order-two-nodes-${i}`, { key })
          expect(c5.json.status).toBe("REJECTED")
        }
      })
    )
  )
})
