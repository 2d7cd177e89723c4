/**
 * The `Idempotency-Key` store over PGlite and PostgreSQL: reserve, replay, mismatch, in progress,
 * release, expiry after 24 hours of the caller's clock, exact bodies, and the reservation race.
 */
import * as AppendFence from "@cobro/domain/AppendFence"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import type { YieldWrap } from "effect/Utils"
import { randomUUID } from "node:crypto"
import * as PgIdempotencyStore from "../src/PgIdempotencyStore.js"
import * as Databases from "./support/Databases.js"
import { storeSuite } from "./support/StoreTest.js"

const { LEASE_MS, Reservation, RETENTION_MS } = IdempotencyStore

const t0 = DateTime.unsafeMake("2024-03-01T12:00:00Z")
const later = (millis: number) => DateTime.add(t0, { millis })

/** A scope no other test uses. */
const freshScope = (
  merchantId = `MER_${randomUUID().slice(0, 8)}`,
  mode = "production"
): IdempotencyStore.Scope => ({
  merchantId,
  mode,
  key: randomUUID()
})

/** A test's body given a scope no other test uses. */
const withFreshScope =
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(
    body: (scope: IdempotencyStore.Scope) => Generator<Eff, A, never>
  ) =>
  () =>
    Effect.gen(() => body(freshScope()))

const store = IdempotencyStore.IdempotencyStore

/** The owner of the tests that run one request at a time. */
const OWNER = "owner-1"

const reserve = (
  scope: IdempotencyStore.Scope,
  fingerprint: string,
  now: DateTime.Utc = t0,
  owner: string = OWNER
) => Effect.flatMap(store, (s) => s.reserve(scope, fingerprint, now, owner))
const complete = (
  scope: IdempotencyStore.Scope,
  response: IdempotencyStore.StoredResponse,
  owner: string = OWNER
) => Effect.flatMap(store, (s) => s.complete(scope, owner, response))
const release = (scope: IdempotencyStore.Scope, owner: string = OWNER) =>
  Effect.flatMap(store, (s) => s.release(scope, owner))
const renew = (scope: IdempotencyStore.Scope, now: DateTime.Utc, owner: string = OWNER) =>
  Effect.flatMap(store, (s) => s.renew(scope, owner, now))

/**
 * The effect of a request in these tests: a row of `idempotency_effects` written under the owner's
 * fence, as an event store's append is.
 */
const effect = (scope: IdempotencyStore.Scope, owner: string, resource: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fence = (yield* store).fence(scope, owner)
    return yield* fence.around(
      resource,
      sql`INSERT INTO idempotency_effects (key, owner, resource) VALUES (${scope.key}, ${owner}, ${resource})`
    )
  }).pipe(
    Effect.as(true),
    Effect.catchAllDefect((defect) =>
      defect instanceof AppendFence.KeyLost ? Effect.succeed(false) : Effect.die(defect)
    ),
    Effect.orDie
  )

/** The effects of `scope`'s key that committed. */
const effects = (scope: IdempotencyStore.Scope) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ owner: string; resource: string }>`
      SELECT owner, resource FROM idempotency_effects WHERE key = ${scope.key} ORDER BY n`
  ).pipe(Effect.orDie)

const effectsTable = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`CREATE TABLE IF NOT EXISTS idempotency_effects (n serial, key text, owner text, resource text)`
).pipe(Effect.orDie)

const created: IdempotencyStore.StoredResponse = {
  status: 201,
  contentType: "application/json",
  body: '{"payload":{"id":"LNK_1"},"errors":[]}'
}

