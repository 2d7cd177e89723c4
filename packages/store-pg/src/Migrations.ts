/**
 * The store's schema, as `@effect/sql` migrations written as Effect values: the event log, the
 * stream heads used for concurrency checks, and the checkpoints of consumers and projections.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The table that records which migrations have run. */
export const table = "cobro_migrations"

/** The notification channel that `append` signals after each write (`pg_notify`). */
export const channel = "cobro_events"

const createEvents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE cobro_events (
      global_position bigserial PRIMARY KEY,
      stream_id text NOT NULL,
      stream_version integer NOT NULL CHECK (stream_version >= 1),
      event_id uuid NOT NULL,
      type text NOT NULL,
      schema_version integer NOT NULL,
      data jsonb NOT NULL,
      metadata jsonb NOT NULL,
      recorded_at timestamptz NOT NULL,
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      prev_hash text NOT NULL,
      hash text NOT NULL,
      CONSTRAINT cobro_events_event_id_key UNIQUE (event_id),
      CONSTRAINT cobro_events_stream_version_key UNIQUE (stream_id, stream_version)
    )`
  // The commit-order read: (transaction_id, global_position) below the snapshot's xmin.
  yield* sql`CREATE INDEX cobro_events_commit_order ON cobro_events (transaction_id, global_position)`
  yield* sql`
    CREATE TABLE cobro_streams (
      stream_id text PRIMARY KEY,
      version integer NOT NULL,
      last_hash text NOT NULL
    )`
  yield* sql`
    CREATE TABLE cobro_checkpoints (
      name text PRIMARY KEY,
      transaction_id xid8 NOT NULL,
      global_position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})

/** Every migration, by `<id>_<name>`, in the form `Migrator.fromRecord` reads. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_create_event_log": createEvents
}

const runMigrator = Migrator.make({})

/** Runs the pending migrations; returns the ones it ran. Safe to run concurrently (table lock). */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = runMigrator({ loader: Migrator.fromRecord(migrations), table })

/** A layer that runs the migrations when built. */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(run)
