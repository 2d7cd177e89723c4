/**
 * A3: terminal checkouts by integration id and by merchant reference. Table
 * `cobro_rm_terminal_checkouts`, written by the store with each `CheckoutCreated`
 * (`InlineReadModels`). No adapter queries it yet.
 */
import * as InlineReadModels from "../InlineReadModels.js"
import * as Projection from "../Projection.js"

/** The read model as migration 8 installs it (`InlineReadModels`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "terminal_checkouts",
  types: ["CheckoutCreated"],
  createTable: [
    `CREATE TABLE cobro_rm_terminal_checkouts (
    integration_id text PRIMARY KEY,
    transaction_id text NOT NULL,
    merchant_id text NOT NULL,
    sandbox boolean NOT NULL,
    reference text NOT NULL,
    stream_id text NOT NULL,
    created_at timestamptz NOT NULL)`,
    `CREATE INDEX cobro_rm_terminal_checkouts_reference
    ON cobro_rm_terminal_checkouts (merchant_id, sandbox, reference, created_at)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_terminal_checkouts(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF e.type <> 'CheckoutCreated' OR NOT starts_with(e.stream_id, 'TerminalCheckout-') THEN RETURN; END IF;
    INSERT INTO cobro_rm_terminal_checkouts
      (integration_id, transaction_id, merchant_id, sandbox, reference, stream_id, created_at)
    VALUES (e.data->>'integrationId', e.data->>'transactionId', e.data->>'merchantId',
      (e.data->>'sandbox')::boolean, e.data->>'reference', e.stream_id, (e.data->>'createdAt')::timestamptz)
    ON CONFLICT (integration_id) DO NOTHING;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)
