/**
 * Two dispatcher processes on one PostgreSQL at the same time (issue 5, Tests; spec D): they share
 * the due deliveries through leases and `FOR UPDATE SKIP LOCKED`, so each notification is attempted
 * by one process at a time, and, with no failure, delivered exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Signature from "../src/Signature.js"
import * as P from "./support/DispatcherProcess.js"
import * as Pg from "./support/PgFixtures.js"
import * as R from "./support/Receiver.js"
import * as RequestLog from "./support/RequestLog.js"

const N = 200

/**
 * Seeds `n` sales, starts two processes, waits until their notifier scheduled all `n`, lets both
 * dispatch at once and waits until the log says every delivery is DELIVERED.
 */
const runTwo = (options: {
  readonly n: number
  readonly leaseMs: number
  readonly batchSize: number
  readonly concurrency: number
  readonly delayMs: number
}) =>
  Effect.gen(function* () {
    const url = yield* Pg.database
    const rx = yield* R.receiver({ tls: true })
    const log = RequestLog.record(rx.server)
    rx.answer = () => ({ status: 200, delayMs: options.delayMs })
    return yield* Effect.gen(function* () {
      yield* Pg.seed(rx.url, options.n)
      const processes = yield* Effect.all(
        ["node-a", "node-b"].map((owner) =>
          P.start({
            databaseUrl: url,
            owner,
            ca: R.certificate().cert,
            leaseMs: options.leaseMs,
            batchSize: options.batchSize,
            concurrency: options.concurrency,
            pollMs: 100
          })
        ),
        { concurrency: "unbounded" }
      )
      const output = () => processes.map((p) => `--- ${p.owner}\n${p.output()}`).join("\n")
      yield* P.waitUntil(
        Effect.map(Pg.deliveryCounts, (c) => c.total === options.n),
        30_000,
        () => `notifications not all scheduled. Output:\n${output()}`
      )
      const started = Date.now()
      for (const p of processes) p.go()
      yield* P.waitUntil(
        Effect.map(Pg.deliveryCounts, (c) => c.delivered === options.n),
        45_000,
        () => `${RequestLog.byNotification(log).size} of ${options.n} received. Output:\n${output()}`
      )
      const millis = Date.now() - started
      // Let any late duplicate arrive before the receiver's log is judged.
      yield* Effect.sleep("500 millis")
      return { log, views: yield* Pg.deliveriesInLog, millis, output }
    }).pipe(Effect.provide(Pg.store(url)))
  })

/**
 * What a run of two processes without failures shows: no two attempts of one notification open at
 * once, each of the `n` notifications requested exactly once, and in the log DELIVERED at its first
 * attempt. Returns the requests by notification.
 */
const expectEachDeliveredOnce = (
  run: Pick<Effect.Effect.Success<ReturnType<typeof runTwo>>, "log" | "views" | "output">,
  n: number
) => {
  expect(RequestLog.overlaps(run.log).map(RequestLog.describeOverlap)).toEqual([])
  const groups = RequestLog.byNotification(run.log)
  expect(groups.size).toBe(n)
  const twice = [...groups].filter(([, entries]) => entries.length > 1).map(([id]) => id)
  expect(twice, run.output()).toEqual([])
  expect(run.views).toHaveLength(n)
  for (const view of run.views) {
    expect(view.status).toBe("DELIVERED")
    expect(view.attempts).toHaveLength(1)
  }
  return groups
}

describe("two dispatcher processes on one PostgreSQL", () => {
  it.scopedLive(
    "each notification is attempted by one process at a time, all delivered, none twice in the absence of failures",
    () =>
      Effect.gen(function* () {
        const { log, views, millis, output } = yield* runTwo({
          n: N,
          leaseMs: 30_000,
          batchSize: 20,
          concurrency: 4,
          delayMs: 60
        })
        const groups = expectEachDeliveredOnce({ log, views, output }, N)
        // Signed as the spec says.
        for (const [id, [entry]] of groups) {
          const notification = RequestLog.notificationOf(entry!.body)
          expect(notification.id).toBe(id)
          const secret = Pg.isSandbox(Number(notification.subject.replace("TRX_", "")))
            ? ""
            : Pg.PRODUCTION_SECRET
          expect(Signature.verifySignature(entry!.body, entry!.headers[Signature.HEADER], secret)).toBe(true)
        }
        // Both processes did part of the work.
        const perProcess = new Map<string, number>()
        for (const entry of log) perProcess.set(entry.dispatcher, (perProcess.get(entry.dispatcher) ?? 0) + 1)
        expect([...perProcess.keys()].sort()).toEqual(["node-a", "node-b"])
        console.info(
          `two dispatchers: ${N} delivered in ${millis} ms, per process ${JSON.stringify([...perProcess])}`
        )
      }),
    90_000
  )

  it.scopedLive(
    "a lease shorter than a batch: no process starts an attempt its lease may not cover, so none overlaps another's",
    () =>
      Effect.gen(function* () {
        // A batch of 50 at 2 at a time, 100 ms each, outlasts the 4 s lease: the other process may
        // claim the rest of the batch when the lease expires.
        const run = yield* runTwo({ n: 100, leaseMs: 4_000, batchSize: 50, concurrency: 2, delayMs: 100 })
        expectEachDeliveredOnce(run, 100)
      }),
    90_000
  )
})
