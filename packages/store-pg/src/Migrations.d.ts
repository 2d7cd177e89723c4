/**
 * The store's schema, as `@effect/sql` migrations written as Effect values: the event log, the
 * stream heads used for concurrency checks, and the checkpoints of consumers and projections.
 */
import * as Migrator from "@effect/sql/Migrator";
import * as SqlClient from "@effect/sql/SqlClient";
import type { SqlError } from "@effect/sql/SqlError";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
/** The table that records which migrations have run. */
export declare const table = "cobro_migrations";
/** The notification channel that `append` signals after each write (`pg_notify`). */
export declare const channel = "cobro_events";
/** Every migration, by `<id>_<name>`, in the form `Migrator.fromRecord` reads. */
export declare const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>>;
/** Runs the pending migrations; returns the ones it ran. Safe to run concurrently (table lock). */
export declare const run: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, Migrator.MigrationError | SqlError, SqlClient.SqlClient>;
/** A layer that runs the migrations when built. */
export declare const layer: Layer.Layer<never, Migrator.MigrationError | SqlError, SqlClient.SqlClient>;
//# sourceMappingURL=Migrations.d.ts.map