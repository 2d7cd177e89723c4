/**
 * The domain's `EventStore` port over `@effect/sql` on PostgreSQL (or PGlite): optimistic appends
 * with a per-stream hash chain, reads by stream and in commit order (brief, "The event log").
 */
import * as EventStore from "@cobro/domain/EventStore";
import type * as Migrator from "@effect/sql/Migrator";
import * as SqlClient from "@effect/sql/SqlClient";
import type { SqlError } from "@effect/sql/SqlError";
import type * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Stream from "effect/Stream";
/** The page size of `readAll` and `streamAll` when none is given. */
export declare const defaultLimit = 1000;
/** The shortest time between two wake-up NOTIFYs sent after autocommit appends. */
export declare const notifyInterval: Duration.DurationInput;
/**
 * Builds the store over the `SqlClient` in context. Every `append` is one call of `cobro_append`
 * (lock or create the stream head, check the expected version, link the hash chain, insert): one
 * round trip when no transaction is open, then a wake-up NOTIFY off the caller's path; inside a
 * caller's transaction, a savepoint around it and a NOTIFY that its commit delivers. Only a version
 * mismatch or a reused event id costs a second statement, to tell a retry of events already stored
 * (a no-op) from a conflict. The scope holds the NOTIFY fiber.
 */
export declare const make: Effect.Effect<{
    readonly append: (streamId: string, events: ReadonlyArray<EventStore.NewEvent>, expected: EventStore.ExpectedVersion) => Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | EventStore.EventIdReused>;
    readonly readStream: (streamId: string, options?: EventStore.ReadStreamOptions) => Effect.Effect<ReadonlyArray<EventStore.RecordedEvent>>;
    readonly readAll: (options?: EventStore.ReadAllOptions) => Effect.Effect<ReadonlyArray<EventStore.LoggedEvent>>;
    readonly streamAll: (options?: EventStore.ReadAllOptions) => Stream.Stream<EventStore.LoggedEvent>;
}, never, import("effect/Scope").Scope | SqlClient.SqlClient>;
/** `EventStore` over the `SqlClient` in context. Run `Migrations.layer` first (or use `layerMigrated`). */
export declare const layer: Layer.Layer<EventStore.EventStore, never, SqlClient.SqlClient>;
/** `EventStore` over the `SqlClient` in context, after running the store's migrations. */
export declare const layerMigrated: Layer.Layer<EventStore.EventStore, Migrator.MigrationError | SqlError, SqlClient.SqlClient>;
//# sourceMappingURL=PgEventStore.d.ts.map