/**
 * The link expiry sweeper inside the server's own composition (`Server.layerStore`, `layerPorts`,
 * `layerBackground`, the HTTP app), on the virtual clock: a link past its `expiration_date` is
 * recorded EXPIRED in the log without a request touching it. On PGlite, and on PostgreSQL with two
 * nodes sweeping the same links at once.
 */
import * as EventStore from "@cobro/domain/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as LinkExpiry from "../src/LinkExpiry.js"
import { streamTypes, suite, untilRecorded } from "./support/Sweepers.js"

const { send, onPglite, onTwoPostgresNodes, givenMerchant, advance } = suite(
  "link-expiry-admin-token",
  LinkExpiry.run({ pollInterval: "200 millis", batchSize: 7 })
)

/** The node's now, read through the admin clock (an advance of 0 s). */
const nowMillis = Effect.map(advance(0), (r) => Date.parse(r.json.now))

/** B2: an OPEN link expiring at `expiresAt` (exact nanoseconds), or never. */
const createLink = (key: string, expiresAt?: bigint) =>
  Effect.map(
    send("POST", "/online/link/v1", {
      key,
      body:
        expiresAt === undefined
          ? '{"amount_type":"OPEN"}'
          : `{"amount_type":"OPEN","expiration_date":${expiresAt.toString()}}`
    }),
    (reply) => {
      expect(reply.status).toBe(201)
      return reply.json.payload.payment_link as string
    }
  )

const linkTypes = (linkId: string) => streamTypes(`PaymentLink-${linkId}`)

const nanos = (millis: number) => BigInt(millis) * 1_000_000n

describe("link expiry sweeper", { timeout: 180_000 }, () => {
  it.live(
    "a link past its expiration_date is recorded EXPIRED without a request; B3 reads EXPIRED and no notification is scheduled (W11)",
    () =>
      onPglite(
        Effect.gen(function* () {
          const key = yield* givenMerchant(["CREDIT_CARD"])
          const now = yield* nowMillis
          const soon = yield* createLink(key, nanos(now + 60_000) + 123_456n)
          const later = yield* createLink(key, nanos(now + 3_600_000))
          const never = yield* createLink(key)
          expect((yield* send("GET", `/online/link/v1/${soon}`, { key })).json.status).toBe("ACTIVE")

          // Nothing is due yet: the sweeper leaves every link alone.
          yield* Effect.sleep("1 second")
          for (const id of [soon, later, never]) {
            expect(yield* linkTypes(id)).toEqual(["LinkCreated"])
          }

          yield* advance(120)
          yield* untilRecorded(`PaymentLink-${soon}`, "LinkExpired")
          expect(yield* linkTypes(soon)).toEqual(["LinkCreated", "LinkExpired"])
          const b3 = yield* send("GET", `/online/link/v1/${soon}`, { key })
          expect(b3.status).toBe(200)
          expect(b3.json.status).toBe("EXPIRED")
          for (const id of [later, never]) {
            expect(yield* linkTypes(id)).toEqual(["LinkCreated"])
            expect((yield* send("GET", `/online/link/v1/${id}`, { key })).json.status).toBe("ACTIVE")
          }

          // Notifications are scheduled in the commit of their outcome: an expiry raised none (W11).
          const store = yield* EventStore.EventStore
          const all = yield* store.readAll({ limit: 1_000_000 })
          expect(all.filter((e) => e.type === "DeliveryScheduled")).toEqual([])

          // The expiry is recorded once: later rounds find nothing more to do.
          yield* Effect.sleep("1 second")
          expect((yield* linkTypes(soon)).filter((type) => type === "LinkExpired")).toHaveLength(1)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{
            link_id: string
          }>`SELECT link_id FROM cobro_rm_link_expiry ORDER BY link_id`
          expect(rows.map((r) => r.link_id)).toEqual([later])
        })
      )
  )

  it.live("two nodes on one PostgreSQL sweep the same due links: each is recorded EXPIRED exactly once", () =>
    // A second node sweeps too: its own pool, clock, projections and sweeper, on the same database.
    onTwoPostgresNodes(
      Effect.gen(function* () {
        const key = yield* givenMerchant(["CREDIT_CARD"])
        const now = yield* nowMillis
        const links: Array<string> = []
        for (let i = 0; i < 30; i++) links.push(yield* createLink(key, nanos(now + 30_000 + i)))
        const kept = yield* createLink(key, nanos(now + 7_200_000))
        yield* advance(60)
        yield* Effect.forEach(links, (id) => untilRecorded(`PaymentLink-${id}`, "LinkExpired"))
        // Both sweepers keep running a little longer: nothing is recorded twice.
        yield* Effect.sleep("2 seconds")
        for (const id of links) {
          expect(yield* linkTypes(id)).toEqual(["LinkCreated", "LinkExpired"])
          const record = yield* send("GET", `/online/link/v1/${id}`, { key })
          expect(record.json.status).toBe("EXPIRED")
        }
        expect(yield* linkTypes(kept)).toEqual(["LinkCreated"])
      })
    )
  )
})
