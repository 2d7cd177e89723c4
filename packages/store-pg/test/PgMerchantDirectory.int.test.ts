/**
 * The merchant directory (spec, Authentication) over PGlite and PostgreSQL: keys issued and rotated
 * by `Merchant` commands through the real `PgEventStore`, looked up in the `apiKeys` read model that
 * the store writes with those events.
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as SigningKey from "@cobro/domain/SigningKey"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createHash, randomUUID } from "node:crypto"
import * as PgMerchantDirectory from "../src/PgMerchantDirectory.js"
import * as Projection from "../src/Projection.js"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"
import { event, randomIds, streamId } from "./support/Fixtures.js"
import { given, storeSuite, withStore } from "./support/StoreTest.js"

const handle = CommandHandler.make(Merchant.Merchant)
const load = CommandHandler.load(Merchant.Merchant)
const now = DateTime.unsafeMake("2024-03-01T12:00:00Z")

/** The SHA-256 of a fresh random identity key, as the HTTP layer hashes it. */
const freshHash = (): SigningKey.IdentityKeyHash =>
  createHash("sha256").update(randomUUID()).digest("hex") as SigningKey.IdentityKeyHash

const pair = (identityKeyHash: SigningKey.IdentityKeyHash = freshHash()): Merchant.KeyPair => ({
  identityKeyHash,
  secretKey: `sealed:${randomUUID()}` as SigningKey.SealedSecret
})

/** A merchant created with a fresh id: its id. */
const newMerchant = Effect.suspend(() => {
  const merchantId =
    `MER_${randomUUID().replaceAll("-", "").slice(0, 16)}` as Merchant.MerchantCreated["merchantId"]
  return Effect.as(
    handle(merchantId, new Merchant.CreateMerchant({ merchantId, name: "Tienda", now })),
    merchantId
  )
})

const activate = (
  merchantId: string,
  integration: SigningKey.Integration,
  production: Merchant.KeyPair = pair(),
  test: Merchant.KeyPair = pair()
) =>
  Effect.as(handle(merchantId, new Merchant.ActivateIntegration({ integration, production, test, now })), {
    production: production.identityKeyHash,
    test: test.identityKeyHash
  })

const rotate = (merchantId: string, integration: SigningKey.Integration, mode: SigningKey.KeyMode) => {
  const keyPair = pair()
  return Effect.as(
    handle(merchantId, new Merchant.RotateKey({ integration, mode, keyPair, now })),
    keyPair.identityKeyHash
  )
}

const find = (hash: SigningKey.IdentityKeyHash) =>
  Effect.flatMap(MerchantDirectory.MerchantDirectory, (directory) => directory.findByIdentityKey(hash))

/** The credential found, as a plain record (or none). */
const lookup = (hash: SigningKey.IdentityKeyHash) =>
  Effect.map(
    find(hash),
    Option.map((c) => ({
      merchantId: c.merchantId,
      integration: c.integration,
      mode: c.mode,
      hash: c.identityKeyHash
    }))
  )

const projectedRow = (hash: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ merchant_id: string; revoked: boolean }>`
      SELECT merchant_id, revoked_at IS NOT NULL AS revoked FROM cobro_rm_api_keys WHERE identity_key_hash = ${hash}`
  ).pipe(
    Effect.map((rows) => rows[0]),
    Effect.orDie
  )

/** Checks that the read model holds `hash` for `merchantId`, revoked or not. */
const expectRow = (hash: string, merchantId: string, revoked: boolean) =>
  Effect.map(projectedRow(hash), (row) => expect(row).toEqual({ merchant_id: merchantId, revoked }))

/** What a lookup of `hash` must find. */
const resolvesTo = (
  merchantId: string,
  integration: SigningKey.Integration,
  mode: SigningKey.KeyMode,
  hash: SigningKey.IdentityKeyHash
) => Option.some({ merchantId, integration, mode, hash })

const apiKeyRows = (merchantIds: ReadonlyArray<string>) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`SELECT * FROM cobro_rm_api_keys WHERE merchant_id IN ${sql.in(merchantIds)} ORDER BY identity_key_hash`
  ).pipe(Effect.orDie)

/** What a fold of the merchant's events says each current key grants. */
const expectedKeys = (merchantId: string, state: Merchant.State) =>
  SigningKey.Integration.literals.flatMap((integration) =>
    SigningKey.KeyMode.literals.flatMap((mode) =>
      Option.match(Merchant.keyPairFor(state, integration, mode), {
        onNone: () => [],
        onSome: (keyPair) => [{ merchantId, integration, mode, hash: keyPair.identityKeyHash }]
      })
    )
  )

