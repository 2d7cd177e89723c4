/**
 * One function per call the suites make again and again, over `TestApp.send`: the spec's endpoints
 * (A3, B2, B3, C1, C2, C4, C5), the terminal sandbox, the hosted pages' forms, and what a test reads
 * back from the log.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestApp from "./TestApp.js"

/** A3: `POST /payments/app-checkout` with a terminal-API key. */
export const checkout = (key: string, body: unknown) =>
  TestApp.send("POST", "/payments/app-checkout", { key, body })

/** B2: `POST /online/link/v1` with a payment-button key. */
export const createLink = (key: string, body: unknown) =>
  TestApp.send("POST", "/online/link/v1", { key, body })

/** B3: `GET /online/link/v1/{payment_link}`. */
export const readLink = (key: string, id: string) => TestApp.send("GET", `/online/link/v1/${id}`, { key })

/** B2 that must succeed (201): the new link's id and the path of its checkout page. */
export const newLink = (key: string, body: unknown) =>
  Effect.gen(function* () {
    const reply = yield* createLink(key, body)
    expect(reply.status, reply.text).toBe(201)
    return { id: reply.json.payload.payment_link as string, path: new URL(reply.json.payload.url).pathname }
  })

/** The link's status, as B3 reads it. */
export const linkStatus = (key: string, id: string) =>
  Effect.map(readLink(key, id), (reply) => reply.json.status as string)

/** C1: `POST /v1/payment-intent`. */
export const createIntent = (key: string, body: unknown) =>
  TestApp.send("POST", "/v1/payment-intent", { key, body })

/** C2: `GET /v1/payment-intent/{reference_id}`. */
export const readIntent = (key: string, reference: string) =>
  TestApp.send("GET", `/v1/payment-intent/${reference}`, { key })

/** C3: `PUT /v1/payment-intent`. */
export const updateIntent = (key: string, body: unknown) =>
  TestApp.send("PUT", "/v1/payment-intent", { key, body })

/** C4: `POST /v1/payment`. */
export const attempt = (key: string, body: unknown) => TestApp.send("POST", "/v1/payment", { key, body })

/** C5: `GET /v1/payment/{reference_id}`. */
export const readPayment = (key: string, reference: string) =>
  TestApp.send("GET", `/v1/payment/${reference}`, { key })

/** C7: `POST /v1/payment/void`. */
export const voidPayment = (key: string, transaction_id: string) =>
  TestApp.send("POST", "/v1/payment/void", { key, body: { transaction_id } })

/** C8: `POST /v1/payment/refund`. */
export const requestRefund = (key: string, body: unknown) =>
  TestApp.send("POST", "/v1/payment/refund", { key, body })

/** C9: `GET /v1/payment/refund/{transaction_id}`. */
export const refundStatus = (key: string, transaction_id: string) =>
  TestApp.send("GET", `/v1/payment/refund/${transaction_id}`, { key })

/** `PUT /sandbox/v1/terminals/{serial}/behavior` with a terminal-API key. */
export const behavior = (key: string, serial: string, body: unknown) =>
  TestApp.send("PUT", `/sandbox/v1/terminals/${serial}/behavior`, { key, body })

/** `POST /sandbox/v1/terminals/{serial}/actions` with a terminal-API key. */
export const action = (key: string, serial: string, name: string) =>
  TestApp.send("POST", `/sandbox/v1/terminals/${serial}/actions`, { key, body: { action: name } })

/** A form a hosted page posts (`application/x-www-form-urlencoded`): fields, or a body as written. */
export const postForm = (
  path: string,
  form: Record<string, string> | string,
  headers: Record<string, string> = {}
) =>
  TestApp.send("POST", path, {
    body: typeof form === "string" ? form : new URLSearchParams(form).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers }
  })

/** A hosted page (`GET path`) that must be shown: a 200 in HTML. */
export const showPage = (path: string) =>
  Effect.tap(TestApp.send("GET", path), (page) => TestApp.expectPage(page, 200))

/** The cardholder's decision on a challenge (or bank) page at `path`. */
export const decide = (path: string, decision: string) => postForm(path, { decision })

/** The path of the page a C4 answer sends the cardholder to (bare, or the enveloped 3DS answer). */
export const challengePath = (attempt: TestApp.Reply): string =>
  new URL((attempt.json.next_actions ?? attempt.json.payload.next_actions).redirect_url).pathname

/** The types of a terminal checkout's events, in order. */
export const checkoutEvents = (integrationId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`TerminalCheckout-${integrationId}`), (events) => events.map((e) => e.type))
  )
