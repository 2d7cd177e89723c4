/**
 * The server's configuration, read from the environment with effect's `Config` (issue 4, "Running
 * it"): where it listens, which database, the admin token, the sandbox clock, the sealing key.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

/** Which clock the server runs on: the real one, or the sandbox's advanceable one. */
export type ClockMode = "real" | "virtual"

/** Where the event log lives. */
export type Database =
  | { readonly _tag: "Pglite"; readonly dataDir: string }
  | {
      readonly _tag: "Postgres"
      readonly url: Redacted.Redacted<string>
      readonly dataDir: string
      /** `DATABASE_LISTEN_URL`: where LISTEN connects, directly (not through a transaction-mode pooler); `url` when unset. */
      readonly listenUrl?: Redacted.Redacted<string> | undefined
      /** `DATABASE_POOL_MODE`: `transaction` behind a transaction-mode pooler (pgbouncer); default `session`. */
      readonly poolMode?: "session" | "transaction" | undefined
      /** `DATABASE_STATEMENT_TIMEOUT`: how long a statement may run (default 30 seconds). */
      readonly statementTimeout?: Duration.Duration | undefined
      /** `DATABASE_CONNECT_TIMEOUT`: how long opening a connection, or waiting for a pooled one, may take (default 5 seconds). */
      readonly connectTimeout?: Duration.Duration | undefined
    }

/** Everything the environment says, before anything is generated or opened. */
export interface ServerConfig {
  /** `PORT`, default 8080; 0 picks a free port. */
  readonly port: number
  /** `HOST`, default `127.0.0.1` (set `0.0.0.0` in a container). */
  readonly host: string
  /**
   * `DATABASE_URL` (PostgreSQL) when set, else PGlite persisted in `DATA_DIR` (default `./.data`).
   * `DATA_DIR` also holds the generated sealing key on PGlite.
   */
  readonly database: Database
  /** `ADMIN_TOKEN`: none means one is generated and printed at start. */
  readonly adminToken: Option.Option<Redacted.Redacted<string>>
  /** `COBRO_CLOCK`: `virtual` lets an administrator advance time; default `real`. */
  readonly clock: ClockMode
  /** `COBRO_DEV_WEBHOOKS=1`: http and loopback webhook targets allowed (development and tests). */
  readonly devWebhooks: boolean
  /** `COBRO_SEALING_KEY`: 32 bytes, hex (64 digits) or base64; none: see `SealingKey`. */
  readonly sealingKey: Option.Option<Redacted.Redacted<string>>
  /** `PUBLIC_URL`: the base URL merchants and browsers reach; none: derived from the listen address. */
  readonly publicUrl: Option.Option<string>
  /** `CHECKOUT_URL`: the hosted checkout's base; none: `PUBLIC_URL + "/checkout"`. */
  readonly checkoutUrl: Option.Option<string>
  /** `COBRO_CHECKPOINT_KEY`: the Ed25519 seed checkpoints are signed with (32 bytes, hex or base64); none: see `CheckpointKey`. */
  readonly checkpointKey: Option.Option<Redacted.Redacted<string>>
  /** `COBRO_LOG_ORIGIN`: the log's name on its checkpoints; none: `cobro/<16 hex digits of the key's hash>`. */
  readonly logOrigin: Option.Option<string>
  /** `COBRO_CHECKPOINT_EVERY_EVENTS`: a checkpoint once this many events joined the tree (default 10,000). */
  readonly checkpointEveryEvents: number
  /** `COBRO_CHECKPOINT_EVERY_SECONDS`: a checkpoint once this long has passed, if the log grew (default 60). */
  readonly checkpointEverySeconds: number
}

/** The default port. */
export const defaultPort = 8080

/** The default listen address: loopback, so that a development sandbox is not on the network by accident. */
export const defaultHost = "127.0.0.1"

/** How long a statement may run on PostgreSQL before its connection is given up (`DATABASE_STATEMENT_TIMEOUT`). */
export const defaultStatementTimeout: Duration.Duration = Duration.seconds(30)

/** How long opening a connection, or waiting for one of the pool's, may take (`DATABASE_CONNECT_TIMEOUT`). */
export const defaultConnectTimeout: Duration.Duration = Duration.seconds(5)

/** The default PGlite folder, relative to the working directory (`npm start` runs at the repository root). */
export const defaultDataDir = "./.data"

