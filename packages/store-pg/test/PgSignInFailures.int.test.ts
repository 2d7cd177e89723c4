/**
 * The failed panel sign-ins of every email over PGlite and PostgreSQL (issue 31, item 8): counted
 * alike whichever node records them (concurrent failures all count), forgiven by a success, keyed
 * by a hash so the table lists no email, and, over random runs, the same counts as in memory.
 */
import * as SignInFailures from "@cobro/domain/SignInFailures"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as PgSignInFailures from "../src/PgSignInFailures.js"
import * as Databases from "./support/Databases.js"
import { storeSuite } from "./support/StoreTest.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (millis: number) => DateTime.unsafeMake(T0 + millis)

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  storeSuite(PgSignInFailures.layer.pipe(Layer.provideMerge(database)), "60 seconds")(name, (it) => {
    it.effect(
      "failures recorded at once by two nodes all count, with the latest instant; a success forgives; no email is stored",
      () =>
        Effect.gen(function* () {
          // Two nodes: two instances over the same database.
          const [first, second] = yield* Effect.all([PgSignInFailures.make, PgSignInFailures.make])
          const email = `nobody-${randomUUID()}@cafe.example`
          yield* Effect.all(
            Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).failed(email, at(i * 10))),
            { concurrency: "unbounded" }
          )
          expect(yield* second.throttle(email.toUpperCase())).toEqual({
            failures: 20,
            lastFailureAt: Option.some(at(190))
          })
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ email_key: string }>`SELECT email_key FROM cobro_panel_sign_in_failures`
          expect(rows.map((r) => r.email_key)).toContain(SignInFailures.keyOf(email))
          expect(rows.some((r) => r.email_key.includes("@"))).toBe(false)
          yield* first.succeeded(` ${email} `)
          expect(yield* second.throttle(email)).toEqual(SignInFailures.none)
        })
    )

    it.effect.prop(
      "over random failures and successes of a few emails, the table counts as the in-memory counts do",
      [
        FastCheck.array(
          FastCheck.record({
            email: FastCheck.integer({ min: 0, max: 2 }),
            ok: FastCheck.boolean(),
            millis: FastCheck.integer({ min: 0, max: 60_000 })
          }),
          { maxLength: 25 }
        )
      ],
      ([steps]) =>
        Effect.gen(function* () {
          const store = yield* SignInFailures.SignInFailures
          const memory = yield* Effect.provide(SignInFailures.SignInFailures, SignInFailures.layerMemory)
          const run = randomUUID().slice(0, 8)
          const email = (n: number) => `u${n}-${run}@cafe.example`
          for (const step of steps) {
            for (const counts of [store, memory]) {
              yield* step.ok
                ? counts.succeeded(email(step.email))
                : counts.failed(email(step.email), at(step.millis))
            }
          }
          for (let n = 0; n <= 2; n++) {
            expect(yield* store.throttle(email(n))).toEqual(yield* memory.throttle(email(n)))
          }
        }),
      { fastCheck: { numRuns: propRuns } }
    )
  })

suite("sign-in failures on PGlite", Databases.pglite, 20)
suite("sign-in failures on PostgreSQL", Databases.postgres, 30)
