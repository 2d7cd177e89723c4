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
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import type * as Config from "../src/Config.js"
import * as LinkExpiry from "../src/LinkExpiry.js"
import * as Server from "../src/Server.js"
import * as Nodes from "./support/Nodes.js"
import * as ServerProcess from "./support/ServerProcess.js"

const ADMIN_TOKEN = "link-expiry-admin-token"

/** The sweeper as the server runs it, polling faster for the test. */
const sweeper = LinkExpiry.run({ pollInterval: "200 millis", batchSize: 7 })
const settingsFor = (database: Config.Database, sealingKey: Buffer) =>
  Nodes.settingsFor(database, sealingKey, ADMIN_TOKEN)
const node = (settings: Server.Settings) => Nodes.node(settings, sweeper)
const nodeWithHttp = (settings: Server.Settings) => Nodes.nodeWithHttp(settings, sweeper)

const send = Nodes.sender(ADMIN_TOKEN)

/** A merchant with CREDIT_CARD link payments and a test webhook; returns its test button key. */
const givenMerchant = Effect.gen(function* () {
  const created = yield* send("POST", "/admin/v1/merchants", { admin: true, body: { name: "Café Central" } })
  expect(created.status).toBe(201)
  const merchantId: string = created.json.merchant_id
  const methods = yield* send("PUT", `/admin/v1/merchants/${merchantId}/payment-methods`, {
    admin: true,
    body: { link: { CREDIT_CARD: { min: 1000, max: 5000000 } } }
  })
  expect(methods.status).toBe(200)
  const webhook = yield* send("PUT", `/admin/v1/merchants/${merchantId}/webhook`, {
    admin: true,
    body: { url: "https://merchant.example/hook", mode: "test" }
  })
  expect(webhook.status).toBe(200)
  return created.json.keys.payment_button.test.identity_key as string
})

/** The node's now, read through the admin clock (an advance of 0 s). */
const nowMillis = Effect.map(
  send("POST", "/admin/v1/clock/advance", { admin: true, body: { seconds: 0 } }),
  (r) => Date.parse(r.json.now)
)

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

const linkEvents = (linkId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => store.readStream(`PaymentLink-${linkId}`))

/**
 * Retries `check` every 100 ms until it passes, at most 600 times (about a minute). Counted, not
 * timed: the clock in context is the virtual one, which jumps when the test advances it.
 */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => check).pipe(
    Effect.sandbox,
    Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(600))),
    Effect.unsandbox
  )

const nanos = (millis: number) => BigInt(millis) * 1_000_000n

describe("link expiry sweeper", { timeout: 180_000 }, () => {
  it.live(
    "a link past its expiration_date is recorded EXPIRED without a request; B3 reads EXPIRED and no notification is scheduled (W11)",
    () =>
      Effect.gen(function* () {
        const dataDir = Path.join(yield* ServerProcess.tempDir, "data")
        const settings = settingsFor({ _tag: "Pglite", dataDir }, randomBytes(32))
        yield* Effect.gen(function* () {
          const key = yield* givenMerchant
          const now = yield* nowMillis
          const soon = yield* createLink(key, nanos(now + 60_000) + 123_456n)
          const later = yield* createLink(key, nanos(now + 3_600_000))
          const never = yield* createLink(key)
          expect((yield* send("GET", `/online/link/v1/${soon}`, { key })).json.status).toBe("ACTIVE")

          // Nothing is due yet: the sweeper leaves every link alone.
          yield* Effect.sleep("1 second")
          for (const id of [soon, later, never]) {
            expect((yield* linkEvents(id)).map((e) => e.type)).toEqual(["LinkCreated"])
          }

          yield* send("POST", "/admin/v1/clock/advance", { admin: true, body: { seconds: 120 } })
          yield* eventually(
            Effect.flatMap(linkEvents(soon), (events) => {
              const found = events.find((e) => e.type === "LinkExpired")
              return found === undefined ? Effect.fail("not expired yet") : Effect.succeed(found)
            })
          )
          expect((yield* linkEvents(soon)).map((e) => e.type)).toEqual(["LinkCreated", "LinkExpired"])
          const b3 = yield* send("GET", `/online/link/v1/${soon}`, { key })
          expect(b3.status).toBe(200)
          expect(b3.json.status).toBe("EXPIRED")
          for (const id of [later, never]) {
            expect((yield* linkEvents(id)).map((e) => e.type)).toEqual(["LinkCreated"])
            expect((yield* send("GET", `/online/link/v1/${id}`, { key })).json.status).toBe("ACTIVE")
          }

          // Notifications are scheduled in the commit of their outcome: an expiry raised none (W11).
          const store = yield* EventStore.EventStore
          const all = yield* store.readAll({ limit: 1_000_000 })
          expect(all.filter((e) => e.type === "DeliveryScheduled")).toEqual([])

          // The expiry is recorded once: later rounds find nothing more to do.
          yield* Effect.sleep("1 second")
          expect((yield* linkEvents(soon)).filter((e) => e.type === "LinkExpired")).toHaveLength(1)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{
            link_id: string
          }>`SELECT link_id FROM cobro_rm_link_expiry ORDER BY link_id`
          expect(rows.map((r) => r.link_id)).toEqual([later])
        }).pipe(Effect.provide(nodeWithHttp(settings)))
      }).pipe(Effect.scoped)
  )

  it.live("two nodes on one PostgreSQL sweep the same due links: each is recorded EXPIRED exactly once", () =>
    Effect.gen(function* () {
      const url = yield* ServerProcess.postgresDatabase
      const dataDir = yield* ServerProcess.tempDir
      const sealingKey = randomBytes(32)
      const database: Config.Database = { _tag: "Postgres", url: Redacted.make(url), dataDir }
      const settings = settingsFor(database, sealingKey)
      yield* Effect.gen(function* () {
        // The second node: its own pool, clock, projections and sweeper, on the same database.
        yield* Layer.build(node(settingsFor(database, sealingKey)))
        const key = yield* givenMerchant
        const now = yield* nowMillis
        const links: Array<string> = []
        for (let i = 0; i < 30; i++) links.push(yield* createLink(key, nanos(now + 30_000 + i)))
        const kept = yield* createLink(key, nanos(now + 7_200_000))
        yield* send("POST", "/admin/v1/clock/advance", { admin: true, body: { seconds: 60 } })
        yield* eventually(
          Effect.forEach(links, (id) =>
            Effect.flatMap(linkEvents(id), (events) =>
              events.some((e) => e.type === "LinkExpired")
                ? Effect.void
                : Effect.fail(`${id} not expired yet`)
            )
          )
        )
        // Both sweepers keep running a little longer: nothing is recorded twice.
        yield* Effect.sleep("2 seconds")
        for (const id of links) {
          expect((yield* linkEvents(id)).map((e) => e.type)).toEqual(["LinkCreated", "LinkExpired"])
          const record = yield* send("GET", `/online/link/v1/${id}`, { key })
          expect(record.json.status).toBe("EXPIRED")
        }
        expect((yield* linkEvents(kept)).map((e) => e.type)).toEqual(["LinkCreated"])
      }).pipe(Effect.provide(nodeWithHttp(settings)))
    }).pipe(Effect.scoped)
  )
})
