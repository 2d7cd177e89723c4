/**
 * The domain's `MerchantDirectory` over PostgreSQL or PGlite (spec, Authentication): identity-key
 * hash → merchant, integration and mode, from the `ApiKeys` read model, which the store writes with
 * the events that issue and revoke keys.
 */
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import type * as SigningKey from "@cobro/domain/SigningKey"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as PgPool from "./PgPool.js"
import * as ApiKeys from "./readModels/ApiKeys.js"

const decodeCredential = Schema.decodeUnknownOption(MerchantDirectory.Credential)

/**
 * Builds the directory over the `SqlClient` in context. A lookup is one statement, one probe of the
 * `ApiKeys` read model's primary key: the store writes that row in the transaction that issues or
 * revokes the key (`readModels/ApiKeys`), so a key resolves as soon as the command that issued it has
 * returned, and a rotated-away one stops at once. An attacker's random keys cost an index probe each.
 * A key issued more than once authenticates no one (the read model marks it revoked).
 */
export const make = Effect.gen(function* () {
  // Every authenticated request runs this: one statement, through the pool directly (`PgPool`).
  const statement = yield* PgPool.statement

  const findByIdentityKey = Effect.fnUntraced(function* (hash: SigningKey.IdentityKeyHash) {
    const row = (yield* ApiKeys.findByHash(statement, hash))[0]
    if (row === undefined || row.revoked) return Option.none()
    return decodeCredential({
      merchantId: row.merchant_id,
      integration: row.integration,
      mode: row.mode,
      identityKeyHash: row.identity_key_hash
    })
  }, Effect.orDie)

  return MerchantDirectory.MerchantDirectory.of({ findByIdentityKey })
})

/**
 * `MerchantDirectory` over the `SqlClient` in context. Needs the store's migrations (run by
 * `PgEventStore.layerMigrated` or `Migrations.layer`), which create the read model and its trigger.
 */
export const layer: Layer.Layer<MerchantDirectory.MerchantDirectory, never, SqlClient.SqlClient> =
  Layer.effect(MerchantDirectory.MerchantDirectory, make)
