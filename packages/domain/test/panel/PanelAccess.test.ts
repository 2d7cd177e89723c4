import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { sha256 } from "@cobro/domain/DerivedId"
import * as EventStore from "@cobro/domain/EventStore"
import { MerchantId } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as PanelUser from "@cobro/domain/PanelUser"
import { PasswordHasher } from "@cobro/domain/PasswordHasher"
import { atT0, failure, freshly, givenMerchant, MER_1, MER_2, ports, T0 } from "../fixtures/Scenario.js"
import { watchedStore } from "../fixtures/Stores.js"

const PASSWORD = "correct horse battery"
const at = (millis: number) => DateTime.unsafeMake(T0 + millis)

/** The hash work done: every `verify`, with the stored text it was verified against. */
class HashWork extends Context.Tag("test/HashWork")<HashWork, Array<{ readonly stored: string }>>() {}

/**
 * A fast hasher for the use cases (the scrypt one is tested in `@cobro/http`): `test$<salt>$<sha256>`,
 * salted by a counter, and every verification recorded in `HashWork`.
 */
const testHasher = Layer.effect(
  PasswordHasher,
  Effect.map(HashWork, (work) => {
    let salt = 0
    const digest = (s: string, password: string) =>
      Array.from(sha256(`${s}:${password}`), (b) => b.toString(16).padStart(2, "0")).join("")
    const hashWith = (s: string, password: string) => `test$${s}$${digest(s, password)}`
    return {
      hash: (password) => Effect.sync(() => hashWith(String(++salt), password)),
      verify: (password, stored) =>
        Effect.sync(() => {
          work.push({ stored })
          const [scheme, s] = stored.split("$")
          return scheme === "test" && s !== undefined && hashWith(s, password) === stored
        }),
      dummy: hashWith("dummy", "no one's password")
    }
  })
).pipe(Layer.provideMerge(Layer.sync(HashWork, () => [])))

const layer = Layer.mergeAll(testHasher, PanelSessions.layerMemory).pipe(Layer.provideMerge(ports))
const test = freshly(layer, atT0(Effect.zipRight(givenMerchant(MER_1), givenMerchant(MER_2))))

const createAna = (overrides: Partial<Parameters<typeof PanelAccess.createUser>[0]> = {}) =>
  PanelAccess.createUser(
    { merchantId: MER_1, email: "Ana@Cafe.example", password: PASSWORD, role: "full_access", ...overrides },
    { actor: "admin" }
  )

const signIn = (password: string, millis = 0, email = "ana@cafe.example") =>
  PanelAccess.signIn({ email, password, address: "10.0.0.1", now: at(millis) })

const streamOf = (email: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => store.readStream(`PanelUser-${PanelUser.userIdOf(email)}`))

const logSize = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll({ limit: 100_000 }), (events) => events.length)
)

/** A session of Ana's (or of `userId`) opened at T0 for an hour, under `tokenHash`. */
const sessionOf = (userId: string, tokenHash: string): PanelSessions.NewSession => ({
  tokenHash,
  userId,
  merchantId: MER_1,
  email: "ana@cafe.example",
  csrfToken: "csrf",
  createdAt: new Date(T0),
  expiresAt: new Date(T0 + 3_600_000)
})

/** The session under `tokenHash` as a request at T0 finds it. */
const found = (tokenHash: string) =>
  Effect.flatMap(PanelSessions.PanelSessions, (s) => s.find(tokenHash, new Date(T0)))

const refusal = (retryAfterSeconds: Option.Option<number> = Option.none()) =>
  new PanelAccess.SignInRefused({ retryAfterSeconds })

