/**
 * The list of a merchant's refunds (`Listings.refunds`): one row per `Refund` stream (C8), its
 * status the refund's state, its currency its payment's (looked up in the log, in the payment's
 * first event, when the refund is requested). Table `cobro_rm_merchant_refunds`, written by the
 * store with the refund's events (`InlineReadModels`, migration 10, reinstalled by 14); a row keeps the stream version
 * it last applied, so a replay applies nothing twice. (`RefundsByTransaction` finds a payment's
 * refunds; this one lists a merchant's.)
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
  name: "merchant_refunds",
  types: ["RefundRequested", "RefundApproved", "RefundRejected"],
  createTable: [
    `CREATE TABLE cobro_rm_merchant_refunds (
    refund_id text COLLATE "C" PRIMARY KEY,
    transaction_id text NOT NULL,
    merchant_id text COLLATE "C" NOT NULL,
    sandbox boolean NOT NULL,
    status text NOT NULL,
    amount numeric NOT NULL,
    currency text NOT NULL,
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_merchant_refunds_newest
    ON cobro_rm_merchant_refunds (merchant_id, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_merchant_refunds_mode_newest
    ON cobro_rm_merchant_refunds (merchant_id, sandbox, created_xid DESC, created_position DESC)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_merchant_refunds(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT starts_with(e.stream_id, 'Refund-') THEN RETURN; END IF;
    IF e.type = 'RefundRequested' THEN
      INSERT INTO cobro_rm_merchant_refunds (refund_id, transaction_id, merchant_id, sandbox, status, amount,
        currency, created_at, updated_at, version, created_xid, created_position)
      VALUES (e.data->>'refundId', e.data->>'transactionId', e.data->>'merchantId', (e.data->>'sandbox')::boolean,
        'PROCESSING', (e.data->>'amount')::numeric,
        coalesce((SELECT p.data->'amount'->>'currency' FROM cobro_events p
          WHERE p.stream_id = 'Payment-' || (e.data->>'transactionId') AND p.stream_version = 1), 'COP'),
        (e.data->>'requestedAt')::timestamptz, (e.data->>'requestedAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
      ON CONFLICT (refund_id) DO NOTHING;
      RETURN;
    END IF;
    UPDATE cobro_rm_merchant_refunds
    SET status = CASE e.type WHEN 'RefundApproved' THEN 'APPROVED' ELSE 'REJECTED' END,
      updated_at = (e.data->>'dateApplied')::timestamptz, version = e.stream_version
    WHERE refund_id = substr(e.stream_id, length('Refund-') + 1) AND version < e.stream_version;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.MerchantPlaced {
  readonly refund_id: string
  readonly transaction_id: string
  readonly status: string
  readonly amount: string | number
  readonly currency: string
}

const toRow = (row: Row): Listings.RefundRow => ({
  ...Keyset.merchantFields(row),
  refundId: row.refund_id,
  transactionId: row.transaction_id,
  status: row.status,
  amount: Number(row.amount),
  currency: row.currency
})

const listing = Keyset.listing({
  table: "cobro_rm_merchant_refunds",
  id: "refund_id",
  scope: Keyset.byMerchant,
  filters: (sql, filter: Listings.RefundFilter) =>
    Keyset.equalWhereGiven(sql, { sandbox: Keyset.sandboxOf(filter.mode), status: filter.status }),
  toRow
})

/** A page of one merchant's refunds (`Listings.refunds`). */
export const list = listing.list

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = listing.statement
