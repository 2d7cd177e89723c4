/**
 * One more dispatcher process for `npm run bench -- webhooks` with `BENCH_DISPATCHERS` above 1: the
 * webhook dispatcher alone (`Dispatcher.run`, the server's configuration, woken by the log's
 * appends), on the bench's database, sharing the work with the bench process's dispatcher through
 * the lease table, as a second node's dispatcher would. Run by the bench with tsx; it prints
 * `ready` once dispatching and runs until killed.
 *
 * Environment: `DATABASE_URL` (the bench's throwaway database), `BENCH_TLS_CA` (the receiver's
 * certificate, PEM).
 */
import * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as Effect from "effect/Effect"
import * as Dispatcher from "../src/Dispatcher.js"
import * as CobroLayer from "./CobroLayer.js"

const url = process.env["DATABASE_URL"]
const ca = process.env["BENCH_TLS_CA"]
if (url === undefined || ca === undefined) throw new Error("DATABASE_URL and BENCH_TLS_CA are required")

const layer = CobroLayer.layer({ url, ca, maxConnections: 8, applicationName: "cobro-bench-dispatcher" })

Effect.runFork(
  Effect.gen(function* () {
    const notifications = yield* LogNotifications.LogNotifications
    process.stdout.write("ready\n")
    return yield* Dispatcher.run({ owner: `bench-${process.pid}`, wakeups: notifications.appended })
  }).pipe(Effect.provide(layer))
)