const trimmedUrl = (name: string) =>
  Config.option(Config.nonEmptyString(name)).pipe(Config.map(Option.map((url) => url.replace(/\/+$/, ""))))

/** The server's configuration from the environment (or any `ConfigProvider`). */
export const config: Config.Config<ServerConfig> = Config.all({
  port: Config.port("PORT").pipe(
    Config.orElse(() =>
      Config.integer("PORT").pipe(
        Config.validate({ message: "PORT: 0 or a port", validation: (n) => n === 0 })
      )
    ),
    Config.withDefault(defaultPort)
  ),
  host: Config.nonEmptyString("HOST").pipe(Config.withDefault(defaultHost)),
  database: Config.all({
    url: Config.option(Config.redacted(Config.nonEmptyString("DATABASE_URL"))),
    dataDir: Config.nonEmptyString("DATA_DIR").pipe(Config.withDefault(defaultDataDir)),
    listenUrl: Config.option(Config.redacted(Config.nonEmptyString("DATABASE_LISTEN_URL"))),
    poolMode: Config.literal(
      "session",
      "transaction"
    )("DATABASE_POOL_MODE").pipe(Config.withDefault("session" as const)),
    statementTimeout: Config.duration("DATABASE_STATEMENT_TIMEOUT").pipe(
      Config.withDefault(defaultStatementTimeout)
    ),
    connectTimeout: Config.duration("DATABASE_CONNECT_TIMEOUT").pipe(
      Config.withDefault(defaultConnectTimeout)
    )
  }).pipe(
    Config.map(({ connectTimeout, dataDir, listenUrl, poolMode, statementTimeout, url }): Database =>
      Option.match(url, {
        onNone: () => ({ _tag: "Pglite", dataDir }),
        onSome: (url) => ({
          _tag: "Postgres",
          url,
          dataDir,
          listenUrl: Option.getOrUndefined(listenUrl),
          poolMode,
          statementTimeout,
          connectTimeout
        })
      })
    )
  ),
  adminToken: Config.option(Config.redacted(Config.nonEmptyString("ADMIN_TOKEN"))),
  clock: Config.literal("real", "virtual")("COBRO_CLOCK").pipe(Config.withDefault("real" as const)),
  devWebhooks: Config.boolean("COBRO_DEV_WEBHOOKS").pipe(Config.withDefault(false)),
  sealingKey: Config.option(Config.redacted(Config.nonEmptyString("COBRO_SEALING_KEY"))),
  publicUrl: trimmedUrl("PUBLIC_URL"),
  checkoutUrl: trimmedUrl("CHECKOUT_URL"),
  checkpointKey: Config.option(Config.redacted(Config.nonEmptyString("COBRO_CHECKPOINT_KEY"))),
  logOrigin: Config.option(
    Config.nonEmptyString("COBRO_LOG_ORIGIN").pipe(
      Config.validate({
        message: "COBRO_LOG_ORIGIN: a name without spaces or '+' (for example cobro.example.com/log)",
        validation: (origin) => !/[\s+]/u.test(origin)
      })
    )
  ),
  checkpointEveryEvents: Config.integer("COBRO_CHECKPOINT_EVERY_EVENTS").pipe(
    Config.validate({ message: "COBRO_CHECKPOINT_EVERY_EVENTS: at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(10_000)
  ),
  checkpointEverySeconds: Config.number("COBRO_CHECKPOINT_EVERY_SECONDS").pipe(
    Config.validate({ message: "COBRO_CHECKPOINT_EVERY_SECONDS: more than 0", validation: (n) => n > 0 }),
    Config.withDefault(60)
  )
})

/** The base URL printed at start and used for links: `PUBLIC_URL`, else the address listened on. */
export const publicUrl = (config: ServerConfig, listening: { readonly port: number }): string =>
  Option.getOrElse(config.publicUrl, () => {
    // A wildcard address is reachable on loopback; an explicit one as itself.
    const host =
      config.host === "0.0.0.0" || config.host === "::"
        ? "127.0.0.1"
        : config.host.includes(":")
          ? `[${config.host}]`
          : config.host
    return `http://${host}:${listening.port}`
  })

/** The hosted checkout's base, `{checkout_url}` of the spec: `CHECKOUT_URL`, else `<public URL>/checkout`. */
export const checkoutUrl = (config: ServerConfig, publicUrl: string): string =>
  Option.getOrElse(config.checkoutUrl, () => `${publicUrl}/checkout`)
