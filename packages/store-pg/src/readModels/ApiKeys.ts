/**
 * Authentication: every identity key ever issued, by its SHA-256, with the merchant, integration and
 * mode it grants; `revoked_at` is set when `KeyRotated` revokes it. A hash issued a second time (two
 * merchants, or a revoked key issued again) is marked revoked too: such a key authenticates no one.
 * Table `cobro_rm_api_keys`, written by the store in the transaction that issues or revokes the key
 * (`InlineReadModels`), so a key resolves as soon as the command that issued it has returned.
 * `PgMerchantDirectory` reads it through {@link findByHash}.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type * as Effect from "effect/Effect"
import * as InlineReadModels from "../InlineReadModels.js"
import * as Projection from "../Projection.js"
import type * as PgPool from "../PgPool.js"

/** The read model as migration 8 installs it (`InlineReadModels`). */
export const model: InlineReadModels.InlineReadModel = InlineReadModels.make({
  name: "api_keys",
  types: ["IntegrationActivated", "KeyRotated"],
  createTable: [
    `CREATE TABLE cobro_rm_api_keys (
    identity_key_hash text PRIMARY KEY,
    merchant_id text NOT NULL,
    integration text NOT NULL,
    mode text NOT NULL,
    stream_id text NOT NULL,
    issued_at timestamptz NOT NULL,
    revoked_at timestamptz)`
  ],
  createFunction: `CREATE FUNCTION cobro_rm_api_keys(e cobro_events) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    v_merchant text := substr(e.stream_id, length('Merchant-') + 1);
    v_at timestamptz := (e.data->>'at')::timestamptz;
  BEGIN
    IF NOT starts_with(e.stream_id, 'Merchant-') THEN RETURN; END IF;
    CASE e.type
      WHEN 'IntegrationActivated' THEN
        INSERT INTO cobro_rm_api_keys AS k
          (identity_key_hash, merchant_id, integration, mode, stream_id, issued_at, revoked_at)
        VALUES (e.data->'production'->>'identityKeyHash', v_merchant, e.data->>'integration', 'production',
            e.stream_id, v_at, NULL),
          (e.data->'test'->>'identityKeyHash', v_merchant, e.data->>'integration', 'test', e.stream_id, v_at, NULL)
        ON CONFLICT (identity_key_hash) DO UPDATE SET revoked_at = coalesce(k.revoked_at, EXCLUDED.issued_at);
      WHEN 'KeyRotated' THEN
        UPDATE cobro_rm_api_keys SET revoked_at = coalesce(revoked_at, v_at)
        WHERE identity_key_hash = e.data->>'revokedIdentityKeyHash';
        INSERT INTO cobro_rm_api_keys AS k
          (identity_key_hash, merchant_id, integration, mode, stream_id, issued_at, revoked_at)
        VALUES (e.data->'keyPair'->>'identityKeyHash', v_merchant, e.data->>'integration', e.data->>'mode',
          e.stream_id, v_at, NULL)
        ON CONFLICT (identity_key_hash) DO UPDATE SET revoked_at = coalesce(k.revoked_at, EXCLUDED.issued_at);
      ELSE RETURN;
    END CASE;
  END $$`
})

/** The read model as a projection, for `Projection.rebuildAll`. */
export const projection: Projection.Projection = Projection.inline(model)

/** A row of the read model, as {@link findByHash} reads it. */
export interface Row {
  readonly identity_key_hash: string
  readonly merchant_id: string
  readonly integration: string
  readonly mode: string
  readonly revoked: boolean
}

const findByHashText = `
  SELECT identity_key_hash, merchant_id, integration, mode, revoked_at IS NOT NULL AS revoked
  FROM cobro_rm_api_keys WHERE identity_key_hash = $1`

/**
 * The row of an identity-key hash: none, or one if it was ever issued. One statement, one probe of
 * the primary key, run by `statement` (`PgPool.statement`: every authenticated request runs it).
 */
export const findByHash = (
  statement: PgPool.Statement,
  hash: string
): Effect.Effect<ReadonlyArray<Row>, SqlError> => statement<Row>(findByHashText, [hash])
