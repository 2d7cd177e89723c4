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
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Dispatcher from "../src/Dispatcher.js"
import * as HttpTransport from "../src/HttpTransport.js"

const url = process.env["DATABASE_URL"]
const ca = process.env["BENCH_TLS_CA"]
if (url === undefined || ca === undefined) throw new Error("DATABASE_URL and BENCH_TLS_CA are required")

/** The fixtures' test keys, as the bench process opens them. */
const TestVault = Layer.succeed(KeyVault.KeyVault, {
  issue: () => Effect.die("not used"),
  hashIdentityKey: () => {
    throw new Error("not used")
  },
  unseal: (sealed) => Effect.succeed(F.unsealTest(sealed))
})

const RandomIds = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix: string) => Effect.sync(() => prefix + randomBytes(12).toString("hex")),
  uuid: Effect.sync(() => randomUUID())
})

const layer = Layer.mergeAll(
  PgDeliveryQueue.layer,
  HttpTransport.layer({ dev: true, ca: [ca] }),
  TestVault
).pipe(
  Layer.provideMerge(Layer.merge(PgEventStore.layer, RandomIds)),
  Layer.provideMerge(
    PostgresClient.layer({
      url: Redacted.make(url),
      maxConnections: 8,
      applicationName: "cobro-bench-dispatcher"
    })
  ),
  Layer.orDie
)

Effect.runFork(
  Effect.gen(function* () {
    const notifications = yield* LogNotifications.LogNotifications
    process.stdout.write("ready\n")
    return yield* Dispatcher.run({ owner: `bench-${process.pid}`, wakeups: notifications.appended })
  }).pipe(Effect.provide(layer))
)
