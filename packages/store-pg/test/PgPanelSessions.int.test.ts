/**
 * The merchant panel's sessions over PGlite and PostgreSQL: found by the token's hash until they
 * expire, revoked one by one or by user, expired rows deleted by the next sign-in, and, over random
 * runs, the same answers as the in-memory sessions (the port's oracle).
 */
import * as PanelSessions from "@cobro/domain/PanelSessions"
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as PgPanelSessions from "../src/PgPanelSessions.js"
import * as Databases from "./support/Databases.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const HOUR = 3_600_000

/** A session of `userId` opened at `created` (ms after T0) for `lifetime` ms. */
const session = (
  tokenHash: string,
  userId: string,
  created = 0,
  lifetime = 12 * HOUR,
  role: PanelSessions.Role = "full_access"
): PanelSessions.Session => ({
  tokenHash,
  userId,
  merchantId: "MER_1",
  email: `${userId.toLowerCase()}@cafe.example`,
  role,
  csrfToken: `csrf-${tokenHash}`,
  createdAt: new Date(T0 + created),
  expiresAt: new Date(T0 + created + lifetime)
})

const sessions = PanelSessions.PanelSessions

/** How many random runs have started: each starts its clock 10 days after the one before. */
let runs = 0
const at = (millis: number) => new Date(T0 + millis)

