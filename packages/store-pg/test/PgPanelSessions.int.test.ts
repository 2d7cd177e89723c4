/**
 * The merchant panel's sessions over PGlite and PostgreSQL: found by the token's hash until they
 * expire and while their user is ACTIVE, with the user's current role (issue 31: whatever happened
 * to the revocations, and however a sign-in raced a disable), revoked one by one or by user, expired
 * rows deleted by the next sign-in, and, over random runs, the same answers as the in-memory
 * sessions (the port's oracle).
 */
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { layerSequential } from "@cobro/domain/IdGenerator"
import { MerchantId } from "@cobro/domain/Ids"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as PanelUser from "@cobro/domain/PanelUser"
import { PasswordHasher } from "@cobro/domain/PasswordHasher"
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as PgPanelSessions from "../src/PgPanelSessions.js"
import * as Databases from "./support/Databases.js"
import { storeSuite } from "./support/StoreTest.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const HOUR = 3_600_000

/** A session of `userId` opened at `created` (ms after T0) for `lifetime` ms. */
const session = (
  tokenHash: string,
  userId: string,
  created = 0,
  lifetime = 12 * HOUR
): PanelSessions.NewSession => ({
  tokenHash,
  userId,
  merchantId: "MER_1",
  email: `${userId.toLowerCase()}@cafe.example`,
  csrfToken: `csrf-${tokenHash}`,
  createdAt: new Date(T0 + created),
  expiresAt: new Date(T0 + created + lifetime)
})

const PASSWORD = "correct horse battery"

/** A hasher without the work: the tests here are about the sessions. */
const plainHasher = Layer.succeed(
  PasswordHasher,
  PasswordHasher.of({
    hash: (password) => Effect.succeed(`plain$${password}`),
    verify: (password, stored) => Effect.succeed(stored === `plain$${password}`),
    dummy: "plain$"
  })
)

const handleUser = CommandHandler.make(PanelUser.PanelUser)

/** A new ACTIVE user with `role` and the password {@link PASSWORD}; its id. */
const givenUser = (role: PanelUser.Role = "full_access") =>
  Effect.gen(function* () {
    const email = PanelUser.Email.make(`u${randomUUID().slice(0, 12)}@cafe.example`)
    const userId = PanelUser.userIdOf(email)
    yield* handleUser(
      userId,
      new PanelUser.CreatePanelUser({
        userId,
        merchantId: MerchantId.make("MER_1"),
        email,
        role,
        passwordHash: Redacted.make(`plain$${PASSWORD}`),
        now: DateTime.unsafeMake(T0)
      })
    )
    return { userId, email }
  }).pipe(Effect.orDie)

/** Appends a command to a user's stream without any use case (no revocation). */
const apply = (userId: string, command: PanelUser.Command) => handleUser(userId, command).pipe(Effect.orDie)

/**
 * What `PanelAuth.signIn` does: the sign-in recorded, then, `pause` ms later (the request's other
 * work), the session opened with its token.
 */
const signInAndOpen = (email: string, tokenHash: string, pause = 0) =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const user = yield* PanelAccess.signIn({ email, password: PASSWORD, address: "10.0.0.1", now })
    yield* Effect.sleep(pause)
    const sessions = yield* PanelSessions.PanelSessions
    const createdAt = DateTime.toDateUtc(now)
    yield* sessions.create({
      tokenHash,
      userId: user.userId,
      merchantId: user.merchantId,
      email: user.email,
      csrfToken: "csrf",
      createdAt,
      expiresAt: new Date(createdAt.getTime() + 12 * HOUR)
    })
  })

const sessions = PanelSessions.PanelSessions

/** A user with full access and one session, opened at T0: the store, the user and the session's token hash. */
const givenSession = Effect.gen(function* () {
  const store = yield* sessions
  const { userId } = yield* givenUser()
  const hash = randomUUID()
  yield* store.create(session(hash, userId))
  return { hash, store, userId }
})

/** How many random runs have started: each starts its clock 10 days after the one before. */
let runs = 0
const at = (millis: number) => new Date(T0 + millis)

