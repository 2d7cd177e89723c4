/**
 * The composition root (issue 4, "Running it"): the configuration resolved, the store, the clock,
 * every port's adapter, the HTTP server with a graceful shutdown, and the start-up banner.
 */
import * as Acquirer from "@cobro/domain/Acquirer"
import * as NotificationLog from "@cobro/domain/NotificationLog"
import * as Authentication from "@cobro/http/Authentication"
import * as Http from "@cobro/http/Http"
import * as PublicUrls from "@cobro/http/PublicUrls"
import * as Readiness from "@cobro/http/Readiness"
import * as PgIdempotencyStore from "@cobro/store-pg/PgIdempotencyStore"
import * as PgMerchantDirectory from "@cobro/store-pg/PgMerchantDirectory"
import * as Simulator from "@cobro/terminal-sim/Simulator"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { randomBytes } from "node:crypto"
import * as NodeHttp from "node:http"
import * as Config from "./Config.js"
import * as Ids from "./Ids.js"
import * as NodeKeyVault from "./NodeKeyVault.js"
import * as SealingKey from "./SealingKey.js"
import * as Store from "./Store.js"
import * as VirtualClock from "./VirtualClock.js"

/** The configuration with what start-up adds: the admin token and the sealing key. */
export interface Settings {
  readonly config: Config.ServerConfig
  readonly adminToken: Redacted.Redacted<string>
  /** The token was generated at this start (not from `ADMIN_TOKEN`): the banner prints it. */
  readonly adminTokenGenerated: boolean
  readonly sealingKey: SealingKey.SealingKey
}

/** Reads the environment, generates the admin token if unset, and finds or creates the sealing key. */
export const settings: Effect.Effect<Settings, ConfigError.ConfigError | SealingKey.SealingKeyError> =
  Effect.gen(function* () {
    const config = yield* Config.config
    const sealingKey = yield* SealingKey.resolve(config)
    return {
      config,
      sealingKey,
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

/** The store: the database, the sandbox clock (installed as the clock of what is built on it), the event log. */
export const layerStore = (config: Config.ServerConfig) => {
  const clock = config.clock === "virtual" ? VirtualClock.layerVirtualShared : VirtualClock.layerReal
  return Layer.mergeAll(Store.layerEventStore, clock).pipe(
    Layer.provideMerge(Store.layerDatabase(config.database))
  )
}

/**
 * The adapters of the domain's ports and what the HTTP layer needs beside them (`Http.HttpRequirements`),
 * over the store. Fallbacks where the real adapter is another package's work in progress:
 * `NotificationLog.layerFromLog` (scans the log on each A4 query).
 */
export const layerPorts = (settings: Settings) =>
  Layer.mergeAll(
    NodeKeyVault.layer(settings.sealingKey.key),
    Acquirer.layerSandbox,
    PgMerchantDirectory.layer,
    PgIdempotencyStore.layer,
    NotificationLog.layerFromLog,
    Readiness.layerFromEventStore,
    Simulator.layer,
    Layer.succeed(Authentication.AdminToken, settings.adminToken),
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
  ).pipe(Layer.provideMerge(Ids.layerRandom))

/** How often expired idempotency keys are deleted (they already behave as absent). */
export const purgeInterval = "1 hour"

/** Background maintenance: the read models' runners, the idempotency purge. */
export const layerBackground = Layer.mergeAll(
  Store.layerProjections(),
  Layer.scopedDiscard(
    DateTime.now.pipe(
      Effect.flatMap(PgIdempotencyStore.purgeExpired),
      Effect.repeat(Schedule.spaced(purgeInterval)),
      Effect.forkScoped
    )
  )
)

/** What the banner says. */
export const banner = (settings: Settings, address: HttpServer.Address): ReadonlyArray<string> => {
  const port = address._tag === "TcpAddress" ? address.port : settings.config.port
  const base = Config.publicUrl(settings.config, { port })
  const { config } = settings
  const sealing = settings.sealingKey.source
  return [
    `Cobro is listening on ${base}`,
    `  docs         ${base}/docs`,
    `  openapi      ${base}/openapi.json`,
    `  checkout     ${Config.checkoutUrl(config, base)}`,
    `  health       ${base}/health, ${base}/ready`,
    `  database     ${Store.describe(config.database)}`,
    `  sealing key  ${sealing === "COBRO_SEALING_KEY" ? "from COBRO_SEALING_KEY" : `${sealing.path}${sealing.created ? " (created)" : ""}`}`,
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
  const store = layerStore(settings.config)
  const ports = layerPorts(settings).pipe(Layer.provideMerge(store))
  return layerBanner(settings).pipe(
    Layer.provide(layerApp),
    Layer.provide(layerHttpServer(settings.config)),
    Layer.provide(layerBackground),
    Layer.provide(ports)
  )
}
