/**
 * The composition root (issue 4, "Running it"): the configuration resolved, the store, the clock,
 * every port's adapter, the HTTP server with a graceful shutdown, and the start-up banner.
 */
import * as Acquirer from "@cobro/domain/Acquirer"
import * as DevWebhooks from "@cobro/domain/DevWebhooks"
import * as Notifications from "@cobro/domain/Notifications"
import * as Outbox from "@cobro/domain/Outbox"
import * as Authentication from "@cobro/http/Authentication"
import * as Http from "@cobro/http/Http"
import * as LoginCsrf from "@cobro/panel/LoginCsrf"
import * as PasswordHashing from "@cobro/panel/PasswordHashing"
import * as SignInThrottle from "@cobro/panel/SignInThrottle"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as Readiness from "@cobro/http/Readiness"
import * as Unavailability from "@cobro/http/Unavailability"
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as LogNotifications from "@cobro/store-pg/LogNotifications"
import * as PgDeliveryQueue from "@cobro/store-pg/PgDeliveryQueue"
import * as PgIdempotencyStore from "@cobro/store-pg/PgIdempotencyStore"
import * as PgListings from "@cobro/store-pg/PgListings"
import * as PgMerchantDirectory from "@cobro/store-pg/PgMerchantDirectory"
import * as PgNotificationLog from "@cobro/store-pg/PgNotificationLog"
import * as PgErrors from "@cobro/store-pg/PgErrors"
import * as PgPanelSessions from "@cobro/store-pg/PgPanelSessions"
import * as PgPool from "@cobro/store-pg/PgPool"
import * as PgSignInFailures from "@cobro/store-pg/PgSignInFailures"
import * as PgTransparencyLog from "@cobro/store-pg/PgTransparencyLog"
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as Subscription from "@cobro/store-pg/Subscription"
import * as Simulator from "@cobro/terminal-sim/Simulator"
import * as Dispatcher from "@cobro/webhooks/Dispatcher"
import * as HttpTransport from "@cobro/webhooks/HttpTransport"
import * as Notifier from "@cobro/webhooks/Notifier"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Os from "node:os"
import * as NodeHttp from "node:http"
import * as CheckpointKey from "./CheckpointKey.js"
import * as Config from "./Config.js"
import * as Ids from "./Ids.js"
import * as LinkExpiry from "./LinkExpiry.js"
import * as ListenFeed from "./ListenFeed.js"
import * as PaymentTimeouts from "./PaymentTimeouts.js"
import * as NodeKeyVault from "./NodeKeyVault.js"
import * as OperationalGauges from "./OperationalGauges.js"
import * as OutcomeMetrics from "./OutcomeMetrics.js"
import * as SealingKey from "./SealingKey.js"
import * as Telemetry from "./Telemetry.js"
import * as TerminalPusher from "./TerminalPusher.js"
import * as StateCache from "./StateCache.js"
import * as Store from "./Store.js"
import * as Supervisor from "./Supervisor.js"
import * as VirtualClock from "./VirtualClock.js"

/** The configuration with what start-up adds: the admin token and the sealing key. */
export interface Settings {
  readonly config: Config.ServerConfig
  readonly adminToken: Redacted.Redacted<string>
  /** The token was generated at this start (not from `ADMIN_TOKEN`): the banner prints it. */
  readonly adminTokenGenerated: boolean
  readonly sealingKey: SealingKey.SealingKey
  readonly checkpointKey: CheckpointKey.CheckpointKey
  /** Traces and metrics (OpenTelemetry's variables, `COBRO_METRICS*`); default `Telemetry.defaults`. */
  readonly telemetry?: Telemetry.TelemetryConfig
}

/**
 * Reads the environment, generates the admin token if unset, and finds or creates the sealing key
 * and the checkpoint key.
 */
export const settings: Effect.Effect<
  Settings,
  ConfigError.ConfigError | SealingKey.SealingKeyError | CheckpointKey.CheckpointKeyError
> = Effect.gen(function* () {
  const config = yield* Config.config
  const sealingKey = yield* SealingKey.resolve(config)
  const checkpointKey = yield* CheckpointKey.resolve(config)
  const telemetry = yield* Telemetry.config
  return {
    config,
    telemetry,
    sealingKey,
    checkpointKey,
    adminToken: Option.getOrElse(config.adminToken, () =>
      Redacted.make(randomBytes(24).toString("base64url"))
    ),
    adminTokenGenerated: Option.isNone(config.adminToken)
  }
})

/** How long in-flight requests may run after SIGTERM before their connections are cut. */
export const shutdownGraceMillis = 10_000