describe("PanelAccess", () => {
  describe("createUser", () => {
    it.effect(
      "creates an ACTIVE user of the merchant, its email lower-cased; the log keeps the password's hash, never the password",
      () =>
        test(function* () {
          const user = yield* createAna()
          expect(user).toEqual({
            userId: PanelUser.userIdOf("ana@cafe.example"),
            merchantId: MER_1,
            email: "ana@cafe.example",
            role: "full_access",
            createdAt: at(0)
          })
          const [event, ...rest] = yield* streamOf("ana@cafe.example")
          expect(rest).toEqual([])
          expect(event).toMatchObject({
            streamId: `PanelUser-${user.userId}`,
            type: "PanelUserCreated",
            metadata: { actor: "admin" },
            data: { userId: user.userId, merchantId: MER_1, email: "ana@cafe.example", role: "full_access" }
          })
          expect((event!.data as { passwordHash: string }).passwordHash).toMatch(/^test\$/)
          expect(JSON.stringify({ data: event!.data, metadata: event!.metadata })).not.toContain(PASSWORD)
        })
    )

    it.effect(
      "the email must be an address, the password 12 to 256 characters, the merchant one that exists; nothing is stored otherwise",
      () =>
        test(function* () {
          const before = yield* logSize
          expect(yield* failure(createAna({ email: "ana" }))).toEqual(
            new PanelAccess.InvalidEmail({ email: "ana" })
          )
          expect(yield* failure(createAna({ email: "ana @cafe.example" }))).toBeInstanceOf(
            PanelAccess.InvalidEmail
          )
          const weak = new PanelAccess.WeakPassword({ minLength: 12, maxLength: 256 })
          expect(yield* failure(createAna({ password: "a".repeat(11) }))).toEqual(weak)
          expect(yield* failure(createAna({ password: "a".repeat(257) }))).toEqual(weak)
          // Characters, not UTF-16 units: 12 emoji are 12 characters.
          expect((yield* createAna({ email: "emoji@cafe.example", password: "🔑".repeat(12) })).email).toBe(
            "emoji@cafe.example"
          )
          expect(yield* failure(createAna({ password: "🔑".repeat(11) }))).toEqual(weak)
          expect((yield* createAna({ email: "long@cafe.example", password: "a".repeat(256) })).role).toBe(
            "full_access"
          )
          expect(yield* failure(createAna({ merchantId: "MER_404" }))).toBeInstanceOf(
            Merchant.MerchantNotFound
          )
          expect(yield* failure(createAna({ merchantId: "not a merchant" }))).toBeInstanceOf(
            Merchant.MerchantNotFound
          )
          expect(yield* logSize).toBe(before + 2)
        })
    )

    it.effect(
      "one email is one user across the service: a second creation, for any merchant, in any case, is UserAlreadyExists",
      () =>
        test(function* () {
          const user = yield* createAna()
          const before = yield* logSize
          expect(yield* failure(createAna())).toEqual(
            new PanelAccess.UserAlreadyExists({ userId: user.userId })
          )
          expect(yield* failure(createAna({ merchantId: MER_2, email: " ANA@cafe.EXAMPLE " }))).toEqual(
            new PanelAccess.UserAlreadyExists({ userId: user.userId })
          )
          expect(yield* logSize).toBe(before)
        })
    )

    it.effect(
      "a creation racing another of the same email is refused by the append (no stream expected): UserAlreadyExists",
      () => {
        let raced = false
        const store = watchedStore((_, streamIds) => {
          if (raced || !streamIds.some((id) => id.startsWith("PanelUser-"))) return undefined
          raced = true
          const userId = PanelUser.userIdOf("ana@cafe.example")
          // Another node creates the same email for another merchant between our read and our append.
          return CommandHandler.make(PanelUser.PanelUser)(
            userId,
            new PanelUser.CreatePanelUser({
              userId,
              merchantId: MER_2,
              email: PanelUser.Email.make("ana@cafe.example"),
              role: "read_only",
              passwordHash: Redacted.make("test$x$y"),
              now: at(0)
            })
          )
        })
        return freshly(
          Layer.mergeAll(testHasher, PanelSessions.layerMemory).pipe(Layer.provideMerge(store)),
          atT0(givenMerchant(MER_1))
        )(function* () {
          expect(yield* failure(createAna())).toBeInstanceOf(PanelAccess.UserAlreadyExists)
          expect(raced).toBe(true)
          const events = yield* streamOf("ana@cafe.example")
          expect(events.map((e) => [e.type, (e.data as { merchantId: string }).merchantId])).toEqual([
            ["PanelUserCreated", "MER_2"]
          ])
        })
      }
    )
  })

  describe("signIn", () => {
    it.effect(
      "the right password signs the user in and records SignedIn from its address, with actor panel:<email>",
      () =>
        test(function* () {
          const user = yield* createAna()
          const signedIn = yield* PanelAccess.signIn({
            email: " ANA@cafe.example",
            password: PASSWORD,
            address: "10.0.0.7",
            now: at(5_000)
          })
          expect(signedIn).toEqual({
            userId: user.userId,
            merchantId: MER_1,
            email: "ana@cafe.example",
            role: "full_access"
          })
          const events = yield* streamOf("ana@cafe.example")
          expect(events.map((e) => [e.type, e.data, e.metadata])).toEqual([
            ["PanelUserCreated", expect.anything(), { actor: "admin" }],
            [
              "SignedIn",
              { _tag: "SignedIn", at: "2026-11-21T15:00:05.000Z", address: "10.0.0.7" },
              { actor: "panel:ana@cafe.example" }
            ]
          ])
        })
    )

    it.effect(
      "an unknown email costs the same hash work and gets the same refusal as a wrong password, and records nothing",
      () =>
        test(function* () {
          yield* createAna()
          const work = yield* HashWork
          const hasher = yield* PasswordHasher

          work.length = 0
          const wrong = yield* failure(signIn("not the password"))
          expect(work.length).toBe(1)
          expect(work[0]!.stored).toMatch(/^test\$1\$/)

          work.length = 0
          const before = yield* logSize
          const unknown = yield* failure(signIn(PASSWORD, 0, "bob@cafe.example"))
          expect(work).toEqual([{ stored: hasher.dummy }])
          expect(yield* logSize).toBe(before)

          expect(unknown).toEqual(wrong)
          expect(wrong).toEqual(refusal())
          expect((yield* streamOf("ana@cafe.example")).map((e) => [e.type, e.metadata])).toEqual([
            ["PanelUserCreated", { actor: "admin" }],
            ["SignInFailed", { actor: "panel:ana@cafe.example" }]
          ])
        })
    )

    it.effect("a disabled user is refused as a wrong password is, after the same hash work", () =>
      test(function* () {
        const user = yield* createAna()
        yield* PanelAccess.disableUser(user.userId, { actor: "admin" })
        const work = yield* HashWork
        work.length = 0
        const before = yield* logSize
        expect(yield* failure(signIn(PASSWORD))).toEqual(refusal())
        expect(work.length).toBe(1)
        expect(yield* logSize).toBe(before)
      })
    )

    it.effect("a malformed email or an overlong password is refused alike, without a lookup", () =>
      test(function* () {
        yield* createAna()
        expect(yield* failure(signIn(PASSWORD, 0, "ana"))).toEqual(refusal())
        expect(yield* failure(signIn("a".repeat(257)))).toEqual(refusal())
        expect(yield* failure(signIn("a".repeat(100_000)))).toEqual(refusal())
      })
    )

    it.effect(
      "after 5 failures in a row the account waits 1 s, then 2 s: an attempt meanwhile is refused with the wait, unchecked and unrecorded; a success forgives",
      () =>
        test(function* () {
          yield* createAna()
          for (let i = 0; i < 5; i++) expect(yield* failure(signIn("wrong password!", 0))).toEqual(refusal())
          const work = yield* HashWork
          work.length = 0
          const before = yield* logSize
          // Even the right password waits: the attempt is not checked.
          expect(yield* failure(signIn(PASSWORD, 400))).toEqual(refusal(Option.some(1)))
          expect(yield* failure(signIn("wrong password!", 999))).toEqual(refusal(Option.some(1)))
          expect(work).toEqual([])
          expect(yield* logSize).toBe(before)
          // The wait is over: a sixth failure, and the next attempt waits 2 s.
          expect(yield* failure(signIn("wrong password!", 1_000))).toEqual(refusal())
          expect(yield* failure(signIn(PASSWORD, 2_500))).toEqual(refusal(Option.some(1)))
          expect(yield* failure(signIn(PASSWORD, 1_500))).toEqual(refusal(Option.some(2)))
          expect((yield* signIn(PASSWORD, 3_000)).email).toBe("ana@cafe.example")
          // Forgiven: four more failures cost no wait.
          for (let i = 0; i < 4; i++) yield* failure(signIn("wrong password!", 3_000))
          expect((yield* signIn(PASSWORD, 3_000)).email).toBe("ana@cafe.example")
        })
    )
  })

  describe("changes", () => {
    it.effect(
      "a role change, a new password and disabling end the user's sessions; the same role again keeps them",
      () =>
        test(function* () {
          const user = yield* createAna()
          const other = yield* createAna({ email: "bob@cafe.example" })
          const sessions = yield* PanelSessions.PanelSessions
          yield* sessions.create(sessionOf(user.userId, "a"))
          yield* sessions.create(sessionOf(other.userId, "b"))

          yield* PanelAccess.changeRole(user.userId, "full_access")
          expect(Option.isSome(yield* found("a"))).toBe(true)
          yield* PanelAccess.changeRole(user.userId, "read_only", { actor: "admin" })
          expect(yield* found("a")).toEqual(Option.none())
          expect(Option.isSome(yield* found("b"))).toBe(true)
          expect((yield* signIn(PASSWORD)).role).toBe("read_only")

          yield* sessions.create(sessionOf(user.userId, "c"))
          yield* PanelAccess.changePassword(user.userId, "a new long password")
          expect(yield* found("c")).toEqual(Option.none())
          expect(yield* failure(signIn(PASSWORD, 1))).toEqual(refusal())
          expect((yield* signIn("a new long password", 2)).userId).toBe(user.userId)
          expect(yield* failure(PanelAccess.changePassword(user.userId, "short"))).toBeInstanceOf(
            PanelAccess.WeakPassword
          )

          yield* sessions.create(sessionOf(user.userId, "d"))
          yield* PanelAccess.disableUser(user.userId)
          yield* PanelAccess.disableUser(user.userId)
          expect(yield* found("d")).toEqual(Option.none())
          expect(yield* failure(PanelAccess.changeRole(user.userId, "full_access"))).toBeInstanceOf(
            PanelUser.UserNotInState
          )
          expect(yield* failure(PanelAccess.changeRole("USR_0", "full_access"))).toBeInstanceOf(
            PanelAccess.UserNotFound
          )
          expect((yield* streamOf("ana@cafe.example")).map((e) => e.type)).toEqual([
            "PanelUserCreated",
            "RoleChanged",
            "SignedIn",
            "PasswordChanged",
            "SignInFailed",
            "SignedIn",
            "PanelUserDisabled"
          ])
        })
    )
  })

  describe("enabling and the user's own password", () => {
    it.effect(
      "an operator enables a disabled user: it signs in again with its role and password; its old sessions stay ended",
      () =>
        test(function* () {
          const user = yield* createAna({ role: "read_only" })
          const sessions = yield* PanelSessions.PanelSessions
          yield* PanelAccess.disableUser(user.userId, { actor: "admin" })
          // A session a racing sign-in opened after the disable's revocation.
          yield* sessions.create(sessionOf(user.userId, "late"))
          expect(yield* failure(signIn(PASSWORD))).toEqual(refusal())
          yield* PanelAccess.enableUser(user.userId, { actor: "admin" })
          yield* PanelAccess.enableUser(user.userId, { actor: "admin" })
          expect(yield* found("late")).toEqual(Option.none())
          expect((yield* signIn(PASSWORD, 1)).role).toBe("read_only")
          const events = yield* streamOf("ana@cafe.example")
          expect(events.map((e) => [e.type, e.metadata.actor])).toEqual([
            ["PanelUserCreated", "admin"],
            ["PanelUserDisabled", "admin"],
            ["PanelUserEnabled", "admin"],
            ["SignedIn", "panel:ana@cafe.example"]
          ])
          expect(yield* failure(PanelAccess.enableUser("USR_0"))).toBeInstanceOf(PanelAccess.UserNotFound)
        })
    )

    it.effect(
      "a user changes its own password with the current one: recorded with the user as actor, its other sessions end, this one stays",
      () =>
        test(function* () {
          const user = yield* createAna()
          const sessions = yield* PanelSessions.PanelSessions
          yield* sessions.create(sessionOf(user.userId, "this"))
          yield* sessions.create(sessionOf(user.userId, "other"))
          const change = (currentPassword: string, newPassword: string, millis = 0) =>
            PanelAccess.changeOwnPassword({
              userId: user.userId,
              keepTokenHash: "this",
              currentPassword,
              newPassword,
              address: "10.0.0.1",
              now: at(millis)
            })
          expect(yield* failure(change(PASSWORD, "short"))).toBeInstanceOf(PanelAccess.WeakPassword)
          expect(yield* failure(change("not the password", "a new long password"))).toEqual(refusal())
          expect(Option.isSome(yield* found("other"))).toBe(true)
          yield* change(PASSWORD, "a new long password")
          expect(Option.isSome(yield* found("this"))).toBe(true)
          expect(yield* found("other")).toEqual(Option.none())
          expect(yield* failure(signIn(PASSWORD, 1))).toEqual(refusal())
          expect((yield* signIn("a new long password", 2)).userId).toBe(user.userId)
          const events = yield* streamOf("ana@cafe.example")
          expect(events.map((e) => [e.type, e.metadata.actor])).toEqual([
            ["PanelUserCreated", "admin"],
            ["SignInFailed", "panel:ana@cafe.example"],
            ["PasswordChanged", "panel:ana@cafe.example"],
            ["SignInFailed", "panel:ana@cafe.example"],
            ["SignedIn", "panel:ana@cafe.example"]
          ])
        })
    )

    it.effect(
      "a wrong current password counts as a failed sign-in: after the free failures the change waits as a sign-in would",
      () =>
        test(function* () {
          const user = yield* createAna()
          const change = (currentPassword: string, millis: number) =>
            PanelAccess.changeOwnPassword({
              userId: user.userId,
              keepTokenHash: "this",
              currentPassword,
              newPassword: "a new long password",
              address: "10.0.0.1",
              now: at(millis)
            })
          for (let i = 0; i < 5; i++) expect(yield* failure(change("wrong password!", 0))).toEqual(refusal())
          expect(yield* failure(change(PASSWORD, 500))).toEqual(refusal(Option.some(1)))
          expect(yield* failure(signIn(PASSWORD, 500))).toEqual(refusal(Option.some(1)))
          yield* change(PASSWORD, 1_000)
        })
    )
  })

  describe("the in-memory sessions", () => {
    const session = (tokenHash: string, userId: string, expiresAt: number): PanelSessions.NewSession => ({
      tokenHash,
      userId,
      merchantId: MerchantId.make("MER_1"),
      email: "ana@cafe.example",
      csrfToken: "csrf",
      createdAt: new Date(T0),
      expiresAt: new Date(expiresAt)
    })

    it.effect("a session is found until it expires, and ends when revoked alone or with its user's", () =>
      test(function* () {
        const u1 = (yield* createAna({ role: "read_only" })).userId
        const u2 = (yield* createAna({ email: "bob@cafe.example" })).userId
        const sessions = yield* PanelSessions.PanelSessions
        yield* sessions.create(session("a", u1, T0 + 1000))
        yield* sessions.create(session("b", u1, T0 + 1000))
        yield* sessions.create(session("c", u2, T0 + 1000))
        yield* sessions.create(session("d", u1, T0 + 1000))
        expect(yield* sessions.find("a", new Date(T0 + 999))).toEqual(
          Option.some({ ...session("a", u1, T0 + 1000), role: "read_only" })
        )
        expect(yield* sessions.find("a", new Date(T0 + 1000))).toEqual(Option.none())
        expect(yield* sessions.find("nope", new Date(T0))).toEqual(Option.none())
        yield* sessions.revoke("a")
        expect(yield* sessions.find("a", new Date(T0))).toEqual(Option.none())
        expect(Option.isSome(yield* sessions.find("b", new Date(T0)))).toBe(true)
        yield* sessions.revokeUser(u1, "d")
        expect(yield* sessions.find("b", new Date(T0))).toEqual(Option.none())
        expect(Option.isSome(yield* sessions.find("d", new Date(T0)))).toBe(true)
        expect(Option.isSome(yield* sessions.find("c", new Date(T0)))).toBe(true)
      })
    )

    it.effect(
      "a session has its user's current role and works only while the user is ACTIVE, whatever was revoked",
      () =>
        test(function* () {
          const user = (yield* createAna()).userId
          const sessions = yield* PanelSessions.PanelSessions
          const roleOf = (tokenHash: string) =>
            Effect.map(
              sessions.find(tokenHash, new Date(T0)),
              Option.map((s) => s.role)
            )
          yield* sessions.create(session("a", user, T0 + 1000))
          expect(yield* roleOf("a")).toEqual(Option.some("full_access"))
          // The use cases revoke the sessions; these events are appended without them.
          const handle = CommandHandler.make(PanelUser.PanelUser)
          yield* handle(user, new PanelUser.ChangeRole({ role: "read_only", now: at(1) }))
          expect(yield* roleOf("a")).toEqual(Option.some("read_only"))
          yield* handle(user, new PanelUser.DisablePanelUser({ now: at(2) }))
          expect(yield* roleOf("a")).toEqual(Option.none())
          yield* handle(user, new PanelUser.EnablePanelUser({ now: at(3) }))
          expect(yield* roleOf("a")).toEqual(Option.some("read_only"))
        })
    )
  })
})
