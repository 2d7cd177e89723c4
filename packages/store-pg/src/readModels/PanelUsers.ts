/**
 * The list of a merchant's panel users (`Listings.users`): one row per `PanelUser` stream, its
 * status the user's state (ACTIVE, DISABLED). Table `cobro_rm_panel_users`, written by the store
 * with the events that change a row: the creation, a sign-in, a role change, the disabling and the
 * enabling (`InlineReadModels`, migration 10; the enabling since migration 13, {@link upgrade}).
 * The panel's session lookup reads a user's status and role here (`PgPanelSessions`). A failed sign-in and a password change change no listed
 * field, so their trigger does not even run: the attempts an attacker makes cost no write here. A
 * row keeps the stream version it last applied, so a replay applies nothing twice; `updated_at` is
 * the instant of the last event applied.
 *
 * Indexes: the two keysets the list reads, `(merchant_id, created_xid,
 * created_position)` (the log position of the row's first event, `Keyset`) and with `status`
 * after the merchant (the few disabled users found without walking the active ones); the role
 * filter is checked along either. A sign-in changes no indexed column, so its update can stay on
 * the row's page (a HOT update) and write no index.
 */
import type * as Listings from "@cobro/domain/Listings"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Ddl from "../internal/Ddl.js"
import * as Keyset from "../internal/Keyset.js"
import * as Projection from "../Projection.js"

/** The read model as migration 14 installs it (`InlineReadModels.reinstall`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "panel_users",
  // Not SignInFailed nor PasswordChanged: they change nothing listed.
  types: ["PanelUserCreated", "SignedIn", "RoleChanged", "PanelUserDisabled", "PanelUserEnabled"],
  createTable: [
    `CREATE TABLE cobro_rm_panel_users (
    user_id text COLLATE "C" PRIMARY KEY,
    merchant_id text COLLATE "C" NOT NULL,
    email text COLLATE "C" NOT NULL,
    role text NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    last_sign_in_at timestamptz,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_panel_users_newest ON cobro_rm_panel_users (merchant_id, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_panel_users_status_newest
    ON cobro_rm_panel_users (merchant_id, status, created_xid DESC, created_position DESC)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_panel_users(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT starts_with(e.stream_id, 'PanelUser-') THEN RETURN; END IF;
    IF e.type = 'PanelUserCreated' THEN
      INSERT INTO cobro_rm_panel_users (user_id, merchant_id, email, role, status, created_at,
        last_sign_in_at, updated_at, version, created_xid, created_position)
      VALUES (e.data->>'userId', e.data->>'merchantId', e.data->>'email', e.data->>'role', 'ACTIVE',
        (e.data->>'createdAt')::timestamptz, NULL, (e.data->>'createdAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
      ON CONFLICT (user_id) DO NOTHING;
      RETURN;
    END IF;
    UPDATE cobro_rm_panel_users
    SET role = CASE e.type WHEN 'RoleChanged' THEN e.data->>'role' ELSE role END,
      status = CASE e.type WHEN 'PanelUserDisabled' THEN 'DISABLED' WHEN 'PanelUserEnabled' THEN 'ACTIVE'
        ELSE status END,
      last_sign_in_at = CASE e.type WHEN 'SignedIn' THEN (e.data->>'at')::timestamptz ELSE last_sign_in_at END,
      updated_at = (e.data->>'at')::timestamptz,
      version = e.stream_version
    WHERE user_id = substr(e.stream_id, length('PanelUser-') + 1) AND version < e.stream_version;
  END $$`
})

/**
 * Migration 13's part: the function and its trigger as {@link model} has them now, over the ones
 * migration 10 installed (which knew no `PanelUserEnabled`; no such event was written before).
 *
 * @category migrations
 */
export const upgrade: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Ddl.run([
  model.createFunction.replace(/^CREATE FUNCTION/, "CREATE OR REPLACE FUNCTION"),
  `DROP TRIGGER cobro_rm_panel_users ON cobro_events`,
  `CREATE TRIGGER cobro_rm_panel_users AFTER INSERT ON cobro_events FOR EACH ROW
    WHEN (NEW.type IN (${model.types.map((type) => `'${type}'`).join(", ")}))
    EXECUTE FUNCTION cobro_rm_panel_users_trigger()`
])

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.Placed {
  readonly user_id: string
  readonly merchant_id: string
  readonly email: string
  readonly role: Listings.UserRow["role"]
  readonly status: Listings.UserRow["status"]
  readonly created_at: Date | string
  readonly last_sign_in_at: Date | string | null
  readonly updated_at: Date | string
}

const toRow = (row: Row): Listings.UserRow => ({
  position: Keyset.positionOf(row),
  userId: row.user_id,
  merchantId: row.merchant_id,
  email: row.email,
  role: row.role,
  status: row.status,
  createdAt: new Date(row.created_at),
  lastSignInAt: row.last_sign_in_at === null ? null : new Date(row.last_sign_in_at),
  updatedAt: new Date(row.updated_at)
})

const listing = Keyset.listing({
  table: "cobro_rm_panel_users",
  id: "user_id",
  scope: Keyset.byMerchant,
  filters: (sql, filter: Listings.UserFilter) =>
    Keyset.equalWhereGiven(sql, { role: filter.role, status: filter.status }),
  toRow
})

/** A page of one merchant's panel users (`Listings.users`). */
export const list = listing.list

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = listing.statement