/**
 * The Node HTTP server on `PORT`/`HOST`. On shutdown it stops accepting, closes idle keep-alive
 * connections, lets in-flight requests finish, and cuts what is left after {@link shutdownGraceMillis}.
 */
export const layerHttpServer = (config: Config.ServerConfig) =>
  Layer.mergeAll(
    Layer.scoped(
      HttpServer.HttpServer,
      Effect.gen(function* () {
        const server = NodeHttp.createServer()
        const httpServer = yield* NodeHttpServer.make(() => server, { port: config.port, host: config.host })
        // Added after `make`, so it runs before `make`'s `server.close()`, which waits for the connections.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            server.closeIdleConnections()
            setTimeout(() => server.closeAllConnections(), shutdownGraceMillis).unref()
          })
        )
        return httpServer
      })
    ),
    NodeHttpServer.layerContext
  )

/**
 * Connections of the PostgreSQL pool. The read models' runners and the webhook notifier each hold a
 * connection for a batch's transaction whenever events arrive, so under load they alone keep about
 * as many busy as the driver's default pool has (10) and requests queue for the rest
 * (`npm run bench -- http`, docs/benchmarks.md).
 */
export const defaultPoolSize = 24

/** The database the configuration chooses; on PostgreSQL a pool of `poolSize` connections. */
export const layerDatabase = (
  database: Config.Database,
  poolSize: number = defaultPoolSize,
  idleTimeout?: Duration.DurationInput
) =>
  database._tag === "Postgres"
    ? PostgresClient.layer({
        url: database.url,
        listenUrl: database.listenUrl,
        applicationName: "cobro",
        maxConnections: poolSize,
        idleTimeout,
        poolMode: database.poolMode,
        statementTimeout: database.statementTimeout,
        connectTimeout: database.connectTimeout
      })
    : Store.layerDatabase(database)

/**
 * The store: the database, the event log (migrated), the read models' tables and the sealing-key
 * check (one locked step), then the sandbox clock, installed as the clock of what is built on it.
 */
export const layerStore = (
  settings: Settings,
  options: { readonly poolSize?: number; readonly idleTimeout?: Duration.DurationInput } = {}
) => {
  const clock = settings.config.clock === "virtual" ? VirtualClock.layerVirtualShared : VirtualClock.layerReal
  return clock.pipe(
    Layer.provideMerge(
      Store.layerSetup(
        NodeKeyVault.keyId(Redacted.value(settings.sealingKey.key)),
        Store.projections,
        Checkpoint.verifierKeyOf(settings.checkpointKey.signer)
      )
    ),
    // Sales, links and payments counted by outcome as they are appended.
    Layer.provideMerge(OutcomeMetrics.layer.pipe(Layer.provide(Store.layerEventStore))),
    Layer.provideMerge(layerDatabase(settings.config.database, options.poolSize, options.idleTimeout))
  )
}

/** `COBRO_DEV_WEBHOOKS=1`: registration accepts http:// for both modes (the transport then allows it too). */
export const layerDevWebhooks = (settings: Settings) =>
  Layer.succeed(DevWebhooks.DevWebhooks, { enabled: settings.config.devWebhooks })

/**
 * `/ready`: the event store answers, on PostgreSQL the database takes writes, and no background
 * worker has been down longer than the supervisor's bound (`COBRO_WORKER_DOWN_BOUND`); a 503 names
 * each reason.
 */
export const layerReadiness = Layer.effect(
  Readiness.Readiness,
  Effect.gen(function* () {
    const store = yield* Readiness.eventStore
    const supervisor = yield* Supervisor.Supervisor
    const pool = yield* Effect.serviceOption(PgPool.PgPool)
    const database = Option.match(pool, {
      onNone: () => store,
      onSome: (pool) => storeThenWritable(store, pool)
    })
    return { check: Readiness.all([database, supervisor.readiness]) }
  })
)

/** The reason `/ready` gives while PostgreSQL takes no writes. */
export const READ_ONLY = "the database takes no writes (it is read-only or does not answer)"

/**
 * The store's read, then the write check on the connection the read gave back. Run at once they
 * take two connections, the second often a new one, which can wait out a proxy's connect timeout
 * while the pooled ones write (HAProxy still routing to a member whose postmaster was killed). A
 * store that does not answer answers for both, without another wait: the database does not answer.
 */
