/**
 * The server process while its PostgreSQL database takes no writes, as behind a proxy during a
 * failover (issue 33): every request answers in its envelope with a status a client can act on,
 * `/ready` turns within a second each way, and a client retrying with its Idempotency-Key ends with
 * exactly one resource. The database is made read-only for new sessions and its connections cut
 * (what a primary restarted as a replica looks like), then made writable again without a cut (the
 * connections that stayed on the "replica" must be discarded by the server itself).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "./support/ServerProcess.js"

const call = ServerProcess.call
const within = ServerProcess.within

describe("the server when its database stops taking writes", () => {
  it.scopedLive(
    "answers 503 with Retry-After in the envelope (AP001 with Retry-After on the terminal API), /ready turns each way within a second, and retries with the same key create one resource each",
    Effect.fnUntraced(function* () {
      const { server, database } = yield* ServerProcess.startOnPostgresWithReceiver({
        ADMIN_TOKEN: "read-only-admin-token"
      })
      const hook = "http://127.0.0.1:9/hook"
      const { keys } = yield* ServerProcess.merchantWithTerminal(server, {
        name: "Tienda de Solo Lectura",
        serial: "SN-RO",
        methods: { terminal: { POS: true }, link: { CREDIT_CARD: { min: 1000, max: 5000000 } } },
        webhook: { url: hook, mode: "test" }
      })
      const buttonKey: string = keys.payment_button.test.identity_key
      const terminalKey: string = keys.terminal_api.test.identity_key
      const link = (key: string) =>
        call(server, "POST", "/online/link/v1", {
          headers: { authorization: `x-api-key ${buttonKey}`, "idempotency-key": key },
          body: { amount_type: "CLOSE", amount: { total_amount: 50_000 } }
        })
      const sale = (key: string, reference: string) =>
        call(server, "POST", "/payments/app-checkout", {
          headers: { authorization: `x-api-key ${terminalKey}`, "idempotency-key": key },
          body: ServerProcess.terminalSale("SN-RO", reference)
        })
      const ready = Effect.map(call(server, "GET", "/ready"), (reply) => reply.status)
      /** Waits up to `wait` ms for `/ready` to answer `status`, which it must do within `bound` ms. */
      const readyTurns = (status: number, wait: number, bound: number) =>
        Effect.gen(function* () {
          const from = Date.now()
          yield* within(
            wait,
            (answered) => `/ready answered ${answered}`,
            ready,
            (answered) => answered === status
          )
          expect(Date.now() - from).toBeLessThan(bound)
        })
      expect(yield* ready).toBe(200)
      expect((yield* link("before")).status).toBe(201)

      const admin = yield* ServerProcess.databaseClient(ServerProcess.postgresUrl)
      const name = new URL(database.DATABASE_URL).pathname.slice(1)
      const sql = (text: string) => Effect.promise(() => admin.query(text))
      yield* sql(`ALTER DATABASE ${name} SET default_transaction_read_only = on`)
      yield* sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE datname = '${name}' AND pid <> pg_backend_pid()`)
      yield* readyTurns(503, 3_000, 1_500)

      const refusedLink = yield* link("during")
      expect(refusedLink.status, refusedLink.text).toBe(503)
      expect(refusedLink.headers["content-type"]).toMatch(/^application\/json/)
      expect(refusedLink.headers["retry-after"]).toBe("1")
      expect(refusedLink.json.errors[0].code).toBe("Unavailable")
      const refusedSale = yield* sale("sale-during", "ro-1")
      expect(refusedSale.status, refusedSale.text).toBe(500)
      expect(refusedSale.headers["content-type"]).toMatch(/^application\/json/)
      expect(refusedSale.headers["retry-after"]).toBe("1")
      expect(refusedSale.json.errors[0].code).toBe("AP001")
      // Refused again, never replayed: the refusal is not the key's answer.
      const again = yield* link("during")
      expect(again.status).toBe(503)
      expect(again.headers["idempotent-replayed"]).toBeUndefined()

      // Writable again; the server's pooled connections still are read-only sessions.
      yield* sql(`ALTER DATABASE ${name} RESET default_transaction_read_only`)
      yield* readyTurns(200, 5_000, 2_000)

      // The clients retry with their keys: one link and one sale each, the same on every retry.
      const created = yield* within(
        5_000,
        (r) => `${r.status} ${r.text}`,
        link("during"),
        (r) => r.status === 201
      )
      const replayed = yield* link("during")
      expect(replayed.status).toBe(201)
      expect(replayed.json.payload.payment_link).toBe(created.json.payload.payment_link)
      const sold = yield* within(
        5_000,
        (r) => `${r.status} ${r.text}`,
        sale("sale-during", "ro-1"),
        (r) => r.status === 201
      )
      const soldAgain = yield* sale("sale-during", "ro-1")
      expect(soldAgain.status).toBe(201)
      expect(soldAgain.text).toBe(sold.text)
      // One link per key in the log: the first, and the retried key's.
      const own = yield* ServerProcess.databaseClient(database.DATABASE_URL)
      const links = yield* Effect.promise(() =>
        own.query(`SELECT count(*)::int AS n FROM cobro_events WHERE type = 'LinkCreated'`)
      )
      expect(links.rows[0].n).toBe(2)
      yield* ServerProcess.stopsCleanly(server)
    }),
    120_000
  )
})
