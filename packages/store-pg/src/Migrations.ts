/**
 * The store's schema, as `@effect/sql` migrations written as Effect values: the event log, the
 * stream heads used for concurrency checks, and the checkpoints of consumers and projections.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ddl from "./internal/Ddl.js"
import * as InlineReadModels from "./InlineReadModels.js"
import * as LogNotifications from "./LogNotifications.js"
import * as PgPanelSessions from "./PgPanelSessions.js"
import * as PgSignInFailures from "./PgSignInFailures.js"
import * as PgTransparencyLog from "./PgTransparencyLog.js"
import * as ApiKeys from "./readModels/ApiKeys.js"
import * as LastNotification from "./readModels/LastNotification.js"
import * as LastNotificationByReference from "./readModels/LastNotificationByReference.js"
import * as Links from "./readModels/Links.js"
import * as MerchantRefunds from "./readModels/MerchantRefunds.js"
import * as Merchants from "./readModels/Merchants.js"
import * as Notifications from "./readModels/Notifications.js"
import * as PanelUsers from "./readModels/PanelUsers.js"
import * as RefundsByTransaction from "./readModels/RefundsByTransaction.js"
import * as TerminalCheckouts from "./readModels/TerminalCheckouts.js"
import * as TerminalPushes from "./readModels/TerminalPushes.js"
import * as Transactions from "./readModels/Transactions.js"
import * as WebhookDeliveries from "./readModels/WebhookDeliveries.js"

/** The table that records which migrations have run. */
export const table = "cobro_migrations"

