/**
 * The operator's and the panel's list of a merchant's transactions (`Listings.transactions`): one
 * row per terminal checkout (`TerminalCheckout` stream), per payment of a link (each
 * `LinkPaymentStarted` of a `PaymentLink` stream) and per online payment (`Payment` stream), keyed
 * by its `TRX_…` id, with the state its events lead to as `ListingsFromLog` folds it (that module
 * says what each kind of row is). Table `cobro_rm_transactions`, written by the store with the
 * events (`InlineReadModels`, migration 10, reinstalled by 14).
 *
 * Every event of these streams moves `updated_at` (as the aggregates' `evolve` does), and most the
 * status; a row keeps the stream version it last applied, so a replay applies nothing twice. A
 * checkout's later events name no transaction: its id comes from the stream's first event, looked
 * up in the log by `(stream_id, stream_version)`; a link's payment takes its mode, reference and
 * currency from the link's first event the same way.
 *
 * Indexes: one per keyset the list reads, `(merchant_id, created_xid, created_position)` (the log
 * position of the row's first event, `Keyset`) and with `sandbox` after the merchant for a mode,
 * and `(merchant_id, reference)` ("C" collation) for a reference prefix. A status, kind or created
 * range filter reads the keyset range and filters it: an index on a status would make every status
 * change a non-HOT update, and one on `created_at` would cost every insert for a filter that pages
 * in log order anyway.
 */
import type * as Listings from "@cobro/domain/Listings"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Instant from "../internal/Instant.js"
import * as Keyset from "../internal/Keyset.js"
import * as Projection from "../Projection.js"

