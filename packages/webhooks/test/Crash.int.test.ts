/**
 * A dispatcher process killed in the middle of a batch (issue 5, Tests; spec D, Retries): SIGKILL,
 * then a new process on the same PostgreSQL takes over the dead one's leases when they expire.
 * Every notification arrives, none is lost, and a duplicate carries the same notification `id`,
 * transaction and bytes, signed as the spec says.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Signature from "../src/Signature.js"
import * as P from "./support/DispatcherProcess.js"
import * as Pg from "./support/PgFixtures.js"
import * as R from "./support/Receiver.js"
import * as RequestLog from "./support/RequestLog.js"

const N = 200
/** Received before the kill: mid-way through the backlog. */
const KILL_AFTER = 60
/** The test's lease (production keeps 30 s): long enough for a batch, short enough to wait for. */
const LEASE_MS = 4_000

const processOptions = (databaseUrl: string, owner: string): P.Options => ({
  databaseUrl,
  owner,
  ca: R.certificate().cert,
  leaseMs: LEASE_MS,
  batchSize: 40,
  concurrency: 8,
  pollMs: 200
})

describe("dispatcher process crash", () => {
  it.scopedLive(
    "SIGKILL mid-batch, then a restart: every notification delivered at least once, none lost, each duplicate with the same id and transaction",
    () =>
      Effect.gen(function* () {
        const url = yield* Pg.database
        const rx = yield* R.receiver({ tls: true })
        const log = RequestLog.record(rx.server)
        // 200, slowly: the batch is still in flight when the process dies.
        rx.answer = () => ({ status: 200, delayMs: 150 })
        const started = Date.now()
        yield* Effect.gen(function* () {
          yield* Pg.seed(rx.url, N)
          const seeded = Date.now()

          const first = yield* P.start(processOptions(url, "crash-1"))
          first.go()
          const distinct = () => RequestLog.byNotification(log).size
          yield* P.waitUntil(
            Effect.sync(() => distinct() >= KILL_AFTER),
            40_000,
            () => first.output()
          )
          const openAtKill = log.filter((entry) => entry.closed === undefined).length
          const killed = yield* Effect.promise(() => first.kill("SIGKILL"))
          expect(killed.signal).toBe("SIGKILL")
          const beforeKill = log.filter((entry) => entry.body.length > 0)
          const idsBeforeKill = new Set(beforeKill.map((entry) => RequestLog.notificationOf(entry.body).id))
          // Mid-batch: some arrived, not all.
          expect(idsBeforeKill.size).toBeGreaterThanOrEqual(KILL_AFTER)
          expect(idsBeforeKill.size).toBeLessThan(N)
          const killedAt = Date.now()

          const second = yield* P.start(processOptions(url, "crash-2"))
          second.go()
          yield* P.waitUntil(
            Effect.map(Pg.deliveryCounts, (c) => c.total === N && c.delivered === N),
            45_000,
            () => `${distinct()} of ${N} received. Output:\n${second.output()}`
          )
          const done = Date.now()

          // Every notification arrived, none lost; the killed process's in-flight ones came twice.
          const groups = RequestLog.byNotification(log)
          expect(groups.size).toBe(N)
          const transactions = new Map<string, string>()
          let duplicates = 0
          for (const [id, entries] of groups) {
            if (entries.length > 1) duplicates++
            for (const entry of entries) {
              const notification = RequestLog.notificationOf(entry.body)
              // Each duplicate carries the same id, the same transaction, the same bytes.
              expect(notification.id).toBe(id)
              expect(notification.paymentId).toBe(notification.subject)
              expect(transactions.get(id) ?? notification.subject).toBe(notification.subject)
              transactions.set(id, notification.subject)
              expect(entry.body.equals(entries[0]!.body)).toBe(true)
              const n = Number(notification.subject.replace("TRX_", ""))
              const secret = Pg.isSandbox(n) ? "" : Pg.PRODUCTION_SECRET
              expect(entry.path.endsWith("?mode=test")).toBe(Pg.isSandbox(n))
              expect(Signature.verifySignature(entry.body, entry.headers[Signature.HEADER], secret)).toBe(
                true
              )
            }
          }
          // One notification per transaction: TRX_1 … TRX_N, each under one id.
          expect(new Set(transactions.values())).toEqual(
            new Set(Array.from({ length: N }, (_, i) => `TRX_${i + 1}`))
          )
          expect(duplicates).toBeGreaterThan(0)
          const senders = new Set(log.map((entry) => entry.dispatcher))
          expect(senders).toEqual(new Set(["crash-1", "crash-2"]))

          // The log: every WebhookDelivery stream DELIVERED, its body the bytes received.
          const views = yield* Pg.deliveriesInLog
          expect(views).toHaveLength(N)
          for (const view of views) {
            expect(view.status).toBe("DELIVERED")
            expect(view.attempts.at(-1)?.delivered).toBe(true)
            expect(groups.get(view.notificationId)![0]!.body.toString("utf8")).toBe(view.body)
          }
          console.info(
            `crash: seed ${seeded - started} ms, first process to the kill ${killedAt - seeded} ms ` +
              `(${idsBeforeKill.size} received), second process to done ${done - killedAt} ms, ` +
              `${openAtKill} unanswered at the kill, ${duplicates} duplicates, ${log.length} requests`
          )
        }).pipe(Effect.provide(Pg.store(url)))
      }),
    90_000
  )
})
