/**
 * A dispatcher process for the crash and multi-node suites (issue 5, Tests): what the server's
 * background runs for webhooks (the read models, the notifier as a log consumer, `Dispatcher.run`)
 * on the PostgreSQL database `DATABASE_URL` names, without the HTTP API. Run it with
 * `node --import tsx DispatcherMain.ts`. It prints `{"ready":…}` once its workers run, and starts
 * dispatching when a line `go` arrives on stdin.
 *
 * Environment: `DATABASE_URL`; `COBRO_DEV_WEBHOOKS=1` (http and loopback targets);
 * `COBRO_TEST_WEBHOOK_CA` (the PEM of the receiver's self-signed certificate); `DISPATCHER_OWNER`
 * (the lease owner, also sent in the test-only header `x-cobro-test-dispatcher`);
 * `DISPATCHER_LEASE_MS`, `DISPATCHER_BATCH_SIZE`, `DISPATCHER_CONCURRENCY`, `DISPATCHER_POLL_MS`.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as WebhookTransport from "@cobro/domain/WebhookTransport"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgEventStore from "@cobro/store-pg/PgEventStore"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Projection from "@cobro/store-pg/Projection"
import * as ReadModels from "@cobro/store-pg/ReadModels"
import * as Subscription from "@cobro/store-pg/Subscription"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import * as Dispatcher from "../../src/Dispatcher.js"
import * as HttpTransport from "../../src/HttpTransport.js"
import * as Notifier from "../../src/Notifier.js"
import { DISPATCHER_HEADER } from "./RequestLog.js"

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`${name} is required`)
  return value
}

const owner = env("DISPATCHER_OWNER", `dispatcher-${process.pid}`)
const config: Dispatcher.Config = {
  owner,
  lease: Duration.millis(Number(env("DISPATCHER_LEASE_MS", "30000"))),
  batchSize: Number(env("DISPATCHER_BATCH_SIZE", "100")),
  concurrency: Number(env("DISPATCHER_CONCURRENCY", "32")),
  pollInterval: Duration.millis(Number(env("DISPATCHER_POLL_MS", "1000")))
}

/** The test keys: sealed `sealed:<n>` opens to `secret-<n>` (as in `Fixtures.unsealTest`). */
const TestVault = Layer.succeed(KeyVault.KeyVault, {
  issue: () => Effect.die("not used"),
  hashIdentityKey: () => {
    throw new Error("not used")
  },
  unseal: (sealed) => Effect.succeed(sealed.replace("sealed:", "secret-"))
})

/** The real transport, each request tagged with this process's owner (test-only). */
const TaggedTransport = Layer.effect(
  WebhookTransport.WebhookTransport,
  Effect.map(WebhookTransport.WebhookTransport, (transport) => ({
    post: (request: WebhookTransport.WebhookRequest) =>
      transport.post({ ...request, headers: { ...request.headers, [DISPATCHER_HEADER]: owner } })
  }))
).pipe(
  Layer.provide(
    HttpTransport.layer({
      dev: process.env["COBRO_DEV_WEBHOOKS"] === "1",
      ...(process.env["COBRO_TEST_WEBHOOK_CA"] ? { ca: [process.env["COBRO_TEST_WEBHOOK_CA"]] } : {})
    })
  )
)

/** Random ids (unique across processes), as the server's `Ids.layerRandom`. */
const RandomIds = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix: string) => Effect.sync(() => prefix + randomBytes(12).toString("hex")),
  uuid: Effect.sync(() => randomUUID())
})

const Database = PostgresClient.layer({
  url: Redacted.make(env("DATABASE_URL")),
  maxConnections: 8,
  applicationName: owner
})

const Services = Layer.mergeAll(PgDeliveryQueue.layer, TaggedTransport, TestVault, RandomIds).pipe(
  Layer.provideMerge(PgEventStore.layerMigrated),
  Layer.provideMerge(Database)
)

/** Waits for a line `go` on stdin. */
const go = Effect.async<void>((resume) => {
  let buffered = ""
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString("utf8")
    if (buffered.split("\n").some((line) => line.trim() === "go")) {
      process.stdin.off("data", onData)
      resume(Effect.void)
    }
  }
  process.stdin.on("data", onData)
})

const main = Effect.gen(function* () {
  // The read models and the notifier as the server runs them: one group of log consumers with one
  // reader of the log, the notifier a batch consumer (one append per batch read).
  const notify = yield* Notifier.makeBatchHandler()
  yield* Effect.forkScoped(
    Subscription.runAll<EventStore.EventStore | SqlClient.SqlClient>([
      ...ReadModels.asynchronous.map(Projection.consumer),
      Subscription.makeBatch(Notifier.CONSUMER_NAME, notify)
    ])
  )
  process.stdout.write(`${JSON.stringify({ ready: owner, pid: process.pid })}\n`)
  yield* go
  process.stdout.write(`${JSON.stringify({ dispatching: owner })}\n`)
  return yield* Dispatcher.run(config)
}).pipe(Effect.scoped, Effect.provide(Services))

Effect.runFork(main).addObserver((exit) => {
  if (Exit.isFailure(exit)) {
    process.stderr.write(`dispatcher ${owner} failed: ${Cause.pretty(exit.cause)}\n`)
    process.exit(1)
  }
})
