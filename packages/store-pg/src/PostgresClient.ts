/**
 * A PostgreSQL server as the store's database: one `pg` pool (`PgPool`, which the store's hot path
 * uses directly) under `@effect/sql-pg`'s `PgClient`, plus `LogNotifications` by LISTEN/NOTIFY, for
 * production and several nodes sharing one log.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LogNotifications from "./LogNotifications.js"
import * as PgPool from "./PgPool.js"

/** Everything the PostgreSQL layers provide. */
export type Services =
  PgClient.PgClient | SqlClient.SqlClient | LogNotifications.LogNotifications | PgPool.PgPool

/** `PgClient` over the pool in context; the pool's scope, not the client's, ends it. */
const layerClient = (config: PgPool.PgPoolConfig) =>
  Layer.unwrapEffect(
    Effect.map(PgPool.PgPool, (pool) =>
      PgClient.layerFromPool({
        acquire: Effect.succeed(pool),
        applicationName: config.applicationName ?? "cobro"
      })
    )
  )

/** A connection pool to the server `config` names, with LISTEN/NOTIFY wake-ups. */
export const layer = (config: PgPool.PgPoolConfig): Layer.Layer<Services, SqlError> =>
  LogNotifications.layerListen.pipe(
    Layer.provideMerge(layerClient(config)),
    Layer.provideMerge(PgPool.layer(config))
  )

/**
 * {@link layer}, configured. Default: the server `DATABASE_URL` names, e.g.
 * `postgres://postgres@127.0.0.1:5432/cobro`.
 */
export const layerConfig = (
  config: Config.Config.Wrap<PgPool.PgPoolConfig> = { url: Config.redacted("DATABASE_URL") }
): Layer.Layer<Services, SqlError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
