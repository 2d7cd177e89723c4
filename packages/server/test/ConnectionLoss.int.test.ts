/**
 * The server process on PostgreSQL while its database connections are terminated under load
 * (`pg_terminate_backend`, issue 17): everything in the background catches up without a restart.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "./support/ServerProcess.js"

const admin = ServerProcess.asAdmin
const withKey = ServerProcess.withKey

const sale = (reference: string) => ServerProcess.terminalSale("SN-DROP", reference)

const within = ServerProcess.within

describe("the server when PostgreSQL drops its connections", () => {
  it.scopedLive(
    "after its connections are terminated under load, every consumer checkpoint reaches the log's head, A4 lists every sale, every webhook is delivered, the link sweeper still runs and the log's tree takes in every event, without a restart",
    Effect.fnUntraced(function* () {
      const { hook, server, database } = yield* ServerProcess.startOnPostgresWithReceiver({
        COBRO_CLOCK: "virtual",
        ADMIN_TOKEN: "drop-admin-token"
      })
      const { keys } = yield* ServerProcess.merchantWithTerminal(server, {
        name: "Tienda Caída",
        serial: "SN-DROP",
        methods: { terminal: { POS: true }, link: { CREDIT_CARD: { min: 1000, max: 5000000 } } },
        webhook: { url: hook.url, mode: "test" }
      })
      const terminalKey: string = keys.terminal_api.test.identity_key
      const buttonKey: string = keys.payment_button.test.identity_key
      // A link due in a minute of the virtual clock: the sweeper expires it once the clock passes that.
      const now = yield* admin(server, "POST", "/admin/v1/clock/advance", { seconds: 0 })
      const expiresAt = BigInt(Date.parse(now.json.now) + 60_000) * 1_000_000n
      const link = yield* withKey(server, buttonKey, "POST", "/online/link/v1", {
        amount_type: "CLOSE",
        amount: { total_amount: 50_000 },
        expiration_date: expiresAt.toString()
      })
      expect(link.status, link.text).toBe(201)

      // Sales from two clients while every connection of the server is cut, again and again.
      const db = yield* ServerProcess.databaseClient(database.DATABASE_URL)
      const sold: Array<string> = []
      let selling = true
      const seller = (n: number) =>
        Effect.gen(function* () {
          for (let i = 0; selling; i++) {
            const reference = `drop-${n}-${i}`
            const reply = yield* withKey(
              server,
              terminalKey,
              "POST",
              "/payments/app-checkout",
              sale(reference)
            )
            if (reply.status === 201) sold.push(reference)
          }
        })
      const sellers = yield* Effect.fork(Effect.all([seller(1), seller(2)], { concurrency: 2 }))
      let terminated = 0
      for (let round = 0; round < 12; round++) {
        yield* Effect.sleep("400 millis")
        const result = yield* Effect.promise(() =>
          db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                      WHERE datname = current_database() AND pid <> pg_backend_pid()`)
        )
        terminated += result.rowCount ?? 0
      }
      selling = false
      yield* sellers.await
      expect(terminated).toBeGreaterThan(12)
      expect(sold.length).toBeGreaterThan(10)

      // Every consumer's checkpoint reaches the head of the log (nothing is appended meanwhile
      // once the deliveries are recorded).
      const behind = Effect.promise(() =>
        db.query(`SELECT c.name, c.global_position::text AS at, (SELECT max(global_position) FROM cobro_events)::text AS head
                    FROM cobro_checkpoints c`)
      ).pipe(Effect.map((result) => result.rows.filter((row) => row.at !== row.head)))
      // A read model goes past events it does not concern in memory and saves its checkpoint there
      // within `Store.saveSkippedEvery` (10 s) of the last one, hence the longer wait.
      const lagging = yield* within<ReadonlyArray<unknown>>(
        90_000,
        (rows) => `consumers behind the log's head: ${JSON.stringify(rows)}`,
        Effect.zipRight(
          // The webhook deliveries first: they append their attempts, which the consumers then read.
          // A POST whose attempt could not be recorded (its connection cut) is sent again once its
          // 30 s lease has lapsed, hence more than 30 s.
          within(
            60_000,
            (bodies) =>
              `webhooks delivered for ${new Set(bodies.map((b) => b.data.metadata.reference)).size} of ${sold.length} sales`,
            Effect.sync(() => hook.received.map((r) => JSON.parse(r.body))),
            (bodies) =>
              sold.every((ref) =>
                bodies.some((b) => b.type === "SALE_APPROVED" && b.data.metadata.reference === ref)
              )
          ),
          behind
        ),
        (rows) => rows.length === 0
      )
      expect(lagging).toEqual([])

      // A4 lists the approval of every sale.
      for (const reference of sold) {
        const listed = yield* withKey(
          server,
          terminalKey,
          "GET",
          `/payments/webhook/notifications/${reference}?is_external_reference=true`
        )
        expect(listed.status, listed.text).toBe(200)
        expect(listed.json.notifications.length, `${reference}: ${listed.text}`).toBeGreaterThan(0)
      }

      // The link sweeper still runs: past the link's expiry it records LinkExpired.
      yield* admin(server, "POST", "/admin/v1/clock/advance", { seconds: 120 })
      yield* within(
        20_000,
        () => "no LinkExpired in the log",
        Effect.promise(() =>
          db.query(`SELECT count(*)::int AS n FROM cobro_events WHERE type = 'LinkExpired'`)
        ).pipe(Effect.map((result) => result.rows[0].n as number)),
        (n) => n === 1
      )

      // The log's tree takes in every event (its worker polls every second).
      yield* within(
        30_000,
        (sizes) => `the tree holds ${sizes.tree} of ${sizes.log} events`,
        Effect.promise(() =>
          db.query(
            `SELECT (SELECT size FROM cobro_tree_head)::int AS tree, (SELECT count(*) FROM cobro_events)::int AS log`
          )
        ).pipe(Effect.map((result) => result.rows[0] as { tree: number; log: number })),
        (sizes) => sizes.tree === sizes.log
      )

      const ready = yield* ServerProcess.call(server, "GET", "/ready")
      expect(ready.status, ready.text).toBe(200)
      // The same process all along.
      expect(server.output()).not.toContain("Cobro stopped")
      expect((yield* Effect.promise(() => server.stop())).code).toBe(0)
    }),
    180_000
  )
})
