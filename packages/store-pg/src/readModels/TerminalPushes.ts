/**
 * The terminal pushes under way: one row per SENDING checkout, with when its push was last claimed
 * (spec-decisions A-23). Table `cobro_rm_terminal_pushes`, written by the store with the checkouts'
 * events (`InlineReadModels`): a claim (`PushAttempted`) writes the row in the commit that creates
 * the checkout, and whatever ends the push (the terminal's answer, an unreachable terminal, an
 * outcome, a cancel) deletes it in its own. Migration 15 fills it from the log: the checkouts an
 * earlier version left SENDING, or UNREACHABLE for a busy terminal, are the pusher's first work.
 * The server's pusher reads the claims that have lapsed. `traceparent` is the W3C trace context of
 * the span that first claimed the push (the A3 request), as the append set it (migration 18): the
 * pusher's span links to it. Trace metadata, not in the events: a rebuild leaves it NULL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { IntegrationId } from "@cobro/domain/Ids"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Projection from "../Projection.js"
import { currentTraceparentSql as currentTraceparent } from "../TraceContext.js"

/**
 * The read model as migration 15 installs it (`InlineReadModels`); migration 18 adds `traceparent` to
 * the table of an earlier version and replaces its function.
 */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "terminal_pushes",
  types: [
    "PushAttempted",
    "CheckoutSent",
    "CheckoutHeld",
    "DeliveryFailed",
    "CheckoutCancelled",
    "SaleApproved",
    "SaleRejected"
  ],
  createTable: [
    `CREATE TABLE cobro_rm_terminal_pushes (
    integration_id text PRIMARY KEY,
    claimed_at timestamptz NOT NULL,
    attempt integer NOT NULL,
    version integer NOT NULL,
    traceparent text)`,
    `CREATE INDEX cobro_rm_terminal_pushes_claimed ON cobro_rm_terminal_pushes (claimed_at)`
  ],
  // The stream version kept makes a replay apply nothing twice: only a later event moves a row.
  createFunction: `CREATE FUNCTION cobro_rm_terminal_pushes(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_id text;
  BEGIN
    IF NOT starts_with(e.stream_id, 'TerminalCheckout-') THEN RETURN; END IF;
    v_id := substr(e.stream_id, length('TerminalCheckout-') + 1);
    IF e.type = 'PushAttempted' THEN
      -- A claim again (the pusher's) keeps the cause of the first: the request that created the push.
      INSERT INTO cobro_rm_terminal_pushes (integration_id, claimed_at, attempt, version, traceparent)
      VALUES (v_id, (e.data->>'at')::timestamptz, (e.data->>'attempt')::integer, e.stream_version,
        ${currentTraceparent})
      ON CONFLICT (integration_id) DO UPDATE
        SET claimed_at = EXCLUDED.claimed_at, attempt = EXCLUDED.attempt, version = EXCLUDED.version,
          traceparent = coalesce(cobro_rm_terminal_pushes.traceparent, EXCLUDED.traceparent)
        WHERE cobro_rm_terminal_pushes.version < EXCLUDED.version;
    ELSIF e.type = 'DeliveryFailed' AND e.data->>'reason' = '${TerminalCheckout.BUSY_READ_AS_UNREACHABLE}' THEN
      -- An earlier version read a busy terminal as unreachable: still the pusher's (its claim lapsed).
      UPDATE cobro_rm_terminal_pushes SET version = e.stream_version
      WHERE integration_id = v_id AND version < e.stream_version;
    ELSE
      DELETE FROM cobro_rm_terminal_pushes WHERE integration_id = v_id AND version < e.stream_version;
    END IF;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

/**
 * The checkouts whose push was last claimed at `claimedBefore` or earlier (their claim has lapsed),
 * oldest claim first, at most `limit`.
 */
export const duePushes = (options: {
  readonly claimedBefore: DateTime.DateTime
  readonly limit: number
}): Effect.Effect<ReadonlyArray<IntegrationId>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ integration_id: string }>`
      SELECT integration_id FROM cobro_rm_terminal_pushes
      WHERE claimed_at <= ${DateTime.formatIso(options.claimedBefore)}::timestamptz
      ORDER BY claimed_at
      LIMIT ${options.limit}`.pipe(Effect.map((rows) => rows.map((r) => r.integration_id as IntegrationId)))
  )

/** A lapsed claim: the checkout to push again, and the traceparent of the request that claimed it first. */
export interface DuePush {
  readonly integrationId: IntegrationId
  /** W3C `traceparent` of the span that claimed the push first; `undefined` when none was recorded. */
  readonly traceparent: string | undefined
}

/**
 * The same claims as {@link duePushes}, each with its stored traceparent, for the pusher's span to
 * link to the request that caused the push (issue 34).
 */
export const duePushClaims = (options: {
  readonly claimedBefore: DateTime.DateTime
  readonly limit: number
}): Effect.Effect<ReadonlyArray<DuePush>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ integration_id: string; traceparent: string | null }>`
      SELECT integration_id, traceparent FROM cobro_rm_terminal_pushes
      WHERE claimed_at <= ${DateTime.formatIso(options.claimedBefore)}::timestamptz
      ORDER BY claimed_at
      LIMIT ${options.limit}`.pipe(
      Effect.map((rows) =>
        rows.map((r): DuePush => ({
          integrationId: r.integration_id as IntegrationId,
          traceparent: r.traceparent ?? undefined
        }))
      )
    )
  )

/**
 * How many terminal checkouts wait for their terminal's answer to a push (a row each, test and
 * production alike): a gauge for `/metrics`, one count over a table of the pushes under way.
 */
export const pendingPushes: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    Effect.map(
      sql<{ pending: number }>`SELECT count(*)::integer AS pending FROM cobro_rm_terminal_pushes`,
      (rows) => Number(rows[0]?.pending ?? 0)
    )
)