const sessionsSuite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  layer(PgPanelSessions.layer.pipe(Layer.provideMerge(database)), {
    excludeTestServices: true,
    timeout: "60 seconds"
  })(name, (it) => {
    it.effect("a session is found by its token's hash, every field as stored, until it expires", () =>
      Effect.gen(function* () {
        const store = yield* sessions
        const hash = randomUUID()
        const opened = session(hash, `USR_${randomUUID().slice(0, 8)}`, 0, 12 * HOUR, "read_only")
        yield* store.create(opened)
        expect(yield* store.find(hash, at(0))).toEqual(Option.some(opened))
        expect(yield* store.find(hash, at(12 * HOUR - 1))).toEqual(Option.some(opened))
        expect(yield* store.find(hash, at(12 * HOUR))).toEqual(Option.none())
        expect(yield* store.find(randomUUID(), at(0))).toEqual(Option.none())
      })
    )

    it.effect("revoke ends one session; revokeUser ends every session of the user and no other", () =>
      Effect.gen(function* () {
        const store = yield* sessions
        const [ana, bob] = [`USR_${randomUUID().slice(0, 8)}`, `USR_${randomUUID().slice(0, 8)}`]
        const [a1, a2, a3, b1] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
        for (const s of [session(a1, ana), session(a2, ana), session(a3, ana), session(b1, bob)]) {
          yield* store.create(s)
        }
        yield* store.revoke(a1)
        expect(yield* store.find(a1, at(0))).toEqual(Option.none())
        expect(Option.isSome(yield* store.find(a2, at(0)))).toBe(true)
        yield* store.revokeUser(ana)
        expect(yield* store.find(a2, at(0))).toEqual(Option.none())
        expect(yield* store.find(a3, at(0))).toEqual(Option.none())
        expect(Option.isSome(yield* store.find(b1, at(0)))).toBe(true)
        // Revoking what is not there changes nothing.
        yield* store.revoke(a1)
        yield* store.revokeUser(`USR_${randomUUID().slice(0, 8)}`)
        expect(Option.isSome(yield* store.find(b1, at(0)))).toBe(true)
      })
    )

    it.effect(
      "a new session deletes the rows expired at its creation; the table keeps the token's hash only",
      () =>
        Effect.gen(function* () {
          const store = yield* sessions
          const sql = yield* SqlClient.SqlClient
          const user = `USR_${randomUUID().slice(0, 8)}`
          const [old, live, fresh] = [randomUUID(), randomUUID(), randomUUID()]
          // Far in the future of the other tests' sessions, so only these are concerned.
          const base = 1000 * 24 * HOUR
          yield* store.create(session(old, user, base, HOUR))
          yield* store.create(session(live, user, base, 3 * HOUR))
          const count = (hash: string) =>
            Effect.map(
              sql<{
                n: number
              }>`SELECT count(*)::int AS n FROM cobro_panel_sessions WHERE token_hash = ${hash}`,
              (rows) => rows[0]!.n
            )
          expect(yield* count(old)).toBe(1)
          yield* store.create(session(fresh, user, base + 2 * HOUR, HOUR))
          expect(yield* count(old)).toBe(0)
          expect(yield* count(live)).toBe(1)
          expect(yield* count(fresh)).toBe(1)
          const columns = yield* sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_name = 'cobro_panel_sessions'
          ORDER BY ordinal_position`
          expect(columns.map((c) => c.column_name)).toEqual([
            "token_hash",
            "user_id",
            "merchant_id",
            "email",
            "role",
            "csrf_token",
            "created_at",
            "expires_at"
          ])
          const indexes = yield* sql<{ indexname: string }>`
          SELECT indexname FROM pg_indexes WHERE tablename = 'cobro_panel_sessions' ORDER BY indexname`
          expect(indexes.map((i) => i.indexname)).toEqual([
            "cobro_panel_sessions_expires_at",
            "cobro_panel_sessions_pkey",
            "cobro_panel_sessions_user_id"
          ])
        })
    )

    const step = FastCheck.oneof(
      FastCheck.record({
        op: FastCheck.constant("create" as const),
        token: FastCheck.integer({ min: 0, max: 5 }),
        user: FastCheck.integer({ min: 0, max: 2 }),
        lifetime: FastCheck.integer({ min: 1, max: 4 * HOUR })
      }),
      FastCheck.record({
        op: FastCheck.constant("find" as const),
        token: FastCheck.integer({ min: 0, max: 5 })
      }),
      FastCheck.record({
        op: FastCheck.constant("revoke" as const),
        token: FastCheck.integer({ min: 0, max: 5 })
      }),
      FastCheck.record({
        op: FastCheck.constant("revokeUser" as const),
        user: FastCheck.integer({ min: 0, max: 2 })
      }),
      FastCheck.record({
        op: FastCheck.constant("advance" as const),
        millis: FastCheck.integer({ min: 0, max: 2 * HOUR })
      })
    )

    it.effect.prop(
      "over random creations, reads, revocations and time, the table answers as the in-memory sessions do",
      [FastCheck.array(step, { maxLength: 30 })],
      ([steps]) =>
        Effect.gen(function* () {
          const store = yield* sessions
          const memory = yield* Effect.provide(sessions, PanelSessions.layerMemory)
          // Each run's tokens and users are its own; its clock starts past every earlier run's sessions.
          const run = randomUUID().slice(0, 8)
          const token = (n: number) => `${run}-t${n}`
          const user = (n: number) => `USR_${run}u${n}`
          let now = (2000 + 10 * runs++) * 24 * HOUR
          const created = new Set<string>()
          for (const s of steps) {
            switch (s.op) {
              case "create": {
                // A token is minted once: a sign-in never reuses one.
                if (created.has(token(s.token))) break
                created.add(token(s.token))
                const opened = session(token(s.token), user(s.user), now, s.lifetime)
                yield* store.create(opened)
                yield* memory.create(opened)
                break
              }
              case "find":
                expect(yield* store.find(token(s.token), at(now))).toEqual(
                  yield* memory.find(token(s.token), at(now))
                )
                break
              case "revoke":
                yield* store.revoke(token(s.token))
                yield* memory.revoke(token(s.token))
                break
              case "revokeUser":
                yield* store.revokeUser(user(s.user))
                yield* memory.revokeUser(user(s.user))
                break
              case "advance":
                now += s.millis
                break
            }
          }
          for (let n = 0; n <= 5; n++) {
            expect(yield* store.find(token(n), at(now))).toEqual(yield* memory.find(token(n), at(now)))
          }
        }),
      { fastCheck: { numRuns: propRuns } }
    )
  })

sessionsSuite("panel sessions on PGlite", Databases.pglite, 25)
sessionsSuite("panel sessions on PostgreSQL", Databases.postgres, 40)