const storeThenWritable = (
  store: Effect.Effect<void, Readiness.NotReady>,
  pool: PgPool.PgPool["Type"]
): Effect.Effect<void, Readiness.NotReady> =>
  Effect.matchEffect(store, {
    onFailure: ({ reasons }) => Effect.fail(new Readiness.NotReady({ reasons: [...reasons, READ_ONLY] })),
    onSuccess: () => databaseWritable(pool)
  })

/** Ready when a pooled connection can write now, within `Readiness.TIMEOUT` (issue 33). */
const databaseWritable = (pool: PgPool.PgPool["Type"]) =>
  PgPool.writable(pool).pipe(
    Effect.sandbox,
    Effect.timeoutFail({ duration: Readiness.TIMEOUT, onTimeout: () => undefined }),
    Effect.flatMap((writable) => (writable ? Effect.void : Effect.fail(undefined))),
    Effect.mapError(() => new Readiness.NotReady({ reasons: [READ_ONLY] }))
  )

/**
 * The adapters of the domain's ports and what the HTTP layer needs beside them (`Http.HttpRequirements`),
 * over the store: keys, ids, the sandbox acquirer, the PostgreSQL/PGlite directory, idempotency keys,
 * notification log and delivery queue, the simulated terminals, the webhook transport, the cache of
 * known states (the merchant's, read by nearly every request), the merchant panel's sessions, password
 * hasher (scrypt) and sign-in throttle (per address on this node, per email on all); and the
 * background workers' `Supervisor`, which `/ready` reads.
 */
export const layerPorts = (settings: Settings) =>
  Layer.mergeAll(
    NodeKeyVault.layer(settings.sealingKey.key),
    Acquirer.layerSandbox,
    PgMerchantDirectory.layer,
    PgIdempotencyStore.layer,
    PgListings.layer,
    PgNotificationLog.layer,
    // `cobro listen`'s feed of sandbox notifications (GET /dev/v1/listen).
    ListenFeed.layer,
    PgPanelSessions.layer,
    PasswordHashing.layer(settings.sealingKey.key),
    LoginCsrf.layer(settings.sealingKey.key),
    SignInThrottle.layer.pipe(Layer.provide(PgSignInFailures.layer)),
    PgDeliveryQueue.layer,
    PgTransparencyLog.layer(settings.checkpointKey.signer),
    HttpTransport.layer({ dev: settings.config.devWebhooks }),
    layerReadiness,
    // A request that fails because PostgreSQL cannot take it now answers 503 with Retry-After.
    Unavailability.layer(PgErrors.isUnavailable),
    Simulator.layer,
    Layer.succeed(Authentication.AdminToken, settings.adminToken),
    layerDevWebhooks(settings),
    StateCache.layer(),
    Layer.succeed(Outbox.Outbox, Notifications.outbox),
    PublicUrls.layer({
      ...Option.match(settings.config.publicUrl, {
        onNone: () => ({}),
        onSome: (publicUrl) => ({ publicUrl })
      }),
      ...Option.match(settings.config.checkoutUrl, {
        onNone: () => ({}),
        onSome: (checkoutUrl) => ({ checkoutUrl })
      })
    })
  ).pipe(Layer.provideMerge(Ids.layerRandom), Layer.provideMerge(Supervisor.layerConfig))

/** How often expired idempotency keys are deleted (they already behave as absent). */
export const purgeInterval = "1 hour"

