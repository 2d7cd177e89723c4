/**
 * The list of a merchant's payment links (`Listings.links`): one row per `PaymentLink` stream, its
 * status the link's recorded state (an ACTIVE link past its expiry stays ACTIVE until the sweeper
 * records `LinkExpired`). Table `cobro_rm_links`, written by the store with the link's events
 * (`InlineReadModels`, migration 10, reinstalled by 14); a row keeps the stream version it last applied, so a replay
 * applies nothing twice. An OPEN link has no amount (`amount` NULL; the port says 0) and is charged
 * in COP.
 *
 * Indexes: the two keysets the list reads, `(merchant_id, created_xid,
 * created_position)` (the log position of the row's first event, `Keyset`) and with `sandbox` after
 * the merchant for a mode.
 */
import type * as Listings from "@cobro/domain/Listings"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Keyset from "../internal/Keyset.js"
import * as Projection from "../Projection.js"

/** The read model as migration 14 installs it (`InlineReadModels.reinstall`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "links",
  types: [
    "LinkCreated",
    "LinkPaymentStarted",
    "LinkPaid",
    "LinkPaymentFailed",
    "LinkRejected",
    "LinkCancelled",
    "LinkExpired"
  ],
  createTable: [
    `CREATE TABLE cobro_rm_links (
    link_id text COLLATE "C" PRIMARY KEY,
    merchant_id text COLLATE "C" NOT NULL,
    sandbox boolean NOT NULL,
    status text NOT NULL,
    amount_type text NOT NULL,
    amount numeric,
    currency text NOT NULL,
    description text,
    reference text COLLATE "C",
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    expires_at timestamptz,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_links_newest ON cobro_rm_links (merchant_id, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_links_mode_newest ON cobro_rm_links (merchant_id, sandbox, created_xid DESC, created_position DESC)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_links(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_status text;
  BEGIN
    IF NOT starts_with(e.stream_id, 'PaymentLink-') THEN RETURN; END IF;
    IF e.type = 'LinkCreated' THEN
      -- expiresAt: exact nanoseconds as a string; the instant kept to the millisecond, as a JS Date.
      INSERT INTO cobro_rm_links (link_id, merchant_id, sandbox, status, amount_type, amount, currency,
        description, reference, created_at, expires_at, updated_at, version, created_xid, created_position)
      VALUES (e.data->>'linkId', e.data->>'merchantId', (e.data->>'sandbox')::boolean, 'ACTIVE',
        e.data->>'amountType', (e.data->'amount'->>'total')::numeric,
        coalesce(e.data->'amount'->>'currency', 'COP'), e.data->>'description', e.data->>'reference',
        (e.data->>'createdAt')::timestamptz,
        to_timestamp(div((e.data->>'expiresAt')::numeric, 1000000) / 1000.0),
        (e.data->>'createdAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
      ON CONFLICT (link_id) DO NOTHING;
      RETURN;
    END IF;
    v_status := CASE e.type
      WHEN 'LinkPaymentStarted' THEN 'PROCESSING' WHEN 'LinkPaid' THEN 'PAID'
      WHEN 'LinkPaymentFailed' THEN 'ACTIVE' WHEN 'LinkRejected' THEN 'REJECTED'
      WHEN 'LinkCancelled' THEN 'CANCELLED' WHEN 'LinkExpired' THEN 'EXPIRED' END;
    IF v_status IS NULL THEN RETURN; END IF;
    UPDATE cobro_rm_links
    SET status = v_status, updated_at = (e.data->>'at')::timestamptz, version = e.stream_version
    WHERE link_id = substr(e.stream_id, length('PaymentLink-') + 1) AND version < e.stream_version;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.MerchantPlaced {
  readonly link_id: string
  readonly status: string
  readonly amount_type: "OPEN" | "CLOSE"
  readonly amount: string | number | null
  readonly currency: string
  readonly description: string | null
  readonly reference: string | null
  readonly expires_at: Date | string | null
}

const toRow = (row: Row): Listings.LinkRow => ({
  ...Keyset.merchantFields(row),
  linkId: row.link_id,
  status: row.status,
  amountType: row.amount_type,
  amount: row.amount === null ? 0 : Number(row.amount),
  currency: row.currency,
  description: row.description,
  reference: row.reference,
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at)
})

const listing = Keyset.listing({
  table: "cobro_rm_links",
  id: "link_id",
  scope: Keyset.byMerchant,
  filters: (sql, filter: Listings.LinkFilter) =>
    Keyset.equalWhereGiven(sql, { sandbox: Keyset.sandboxOf(filter.mode), status: filter.status }),
  toRow
})

/** A page of one merchant's links (`Listings.links`). */
export const list = listing.list

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = listing.statement
