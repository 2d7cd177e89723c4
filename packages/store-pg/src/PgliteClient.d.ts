/**
 * The embedded database: PGlite (PostgreSQL compiled to WebAssembly) persisted to a folder, exposed
 * as `@effect/sql-pg`'s `PgClient` through PGlite's node-postgres adapter, so the store runs the
 * same SQL on it as on a server. `npm start` needs no server.
 */
import * as Reactivity from "@effect/experimental/Reactivity";
import * as SqlClient from "@effect/sql/SqlClient";
import { SqlError } from "@effect/sql/SqlError";
import * as PgClient from "@effect/sql-pg/PgClient";
import { PGlite } from "@electric-sql/pglite";
import * as Config from "effect/Config";
import type * as ConfigError from "effect/ConfigError";
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import * as LogNotifications from "./LogNotifications.js";
/** Where PGlite keeps its files. */
export interface PgliteClientConfig {
    /** A folder to persist to (created if missing); omitted: in memory, lost on close. */
    readonly dataDir?: string | undefined;
}
declare const Pglite_base: Context.TagClass<Pglite, "@cobro/store-pg/Pglite", PGlite>;
/** The PGlite instance behind the client, for tools that need it directly (dumps, tests). */
export declare class Pglite extends Pglite_base {
}
/** Everything the PGlite layers provide. */
export type Services = PgClient.PgClient | SqlClient.SqlClient | LogNotifications.LogNotifications | Pglite;
/**
 * Opens PGlite and wraps it. PGlite is a single session: the pool has one connection, so statements
 * of different fibers queue, and a transaction holds the session until it ends.
 */
export declare const make: (config: PgliteClientConfig) => Effect.Effect<Context.Context<Services>, SqlError, Scope.Scope | Reactivity.Reactivity>;
/**
 * PGlite as `PgClient` and `SqlClient`, with `LogNotifications` from its NOTIFY. Do not call
 * `PgClient.listen` on it (it would open a second session on the shared one): use `LogNotifications`.
 */
export declare const layer: (config: PgliteClientConfig) => Layer.Layer<Services, SqlError>;
/** {@link layer}, configured: `config` is typically `{ dataDir: Config.string("COBRO_DATA_DIR") }`. */
export declare const layerConfig: (config: Config.Config.Wrap<PgliteClientConfig>) => Layer.Layer<Services, SqlError | ConfigError.ConfigError>;
export {};
//# sourceMappingURL=PgliteClient.d.ts.map