/** This process as a webhook dispatcher: unique, and readable in the lease table. */
const dispatcherOwner = `${Os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

/**
 * Background work, each a worker under the `Supervisor` (logged and restarted with backoff when it
 * fails, and named by `/ready` when down too long): the read models' runners (the webhook notifier
 * no longer runs: notifications are scheduled with their outcomes, and it only catches up, once, what
 * an earlier version left); the webhook dispatcher (leases shared with the other nodes); the link expiry sweeper; the abandoned payments'
 * timeouts; the terminal pusher (the checkouts whose push claim lapsed); the idempotency purge.
 * (The simulated terminals have no worker of their own: they act when a request, a sandbox action
 * or the terminal pusher calls them.)
 */
export const layerBackground = Layer.mergeAll(
  Store.layerConsumers<never>(Effect.succeed([])),
  // Notifications are scheduled with their outcomes (`Notifications.outbox`); the log's notifier only
  // catches up what an earlier version left, once.
  Layer.effectDiscard(
    Effect.flatMap(Notifier.makeBatchHandler(), (handleBatch) =>
      Store.retire(Subscription.makeBatch(Notifier.CONSUMER_NAME, handleBatch))
    )
  ),
  Supervisor.worker(
    "Webhook dispatcher",
    // Woken by the log's appends: a notification scheduled is claimed within moments, not a poll.
    Effect.flatMap(LogNotifications.LogNotifications, (notifications) =>
      Dispatcher.run({ owner: dispatcherOwner, wakeups: notifications.appended })
    )
  ),
  Supervisor.worker("Link expiry", LinkExpiry.run()),
  Supervisor.worker("Payment timeouts", PaymentTimeouts.run()),
  // A3 claims each push with its checkout; a claim whose request or node died is pushed from here.
  Supervisor.worker("Terminal pusher", TerminalPusher.run()),
  Supervisor.worker(
    "Idempotency purge",
    DateTime.now.pipe(
      Effect.flatMap(PgIdempotencyStore.purgeExpired),
      Effect.zipRight(Effect.sleep(purgeInterval)),
      Effect.forever
    )
  )
)

/**
 * The log's Merkle tree and its signed checkpoints (`PgTransparencyLog.run`), a worker under the
 * `Supervisor`: the tree takes in the settled events every second and a checkpoint is signed every
 * `COBRO_CHECKPOINT_EVERY_EVENTS` events or `COBRO_CHECKPOINT_EVERY_SECONDS` seconds.
 */
export const layerTransparencyLog = (settings: Settings) =>
  Supervisor.worker(
    "Log checkpoints",
    PgTransparencyLog.run({
      signer: settings.checkpointKey.signer,
      everyEvents: settings.config.checkpointEveryEvents,
      every: Duration.seconds(settings.config.checkpointEverySeconds)
    })
  )

/** What the banner says. */
export const banner = (settings: Settings, address: HttpServer.Address): ReadonlyArray<string> => {
  const port = address._tag === "TcpAddress" ? address.port : settings.config.port
  const base = Config.publicUrl(settings.config, { port })
  const { config } = settings
  const sealing = settings.sealingKey.source
  const checkpoint = settings.checkpointKey.source
  return [
    `Cobro is listening on ${base}`,
    `  docs         ${base}/docs`,
    `  openapi      ${base}/openapi.json`,
    `  checkout     ${Config.checkoutUrl(config, base)}`,
    `  health       ${base}/health, ${base}/ready`,
    `  database     ${Store.describe(config.database)}`,
    `  sealing key  ${sealing === "COBRO_SEALING_KEY" ? "from COBRO_SEALING_KEY" : `${sealing.path}${sealing.created ? " (created)" : ""}`}`,
    `  log key      ${checkpoint === "COBRO_CHECKPOINT_KEY" ? "from COBRO_CHECKPOINT_KEY" : `${checkpoint.path}${checkpoint.created ? " (created)" : ""}`}`,
    `  public key   ${Checkpoint.verifierKeyOf(settings.checkpointKey.signer)}`,
    `  checkpoints  ${base}/audit/v1/checkpoints/latest`,
    `  clock        ${config.clock === "virtual" ? "virtual (POST /admin/v1/clock/advance)" : "real"}`,
    `  webhooks     ${config.devWebhooks ? "development: http and loopback targets allowed (COBRO_DEV_WEBHOOKS=1)" : "https, public addresses only"}`,
    settings.adminTokenGenerated
      ? `  admin token  ${Redacted.value(settings.adminToken)} (generated for this run; set ADMIN_TOKEN to keep one)`
      : "  admin token  from ADMIN_TOKEN",
    "Stop with Ctrl-C or SIGTERM."
  ]
}

/** Prints the banner once the server serves. */
const layerBanner = (settings: Settings) =>
  Layer.effectDiscard(
    Effect.flatMap(HttpServer.HttpServer, (server) =>
      Console.log(banner(settings, server.address).join("\n"))
    )
  )

/** The HTTP application: every endpoint of `@cobro/http`, its OpenAPI document and docs. */
export const layerApp = HttpApiBuilder.serve().pipe(Layer.provide(Http.layer))

/** The whole server for `Layer.launch`: listens, serves, prints the banner, shuts down gracefully. */
export const layer = (settings: Settings) => {
  const telemetry = settings.telemetry ?? Telemetry.defaults
  const store = layerStore(settings)
  const ports = layerPorts(settings).pipe(Layer.provideMerge(store))
  return layerBanner(settings).pipe(
    Layer.provide(layerApp),
    Layer.provide(layerHttpServer(settings.config)),
    Layer.provide(Layer.merge(layerBackground, layerTransparencyLog(settings))),
    Layer.provide(Telemetry.layerMetrics(telemetry, settings.config.host, OperationalGauges.sample)),
    Layer.provide(ports),
    Layer.provide(Telemetry.layerTracing(telemetry))
  )
}