/** The read model as migration 14 installs it (`InlineReadModels.reinstall`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "transactions",
  types: [
    "CheckoutCreated",
    "PushAttempted",
    "CheckoutSent",
    "CheckoutHeld",
    "CheckoutReleased",
    "DeliveryFailed",
    "CheckoutCancelled",
    "SaleApproved",
    "SaleRejected",
    "SaleVoided",
    "VoidRejected",
    "LinkPaymentStarted",
    "LinkPaid",
    "LinkPaymentFailed",
    "LinkRejected",
    "PaymentStarted",
    "PaymentChallengeRequired",
    "PaymentApproved",
    "PaymentRejected",
    "PaymentVoided",
    "PaymentRefundRequested",
    "PaymentRefundRejected",
    "PaymentRefunded"
  ],
  createTable: [
    `CREATE TABLE cobro_rm_transactions (
    transaction_id text COLLATE "C" PRIMARY KEY,
    kind text NOT NULL,
    resource_id text NOT NULL,
    merchant_id text COLLATE "C" NOT NULL,
    sandbox boolean NOT NULL,
    status text NOT NULL,
    amount numeric NOT NULL,
    currency text NOT NULL,
    reference text COLLATE "C",
    created_at timestamptz NOT NULL,
    created_xid xid8 NOT NULL,
    created_position bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL)`,
    `CREATE INDEX cobro_rm_transactions_newest
    ON cobro_rm_transactions (merchant_id, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_transactions_mode_newest
    ON cobro_rm_transactions (merchant_id, sandbox, created_xid DESC, created_position DESC)`,
    `CREATE INDEX cobro_rm_transactions_reference
    ON cobro_rm_transactions (merchant_id, reference)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_transactions(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_id text;
    v_status text;
    v_first jsonb;
  BEGIN
    IF starts_with(e.stream_id, 'TerminalCheckout-') THEN
      IF e.type = 'CheckoutCreated' THEN
        INSERT INTO cobro_rm_transactions (transaction_id, kind, resource_id, merchant_id, sandbox, status,
          amount, currency, reference, created_at, updated_at, version, created_xid, created_position)
        VALUES (e.data->>'transactionId', 'terminal', e.data->>'integrationId', e.data->>'merchantId',
          (e.data->>'sandbox')::boolean, 'PENDING', (e.data->'amount'->>'total')::numeric,
          e.data->'amount'->>'currency', e.data->>'reference', (e.data->>'createdAt')::timestamptz,
          (e.data->>'createdAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
        ON CONFLICT (transaction_id) DO NOTHING;
        RETURN;
      END IF;
      SELECT f.data->>'transactionId' INTO v_id FROM cobro_events f
      WHERE f.stream_id = e.stream_id AND f.stream_version = 1;
      -- VoidRejected leaves the sale APPROVED.
      v_status := CASE e.type
        WHEN 'PushAttempted' THEN 'SENDING' WHEN 'CheckoutSent' THEN 'SENT' WHEN 'CheckoutHeld' THEN 'HELD'
        WHEN 'CheckoutReleased' THEN 'SENT' WHEN 'DeliveryFailed' THEN 'UNREACHABLE'
        WHEN 'CheckoutCancelled' THEN 'CANCELLED' WHEN 'SaleApproved' THEN 'APPROVED'
        WHEN 'SaleRejected' THEN 'REJECTED' WHEN 'SaleVoided' THEN 'VOIDED' END;
    ELSIF starts_with(e.stream_id, 'Payment-') THEN
      IF e.type = 'PaymentStarted' THEN
        INSERT INTO cobro_rm_transactions (transaction_id, kind, resource_id, merchant_id, sandbox, status,
          amount, currency, reference, created_at, updated_at, version, created_xid, created_position)
        VALUES (e.data->>'transactionId', 'online', e.data->>'transactionId', e.data->>'merchantId',
          (e.data->>'sandbox')::boolean, 'RUNNING', (e.data->'amount'->>'total')::numeric,
          e.data->'amount'->>'currency', e.data->>'referenceId', (e.data->>'attemptedAt')::timestamptz,
          (e.data->>'attemptedAt')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
        ON CONFLICT (transaction_id) DO NOTHING;
        RETURN;
      END IF;
      v_id := substr(e.stream_id, length('Payment-') + 1);
      -- A refund requested or rejected leaves the payment APPROVED.
      v_status := CASE e.type
        WHEN 'PaymentChallengeRequired' THEN 'CHALLENGE' WHEN 'PaymentApproved' THEN 'APPROVED'
        WHEN 'PaymentRejected' THEN CASE WHEN (e.data->>'expired')::boolean THEN 'EXPIRED' ELSE 'REJECTED' END
        WHEN 'PaymentVoided' THEN 'VOIDED' WHEN 'PaymentRefunded' THEN 'REFUNDED' END;
    ELSIF starts_with(e.stream_id, 'PaymentLink-') THEN
      IF e.type = 'LinkPaymentStarted' THEN
        SELECT f.data INTO v_first FROM cobro_events f WHERE f.stream_id = e.stream_id AND f.stream_version = 1;
        INSERT INTO cobro_rm_transactions (transaction_id, kind, resource_id, merchant_id, sandbox, status,
          amount, currency, reference, created_at, updated_at, version, created_xid, created_position)
        VALUES (e.data->>'transactionId', 'link', v_first->>'linkId', v_first->>'merchantId',
          (v_first->>'sandbox')::boolean, 'PROCESSING', (e.data->>'amount')::numeric,
          coalesce(v_first->'amount'->>'currency', 'COP'), v_first->>'reference', (e.data->>'at')::timestamptz,
          (e.data->>'at')::timestamptz, e.stream_version, e.transaction_id, e.global_position)
        ON CONFLICT (transaction_id) DO NOTHING;
        RETURN;
      END IF;
      v_id := e.data->>'transactionId';
      -- A declined payment is over even where the link goes back to ACTIVE; an abandoned one EXPIRED.
      v_status := CASE e.type
        WHEN 'LinkPaid' THEN 'PAID'
        WHEN 'LinkPaymentFailed' THEN CASE WHEN (e.data->>'expired')::boolean THEN 'EXPIRED' ELSE 'REJECTED' END
        WHEN 'LinkRejected' THEN CASE WHEN (e.data->>'expired')::boolean THEN 'EXPIRED' ELSE 'REJECTED' END END;
    ELSE
      RETURN;
    END IF;
    UPDATE cobro_rm_transactions
    SET status = coalesce(v_status, status), updated_at = (e.data->>'at')::timestamptz, version = e.stream_version
    WHERE transaction_id = v_id AND version < e.stream_version;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

interface Row extends Keyset.MerchantPlaced {
  readonly transaction_id: string
  readonly kind: Listings.TransactionKind
  readonly resource_id: string
  readonly status: string
  readonly amount: string | number
  readonly currency: string
  readonly reference: string | null
}

const toRow = (row: Row): Listings.TransactionRow => ({
  ...Keyset.merchantFields(row),
  transactionId: row.transaction_id,
  kind: row.kind,
  resourceId: row.resource_id,
  status: row.status,
  amount: Number(row.amount),
  currency: row.currency,
  reference: row.reference
})

const listing = Keyset.listing({
  table: "cobro_rm_transactions",
  id: "transaction_id",
  scope: Keyset.byMerchant,
  filters: (sql, filter: Listings.TransactionFilter) => [
    ...Keyset.equalWhereGiven(sql, {
      sandbox: Keyset.sandboxOf(filter.mode),
      kind: filter.kind,
      status: filter.status
    }),
    ...(filter.createdGte === undefined
      ? []
      : [sql`created_at >= ${Instant.timestamptz(sql, filter.createdGte)}`]),
    ...(filter.createdLt === undefined
      ? []
      : [sql`created_at < ${Instant.timestamptz(sql, filter.createdLt)}`]),
    // Collation "C": a prefix is a range of the reference index.
    ...(filter.reference === undefined ? [] : [sql`starts_with(reference, ${filter.reference})`])
  ],
  toRow
})

/** A page of one merchant's transactions (`Listings.transactions`). */
export const list = listing.list

/** The statement of {@link list}, for the query plans' tests and benchmarks. */
export const statement = listing.statement
