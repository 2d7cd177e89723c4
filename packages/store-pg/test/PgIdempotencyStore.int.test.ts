/**
 * The `Idempotency-Key` store over PGlite and PostgreSQL: reserve, replay, mismatch, in progress,
 * release, expiry after 24 hours of the caller's clock, exact bodies, and the reservation race.
 */
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as PgIdempotencyStore from "../src/PgIdempotencyStore.js"
import * as Databases from "./support/Databases.js"

const { Reservation, RETENTION_MS } = IdempotencyStore

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

const store = IdempotencyStore.IdempotencyStore

const reserve = (scope: IdempotencyStore.Scope, fingerprint: string, now: DateTime.Utc = t0) =>
  Effect.flatMap(store, (s) => s.reserve(scope, fingerprint, now))
const complete = (scope: IdempotencyStore.Scope, response: IdempotencyStore.StoredResponse) =>
  Effect.flatMap(store, (s) => s.complete(scope, response))
const release = (scope: IdempotencyStore.Scope) => Effect.flatMap(store, (s) => s.release(scope))

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
  layer(PgIdempotencyStore.layer.pipe(Layer.provideMerge(database)), {
    excludeTestServices: true,
    timeout: "60 seconds"
  })(name, (it) => {
    it.effect("Idempotency-Key: the same key and body within 24 hours replays the first response", () =>
      Effect.gen(function* () {
        const scope = freshScope()
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

    it.effect("Idempotency-Key: the same key with another method, path or body is a Mismatch", () =>
      Effect.gen(function* () {
        const scope = freshScope()
        yield* reserve(scope, "POST /v1/links sha256:aa")
        // Mismatch whether the first request is still running or answered.
        expect(yield* reserve(scope, "POST /v1/links sha256:bb")).toEqual(Reservation.Mismatch())
        yield* complete(scope, created)
        expect(yield* reserve(scope, "POST /v1/links sha256:bb")).toEqual(Reservation.Mismatch())
        expect(yield* reserve(scope, "POST /v1/refunds sha256:aa")).toEqual(Reservation.Mismatch())
      })
    )

    it.effect("Idempotency-Key: a request still running under the key is InProgress", () =>
      Effect.gen(function* () {
        const scope = freshScope()
        expect(yield* reserve(scope, "fp")).toEqual(Reservation.Reserved())
        expect(yield* reserve(scope, "fp", later(5000))).toEqual(Reservation.InProgress())
        yield* complete(scope, created)
        expect(yield* reserve(scope, "fp", later(6000))).toEqual(Reservation.Replay({ response: created }))
      })
    )

    it.effect("Idempotency-Key: a released key (a 5xx) is forgotten and can be reserved again", () =>
      Effect.gen(function* () {
        const scope = freshScope()
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
      () =>
        Effect.gen(function* () {
          const scope = freshScope()
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
          // A reservation whose request never finished expires too.
          const stuck = freshScope()
          yield* reserve(stuck, "fp", t0)
          expect(yield* reserve(stuck, "fp", later(RETENTION_MS - 1))).toEqual(Reservation.InProgress())
          expect(yield* reserve(stuck, "fp", later(RETENTION_MS))).toEqual(Reservation.Reserved())
        })
    )

    it.effect(
      "time is the caller's clock, not the database's: a key reserved in 2001 is current in 2001",
      () =>
        Effect.gen(function* () {
          const scope = freshScope()
          const past = DateTime.unsafeMake("2001-01-01T00:00:00Z")
          expect(yield* reserve(scope, "fp", past)).toEqual(Reservation.Reserved())
          expect(yield* reserve(scope, "fp", DateTime.add(past, { hours: 23 }))).toEqual(
            Reservation.InProgress()
          )
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ created_at: Date; expires_at: Date }>`
          SELECT created_at, expires_at FROM cobro_idempotency
          WHERE merchant_id = ${scope.merchantId} AND mode = ${scope.mode} AND key = ${scope.key}`
          expect(row).toEqual({
            created_at: new Date("2001-01-01T00:00:00Z"),
            expires_at: new Date("2001-01-02T00:00:00Z")
          })
        })
    )

    it.effect("Idempotency-Key: a key is scoped to one merchant and mode", () =>
      Effect.gen(function* () {
        const scope = freshScope()
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
        expect(yield* PgIdempotencyStore.purgeExpired(DateTime.unsafeMake("1990-01-02T12:00:00Z"))).toBe(1)
        expect(yield* reserve(fresh, "fp", DateTime.unsafeMake("1990-01-02T13:00:00Z"))).toEqual(
          Reservation.InProgress()
        )
      })
    )

    it.effect.prop(
      "for random sequences of reserve, complete, release and time, the store agrees with a model of the port",
      [
        FastCheck.array(
          FastCheck.oneof(
            FastCheck.record({
              _tag: FastCheck.constant("reserve" as const),
              fingerprint: FastCheck.constantFrom("a", "b")
            }),
            FastCheck.record({
              _tag: FastCheck.constant("complete" as const),
              status: FastCheck.integer({ min: 200, max: 499 })
            }),
            FastCheck.record({ _tag: FastCheck.constant("release" as const) }),
            FastCheck.record({
              _tag: FastCheck.constant("advance" as const),
              hours: FastCheck.integer({ min: 1, max: 30 })
            })
          ),
          { minLength: 1, maxLength: 25 }
        )
      ],
      ([steps]) =>
        Effect.gen(function* () {
          const scope = freshScope()
          type Model =
            | undefined
            | {
                fingerprint: string
                response: IdempotencyStore.StoredResponse | undefined
                expiresAt: number
              }
          let model: Model = undefined
          let now = DateTime.toEpochMillis(t0)
          const live = () => (model !== undefined && model.expiresAt > now ? model : undefined)
          for (const step of steps) {
            switch (step._tag) {
              case "reserve": {
                const current = live()
                const expected =
                  current === undefined
                    ? Reservation.Reserved()
                    : current.fingerprint !== step.fingerprint
                      ? Reservation.Mismatch()
                      : current.response === undefined
                        ? Reservation.InProgress()
                        : Reservation.Replay({ response: current.response })
                expect(yield* reserve(scope, step.fingerprint, DateTime.unsafeMake(now))).toEqual(expected)
                if (current === undefined) {
                  model = {
                    fingerprint: step.fingerprint,
                    response: undefined,
                    expiresAt: now + RETENTION_MS
                  }
                }
                break
              }
              case "complete": {
                const response = {
                  status: step.status,
                  contentType: "application/json",
                  body: `{"n":${now}}`
                }
                yield* complete(scope, response)
                if (model !== undefined && model.response === undefined) model = { ...model, response }
                break
              }
              case "release":
                yield* release(scope)
                if (model !== undefined && model.response === undefined) model = undefined
                break
              case "advance":
                now += step.hours * 60 * 60 * 1000
                break
            }
          }
        }),
      { fastCheck: { numRuns: options.propRuns } }
    )
  })

idempotencySuite("idempotency store on PGlite", Databases.pglite, { propRuns: 20, racers: 8 })
idempotencySuite("idempotency store on PostgreSQL", Databases.postgres, { propRuns: 30, racers: 20 })
