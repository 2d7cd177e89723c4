/**
 * The operator's list of merchants (`Listings.merchants`): one row per `Merchant` stream, its name
 * and its state (ENABLED, DISABLED). Table `cobro_rm_merchants`, written by the store with the
 * account's creation and its enabling and disabling (`InlineReadModels`, migration 10, reinstalled by 14); a row keeps
 * the stream version it last applied, so a replay applies nothing twice.
 *
 * The name filter matches a part of the name whatever the case of its ASCII letters (`lower` under
 * collation "C", as `ListingsFromLog.asciiLower`), reading the keyset index `(created_xid,
 * created_position)` (`Keyset`) and filtering: an operator's list of accounts is short.
 */
import type * as Listings from "@cobro/domain/Listings"
import type * as Pagination from "@cobro/domain/Pagination"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Keyset from "../internal/Keyset.js"
import * as Projection from "../Projection.js"

/** The read model as migration 14 installs it (`InlineReadModels.reinstall`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "merchants",
  types: ["MerchantCreated", "MerchantEnabled", "MerchantDisabled"],
  createTable: [
    `CREATE TABLE cobro_rm_merchants (
    merchant_id text COLLATE "C" PRIMARY KEY,
    name text COLLATE "C" NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_merchants_newest ON cobro_rm_merchants (created_xid DESC, created_position DESC)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_merchants(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT starts_with(e.stream_id, 'Merchant-') THEN RETURN; END IF;
    IF e.type = 'MerchantCreated' THEN
      INSERT INTO cobro_rm_merchants (merchant_id, name, status, created_at, version, created_xid, created_position)
      VALUES (e.data->>'merchantId', e.data->>'name', 'ENABLED', (e.data->>'createdAt')::timestamptz,
        e.stream_version, e.transaction_id, e.global_position)
      ON CONFLICT (merchant_id) DO NOTHING;
      RETURN;
    END IF;
    UPDATE cobro_rm_merchants
    SET status = CASE e.type WHEN 'MerchantEnabled' THEN 'ENABLED' ELSE 'DISABLED' END,
      version = e.stream_version
    WHERE merchant_id = substr(e.stream_id, length('Merchant-') + 1) AND version < e.stream_version;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.Placed {
  readonly merchant_id: string
  readonly name: string
  readonly status: "ENABLED" | "DISABLED"
  readonly created_at: Date | string
}

const toRow = (row: Row): Listings.MerchantRow => ({
  position: Keyset.positionOf(row),
  merchantId: row.merchant_id,
  name: row.name,
  status: row.status,
  createdAt: new Date(row.created_at)
})

const listing = Keyset.listing({
  table: "cobro_rm_merchants",
  id: "merchant_id",
  // The operator's list: every merchant's row.
  scope: (_sql, _scope: void) => [],
  filters: (sql, filter: Listings.MerchantFilter) => [
    ...Keyset.equalWhereGiven(sql, { status: filter.status }),
    ...(filter.name === undefined ? [] : [sql`strpos(lower(name), lower(${filter.name} COLLATE "C")) > 0`])
  ],
  toRow
})

/** A page of the merchants (`Listings.merchants`). */
export const list = (filter: Listings.MerchantFilter, request: Pagination.PageRequest) =>
  listing.list(undefined, filter, request)

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = (filter: Listings.MerchantFilter, request: Pagination.PageRequest) =>
  listing.statement(undefined, filter, request)
