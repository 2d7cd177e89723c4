/**
 * The domain's `MerchantDirectory` over PostgreSQL or PGlite (spec, Authentication): identity-key
 * hash → merchant, integration and mode, from the `apiKeys` read model, and from the log where the
 * read model has not caught up, so that a key reads its own writes on every node.
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import type * as SigningKey from "@cobro/domain/SigningKey"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { timingSafeEqual } from "node:crypto"
import * as PgPool from "./PgPool.js"
import * as ReadModels from "./ReadModels.js"

const merchantStreamPrefix = Aggregate.streamId(Merchant.Merchant, "")

/** The first lookup: the read model's row, if any, and whether the log revokes the key. */
interface ReadModelRow {
  readonly identity_key_hash: string | null
  readonly merchant_id: string | null
  readonly integration: string | null
  readonly mode: string | null
  readonly revoked: boolean | null
  readonly revoked_in_log: boolean
}

/** The second lookup: an event of the log that issued the key. */
interface IssuedRow {
  readonly stream_id: string
  readonly integration: string | null
  readonly mode: string | null
}

const decodeCredential = Schema.decodeUnknownOption(MerchantDirectory.Credential)

/** Compares two hashes in time independent of where they differ. */
const sameHash = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && timingSafeEqual(left, right)
}

const credential = (
  hash: string,
  found: { merchantId: string; integration: unknown; mode: unknown; identityKeyHash: string }
): Option.Option<MerchantDirectory.Credential> =>
  sameHash(found.identityKeyHash, hash)
    ? decodeCredential({
        merchantId: found.merchantId,
        integration: found.integration,
        mode: found.mode,
        identityKeyHash: found.identityKeyHash
      })
    : Option.none()

/**
 * Builds the directory over the `SqlClient` in context. A lookup is one round trip when the read
 * model knows the key: its row, plus an index probe of the log for a `KeyRotated` that revokes the
 * key, so that a rotated-away key never authenticates while the projection lags. When the read
 * model does not know the key (an unknown key, or one issued since the projection last ran, which
 * an unrelated long transaction elsewhere can make minutes), a second round trip asks the log
 * itself: three probes of the partial indexes of migration `3_idempotency_and_key_lookup`. Either
 * way no statement scans: an attacker's random keys cost index probes. A key issued more than once
 * authenticates no one, as in the read model.
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const revokedInLog = (hash: string) => sql`
    EXISTS (
      SELECT 1 FROM cobro_events e
      WHERE e.type = 'KeyRotated' AND e.data->>'revokedIdentityKeyHash' = ${hash}
        AND starts_with(e.stream_id, ${merchantStreamPrefix})
    )`

  // Every authenticated request runs this: one statement, through the pool directly (`PgPool`).
  const statement = yield* PgPool.statement
  const fromReadModelText = `
    SELECT k.identity_key_hash, k.merchant_id, k.integration, k.mode, k.revoked_at IS NOT NULL AS revoked,
      EXISTS (
        SELECT 1 FROM cobro_events e
        WHERE e.type = 'KeyRotated' AND e.data->>'revokedIdentityKeyHash' = q.hash
          AND starts_with(e.stream_id, $2)
      ) AS revoked_in_log
    FROM (SELECT $1::text AS hash) q
    LEFT JOIN cobro_rm_api_keys k ON k.identity_key_hash = q.hash`
  const fromReadModel = (hash: string) =>
    statement<ReadModelRow>(fromReadModelText, [hash, merchantStreamPrefix])

  // One branch per partial index; two rows are enough to tell "issued once" from "more than once".
  const fromLog = (hash: string) =>
    sql<IssuedRow>`
      SELECT issued.* FROM (
        SELECT stream_id, data->>'integration' AS integration, 'production' AS mode FROM cobro_events
        WHERE type = 'IntegrationActivated' AND data->'production'->>'identityKeyHash' = ${hash}
        UNION ALL
        SELECT stream_id, data->>'integration' AS integration, 'test' AS mode FROM cobro_events
        WHERE type = 'IntegrationActivated' AND data->'test'->>'identityKeyHash' = ${hash}
        UNION ALL
        SELECT stream_id, data->>'integration' AS integration, data->>'mode' AS mode FROM cobro_events
        WHERE type = 'KeyRotated' AND data->'keyPair'->>'identityKeyHash' = ${hash}
      ) issued
      WHERE starts_with(issued.stream_id, ${merchantStreamPrefix}) AND NOT ${revokedInLog(hash)}
      LIMIT 2`

  const findByIdentityKey = Effect.fn("PgMerchantDirectory.findByIdentityKey")(function* (
    hash: SigningKey.IdentityKeyHash
  ) {
    const row = (yield* fromReadModel(hash))[0]
    if (row === undefined || row.revoked_in_log || row.revoked === true) return Option.none()
    if (row.identity_key_hash !== null && row.merchant_id !== null) {
      yield* Effect.annotateCurrentSpan({ source: "read model" })
      return credential(hash, {
        merchantId: row.merchant_id,
        integration: row.integration,
        mode: row.mode,
        identityKeyHash: row.identity_key_hash
      })
    }
    // Not projected (yet): the log is the truth, its revocations checked again in the same statement.
    const issued = yield* fromLog(hash)
    yield* Effect.annotateCurrentSpan({ source: "log", issued: issued.length })
    if (issued.length !== 1) return Option.none()
    const event = issued[0]!
    return credential(hash, {
      merchantId: event.stream_id.slice(merchantStreamPrefix.length),
      integration: event.integration,
      mode: event.mode,
      identityKeyHash: hash
    })
  }, Effect.orDie)

  return MerchantDirectory.MerchantDirectory.of({ findByIdentityKey })
})

/**
 * Creates the read model's table if missing. Retried: the projection runner, or another node, may
 * run the same `CREATE TABLE IF NOT EXISTS` at the same moment, and PostgreSQL lets one of two
 * concurrent ones fail on its catalog's unique index.
 */
const setup = ReadModels.apiKeys.setup.pipe(
  Effect.retry({ times: 3, schedule: Schedule.spaced("50 millis") }),
  Effect.orDie
)

/**
 * `MerchantDirectory` over the `SqlClient` in context. Needs the store's migrations (run by
 * `PgEventStore.layerMigrated` or `Migrations.layer`); creates the `apiKeys` read model's table if
 * missing. Keep `ReadModels.apiKeys` running (it is in `ReadModels.all`): until it catches up,
 * lookups take the log's slower path.
 */
export const layer: Layer.Layer<MerchantDirectory.MerchantDirectory, never, SqlClient.SqlClient> =
  Layer.effect(MerchantDirectory.MerchantDirectory, Effect.zipRight(setup, make))