const directorySuite = (
  name: string,
  database: Layer.Layer<Databases.StoreServices>,
  options: { readonly propRuns: number; readonly server: boolean }
) =>
  storeSuite(
    Layer.mergeAll(PgMerchantDirectory.layer, randomIds).pipe(Layer.provideMerge(database)),
    "60 seconds"
  )(name, (it) => {
    it.effect(
      "Authentication: the production and test keys of both integrations resolve to their merchant, integration and mode",
      given(newMerchant, function* (merchantId) {
        const terminal = yield* activate(merchantId, "terminal_api")
        const button = yield* activate(merchantId, "payment_button")
        const expected = [
          { merchantId, integration: "terminal_api", mode: "production", hash: terminal.production },
          { merchantId, integration: "terminal_api", mode: "test", hash: terminal.test },
          { merchantId, integration: "payment_button", mode: "production", hash: button.production },
          { merchantId, integration: "payment_button", mode: "test", hash: button.test }
        ]
        for (const key of expected) expect(yield* lookup(key.hash)).toEqual(Option.some(key))
        // Test keys see only sandbox data.
        expect(Option.map(yield* find(terminal.test), (c) => c.sandbox)).toEqual(Option.some(true))
        expect(Option.map(yield* find(terminal.production), (c) => c.sandbox)).toEqual(Option.some(false))
        for (const key of expected) {
          yield* expectRow(key.hash, merchantId, false)
          expect(yield* lookup(key.hash)).toEqual(Option.some(key))
        }
      })
    )

    it.effect(
      "Reads its own writes: a key issued by a command that has returned resolves at once, its row written with the activation",
      given(newMerchant, function* (merchantId) {
        const keys = yield* activate(merchantId, "terminal_api")
        yield* expectRow(keys.production, merchantId, false)
        expect(yield* lookup(keys.production)).toEqual(
          resolvesTo(merchantId, "terminal_api", "production", keys.production)
        )
        expect(yield* lookup(keys.test)).toEqual(resolvesTo(merchantId, "terminal_api", "test", keys.test))
      })
    )

    it.effect(
      "a rotated key stops resolving as soon as the rotation is recorded: the rotation revokes its row",
      given(newMerchant, function* (merchantId) {
        const keys = yield* activate(merchantId, "payment_button")
        yield* expectRow(keys.production, merchantId, false)

        const rotated = yield* rotate(merchantId, "payment_button", "production")
        yield* expectRow(keys.production, merchantId, true)
        expect(yield* lookup(keys.production)).toEqual(Option.none())
        expect(yield* lookup(rotated)).toEqual(
          resolvesTo(merchantId, "payment_button", "production", rotated)
        )
        // The other mode's key is untouched.
        expect(Option.isSome(yield* lookup(keys.test))).toBe(true)

        const again = yield* rotate(merchantId, "payment_button", "production")
        yield* expectRow(rotated, merchantId, true)
        expect(yield* lookup(rotated)).toEqual(Option.none())
        expect(Option.isSome(yield* lookup(again))).toBe(true)
      })
    )

    it.effect("Authentication: an unknown identity key is not found", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 20; i++) expect(yield* find(freshHash())).toEqual(Option.none())
      })
    )

    it.effect(
      "a lookup reads no row of the log and at most one row of the read model (index probes, no scan)",
      withStore(function* ({ store, sql }) {
        // A log far larger than what a lookup may read.
        const filler = Array.from({ length: 500 }, (_, i) => event("Filler", { i }))
        yield* store.append(streamId("filler"), filler, EventStore.ExpectedVersion.NoStream())
        const merchantId = yield* newMerchant
        const keys = yield* activate(merchantId, "terminal_api")
        const rotated = yield* rotate(merchantId, "terminal_api", "test")
        const rowsRead = Effect.map(
          sql<{ relname: string; read: string }>`
            SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read
            FROM pg_stat_xact_user_tables WHERE relname IN ('cobro_events', 'cobro_rm_api_keys')`,
          (rows) => Object.fromEntries(rows.map((row) => [row.relname, Number(row.read ?? 0)]))
        )
        const read = (counts: Record<string, number>, table: string) => counts[table] ?? 0
        const counted = yield* sql.withTransaction(
          Effect.gen(function* () {
            // No scan at any price: a missing index shows as a full index scan, thousands of rows read.
            yield* sql`SET LOCAL enable_seqscan = off`
            const before = yield* rowsRead
            for (let i = 0; i < 10; i++) expect(yield* find(freshHash())).toEqual(Option.none())
            expect(Option.isSome(yield* find(keys.production))).toBe(true)
            expect(yield* find(keys.test)).toEqual(Option.none())
            expect(Option.isSome(yield* find(rotated))).toBe(true)
            const after = yield* rowsRead
            return {
              log: read(after, "cobro_events") - read(before, "cobro_events"),
              readModel: read(after, "cobro_rm_api_keys") - read(before, "cobro_rm_api_keys")
            }
          })
        )
        expect(counted.log).toBe(0)
        // 13 lookups, three of known keys: a row each.
        expect(counted.readModel).toBeLessThanOrEqual(3)
        expect(counted.readModel).toBeGreaterThan(0)
      })
    )

    it.effect("a key issued to two merchants authenticates neither, projected or not", () =>
      Effect.gen(function* () {
        const shared = freshHash()
        const first = yield* newMerchant
        const second = yield* newMerchant
        yield* activate(first, "terminal_api", pair(shared))
        expect(Option.isSome(yield* find(shared))).toBe(true)
        yield* activate(second, "payment_button", pair(), pair(shared))
        expect(yield* find(shared)).toEqual(Option.none())
        expect(yield* projectedRow(shared)).toMatchObject({ revoked: true })
      })
    )

    it.effect.prop(
      "for random activations and rotations, the directory agrees with a fold of the Merchant events after each, and the rebuilt read model equals the one written with the events",
      [
        FastCheck.array(
          FastCheck.oneof(
            FastCheck.record({
              _tag: FastCheck.constant("activate" as const),
              merchant: FastCheck.integer({ min: 0, max: 2 }),
              integration: FastCheck.constantFrom(...SigningKey.Integration.literals)
            }),
            FastCheck.record({
              _tag: FastCheck.constant("rotate" as const),
              merchant: FastCheck.integer({ min: 0, max: 2 }),
              integration: FastCheck.constantFrom(...SigningKey.Integration.literals),
              mode: FastCheck.constantFrom(...SigningKey.KeyMode.literals)
            }),
            FastCheck.record({
              _tag: FastCheck.constant("project" as const),
              events: FastCheck.integer({ min: 1, max: 4 })
            })
          ),
          { minLength: 1, maxLength: 14 }
        )
      ],
      ([steps]) =>
        Effect.gen(function* () {
          const merchants = yield* Effect.replicateEffect(newMerchant, 3)
          const issued: Array<SigningKey.IdentityKeyHash> = []

          const check = Effect.gen(function* () {
            const expected = []
            for (const merchantId of merchants) {
              expected.push(...expectedKeys(merchantId, (yield* load(merchantId)).state))
            }
            const current = new Set(expected.map((key) => key.hash))
            for (const key of expected) expect(yield* lookup(key.hash)).toEqual(Option.some(key))
            for (const hash of issued) {
              if (!current.has(hash)) expect(yield* lookup(hash)).toEqual(Option.none())
            }
            expect(yield* lookup(freshHash())).toEqual(Option.none())
          })

          for (const step of steps) {
            switch (step._tag) {
              case "activate": {
                const result = yield* Effect.either(activate(merchants[step.merchant]!, step.integration))
                if (result._tag === "Right") issued.push(result.right.production, result.right.test)
                else expect(result.left._tag).toBe("IntegrationAlreadyActive")
                break
              }
              case "rotate": {
                const result = yield* Effect.either(
                  rotate(merchants[step.merchant]!, step.integration, step.mode)
                )
                if (result._tag === "Right") issued.push(result.right)
                else expect(result.left._tag).toBe("IntegrationNotActive")
                break
              }
            }
            yield* check
          }

          const incremental = yield* apiKeyRows(merchants)
          expect(incremental.length).toBe(issued.length)
          yield* Projection.rebuild(ReadModels.apiKeys)
          expect(yield* apiKeyRows(merchants)).toEqual(incremental)
          yield* check
        }),
      { fastCheck: { numRuns: options.propRuns } }
    )

    if (options.server) {
      it.effect(
        "a long transaction elsewhere holds nothing back: a new key resolves from its row at once and a rotated-away one does not",
        withStore(function* ({ sql }) {
          const merchantId = yield* newMerchant
          const first = yield* activate(merchantId, "terminal_api")

          // Another session's open transaction with an xid: a runner's catch-up would stop below it.
          const started = yield* Deferred.make<void>()
          const done = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`SELECT pg_current_xact_id()`
                yield* Deferred.succeed(started, undefined)
                yield* Deferred.await(done)
              })
            )
          )
          yield* Deferred.await(started)

          const button = yield* activate(merchantId, "payment_button")
          const rotated = yield* rotate(merchantId, "terminal_api", "production")
          yield* expectRow(button.production, merchantId, false)
          yield* expectRow(first.production, merchantId, true)
          expect(yield* lookup(button.production)).toEqual(
            resolvesTo(merchantId, "payment_button", "production", button.production)
          )
          expect(Option.isSome(yield* lookup(rotated))).toBe(true)
          expect(yield* lookup(first.production)).toEqual(Option.none())

          yield* Deferred.succeed(done, undefined)
          yield* Fiber.join(holder)
        })
      )
    }
  })

directorySuite("merchant directory on PGlite", Databases.pglite, { propRuns: 6, server: false })
directorySuite("merchant directory on PostgreSQL", Databases.postgres, { propRuns: 10, server: true })