const createEvents = Ddl.run([
  `CREATE TABLE cobro_events (
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
    )`,
  // The commit-order read: (transaction_id, global_position) below the snapshot's xmin.
  `CREATE INDEX cobro_events_commit_order ON cobro_events (transaction_id, global_position)`,
  `CREATE TABLE cobro_streams (
      stream_id text PRIMARY KEY,
      version integer NOT NULL,
      last_hash text NOT NULL
    )`,
  `CREATE TABLE cobro_checkpoints (
      name text PRIMARY KEY,
      transaction_id xid8 NOT NULL,
      global_position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
])

/**
 * The parameters that `cobro_append` and `cobro_append_batch` share, after their streams': the
 * recording instant, per event its columns and the halves of its canonical text, and whether to
 * NOTIFY; and their result, a row per stream.
 */
const appendParameters = `p_recorded_at timestamptz,
      p_event_ids uuid[],
      p_types text[],
      p_schema_versions integer[],
      p_data jsonb[],
      p_metadata jsonb[],
      p_before text[],
      p_after text[],
      p_notify boolean
    ) RETURNS TABLE (next_version integer, first_position bigint, last_position bigint)
    LANGUAGE plpgsql AS $$`

/**
 * The append as one statement (brief, "The event log"): `cobro_append` locks or creates the stream
 * head, checks the expected version, links the hash chain in SQL, inserts and moves the head, so
 * that an append outside a transaction is one round trip.
 *
 * It `pg_notify`s only when asked (`p_notify`), for an append in the caller's transaction, where the
 * NOTIFY must be delivered by that transaction's commit. An autocommit append is better off
 * notifying after it returns, in a statement of its own (`PgEventStore`): every transaction that
 * NOTIFYs takes a database-wide lock through its commit (PostgreSQL 15 to 17 at least), which
 * serialises the commits of concurrent writers: W1 with 8 writers halves with it.
 *
 * The writer passes each event's canonical text (`HashChain.canonicalEvent`) split around its
 * stream version, which only the function knows for `Any`:
 * `hash = hex(sha256(utf8(prev_hash || before || version || after)))`, the recipe of `HashChain`.
 * It returns one row: the positions written, or null positions and the stream's actual version
 * when it is not at the expected one (nothing written). A reused event id raises the unique
 * violation of `cobro_events_event_id_key`, as the multi-statement append did.
 */
const createAppendFunction = Ddl.run([
  `CREATE OR REPLACE FUNCTION cobro_hash_chain(
      prev_hash text, version integer, before text[], after text[]
    ) RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      hashes text[] := '{}';
      link text := prev_hash;
    BEGIN
      FOR i IN 1 .. coalesce(cardinality(before), 0) LOOP
        link := encode(sha256(convert_to(link || before[i] || (version + i)::text || after[i], 'UTF8')), 'hex');
        hashes[i] := link;
      END LOOP;
      RETURN hashes;
    END $$`,
  `CREATE OR REPLACE FUNCTION cobro_append(
      p_stream_id text,
      p_expected text,
      p_expected_version integer,
      ${appendParameters}
    DECLARE
      n integer := cardinality(p_event_ids);
      v_version integer := 0;
      v_hash text := '';
      v_hashes text[];
      v_created boolean := false;
    BEGIN
      IF p_expected <> 'Exact' THEN
        -- A new stream: create its head with the final version and hash in one statement.
        v_hashes := cobro_hash_chain(v_hash, v_version, p_before, p_after);
        INSERT INTO cobro_streams AS s (stream_id, version, last_hash)
        VALUES (p_stream_id, n, v_hashes[n])
        ON CONFLICT (stream_id) DO NOTHING;
        v_created := FOUND;
        IF NOT v_created AND p_expected = 'NoStream' THEN
          RETURN QUERY SELECT coalesce((SELECT s.version FROM cobro_streams s WHERE s.stream_id = p_stream_id), 0),
            NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
      END IF;
      IF NOT v_created THEN
        SELECT s.version, s.last_hash INTO v_version, v_hash
        FROM cobro_streams s WHERE s.stream_id = p_stream_id FOR UPDATE;
        IF NOT FOUND OR (p_expected = 'Exact' AND v_version <> p_expected_version) THEN
          RETURN QUERY SELECT coalesce(v_version, 0), NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_hashes := cobro_hash_chain(v_hash, v_version, p_before, p_after);
        UPDATE cobro_streams s SET version = v_version + n, last_hash = v_hashes[n]
        WHERE s.stream_id = p_stream_id;
      END IF;
      RETURN QUERY
        WITH inserted AS (
          INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
            recorded_at, prev_hash, hash)
          SELECT p_stream_id, v_version + e.ord, e.event_id, e.type, e.schema_version, e.data, e.metadata,
            p_recorded_at, (ARRAY[v_hash] || v_hashes)[e.ord], v_hashes[e.ord]
          FROM unnest(p_event_ids, p_types, p_schema_versions, p_data, p_metadata)
            WITH ORDINALITY AS e(event_id, type, schema_version, data, metadata, ord)
          ORDER BY e.ord
          RETURNING global_position
        )
        SELECT v_version + n, min(i.global_position), max(i.global_position) FROM inserted i;
      IF p_notify THEN
        PERFORM pg_notify('${LogNotifications.channel}', p_stream_id);
      END IF;
    END $$`
])

/**
 * Two lookups the HTTP service makes on every request, by the merchant's credential:
 *
 * - `cobro_idempotency`: the `Idempotency-Key`s of POST requests (`PgIdempotencyStore`), one row
 *   per merchant, mode and key, with the request's fingerprint and, once answered, the response
 *   to replay; `expires_at` (creation plus 24 hours, from the caller's clock) indexed for purging.
 * - Partial expression indexes on `cobro_events` for API-key authentication straight from the log
 *   (`PgMerchantDirectory`): the identity-key hashes issued by `IntegrationActivated` (both modes)
 *   and `KeyRotated`, and the ones `KeyRotated` revokes. They cover only those two event types, so
 *   the rest of the log pays one predicate per insert, and a lookup is an index probe whether or not
 *   the key exists, however far the `apiKeys` projection lags.
 */
const createIdempotencyAndKeyIndexes = Ddl.run([
  `CREATE TABLE cobro_idempotency (
      merchant_id text NOT NULL,
      mode text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
      status integer,
      content_type text,
      body text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (merchant_id, mode, key),
      CHECK (state = 'in_progress' OR (status IS NOT NULL AND body IS NOT NULL))
    )`,
  `CREATE INDEX cobro_idempotency_expires_at ON cobro_idempotency (expires_at)`,
  `CREATE INDEX cobro_events_key_issued_production ON cobro_events ((data->'production'->>'identityKeyHash'))
    WHERE type = 'IntegrationActivated'`,
  `CREATE INDEX cobro_events_key_issued_test ON cobro_events ((data->'test'->>'identityKeyHash'))
    WHERE type = 'IntegrationActivated'`,
  `CREATE INDEX cobro_events_key_issued_rotation ON cobro_events ((data->'keyPair'->>'identityKeyHash'))
    WHERE type = 'KeyRotated'`,
  `CREATE INDEX cobro_events_key_revoked ON cobro_events ((data->>'revokedIdentityKeyHash'))
    WHERE type = 'KeyRotated'`
])

/**
 * The append of one event to a new stream, the commonest append (every aggregate's first event):
 * `cobro_append_new` does what `cobro_append` does for `NoStream` and one event, with scalar
 * parameters instead of arrays, no nested function, no set-returning result: create the head with
 * `ON CONFLICT DO NOTHING` (a concurrent creator of the same stream is waited for), insert the event,
 * return its position; or return null, writing nothing, when the stream already exists. Measured:
 * about two thirds of the server CPU of `cobro_append` for the same append (`docs/benchmarks.md`).
 *
 * The hash is the recipe of `HashChain` and of `cobro_hash_chain` for version 1 after the genesis
 * (empty) hash: `hex(sha256(utf8(before || '1' || after)))`, `before`/`after` from
 * `HashChain.canonicalEventAround`. A reused event id raises the unique violation of
 * `cobro_events_event_id_key`, as `cobro_append` does. No NOTIFY: the writer calls it outside a
 * transaction only and signals after it returns.
 */
const createAppendNewFunction = Ddl.run([
  `CREATE OR REPLACE FUNCTION cobro_append_new(
      p_stream_id text,
      p_event_id uuid,
      p_type text,
      p_schema_version integer,
      p_data jsonb,
      p_metadata jsonb,
      p_recorded_at timestamptz,
      p_before text,
      p_after text
    ) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_hash text := encode(sha256(convert_to(p_before || '1' || p_after, 'UTF8')), 'hex');
      v_position bigint;
    BEGIN
      INSERT INTO cobro_streams (stream_id, version, last_hash) VALUES (p_stream_id, 1, v_hash)
      ON CONFLICT (stream_id) DO NOTHING;
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
        recorded_at, prev_hash, hash)
      VALUES (p_stream_id, 1, p_event_id, p_type, p_schema_version, p_data, p_metadata,
        p_recorded_at, '', v_hash)
      RETURNING global_position INTO v_position;
      RETURN v_position;
    END $$`
])

/** The SQLSTATE `cobro_append_batch` raises when an item's stream is not at its expected version. */
export const batchConflictCode = "CB409"

/**
 * The head of `cobro_append_batch`, the same in migrations 5, 6 and 16: per item the stream id, the
 * expected tag and version and the number of events, then per event what `cobro_append` takes.
 */
const createAppendBatch = `CREATE OR REPLACE FUNCTION cobro_append_batch(
      p_stream_ids text[],
      p_expected text[],
      p_expected_versions integer[],
      p_counts integer[],
      ${appendParameters}`

/**
 * A batch of appends to several streams (`EventStore.appendBatch`) as one statement:
 * `cobro_append_batch` takes the items flattened into arrays (per item: stream id, expected tag and
 * version, number of events; per event: what `cobro_append` takes) and calls `cobro_append` on each
 * item's slice, in item order, returning one row per item. An item whose stream is not at its
 * expected version raises `batchConflictCode`, so that the whole statement, the items before it
 * included, writes nothing; a reused event id raises the unique violation, as `cobro_append` does.
 * The writer then replays the batch item by item in a transaction, which tells a retry of stored
 * events (a no-op) from a conflict. One NOTIFY for the batch when asked (`p_notify`), not one per item.
 */
const createAppendBatchFunction = Ddl.run([
  `${createAppendBatch}
    DECLARE
      v_from integer := 1;
      v_to integer;
      v_row record;
    BEGIN
      FOR i IN 1 .. coalesce(cardinality(p_stream_ids), 0) LOOP
        v_to := v_from + p_counts[i] - 1;
        SELECT a.next_version, a.first_position, a.last_position INTO v_row
        FROM cobro_append(p_stream_ids[i], p_expected[i], p_expected_versions[i], p_recorded_at,
          p_event_ids[v_from:v_to], p_types[v_from:v_to], p_schema_versions[v_from:v_to],
          p_data[v_from:v_to], p_metadata[v_from:v_to], p_before[v_from:v_to], p_after[v_from:v_to],
          false) a;
        IF v_row.first_position IS NULL THEN
          RAISE EXCEPTION 'cobro_append_batch: item % (stream %) is not at its expected version (actual %)',
            i, p_stream_ids[i], v_row.next_version
            USING ERRCODE = '${batchConflictCode}';
        END IF;
        next_version := v_row.next_version;
        first_position := v_row.first_position;
        last_position := v_row.last_position;
        RETURN NEXT;
        v_from := v_to + 1;
      END LOOP;
      IF p_notify THEN
        PERFORM pg_notify('${LogNotifications.channel}', p_stream_ids[1]);
      END IF;
    END $$`
])

/**
 * `cobro_append_batch` again, set-based (same signature, same results, same hash recipe): the
 * function of migration 5 called `cobro_append` once per item on slices of its array parameters,
 * and each slice copies the whole array, so that a batch of n items copied its data (whose events
 * carry whole webhook bodies) n times: 256 µs of server CPU per event in a batch of 100 new
 * streams, against 36 µs for `cobro_append_new` alone (`docs/benchmarks.md`, Webhooks). This one
 * reads and locks every head in one statement, checks the expected versions and links the hash
 * chains in a loop of plain expressions, then writes the heads and the events with one statement
 * each: 62 µs per event measured the same way.
 *
 * Locks are taken in stream id order (the existing heads with one `FOR UPDATE`, the new ones
 * inserted sorted), so two batches over the same streams in different item orders wait for each
 * other instead of deadlocking; the events keep item order, hence their positions. A head that
 * another writer creates meanwhile raises `batchConflictCode`, as a version mismatch does, and the
 * writer replays the batch item by item (`PgEventStore`), which tells a conflict from a retry.
 */
const createSetBasedAppendBatchFunction = Ddl.run([
  `${createAppendBatch}
    DECLARE
      n_items integer := coalesce(cardinality(p_stream_ids), 0);
      v_versions integer[];
      v_hashes text[];
      v_exists boolean[];
      v_last text[] := '{}';
      e_streams text[] := '{}';
      e_versions integer[] := '{}';
      e_prev text[] := '{}';
      e_hashes text[] := '{}';
      v_link text;
      v_from integer := 1;
      v_new integer := 0;
      v_created integer;
      e integer;
    BEGIN
      IF n_items = 0 THEN
        RETURN;
      END IF;
      -- The heads of the streams that exist, locked in stream id order: two batches over the same
      -- streams wait for each other instead of deadlocking, whatever their items' order.
      WITH locked AS (
        SELECT s.stream_id, s.version, s.last_hash FROM cobro_streams s
        WHERE s.stream_id = ANY (p_stream_ids) ORDER BY s.stream_id FOR UPDATE
      )
      SELECT array_agg(coalesce(l.version, 0) ORDER BY i.ord), array_agg(coalesce(l.last_hash, '') ORDER BY i.ord),
        array_agg(l.stream_id IS NOT NULL ORDER BY i.ord)
      INTO v_versions, v_hashes, v_exists
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      LEFT JOIN locked l ON l.stream_id = i.stream_id;
      FOR i IN 1 .. n_items LOOP
        IF (p_expected[i] = 'NoStream' AND v_exists[i])
          OR (p_expected[i] = 'Exact' AND (NOT v_exists[i] OR v_versions[i] <> p_expected_versions[i])) THEN
          RAISE EXCEPTION 'cobro_append_batch: item % (stream %) is not at its expected version (actual %)',
            i, p_stream_ids[i], v_versions[i]
            USING ERRCODE = '${batchConflictCode}';
        END IF;
        IF NOT v_exists[i] THEN
          v_new := v_new + 1;
        END IF;
        v_link := v_hashes[i];
        FOR k IN 1 .. p_counts[i] LOOP
          e := v_from + k - 1;
          e_streams[e] := p_stream_ids[i];
          e_versions[e] := v_versions[i] + k;
          e_prev[e] := v_link;
          v_link := encode(sha256(convert_to(v_link || p_before[e] || (v_versions[i] + k)::text || p_after[e], 'UTF8')), 'hex');
          e_hashes[e] := v_link;
        END LOOP;
        v_last[i] := v_link;
        v_from := v_from + p_counts[i];
      END LOOP;
      -- New heads in stream id order (see above). A head created meanwhile by another writer is a conflict.
      INSERT INTO cobro_streams (stream_id, version, last_hash)
      SELECT i.stream_id, v_versions[i.ord] + p_counts[i.ord], v_last[i.ord]
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      WHERE NOT v_exists[i.ord]
      ORDER BY i.stream_id
      ON CONFLICT (stream_id) DO NOTHING;
      GET DIAGNOSTICS v_created = ROW_COUNT;
      IF v_created <> v_new THEN
        RAISE EXCEPTION 'cobro_append_batch: a stream of the batch was created meanwhile by another writer'
          USING ERRCODE = '${batchConflictCode}';
      END IF;
      UPDATE cobro_streams s SET version = v_versions[i.ord] + p_counts[i.ord], last_hash = v_last[i.ord]
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      WHERE v_exists[i.ord] AND s.stream_id = i.stream_id;
      RETURN QUERY
        WITH inserted AS (
          INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
            recorded_at, prev_hash, hash)
          SELECT e.stream_id, e.version, e.event_id, e.type, e.schema_version, e.data, e.metadata,
            p_recorded_at, e.prev_hash, e.hash
          FROM unnest(e_streams, e_versions, p_event_ids, p_types, p_schema_versions, p_data, p_metadata, e_prev, e_hashes)
            WITH ORDINALITY AS e(stream_id, version, event_id, type, schema_version, data, metadata, prev_hash, hash, ord)
          ORDER BY e.ord
          RETURNING cobro_events.stream_id, global_position
        )
        SELECT v_versions[i.ord] + p_counts[i.ord], w.first_position, w.last_position
        FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
        JOIN (SELECT x.stream_id, min(x.global_position) AS first_position, max(x.global_position) AS last_position
              FROM inserted x GROUP BY x.stream_id) w ON w.stream_id = i.stream_id
        ORDER BY i.ord;
      IF p_notify THEN
        PERFORM pg_notify('${LogNotifications.channel}', p_stream_ids[1]);
      END IF;
    END $$;`
])

/**
 * `cobro_append_batch` again (same signature, same hash recipe), for the outbox's guards
 * (`Outbox.guard`): an item of no events is a check of its stream's version that writes nothing,
 * in the same statement as the writes, instead of sending the whole batch down the item-by-item
 * transaction (three round trips at least). A sale's outcome then schedules its webhook on the
 * merchant this process knows, guarded at that version, in the one round trip of its append.
 *
 * A guard takes no lock: only the heads the batch writes are locked (`FOR UPDATE`); a guarded head
 * is read plainly, after those locks are held. A lock on it would serialise every commit that
 * guards it (every sale of a merchant). Under READ COMMITTED the plain read sees the head as last
 * committed when the statement starts, so a change committed after it is not seen: the decision is
 * the one a read of the merchant just before the append would have made, which is what the outbox
 * did before guards (a read, then the append), with a shorter window. A guard's item returns the
 * stream's version and positions 0, as an append of no events does. Its conflict raises
 * `batchConflictCode` like a version mismatch, in item order (the writes come first), and the
 * writer's item-by-item replay reports it on the guard's stream.
 */
const createAppendBatchWithGuardsFunction = Ddl.run([
  `${createAppendBatch}
    DECLARE
      n_items integer := coalesce(cardinality(p_stream_ids), 0);
      v_written text[];
      v_versions integer[];
      v_hashes text[];
      v_exists boolean[];
      v_guard_versions integer[];
      v_guard_exists boolean[];
      v_last text[] := '{}';
      e_streams text[] := '{}';
      e_versions integer[] := '{}';
      e_prev text[] := '{}';
      e_hashes text[] := '{}';
      v_link text;
      v_from integer := 1;
      v_new integer := 0;
      v_created integer;
      e integer;
    BEGIN
      IF n_items = 0 THEN
        RETURN;
      END IF;
      v_written := ARRAY(SELECT w.stream_id FROM unnest(p_stream_ids, p_counts) AS w(stream_id, n) WHERE w.n > 0);
      -- The heads of the streams written that exist, locked in stream id order: two batches over the
      -- same streams wait for each other instead of deadlocking, whatever their items' order.
      WITH locked AS (
        SELECT s.stream_id, s.version, s.last_hash FROM cobro_streams s
        WHERE s.stream_id = ANY (v_written) ORDER BY s.stream_id FOR UPDATE
      )
      SELECT array_agg(coalesce(l.version, 0) ORDER BY i.ord), array_agg(coalesce(l.last_hash, '') ORDER BY i.ord),
        array_agg(l.stream_id IS NOT NULL ORDER BY i.ord)
      INTO v_versions, v_hashes, v_exists
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      LEFT JOIN locked l ON l.stream_id = i.stream_id;
      -- The guarded heads, read without a lock once the written ones are held (see above).
      IF cardinality(v_written) < n_items THEN
        SELECT array_agg(coalesce(g.version, 0) ORDER BY i.ord), array_agg(g.stream_id IS NOT NULL ORDER BY i.ord)
        INTO v_guard_versions, v_guard_exists
        FROM unnest(p_stream_ids, p_counts) WITH ORDINALITY AS i(stream_id, n, ord)
        LEFT JOIN cobro_streams g ON i.n = 0 AND g.stream_id = i.stream_id;
      END IF;
      FOR i IN 1 .. n_items LOOP
        IF p_counts[i] = 0 THEN
          v_versions[i] := v_guard_versions[i];
          v_exists[i] := v_guard_exists[i];
        END IF;
        IF (p_expected[i] = 'NoStream' AND v_exists[i])
          OR (p_expected[i] = 'Exact' AND (NOT v_exists[i] OR v_versions[i] <> p_expected_versions[i])) THEN
          RAISE EXCEPTION 'cobro_append_batch: item % (stream %) is not at its expected version (actual %)',
            i, p_stream_ids[i], v_versions[i]
            USING ERRCODE = '${batchConflictCode}';
        END IF;
        IF NOT v_exists[i] AND p_counts[i] > 0 THEN
          v_new := v_new + 1;
        END IF;
        v_link := v_hashes[i];
        FOR k IN 1 .. p_counts[i] LOOP
          e := v_from + k - 1;
          e_streams[e] := p_stream_ids[i];
          e_versions[e] := v_versions[i] + k;
          e_prev[e] := v_link;
          v_link := encode(sha256(convert_to(v_link || p_before[e] || (v_versions[i] + k)::text || p_after[e], 'UTF8')), 'hex');
          e_hashes[e] := v_link;
        END LOOP;
        v_last[i] := v_link;
        v_from := v_from + p_counts[i];
      END LOOP;
      -- New heads in stream id order (see above). A head created meanwhile by another writer is a conflict.
      INSERT INTO cobro_streams (stream_id, version, last_hash)
      SELECT i.stream_id, v_versions[i.ord] + p_counts[i.ord], v_last[i.ord]
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      WHERE NOT v_exists[i.ord] AND p_counts[i.ord] > 0
      ORDER BY i.stream_id
      ON CONFLICT (stream_id) DO NOTHING;
      GET DIAGNOSTICS v_created = ROW_COUNT;
      IF v_created <> v_new THEN
        RAISE EXCEPTION 'cobro_append_batch: a stream of the batch was created meanwhile by another writer'
          USING ERRCODE = '${batchConflictCode}';
      END IF;
      UPDATE cobro_streams s SET version = v_versions[i.ord] + p_counts[i.ord], last_hash = v_last[i.ord]
      FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
      WHERE v_exists[i.ord] AND p_counts[i.ord] > 0 AND s.stream_id = i.stream_id;
      RETURN QUERY
        WITH inserted AS (
          INSERT INTO cobro_events (stream_id, stream_version, event_id, type, schema_version, data, metadata,
            recorded_at, prev_hash, hash)
          SELECT e.stream_id, e.version, e.event_id, e.type, e.schema_version, e.data, e.metadata,
            p_recorded_at, e.prev_hash, e.hash
          FROM unnest(e_streams, e_versions, p_event_ids, p_types, p_schema_versions, p_data, p_metadata, e_prev, e_hashes)
            WITH ORDINALITY AS e(stream_id, version, event_id, type, schema_version, data, metadata, prev_hash, hash, ord)
          ORDER BY e.ord
          RETURNING cobro_events.stream_id, global_position
        )
        SELECT v_versions[i.ord] + p_counts[i.ord], coalesce(w.first_position, 0), coalesce(w.last_position, 0)
        FROM unnest(p_stream_ids) WITH ORDINALITY AS i(stream_id, ord)
        LEFT JOIN (SELECT x.stream_id, min(x.global_position) AS first_position, max(x.global_position) AS last_position
              FROM inserted x GROUP BY x.stream_id) w ON w.stream_id = i.stream_id
        ORDER BY i.ord;
      IF p_notify AND cardinality(v_written) > 0 THEN
        PERFORM pg_notify('${LogNotifications.channel}', v_written[1]);
      END IF;
    END $$;`
])

/**
 * Leases of running `Idempotency-Key`s (S-8): `owner` names the reservation (one request),
 * `lease_expires_at` is when an unrenewed reservation stops holding its key. Rows written before this
 * migration have neither, and hold their key until `expires_at`, as they did.
 */
const addIdempotencyLeases = Ddl.run([
  `ALTER TABLE cobro_idempotency ADD COLUMN owner text, ADD COLUMN lease_expires_at timestamptz`
])

/**
 * Recovery points of `Idempotency-Key`s (brief, "Exactly once at the edge"): `recovery_point` is
 * `started` until an effect of the key's request commits, then `committed`, written in the same
 * transaction as that effect (`PgIdempotencyStore`'s fence), with `resource`, the first stream the
 * request wrote. A committed key is never released nor run again. Rows written before this
 * migration are `started`, as they were.
 */
const addIdempotencyRecoveryPoints = Ddl.run([
  `ALTER TABLE cobro_idempotency
     ADD COLUMN recovery_point text NOT NULL DEFAULT 'started' CHECK (recovery_point IN ('started', 'committed')),
     ADD COLUMN resource text,
     ADD CONSTRAINT cobro_idempotency_resource CHECK ((recovery_point = 'committed') = (resource IS NOT NULL))`
])

/**
 * The database's own settings for every session Cobro opens (issue 33): `jit = off`, which the pool
 * used to send as a startup parameter (`options`) that pgbouncer refuses. Every statement Cobro sends
 * is a short OLTP one; without fresh statistics the planner's estimates pass `jit_above_cost` and
 * each execution then spends 50–150 ms compiling a plan that runs in a few (`docs/benchmarks.md`,
 * Webhooks). A role that may not alter the database leaves it to its operator (docs/deployment.md).
 */
const setDatabaseSettings = Ddl.run([
  `DO $$
  BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
  EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_object THEN
    RAISE NOTICE 'cobro: could not set jit = off on this database (%); set it as its owner', SQLERRM;
  END $$`
])

/**
 * Trace context with the durable intents (issue 34): `cobro_traced(value, traceparent)` sets
 * `cobro.traceparent` for the rest of the transaction and returns `value`, so that a traced append
 * (`AppendStatements.traced`) sets it in the same statement, before its events' triggers run; the
 * webhook deliveries' and terminal pushes' functions keep it in a new nullable column. Not a
 * reinstall: the column has nothing to backfill from the log (it is not in the events), so it is
 * added in place, and the functions replaced, with no replay. A database created after this
 * migration has both already (migrations 8 and 15 install the models as they are now).
 */
const addTraceContext = Ddl.run([
  `CREATE OR REPLACE FUNCTION cobro_traced(p_value text, p_traceparent text) RETURNS text
    LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM set_config('cobro.traceparent', coalesce(p_traceparent, ''), true);
    RETURN p_value;
  END $$`,
  `ALTER TABLE cobro_rm_webhook_deliveries ADD COLUMN IF NOT EXISTS traceparent text`,
  `ALTER TABLE cobro_rm_terminal_pushes ADD COLUMN IF NOT EXISTS traceparent text`,
  WebhookDeliveries.model.createFunction.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
  TerminalPushes.model.createFunction.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
])

/** Every migration, by `<id>_<name>`, in the form `Migrator.fromRecord` reads. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_create_event_log": createEvents,
  "2_append_function": createAppendFunction,
  "3_idempotency_and_key_lookup": createIdempotencyAndKeyIndexes,
  "4_append_new_stream_function": createAppendNewFunction,
  "5_append_batch_function": createAppendBatchFunction,
  "6_append_batch_set_based": createSetBasedAppendBatchFunction,
  "7_idempotency_leases": addIdempotencyLeases,
  // The read models it installs, in their order: one added later is a migration of its own.
  "8_inline_read_models": InlineReadModels.migration([
    RefundsByTransaction.model,
    TerminalCheckouts.model,
    LastNotification.model,
    LastNotificationByReference.model,
    WebhookDeliveries.model,
    ApiKeys.model
  ]),
  "9_transparency_log": PgTransparencyLog.migration,
  // The listings' read models (issue 22), backfilled from the log; `cobro_rm_replay` is migration 8's.
  "10_listings": InlineReadModels.migration(
    [
      Merchants.model,
      Transactions.model,
      Links.model,
      Notifications.model,
      MerchantRefunds.model,
      PanelUsers.model
    ],
    { replayFunction: false }
  ),
  "11_panel_sessions": PgPanelSessions.migration,
  "12_idempotency_recovery_points": addIdempotencyRecoveryPoints,
  // Issue 31: a panel session's rights are its user's current status and role; users enabled again;
  // failed sign-ins of every email counted alike on every node.
  "13_panel_users_current": Effect.all(
    [PanelUsers.upgrade, PgPanelSessions.dropRole, PgSignInFailures.migration],
    { discard: true }
  ),
  // Issue 31: the lists page by the log position of the event that created each row (`Keyset`).
  "14_listing_positions": InlineReadModels.reinstall([
    Merchants.model,
    Transactions.model,
    Links.model,
    Notifications.model,
    MerchantRefunds.model,
    PanelUsers.model
  ]),
  // Issue 31: the terminal pushes under way, backfilled from the log (the SENDING checkouts an
  // earlier version left are the pusher's first work).
  "15_terminal_pushes": InlineReadModels.migration([TerminalPushes.model], { replayFunction: false }),
  // The outbox's guards: an item of no events is checked, unlocked, in the batch's one statement.
  "16_append_batch_guards": createAppendBatchWithGuardsFunction,
  // Session settings as the database's own: no startup parameter for a pooler to refuse.
  "17_database_settings": setDatabaseSettings,
  // Issue 34: the traceparent of what scheduled a delivery or claimed a push, beside its row.
  "18_trace_context": addTraceContext
}

const runMigrator = Migrator.make({})

/**
 * The advisory lock under which the migrations table is created ("cobrm" in ASCII). The Migrator's
 * lock is that table (`LOCK TABLE`), but it creates it first without one: two sessions doing so at
 * once on a new database fail with a unique violation on `pg_type` (two nodes starting together).
 */
export const migrationLock = 0x636f62726dn

/** Creates the Migrator's table, as the Migrator would, one session at a time. */
const createMigrationsTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(${migrationLock.toString()}::bigint)`,
      sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
        migration_id integer PRIMARY KEY,
        created_at timestamp with time zone NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
    )
  )
)

/**
 * Runs the pending migrations; returns the ones it ran. Safe to run concurrently: the table is
 * created under an advisory lock, and the Migrator locks it while it migrates.
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Effect.zipRight(createMigrationsTable, runMigrator({ loader: Migrator.fromRecord(migrations), table }))

/** A layer that runs the migrations when built. */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(run)
