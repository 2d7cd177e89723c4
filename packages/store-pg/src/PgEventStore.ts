/**
 * The domain's `EventStore` port over `@effect/sql` on PostgreSQL (or PGlite): optimistic appends
 * with a per-stream hash chain, reads by stream and in commit order (brief, "The event log"). Its
 * paths live in `internal/eventStore/`: the appends (`Append`, with the SQL they send in
 * `AppendStatements` and what a refusal means in `Refusals`), the reads (`Read`), and the wake-ups
 * that autocommit appends send to the log's consumers (`WakeUp`).
 */
import * as EventStore from "@cobro/domain/EventStore"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Append from "./internal/eventStore/Append.js"
import * as Connection from "./internal/eventStore/Connection.js"
import * as Read from "./internal/eventStore/Read.js"
import * as WakeUp from "./internal/eventStore/WakeUp.js"
import * as Migrations from "./Migrations.js"

/** The page size of `readAll` and `streamAll` when none is given. */
export const defaultLimit: number = Read.defaultLimit

/** The shortest time between two wake-up NOTIFYs sent after autocommit appends. */
export const notifyInterval: Duration.DurationInput = WakeUp.notifyInterval

/**
 * The statement of `readStreams`: each stream looked up on its own through the
 * `(stream_id, stream_version)` index (see `internal/eventStore/Read.ts` for why it is written so).
 */
export const readStreamsStatement: string = Read.readStreamsStatement

/**
 * Builds the store over the `SqlClient` in context (and the `PgPool`, when there is one). An append
 * is one round trip (one autocommit statement, or one function call under a savepoint in a caller's
 * transaction), then a wake-up NOTIFY off the caller's path; a read is one statement. The scope
 * holds the NOTIFY fiber.
 */
export const make: Effect.Effect<EventStore.EventStore["Type"], never, SqlClient.SqlClient | Scope.Scope> =
  Effect.gen(function* () {
    const connection = yield* Connection.make
    const signal = yield* WakeUp.make(connection.autocommit)
    const { append, appendBatch } = Append.make(connection, signal)
    const { readAll, readStream, readStreams, streamAll } = Read.make(connection.statement)
    return EventStore.EventStore.of({ append, appendBatch, readStream, readStreams, readAll, streamAll })
  })

/** `EventStore` over the `SqlClient` in context. Run `Migrations.layer` first (or use `layerMigrated`). */
export const layer: Layer.Layer<EventStore.EventStore, never, SqlClient.SqlClient> = Layer.scoped(
  EventStore.EventStore,
  make
)

/** `EventStore` over the `SqlClient` in context, after running the store's migrations. */
export const layerMigrated: Layer.Layer<
  EventStore.EventStore,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Layer.scoped(EventStore.EventStore, Effect.zipRight(Migrations.run, make))
