/**
 * A PostgreSQL server as the store's database: `@effect/sql-pg`'s `PgClient` plus `LogNotifications`
 * by LISTEN/NOTIFY, for production and several nodes sharing one log.
 */
import * as SqlClient from "@effect/sql/SqlClient";
import type { SqlError } from "@effect/sql/SqlError";
import * as PgClient from "@effect/sql-pg/PgClient";
import * as Config from "effect/Config";
import type * as ConfigError from "effect/ConfigError";
import * as Layer from "effect/Layer";
import * as LogNotifications from "./LogNotifications.js";
/** Everything the PostgreSQL layers provide. */
export type Services = PgClient.PgClient | SqlClient.SqlClient | LogNotifications.LogNotifications;
/** A connection pool to the server `config` names, with LISTEN/NOTIFY wake-ups. */
export declare const layer: (config: PgClient.PgClientConfig) => Layer.Layer<Services, SqlError>;
/**
 * {@link layer}, configured. Default: the server `DATABASE_URL` names, e.g.
 * `postgres://postgres@127.0.0.1:5432/cobro`.
 */
export declare const layerConfig: (config?: Config.Config.Wrap<PgClient.PgClientConfig>) => Layer.Layer<Services, SqlError | ConfigError.ConfigError>;
//# sourceMappingURL=PostgresClient.d.ts.map