const idempotencySuite = (
  name: string,
  database: Layer.Layer<Databases.StoreServices>,
  options: { readonly propRuns: number; readonly racers: number }
) =>
  storeSuite(PgIdempotencyStore.layer.pipe(Layer.provideMerge(database)), "60 seconds")(name, (it) => {
    it.effect(
      "Idempotency-Key: the same key and body within 24 hours replays the first response",
      withFreshScope(function* (scope) {
        expect(yield* reserve(scope, "POST /v1/links sha256:aa")).toEqual(Reservation.Reserved())
        yield* complete(scope, created)
        expect(yield* reserve(scope, "POST /v1/links sha256:aa", later(1000))).toEqual(
          Reservation.Replay({ response: created })
        )
        expect(yield* reserve(scope, "POST /v1/links sha256:aa", later(RETENTION_MS - 1))).toEqual(
          Reservation.Replay({ response: created })
        )
      })
    )

    it.effect(
      "Idempotency-Key: the same key with another method, path or body is a Mismatch",
      withFreshScope(function* (scope) {
        yield* reserve(scope, "POST /v1/links sha256:aa")
        // Mismatch whether the first request is still running or answered.
        expect(yield* reserve(scope, "POST /v1/links sha256:bb")).toEqual(Reservation.Mismatch())
        yield* complete(scope, created)
        expect(yield* reserve(scope, "POST /v1/links sha256:bb")).toEqual(Reservation.Mismatch())
        expect(yield* reserve(scope, "POST /v1/refunds sha256:aa")).toEqual(Reservation.Mismatch())
      })
    )

    it.effect(
      "Idempotency-Key: a request still running under the key is InProgress",
      withFreshScope(function* (scope) {
        expect(yield* reserve(scope, "fp")).toEqual(Reservation.Reserved())
        expect(yield* reserve(scope, "fp", later(5000))).toEqual(Reservation.InProgress())
        yield* complete(scope, created)
        expect(yield* reserve(scope, "fp", later(6000))).toEqual(Reservation.Replay({ response: created }))
      })
    )

    it.effect(
      "Idempotency-Key: a released key (a 5xx) is forgotten and can be reserved again",
      withFreshScope(function* (scope) {
        yield* reserve(scope, "fp-1")
        yield* release(scope)
        expect(yield* reserve(scope, "fp-2")).toEqual(Reservation.Reserved())
        // A completed key is not released: its response stays replayable.
        yield* complete(scope, created)
        yield* release(scope)
        expect(yield* reserve(scope, "fp-2")).toEqual(Reservation.Replay({ response: created }))
      })
    )

    it.effect(
      "Idempotency-Key: a key is remembered for 24 hours of the caller's clock, then behaves as absent and is reused",
      withFreshScope(function* (scope) {
        yield* reserve(scope, "fp-1")
        yield* complete(scope, created)
        // At exactly 24 hours the key is gone: another body is no longer a mismatch.
        expect(yield* reserve(scope, "fp-2", later(RETENTION_MS))).toEqual(Reservation.Reserved())
        expect(yield* reserve(scope, "fp-2", later(RETENTION_MS + 1))).toEqual(Reservation.InProgress())
        const again: IdempotencyStore.StoredResponse = { status: 200, contentType: undefined, body: "{}" }
        yield* complete(scope, again)
        expect(yield* reserve(scope, "fp-2", later(2 * RETENTION_MS - 1))).toEqual(
          Reservation.Replay({ response: again })
        )
        // A reservation renewed all along, whose request never finished, expires at 24 hours too.
        const stuck = freshScope()
        yield* reserve(stuck, "fp", t0)
        yield* renew(stuck, later(RETENTION_MS - 2))
        expect(yield* reserve(stuck, "fp", later(RETENTION_MS - 1), "retry")).toEqual(
          Reservation.InProgress()
        )
        expect(yield* reserve(stuck, "fp", later(RETENTION_MS), "retry")).toEqual(Reservation.Reserved())
      })
    )

    it.effect(
      "Idempotency-Key: a crashed request's key (its lease not renewed) is free once the 30-second lease lapses, not after 24 hours; the crashed owner's late answer records nothing",
      withFreshScope(function* (scope) {
        expect(yield* reserve(scope, "fp", t0, "crashed")).toEqual(Reservation.Reserved())
        expect(yield* reserve(scope, "fp", later(LEASE_MS - 1), "retry")).toEqual(Reservation.InProgress())
        // A lapsed reservation is as absent: the retry takes the key, whatever its body.
        expect(yield* reserve(scope, "other", later(LEASE_MS), "retry")).toEqual(Reservation.Reserved())
        // The first owner was only slow after all: its answer and its release change nothing.
        expect(yield* complete(scope, { status: 500, contentType: undefined, body: "late" }, "crashed")).toBe(
          "Lost"
        )
        yield* release(scope, "crashed")
        expect(yield* renew(scope, later(LEASE_MS + 1), "crashed")).toBe(false)
        expect(yield* reserve(scope, "other", later(LEASE_MS + 2), "third")).toEqual(Reservation.InProgress())
        expect(yield* complete(scope, created, "retry")).toBe("Recorded")
        expect(yield* reserve(scope, "other", later(LEASE_MS + 3), "third")).toEqual(
          Reservation.Replay({ response: created })
        )
      })
    )

    it.effect(
      "Idempotency-Key: a running request that renews its lease keeps its key past 30 seconds: a retry is InProgress until it answers",
      withFreshScope(function* (scope) {
        expect(yield* reserve(scope, "fp", t0, "slow")).toEqual(Reservation.Reserved())
        // Renewed every third of a lease, for four leases.
        for (let at = LEASE_MS / 3; at <= 4 * LEASE_MS; at += LEASE_MS / 3) {
          expect(yield* renew(scope, later(at), "slow")).toBe(true)
          expect(yield* reserve(scope, "fp", later(at + LEASE_MS / 6), "retry")).toEqual(
            Reservation.InProgress()
          )
        }
        expect(yield* complete(scope, created, "slow")).toBe("Recorded")
        expect(yield* reserve(scope, "fp", later(10 * LEASE_MS), "retry")).toEqual(
          Reservation.Replay({ response: created })
        )
        // A completed key has no lease to renew.
        expect(yield* renew(scope, later(10 * LEASE_MS), "slow")).toBe(false)
      })
    )

    it.effect(
      "a renewal and a retry racing at the end of the lease, on two connections: exactly one of them owns the key, and only the owner's answer is kept",
      () =>
        Effect.gen(function* () {
          for (let round = 0; round < 20; round++) {
            const scope = freshScope()
            yield* reserve(scope, "fp", t0, "first")
            const at = later(LEASE_MS + round)
            const [renewed, retried] = yield* Effect.all(
              [renew(scope, at, "first"), reserve(scope, "fp", at, "retry")],
              { concurrency: "unbounded" }
            )
            // Never both: a retry taking over the key of a request that still runs.
            expect([renewed, retried._tag]).toEqual(renewed ? [true, "InProgress"] : [false, "Reserved"])
            const owner = renewed ? "first" : "retry"
            const loser = renewed ? "retry" : "first"
            const answer = { status: 201, contentType: "application/json", body: `{"by":"${owner}"}` }
            const [kept, dropped] = yield* Effect.all(
              [complete(scope, answer, owner), complete(scope, { ...answer, body: "{}" }, loser)],
              { concurrency: "unbounded" }
            )
            expect([kept, dropped]).toEqual(["Recorded", "Lost"])
            expect(yield* reserve(scope, "fp", later(2 * LEASE_MS), "third")).toEqual(
              Reservation.Replay({ response: answer })
            )
          }
        })
    )

    it.effect(
      "time is the caller's clock, not the database's: a key reserved in 2001 is current in 2001",
      withFreshScope(function* (scope) {
        const past = DateTime.unsafeMake("2001-01-01T00:00:00Z")
        expect(yield* reserve(scope, "fp", past)).toEqual(Reservation.Reserved())
        expect(yield* reserve(scope, "fp", DateTime.add(past, { seconds: 20 }))).toEqual(
          Reservation.InProgress()
        )
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ created_at: Date; expires_at: Date; lease_expires_at: Date }>`
          SELECT created_at, expires_at, lease_expires_at FROM cobro_idempotency
          WHERE merchant_id = ${scope.merchantId} AND mode = ${scope.mode} AND key = ${scope.key}`
        expect(row).toEqual({
          created_at: new Date("2001-01-01T00:00:00Z"),
          expires_at: new Date("2001-01-02T00:00:00Z"),
          lease_expires_at: new Date("2001-01-01T00:00:30Z")
        })
        yield* complete(scope, created)
        expect(yield* reserve(scope, "fp", DateTime.add(past, { hours: 23 }))).toEqual(
          Reservation.Replay({ response: created })
        )
      })
    )

    it.effect(
      "Idempotency-Key: a key is scoped to one merchant and mode",
      withFreshScope(function* (scope) {
        yield* reserve(scope, "fp")
        const otherMode = { ...scope, mode: "test" }
        const otherMerchant = { ...scope, merchantId: `${scope.merchantId}x` }
        expect(yield* reserve(otherMode, "another")).toEqual(Reservation.Reserved())
        expect(yield* reserve(otherMerchant, "another")).toEqual(Reservation.Reserved())
        yield* complete(otherMode, created)
        expect(yield* reserve(scope, "fp")).toEqual(Reservation.InProgress())
      })
    )

    it.effect(
      "the stored response is replayed byte for byte: non-ASCII text, large integers as written, whitespace, no content type",
      () =>
        Effect.gen(function* () {
          const body =
            '{"payload":{"amount":123456789012345678901234567890,"time":1709294400000000001,' +
            '"name":"Peña Ñandú — café ☕ 𝄞 🇨🇴","note":"tab\\there \\u0000 \\"quoted\\""},"errors":[]}\r\n  '
          const responses: ReadonlyArray<IdempotencyStore.StoredResponse> = [
            { status: 200, contentType: "application/json; charset=utf-8", body },
            { status: 409, contentType: undefined, body: "" },
            { status: 201, contentType: "text/plain", body: "x".repeat(200_000) + "é" }
          ]
          for (const response of responses) {
            const scope = freshScope()
            yield* reserve(scope, "fp")
            yield* complete(scope, response)
            const replayed = yield* reserve(scope, "fp")
            expect(replayed).toEqual(Reservation.Replay({ response }))
            if (replayed._tag === "Replay") {
              expect(
                Buffer.from(replayed.response.body, "utf8").equals(Buffer.from(response.body, "utf8"))
              ).toBe(true)
              expect(replayed.response.contentType).toBe(response.contentType)
            }
          }
        })
    )

    it.effect(
      "concurrent reservations of one key, on as many connections: exactly one is Reserved, the others InProgress",
      () =>
        Effect.gen(function* () {
          for (let round = 0; round < 10; round++) {
            const scope = freshScope()
            const outcomes = yield* Effect.all(
              Array.from({ length: options.racers }, () => reserve(scope, "fp")),
              { concurrency: "unbounded" }
            )
            expect(outcomes.filter((o) => o._tag === "Reserved")).toHaveLength(1)
            expect(outcomes.filter((o) => o._tag === "InProgress")).toHaveLength(options.racers - 1)
          }
        })
    )

    it.effect(
      "concurrent reservations of an expired key, some with another body: exactly one takes it over",
      () =>
        Effect.gen(function* () {
          for (let round = 0; round < 10; round++) {
            const scope = freshScope()
            yield* reserve(scope, "old")
            yield* complete(scope, created)
            const now = later(RETENTION_MS + round)
            const outcomes = yield* Effect.all(
              Array.from({ length: options.racers }, (_, i) => reserve(scope, i % 2 === 0 ? "a" : "b", now)),
              { concurrency: "unbounded" }
            )
            const winners = outcomes.flatMap((o, i) =>
              o._tag === "Reserved" ? [i % 2 === 0 ? "a" : "b"] : []
            )
            expect(winners).toHaveLength(1)
            // The losers see the winner's reservation: same body in progress, another body a mismatch.
            outcomes.forEach((o, i) => {
              if (o._tag === "Reserved") return
              expect(o._tag).toBe((i % 2 === 0 ? "a" : "b") === winners[0] ? "InProgress" : "Mismatch")
            })
          }
        })
    )

    it.effect("purgeExpired deletes only the keys expired at the caller's now", () =>
      Effect.gen(function* () {
        const merchantId = `MER_${randomUUID().slice(0, 8)}`
        const old = freshScope(merchantId)
        const fresh = freshScope(merchantId)
        yield* reserve(old, "fp", DateTime.unsafeMake("1990-01-01T00:00:00Z"))
        yield* reserve(fresh, "fp", DateTime.unsafeMake("1990-01-02T12:00:00Z"))
        yield* complete(fresh, created)
        expect(yield* PgIdempotencyStore.purgeExpired(DateTime.unsafeMake("1990-01-02T12:00:00Z"))).toBe(1)
        expect(yield* reserve(fresh, "fp", DateTime.unsafeMake("1990-01-02T13:00:00Z"))).toEqual(
          Reservation.Replay({ response: created })
        )
      })
    )

    it.effect(
      "a key is a record: once an effect of its request commits under the fence, the key is never released nor run again; after the lease a retry recovers it from the resource",
      () =>
        Effect.gen(function* () {
          yield* effectsTable
          const scope = freshScope()
          expect(yield* reserve(scope, "fp", t0, "first")).toEqual(Reservation.Reserved())
          expect(yield* effect(scope, "first", "TerminalCheckout-INT_1")).toBe(true)
          expect(yield* effect(scope, "first", "Merchant-MER_1")).toBe(true)
          // Its process dies now (a released key: the next test).
          expect(yield* reserve(scope, "fp", later(LEASE_MS - 1), "retry")).toEqual(Reservation.InProgress())
          // Its process died: past the lease, a retry holds the key to answer from the first resource.
          expect(yield* reserve(scope, "fp", later(LEASE_MS), "retry")).toEqual(
            Reservation.Recover({ resource: "TerminalCheckout-INT_1" })
          )
          expect(yield* reserve(scope, "fp", later(LEASE_MS + 1), "third")).toEqual(Reservation.InProgress())
          expect(yield* reserve(scope, "other", later(LEASE_MS + 1), "third")).toEqual(Reservation.Mismatch())
          // The first request was only slow: its next effect is refused, its answer not kept.
          expect(yield* effect(scope, "first", "TerminalCheckout-INT_1")).toBe(false)
          expect(yield* complete(scope, created, "first")).toBe("Lost")
          const recovered = { status: 201, contentType: "application/json", body: '{"recovered":true}' }
          expect(yield* complete(scope, recovered, "retry")).toBe("Recorded")
          expect(yield* reserve(scope, "fp", later(LEASE_MS + 2), "fourth")).toEqual(
            Reservation.Replay({ response: recovered })
          )
          expect((yield* effects(scope)).map((e) => e.resource)).toEqual([
            "TerminalCheckout-INT_1",
            "Merchant-MER_1"
          ])
        })
    )

    it.effect(
      "a released key whose request committed an effect is recovered by the next reservation at once, whatever its clock; one whose request committed nothing is forgotten",
      () =>
        Effect.gen(function* () {
          yield* effectsTable
          const scope = freshScope()
          expect(yield* reserve(scope, "fp", t0, "first")).toEqual(Reservation.Reserved())
          expect(yield* effect(scope, "first", "PaymentLink-LNK_1")).toBe(true)
          // Its answer was a refusal for now (a 503 with Retry-After): the key is released, not forgotten.
          yield* release(scope, "first")
          expect(yield* reserve(scope, "other", later(1), "retry")).toEqual(Reservation.Mismatch())
          // The retry's clock may be behind the first request's (another node): it recovers all the same.
          expect(yield* reserve(scope, "fp", DateTime.subtract(t0, { seconds: 5 }), "retry")).toEqual(
            Reservation.Recover({ resource: "PaymentLink-LNK_1" })
          )
          expect(yield* reserve(scope, "fp", later(2), "third")).toEqual(Reservation.InProgress())
          // The first request's late steps change nothing.
          yield* release(scope, "first")
          expect(yield* renew(scope, later(3), "first")).toBe(false)
          expect(yield* effect(scope, "first", "PaymentLink-LNK_2")).toBe(false)
          expect(yield* complete(scope, created, "first")).toBe("Lost")
          expect(yield* complete(scope, created, "retry")).toBe("Recorded")
          expect(yield* reserve(scope, "fp", later(4), "fourth")).toEqual(
            Reservation.Replay({ response: created })
          )
          const untouched = freshScope()
          expect(yield* reserve(untouched, "fp", t0, "first")).toEqual(Reservation.Reserved())
          yield* release(untouched, "first")
          expect(yield* reserve(untouched, "other", t0, "retry")).toEqual(Reservation.Reserved())
        })
    )

    it.effect(
      "a 5xx after an effect committed is kept like any answer; a 5xx before any effect releases the key",
      () =>
        Effect.gen(function* () {
          yield* effectsTable
          const failed = { status: 503, contentType: "application/json", body: '{"errors":[]}' }
          const committed = freshScope()
          yield* reserve(committed, "fp")
          expect(yield* effect(committed, OWNER, "PaymentLink-LNK_1")).toBe(true)
          expect(yield* complete(committed, failed)).toBe("Recorded")
          expect(yield* reserve(committed, "fp", later(1), "retry")).toEqual(
            Reservation.Replay({ response: failed })
          )
          const untouched = freshScope()
          yield* reserve(untouched, "fp")
          expect(yield* complete(untouched, failed)).toBe("Released")
          expect(yield* reserve(untouched, "fp", later(1), "retry")).toEqual(Reservation.Reserved())
        })
    )

    it.effect(
      "an effect racing a takeover at the end of the lease, on two connections: either it commits and the retry recovers, or the retry runs and the effect is not written; never both",
      () =>
        Effect.gen(function* () {
          yield* effectsTable
          for (let round = 0; round < 20; round++) {
            const scope = freshScope()
            yield* reserve(scope, "fp", t0, "first")
            const [written, retried] = yield* Effect.all(
              [
                effect(scope, "first", "PaymentLink-LNK_1"),
                reserve(scope, "fp", later(LEASE_MS + round), "retry")
              ],
              { concurrency: "unbounded" }
            )
            expect([written, retried._tag]).toEqual(written ? [true, "Recover"] : [false, "Reserved"])
            expect((yield* effects(scope)).length).toBe(written ? 1 : 0)
            if (!written) {
              // The retry runs the request itself: its effect is the only one.
              expect(yield* effect(scope, "retry", "PaymentLink-LNK_2")).toBe(true)
              expect((yield* effects(scope)).map((e) => e.owner)).toEqual(["retry"])
            }
          }
        })
    )

    it.effect.prop(
      // Steps also renew, and act as the owner or a stale one (issue 17: leases).
      "for random sequences of reserve, effects under the fence, complete, release and time, the store agrees with a model of the port",
      [
        FastCheck.array(
          FastCheck.oneof(
            FastCheck.record({
              _tag: FastCheck.constant("reserve" as const),
              fingerprint: FastCheck.constantFrom("a", "b")
            }),
            FastCheck.record({
              _tag: FastCheck.constant("complete" as const),
              status: FastCheck.oneof(
                FastCheck.integer({ min: 200, max: 499 }),
                FastCheck.integer({ min: 500, max: 599 })
              ),
              stale: FastCheck.boolean()
            }),
            FastCheck.record({ _tag: FastCheck.constant("effect" as const), stale: FastCheck.boolean() }),
            FastCheck.record({ _tag: FastCheck.constant("release" as const), stale: FastCheck.boolean() }),
            FastCheck.record({ _tag: FastCheck.constant("renew" as const), stale: FastCheck.boolean() }),
            FastCheck.record({
              _tag: FastCheck.constant("advance" as const),
              millis: FastCheck.oneof(
                FastCheck.integer({ min: 1, max: 40 }).map((seconds) => seconds * 1000),
                FastCheck.integer({ min: 1, max: 30 }).map((hours) => hours * 60 * 60 * 1000)
              )
            })
          ),
          { minLength: 1, maxLength: 25 }
        )
      ],
      ([steps]) =>
        Effect.gen(function* () {
          yield* effectsTable
          const scope = freshScope()
          type Model =
            | undefined
            | {
                fingerprint: string
                owner: string
                response: IdempotencyStore.StoredResponse | undefined
                /** The first resource an effect of the request wrote: its recovery point. */
                resource: string | undefined
                expiresAt: number
                leaseUntil: number
              }
          let committed = 0
          let model: Model = undefined
          let now = DateTime.toEpochMillis(t0)
          // The owner of the last reservation taken: the request that runs now, if any.
          let current = "nobody"
          const live = () =>
            model !== undefined &&
            model.expiresAt > now &&
            (model.response !== undefined || model.resource !== undefined || model.leaseUntil > now)
              ? model
              : undefined
          const running = (owner: string) =>
            model !== undefined && model.owner === owner && model.response === undefined
          for (const [i, step] of steps.entries()) {
            switch (step._tag) {
              case "reserve": {
                const found = live()
                const expected =
                  found === undefined
                    ? Reservation.Reserved()
                    : found.fingerprint !== step.fingerprint
                      ? Reservation.Mismatch()
                      : found.response !== undefined
                        ? Reservation.Replay({ response: found.response })
                        : found.resource !== undefined && found.leaseUntil <= now
                          ? Reservation.Recover({ resource: found.resource })
                          : Reservation.InProgress()
                const owner = `owner-${i}`
                expect(yield* reserve(scope, step.fingerprint, DateTime.unsafeMake(now), owner)).toEqual(
                  expected
                )
                if (found === undefined) {
                  current = owner
                  model = {
                    fingerprint: step.fingerprint,
                    owner,
                    response: undefined,
                    resource: undefined,
                    expiresAt: now + RETENTION_MS,
                    leaseUntil: now + LEASE_MS
                  }
                } else if (expected._tag === "Recover") {
                  current = owner
                  model = { ...found, owner, leaseUntil: now + LEASE_MS }
                }
                break
              }
              case "complete": {
                const owner = step.stale ? "stale" : current
                const response = {
                  status: step.status,
                  contentType: "application/json",
                  body: `{"n":${now}}`
                }
                const completion = !running(owner)
                  ? "Lost"
                  : response.status >= 500 && model!.resource === undefined
                    ? "Released"
                    : "Recorded"
                expect(yield* complete(scope, response, owner)).toBe(completion)
                if (completion === "Recorded") model = { ...model!, response }
                if (completion === "Released") model = undefined
                break
              }
              case "effect": {
                const owner = step.stale ? "stale" : current
                // The fence refuses only a key another request holds (or none at all).
                const allowed = model !== undefined && model.owner === owner
                expect(yield* effect(scope, owner, `Stream-${i}`)).toBe(allowed)
                if (allowed) {
                  committed++
                  model = { ...model!, resource: model!.resource ?? `Stream-${i}` }
                }
                expect((yield* effects(scope)).length).toBe(committed)
                break
              }
              case "release": {
                const owner = step.stale ? "stale" : current
                yield* release(scope, owner)
                // Nothing committed: forgotten; else its lease ends now, for a retry to recover it.
                if (running(owner)) {
                  model =
                    model!.resource === undefined
                      ? undefined
                      : { ...model!, leaseUntil: Number.NEGATIVE_INFINITY }
                }
                break
              }
              case "renew": {
                const owner = step.stale ? "stale" : current
                const renewed = running(owner)
                expect(yield* renew(scope, DateTime.unsafeMake(now), owner)).toBe(renewed)
                if (renewed) model = { ...model!, leaseUntil: now + LEASE_MS }
                break
              }
              case "advance":
                now += step.millis
                break
            }
          }
        }),
      { fastCheck: { numRuns: options.propRuns } }
    )
  })

idempotencySuite("idempotency store on PGlite", Databases.pglite, { propRuns: 20, racers: 8 })
idempotencySuite("idempotency store on PostgreSQL", Databases.postgres, { propRuns: 30, racers: 20 })
