/**
 * Sealed secrets in the operator's views of the log (issue 31, item 10): `GET /admin/v1/events` and
 * `GET /admin/v1/streams/{id}/history` show a panel user's password hash and a merchant's sealed
 * secret keys as `<redacted>`, in `data` as in `state`; the log itself keeps them as recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"

/** Every value of a member named `name`, at any depth of a JSON value. */
const valuesOf = (value: unknown, name: string): Array<unknown> =>
  Array.isArray(value)
    ? value.flatMap((v) => valuesOf(v, name))
    : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([k, v]) => (k === name ? [v] : valuesOf(v, name)))
      : []

const streamOf = (id: string) => Effect.flatMap(EventStore.EventStore, (store) => store.readStream(id))

describe(
  "sealed secrets in the admin API's events and histories (issue 31, item 10)",
  { timeout: 60_000 },
  () => {
    it.live(
      "a panel user's password hash and a merchant's sealed secret keys show as <redacted> in the events' data and the histories' data and state; the log keeps them",
      TestApp.withMerchant(function* (m) {
        const created = yield* TestApp.admin("POST", `/admin/v1/merchants/${m.merchantId}/users`, {
          email: "ana@cafe.example",
          password: "correct horse battery",
          role: "full_access"
        })
        expect(created.status, created.text).toBe(201)
        const userId = created.json.user_id as string
        // What the log holds, which no view may show.
        const stored = [
          ...(yield* streamOf(`PanelUser-${userId}`)),
          ...(yield* streamOf(`Merchant-${m.merchantId}`))
        ]
        const secrets = [
          ...valuesOf(
            stored.map((e) => e.data),
            "passwordHash"
          ),
          ...valuesOf(
            stored.map((e) => e.data),
            "secretKey"
          )
        ]
        expect(secrets.length).toBeGreaterThanOrEqual(3)
        for (const secret of secrets) expect(secret).toMatch(/^.{8,}$/)

        const replies = [
          yield* TestApp.admin("GET", `/admin/v1/events?stream=${userId}&limit=100`),
          yield* TestApp.admin("GET", `/admin/v1/events?stream=${m.merchantId}&limit=100`),
          yield* TestApp.admin("GET", `/admin/v1/events?limit=100`),
          yield* TestApp.admin("GET", `/admin/v1/streams/${userId}/history`),
          yield* TestApp.admin("GET", `/admin/v1/streams/Merchant-${m.merchantId}/history`)
        ]
        for (const reply of replies) {
          expect(reply.status, reply.text).toBe(200)
          for (const secret of secrets) expect(reply.text).not.toContain(secret as string)
        }
        const [userEvents, merchantEvents, , userHistory, merchantHistory] = replies.map((r) => r.json)
        expect(userEvents.data.map((e: any) => [e.type, e.data.passwordHash])).toEqual([
          ["PanelUserCreated", "<redacted>"]
        ])
        expect(userEvents.data[0].data).toMatchObject({ email: "ana@cafe.example", role: "full_access" })
        expect(valuesOf(merchantEvents.data, "secretKey")).toEqual([
          "<redacted>",
          "<redacted>",
          "<redacted>",
          "<redacted>"
        ])
        expect(valuesOf(merchantEvents.data, "identityKeyHash")).toHaveLength(4)
        expect(userHistory.events[0].data.passwordHash).toBe("<redacted>")
        expect(userHistory.events[0].state).toMatchObject({ _tag: "ACTIVE", passwordHash: "<redacted>" })
        for (const step of merchantHistory.events) {
          for (const shown of [...valuesOf(step.data, "secretKey"), ...valuesOf(step.state, "secretKey")]) {
            expect(shown).toBe("<redacted>")
          }
        }
        // Shown, not changed: the log still holds what was recorded.
        const after = [
          ...(yield* streamOf(`PanelUser-${userId}`)),
          ...(yield* streamOf(`Merchant-${m.merchantId}`))
        ]
        expect(after).toEqual(stored)
      })
    )
  }
)
