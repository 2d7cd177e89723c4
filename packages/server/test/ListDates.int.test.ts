/**
 * The created range of the operator's payments list on PostgreSQL (issue 31, item 6), in the
 * server's own composition over a socket: every instant the parameter's format can write (years
 * 0000 to 9999, any offset, so from 2 BC to 10000 AD) is one PostgreSQL's `timestamptz` holds and
 * filters exactly; anything else is a 400 naming the parameter in the admin envelope, never a 500.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Nodes from "./support/Nodes.js"

const ADMIN_TOKEN = "list-dates-admin-token"

const send = Nodes.sender(ADMIN_TOKEN)

const onPostgres = Nodes.onPostgres(ADMIN_TOKEN)

/** A merchant with one online payment, listed: the list's path and the payment's id. */
const givenPayment = Effect.gen(function* () {
  const created = yield* send("POST", "/admin/v1/merchants", { admin: true, body: { name: "Café Central" } })
  expect(created.status, created.text).toBe(201)
  const merchantId: string = created.json.merchant_id
  const button: string = created.json.keys.payment_button.test.identity_key
  // A warm-up read: the log-backed directory answers the first lookup of a new key late.
  yield* send("GET", "/v1/payment/pse/banks", { key: button })
  const paid = yield* Nodes.paidByCard(send, button, "paid-1", 555040)
  const path = `/admin/v1/merchants/${merchantId}/payments`
  const transactionId: string = paid.json.transaction_id
  // Listed once no earlier transaction of the cluster can still commit (the lists' visibility rule).
  for (let i = 0; i < 150; i++) {
    const listed = yield* send("GET", path, { admin: true })
    if (listed.json?.data?.some((row: { id: string }) => row.id === transactionId) === true) break
    yield* Effect.sleep("100 millis")
  }
  return { path, transactionId }
})

describe("the created range on PostgreSQL", { timeout: 240_000 }, () => {
  it.live(
    "created[gte] and created[lt] take every instant the format writes, year 0000 to 9999 with any offset, and filter exactly; other text is 400 naming the parameter, never 500",
    () =>
      onPostgres(
        Effect.gen(function* () {
          const { path, transactionId } = yield* givenPayment
          const ids = (query: string) =>
            Effect.gen(function* () {
              const reply = yield* send("GET", `${path}?${query}`, { admin: true })
              expect(reply.status, `${query} → ${reply.status} ${reply.text}`).toBe(200)
              return (reply.json.data as Array<{ id: string }>).map((row) => row.id)
            })
          const q = (name: string, value: string) => `${name}=${encodeURIComponent(value)}`
          expect(yield* ids(q("created[gte]", "0000-01-01T00:00:00Z"))).toEqual([transactionId])
          expect(yield* ids(q("created[lt]", "0000-01-01T00:00:00Z"))).toEqual([])
          // 2 BC and 10000 AD in UTC.
          expect(yield* ids(q("created[gte]", "0000-01-01T00:00:00+05:00"))).toEqual([transactionId])
          expect(yield* ids(q("created[lt]", "9999-12-31T23:59:59.999-23:59"))).toEqual([transactionId])
          expect(yield* ids(q("created[gte]", "9999-12-31T23:59:59.999-23:59"))).toEqual([])
          expect(
            yield* ids(
              `${q("created[gte]", "0001-01-01T00:00:00Z")}&${q("created[lt]", "9999-12-31T23:59:59Z")}`
            )
          ).toEqual([transactionId])
          for (const name of ["created[gte]", "created[lt]"]) {
            for (const bad of [
              "+010000-01-01T00:00:00Z",
              "-000001-01-01T00:00:00Z",
              "10000-01-01T00:00:00Z"
            ]) {
              const reply = yield* send("GET", `${path}?${q(name, bad)}`, { admin: true })
              expect(reply.status, `${name}=${bad} → ${reply.text}`).toBe(400)
              expect(reply.json.payload).toEqual({})
              expect(reply.json.errors, reply.text).toHaveLength(1)
              expect(reply.json.errors[0], reply.text).toMatchObject({ code: "ValidationError", field: name })
            }
          }
        })
      )
  )
})