const sessionsSuite = (name: string, database: Layer.Layer<Databases.StoreServices>, propRuns: number) =>
  storeSuite(
    Layer.mergeAll(PgPanelSessions.layer, plainHasher, layerSequential).pipe(Layer.provideMerge(database)),
    "60 seconds"
  )(name, (it) => {
    it.effect("a session is found by its token's hash, every field as stored, until it expires", () =>
      Effect.gen(function* () {
        const store = yield* sessions
        const hash = randomUUID()
        const { userId } = yield* givenUser("read_only")
        const opened = session(hash, userId, 0, 12 * HOUR)
        yield* store.create(opened)
        expect(yield* store.find(hash, at(0))).toEqual(Option.some({ ...opened, role: "read_only" }))
        expect(yield* store.find(hash, at(12 * HOUR - 1))).toEqual(
          Option.some({ ...opened, role: "read_only" })
        )
        expect(yield* store.find(hash, at(12 * HOUR))).toEqual(Option.none())
        expect(yield* store.find(randomUUID(), at(0))).toEqual(Option.none())
      })
    )

    it.effect("revoke ends one session; revokeUser ends every session of the user and no other", () =>
      Effect.gen(function* () {
        const store = yield* sessions
        const [ana, bob] = [(yield* givenUser()).userId, (yield* givenUser()).userId]
        const [a1, a2, a3, a4, b1] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()]
        for (const s of [
          session(a1, ana),
          session(a2, ana),
          session(a3, ana),
          session(a4, ana),
          session(b1, bob)
        ]) {
          yield* store.create(s)
        }
        yield* store.revoke(a1)
        expect(yield* store.find(a1, at(0))).toEqual(Option.none())
        expect(Option.isSome(yield* store.find(a2, at(0)))).toBe(true)
        yield* store.revokeUser(ana, a4)
        expect(yield* store.find(a2, at(0))).toEqual(Option.none())
        expect(yield* store.find(a3, at(0))).toEqual(Option.none())
        expect(Option.isSome(yield* store.find(a4, at(0)))).toBe(true)
        yield* store.revokeUser(ana)
        expect(yield* store.find(a4, at(0))).toEqual(Option.none())
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

    it.effect(
      "a session has its user's current role and works only while the user is ACTIVE, whatever was revoked",
      () =>
        Effect.gen(function* () {
          const { hash, store, userId } = yield* givenSession
          const roleAt = Effect.map(
            store.find(hash, at(0)),
            Option.map((s) => s.role)
          )
          expect(yield* roleAt).toEqual(Option.some("full_access"))
          const now = DateTime.unsafeMake(T0)
          yield* apply(userId, new PanelUser.ChangeRole({ role: "read_only", now }))
          expect(yield* roleAt).toEqual(Option.some("read_only"))
          yield* apply(userId, new PanelUser.DisablePanelUser({ now }))
          expect(yield* roleAt).toEqual(Option.none())
          yield* apply(userId, new PanelUser.EnablePanelUser({ now }))
          expect(yield* roleAt).toEqual(Option.some("read_only"))
        })
    )

    it.effect(
      "a sign-in recorded before a disable whose session opens after the revocation never works; one before a downgrade reads the new role",
      () =>
        Effect.gen(function* () {
          const store = yield* sessions
          const disabled = yield* givenUser()
          // The interleaving a race produces: the sign-in is recorded, the disable runs and revokes,
          // then the sign-in opens its session.
          const now = yield* DateTime.now
          yield* PanelAccess.signIn({ email: disabled.email, password: PASSWORD, address: "a", now })
          yield* PanelAccess.disableUser(disabled.userId, { actor: "admin" })
          const late = randomUUID()
          yield* store.create({
            ...session(late, disabled.userId),
            createdAt: new Date(),
            expiresAt: new Date(Date.now() + HOUR)
          })
          expect(yield* store.find(late, new Date())).toEqual(Option.none())

          const downgraded = yield* givenUser()
          yield* PanelAccess.signIn({ email: downgraded.email, password: PASSWORD, address: "a", now })
          yield* PanelAccess.changeRole(downgraded.userId, "read_only", { actor: "admin" })
          const opened = randomUUID()
          yield* store.create({
            ...session(opened, downgraded.userId),
            createdAt: new Date(),
            expiresAt: new Date(Date.now() + HOUR)
          })
          expect(Option.map(yield* store.find(opened, new Date()), (s) => s.role)).toEqual(
            Option.some("read_only")
          )
        })
    )

    it.effect(
      "concurrent sign-ins and disables: no session opened by a sign-in works once its user's disable committed",
      () =>
        Effect.gen(function* () {
          const store = yield* sessions
          const rounds = yield* Effect.forEach(
            Array.from({ length: 24 }, (_, i) => i),
            (i) =>
              Effect.gen(function* () {
                const user = yield* givenUser()
                const token = randomUUID()
                // The disable starts 0 to 5 ms after the sign-in, which opens its session 0 to 15 ms
                // after recording it: either may win the stream, and the revocation may come first.
                const signIn = Effect.exit(signInAndOpen(user.email, token, (i * 7) % 16))
                const disable = Effect.delay(PanelAccess.disableUser(user.userId, { actor: "admin" }), i % 6)
                const [signedIn] = yield* Effect.all([signIn, disable], { concurrency: 2 })
                return { signedIn: Exit.isSuccess(signedIn), found: yield* store.find(token, new Date()) }
              }),
            { concurrency: 4 }
          )
          for (const round of rounds) expect(round.found).toEqual(Option.none())
        })
    )

    it.effect(
      "a role change whose revocation fails once answers the failure, yet the role holds from the next lookup; the retry succeeds",
      () =>
        Effect.gen(function* () {
          const { hash, store, userId } = yield* givenSession
          let failures = 1
          const failingOnce = PanelSessions.PanelSessions.of({
            ...store,
            revokeUser: (id, except) =>
              failures-- > 0 ? Effect.die(new Error("connection lost")) : store.revokeUser(id, except)
          })
          const change = PanelAccess.changeRole(userId, "read_only", { actor: "admin" }).pipe(
            Effect.provideService(PanelSessions.PanelSessions, failingOnce)
          )
          expect(Exit.isFailure(yield* Effect.exit(change))).toBe(true)
          // The session was not revoked, and is read_only all the same.
          expect(Option.map(yield* store.find(hash, at(0)), (s) => s.role)).toEqual(Option.some("read_only"))
          yield* change
          expect(Option.map(yield* store.find(hash, at(0)), (s) => s.role)).toEqual(Option.some("read_only"))
          // The same with a disable: its retry revokes.
          failures = 1
          const disable = PanelAccess.disableUser(userId, { actor: "admin" }).pipe(
            Effect.provideService(PanelSessions.PanelSessions, failingOnce)
          )
          yield* store.create(session(hash + "-2", userId))
          expect(Exit.isFailure(yield* Effect.exit(disable))).toBe(true)
          expect(yield* store.find(hash + "-2", at(0))).toEqual(Option.none())
          yield* disable
          const sql = yield* SqlClient.SqlClient
          const left = yield* sql<{
            n: number
          }>`SELECT count(*)::int AS n FROM cobro_panel_sessions WHERE user_id = ${userId}`
          expect(left[0]!.n).toBe(0)
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
          const users = [yield* givenUser(), yield* givenUser("read_only"), yield* givenUser()]
          const user = (n: number) => users[n]!.userId
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
