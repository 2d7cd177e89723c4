/**
 * C9: the refunds of a transaction, newest last. Table `cobro_rm_refunds_by_transaction`, written by
 * the store with each `RefundRequested` (`InlineReadModels`). No adapter queries it: C9 reaches a
 * transaction's latest refund through the Payment's stream, which names it.
 */
import * as InlineReadModels from "../InlineReadModels.js"
import * as Projection from "../Projection.js"

/** The read model as migration 8 installs it (`InlineReadModels`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "refunds_by_transaction",
  types: ["RefundRequested"],
  createTable: [
    `CREATE TABLE cobro_rm_refunds_by_transaction (
    refund_id text PRIMARY KEY,
    transaction_id text NOT NULL,
    merchant_id text NOT NULL,
    sandbox boolean NOT NULL,
    stream_id text NOT NULL,
    requested_at timestamptz NOT NULL)`,
    `CREATE INDEX cobro_rm_refunds_by_transaction_tx
    ON cobro_rm_refunds_by_transaction (transaction_id, requested_at)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_refunds_by_transaction(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'RefundRequested' OR NOT starts_with(e.stream_id, 'Refund-') THEN RETURN; END IF;
    INSERT INTO cobro_rm_refunds_by_transaction
      (refund_id, transaction_id, merchant_id, sandbox, stream_id, requested_at)
    VALUES (e.data->>'refundId', e.data->>'transactionId', e.data->>'merchantId', (e.data->>'sandbox')::boolean,
      e.stream_id, (e.data->>'requestedAt')::timestamptz)
    ON CONFLICT (refund_id) DO NOTHING;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)
