import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { inspect } from "node:util"
import { fold } from "@cobro/domain/Decider"
import { MerchantId } from "@cobro/domain/Ids"
import * as PanelUser from "@cobro/domain/PanelUser"
import { DeciderSpec } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (millis: number) => DateTime.unsafeMake(T0 + millis)
const SECOND = 1_000
const MINUTE = 60 * SECOND

const email = PanelUser.Email.make("ana@cafe.example")
const userId = PanelUser.userIdOf(email)
const merchantId = MerchantId.make("MER_1")
const hash = (text: string) => Redacted.make(`test$${text}`)

const create = (overrides: Partial<ConstructorParameters<typeof PanelUser.CreatePanelUser>[0]> = {}) =>
  new PanelUser.CreatePanelUser({
    userId,
    merchantId,
    email,
    role: "full_access",
    passwordHash: hash("one"),
    now: at(0),
    ...overrides
  })

const created = new PanelUser.PanelUserCreated({
  userId,
  merchantId,
  email,
  role: "full_access",
  passwordHash: hash("one"),
  createdAt: at(0)
})

const failedAt = (...millis: ReadonlyArray<number>) =>
  millis.map((m) => new PanelUser.SignInFailed({ at: at(m), address: "10.0.0.1" }))

const spec = DeciderSpec.for(PanelUser.PanelUser)

/** The password hash an event or a state holds, in clear. */
const hashOf = (value: object): string | undefined =>
  "passwordHash" in value && Redacted.isRedacted(value.passwordHash)
    ? String(Redacted.value(value.passwordHash))
    : undefined

describe("PanelUser", () => {
  describe("ids and emails", () => {
    it("one email is one user: the id is derived from the email, whatever its case and blanks", () => {
      expect(userId).toMatch(/^USR_[0-9a-f]{32}$/)
      expect(PanelUser.userIdOf("  Ana@CAFE.example ")).toBe(userId)
      expect(PanelUser.userIdOf("ana@cafe.example.co")).not.toBe(userId)
      expect(PanelUser.userIdOf("bob@cafe.example")).not.toBe(userId)
    })

    it("an email is kept trimmed and lower-cased, name@domain.tld, at most 254 characters", () => {
      const valid = (s: string) => Either.isRight(Schema.decodeUnknownEither(PanelUser.Email)(s))
      expect(valid("ana@cafe.example")).toBe(true)
      expect(valid("ana.maria+panel@mail.cafe.example")).toBe(true)
      for (const bad of [
        "Ana@cafe.example",
        " ana@cafe.example",
        "ana",
        "ana@cafe",
        "ana@@cafe.example",
        "ana maria@cafe.example",
        "@cafe.example",
        "ana@.example",
        "ana@cafe..example",
        `${"a".repeat(65)}@cafe.example`,
        `ana@${"c".repeat(250)}.example`
      ]) {
        expect(valid(bad), bad).toBe(false)
      }
    })
  })

  describe("CreatePanelUser", () => {
    it("a panel user is created ACTIVE, of its merchant, with its role and password hash", () => {
      spec.given([]).when(create()).then([created])
      const decided = Either.getOrThrow(
        PanelUser.decide(create({ passwordHash: hash("other") }), PanelUser.initialState)
      )
      expect(decided.map(hashOf)).toEqual(["test$other"])
      expect(hashOf(fold(PanelUser.PanelUser, decided))).toBe("test$other")
      expect(fold(PanelUser.PanelUser, [created])).toMatchObject({
        _tag: "ACTIVE",
        userId,
        merchantId,
        email,
        role: "full_access",
        failures: 0,
        lastFailureAt: Option.none(),
        lastSignInAt: Option.none()
      })
    })

    it("a user is created once: a second creation of the email is UserAlreadyExists, even disabled", () => {
      spec
        .given([created])
        .when(create({ merchantId: MerchantId.make("MER_2"), now: at(1) }))
        .thenFails(PanelUser.UserAlreadyExists, { userId })
      spec
        .given([created, new PanelUser.PanelUserDisabled({ at: at(1) })])
        .when(create({ now: at(2) }))
        .thenFails(PanelUser.UserAlreadyExists, { userId })
    })

    it("the password hash is redacted in memory and stored as it is in the log", () => {
      const encoded = Schema.encodeSync(PanelUser.Event)(created)
      expect(encoded).toMatchObject({ _tag: "PanelUserCreated", passwordHash: "test$one" })
      expect(Schema.decodeUnknownSync(PanelUser.Event)(encoded)).toEqual(created)
      // `toEqual` sees no field in a Redacted value: the hashes are compared by their values.
      expect(hashOf(Schema.decodeUnknownSync(PanelUser.Event)(encoded))).toBe("test$one")
      expect(inspect(created, { depth: 5 })).not.toContain("test$one")
      expect(JSON.stringify(fold(PanelUser.PanelUser, [created]))).not.toContain("test$one")
    })

    it("commands on no user are UserNotFound", () => {
      spec
        .given([])
        .when(new PanelUser.RecordSignIn({ address: "10.0.0.1", now: at(0) }))
        .thenFails(PanelUser.UserNotFound)
      spec
        .given([])
        .when(new PanelUser.DisablePanelUser({ now: at(0) }))
        .thenFails(PanelUser.UserNotFound)
    })
  })

  describe("sign-in", () => {
    it("a right password records SignedIn from its address and forgives the failures in a row", () => {
      spec
        .given([created, ...failedAt(1, 2, 3)])
        .when(new PanelUser.RecordSignIn({ address: "10.0.0.2", now: at(4) }))
        .then([new PanelUser.SignedIn({ at: at(4), address: "10.0.0.2" })])
      expect(
        fold(PanelUser.PanelUser, [
          created,
          ...failedAt(1, 2, 3),
          new PanelUser.SignedIn({ at: at(4), address: "x" })
        ])
      ).toMatchObject({ failures: 0, lastFailureAt: Option.none(), lastSignInAt: Option.some(at(4)) })
    })

    it("a wrong password records SignInFailed from its address: one more failure in a row", () => {
      spec
        .given([created, ...failedAt(1)])
        .when(new PanelUser.RecordFailedSignIn({ address: "10.0.0.2", now: at(2) }))
        .then([new PanelUser.SignInFailed({ at: at(2), address: "10.0.0.2" })])
      expect(fold(PanelUser.PanelUser, [created, ...failedAt(1, 2)])).toMatchObject({
        failures: 2,
        lastFailureAt: Option.some(at(2))
      })
    })

    it("after 4 failures in a row the next attempt need not wait; after 5 it waits 1 s, refused unchecked and unrecorded", () => {
      spec
        .given([created, ...failedAt(0, 0, 0, 0)])
        .when(new PanelUser.RecordFailedSignIn({ address: "a", now: at(0) }))
        .then([new PanelUser.SignInFailed({ at: at(0), address: "a" })])
      const five = [created, ...failedAt(0, 0, 0, 0, 10)]
      spec
        .given(five)
        .when(new PanelUser.RecordSignIn({ address: "a", now: at(10 + 999) }))
        .thenFails(PanelUser.SignInThrottled, { userId, retryAfterMillis: 1 })
      spec
        .given(five)
        .when(new PanelUser.RecordFailedSignIn({ address: "a", now: at(10) }))
        .thenFails(PanelUser.SignInThrottled, { retryAfterMillis: 1000 })
      spec
        .given(five)
        .when(new PanelUser.RecordSignIn({ address: "a", now: at(10 + SECOND) }))
        .then([new PanelUser.SignedIn({ at: at(10 + SECOND), address: "a" })])
      // The sixth failure makes the next attempt wait 2 s.
      spec
        .given([...five, ...failedAt(10 + SECOND)])
        .when(new PanelUser.RecordSignIn({ address: "a", now: at(10 + 2 * SECOND) }))
        .thenFails(PanelUser.SignInThrottled, { retryAfterMillis: 1000 })
    })

    it("a disabled user cannot sign in: UserNotInState", () => {
      spec
        .given([created, new PanelUser.PanelUserDisabled({ at: at(1) })])
        .when(new PanelUser.RecordSignIn({ address: "a", now: at(2) }))
        .thenFails(PanelUser.UserNotInState, { userId, status: "DISABLED", command: "RecordSignIn" })
      spec
        .given([created, new PanelUser.PanelUserDisabled({ at: at(1) })])
        .when(new PanelUser.RecordFailedSignIn({ address: "a", now: at(2) }))
        .thenFails(PanelUser.UserNotInState, { status: "DISABLED" })
    })
  })

  describe("role, password, disabling", () => {
    it("a role change records RoleChanged; the same role again changes nothing", () => {
      spec
        .given([created])
        .when(new PanelUser.ChangeRole({ role: "read_only", now: at(1) }))
        .then([new PanelUser.RoleChanged({ role: "read_only", at: at(1) })])
      spec
        .given([created])
        .when(new PanelUser.ChangeRole({ role: "full_access", now: at(1) }))
        .thenNothing()
    })

    it("a new password replaces the hash and forgives the failures in a row", () => {
      spec
        .given([created, ...failedAt(0, 0, 0, 0, 0)])
        .when(new PanelUser.ChangePassword({ passwordHash: hash("two"), now: at(1) }))
        .then([new PanelUser.PasswordChanged({ passwordHash: hash("two"), at: at(1) })])
      const decided = PanelUser.decide(
        new PanelUser.ChangePassword({ passwordHash: hash("two"), now: at(1) }),
        fold(PanelUser.PanelUser, [created])
      )
      expect(Either.getOrThrow(decided).map(hashOf)).toEqual(["test$two"])
      const state = fold(PanelUser.PanelUser, [
        created,
        ...failedAt(0, 0, 0, 0, 0),
        new PanelUser.PasswordChanged({ passwordHash: hash("two"), at: at(1) })
      ])
      expect(state).toMatchObject({ failures: 0, lastFailureAt: Option.none() })
      expect(hashOf(state)).toBe("test$two")
    })

    it("a disabled user takes nothing but a repeated disable (no-op) and the enabling", () => {
      spec
        .given([created])
        .when(new PanelUser.DisablePanelUser({ now: at(1) }))
        .then([new PanelUser.PanelUserDisabled({ at: at(1) })])
      const disabled = [created, new PanelUser.PanelUserDisabled({ at: at(1) })]
      spec
        .given(disabled)
        .when(new PanelUser.DisablePanelUser({ now: at(2) }))
        .thenNothing()
      spec
        .given(disabled)
        .when(new PanelUser.ChangeRole({ role: "read_only", now: at(2) }))
        .thenFails(PanelUser.UserNotInState, { command: "ChangeRole" })
      spec
        .given(disabled)
        .when(new PanelUser.ChangePassword({ passwordHash: hash("two"), now: at(2) }))
        .thenFails(PanelUser.UserNotInState, { command: "ChangePassword" })
    })

    it("enabling a disabled user records PanelUserEnabled and leads back to ACTIVE with its role and password; an active one changes nothing", () => {
      const disabled = [
        created,
        new PanelUser.RoleChanged({ role: "read_only", at: at(1) }),
        new PanelUser.PanelUserDisabled({ at: at(2) })
      ]
      spec
        .given(disabled)
        .when(new PanelUser.EnablePanelUser({ now: at(3) }))
        .then([new PanelUser.PanelUserEnabled({ at: at(3) })])
      const state = fold(PanelUser.PanelUser, [...disabled, new PanelUser.PanelUserEnabled({ at: at(3) })])
      expect(state).toMatchObject({ _tag: "ACTIVE", role: "read_only" })
      expect(hashOf(state)).toBe("test$one")
      spec
        .given([created])
        .when(new PanelUser.EnablePanelUser({ now: at(1) }))
        .thenNothing()
      spec
        .given([...disabled, new PanelUser.PanelUserEnabled({ at: at(3) })])
        .when(new PanelUser.RecordSignIn({ address: "a", now: at(4) }))
        .then([new PanelUser.SignedIn({ at: at(4), address: "a" })])
    })
  })

  describe("throttling", () => {
    const failures = FastCheck.integer({ min: 0, max: 200 })

    it.prop(
      "no wait after the first 4 failures in a row; then 1 s, doubling with each failure, never more than 15 minutes",
      [failures],
      ([n]) => {
        const delay = PanelUser.delayAfterMillis(n)
        if (n <= 4) expect(delay).toBe(0)
        else expect(delay).toBe(Math.min(15 * MINUTE, SECOND * 2 ** (n - 5)))
        expect(delay).toBeLessThanOrEqual(15 * MINUTE)
        expect(PanelUser.delayAfterMillis(n + 1)).toBeGreaterThanOrEqual(delay)
        if (n >= 5) expect(PanelUser.delayAfterMillis(n + 1)).toBe(Math.min(15 * MINUTE, 2 * delay))
      }
    )

    it.prop(
      "the wait shrinks as time passes and is over at the last failure plus the delay",
      [failures, FastCheck.integer({ min: 0, max: 30 * MINUTE })],
      ([n, elapsed]) => {
        const throttle = { failures: n, lastFailureAt: Option.some(at(0)) }
        const wait = PanelUser.retryAfterMillis(throttle, at(elapsed))
        expect(wait).toBe(Math.max(0, PanelUser.delayAfterMillis(n) - elapsed))
        expect(PanelUser.retryAfterMillis(throttle, at(elapsed + 1))).toBeLessThanOrEqual(wait)
        expect(PanelUser.retryAfterMillis({ failures: n, lastFailureAt: Option.none() }, at(elapsed))).toBe(0)
      }
    )

    it.prop(
      "in any run of sign-ins an attempt is refused exactly while the account waits, records nothing then, and a success forgives every failure",
      [
        FastCheck.array(
          FastCheck.record({
            right: FastCheck.boolean(),
            gap: FastCheck.integer({ min: 0, max: 40 * SECOND })
          }),
          { maxLength: 40 }
        )
      ],
      ([attempts]) => {
        let state: PanelUser.State = fold(PanelUser.PanelUser, [created])
        let now = 0
        // The model: failures in a row and when the last one was.
        let failuresInARow = 0
        let lastFailure: number | undefined
        for (const { gap, right } of attempts) {
          now += gap
          const command = right
            ? new PanelUser.RecordSignIn({ address: "a", now: at(now) })
            : new PanelUser.RecordFailedSignIn({ address: "a", now: at(now) })
          const expectedWait =
            lastFailure === undefined
              ? 0
              : Math.max(0, lastFailure + PanelUser.delayAfterMillis(failuresInARow) - now)
          const decided = PanelUser.decide(command, state)
          if (expectedWait > 0) {
            expect(decided).toEqual(
              Either.left(new PanelUser.SignInThrottled({ userId, retryAfterMillis: expectedWait }))
            )
            continue
          }
          expect(Either.isRight(decided)).toBe(true)
          state = fold(PanelUser.PanelUser, Either.getOrThrow(decided), state)
          if (right) {
            failuresInARow = 0
            lastFailure = undefined
          } else {
            failuresInARow++
            lastFailure = now
          }
          expect(state).toMatchObject({ failures: failuresInARow })
        }
      }
    )
  })

  describe("properties", () => {
    const millis = FastCheck.integer({ min: 0, max: 20 * SECOND })
    const address = FastCheck.constantFrom("10.0.0.1", "10.0.0.2", "unknown")
    const command: FastCheck.Arbitrary<PanelUser.Command> = FastCheck.oneof(
      millis.map((m) => create({ now: at(m) })),
      FastCheck.record({ address, m: millis }).map(
        ({ address, m }) => new PanelUser.RecordSignIn({ address, now: at(m) })
      ),
      FastCheck.record({ address, m: millis }).map(
        ({ address, m }) => new PanelUser.RecordFailedSignIn({ address, now: at(m) })
      ),
      FastCheck.record({
        role: FastCheck.constantFrom<PanelUser.Role>("full_access", "read_only"),
        m: millis
      }).map(({ m, role }) => new PanelUser.ChangeRole({ role, now: at(m) })),
      FastCheck.record({ h: FastCheck.constantFrom("one", "two"), m: millis }).map(
        ({ h, m }) => new PanelUser.ChangePassword({ passwordHash: hash(h), now: at(m) })
      ),
      { arbitrary: millis.map((m) => new PanelUser.DisablePanelUser({ now: at(m) })), weight: 1 },
      { arbitrary: millis.map((m) => new PanelUser.EnablePanelUser({ now: at(m) })), weight: 1 }
    )
    const run = runsFrom(FastCheck.constant([create()]), command, 15)

    transitionProperties({
      aggregate: PanelUser.PanelUser,
      run,
      id: userId,
      absorbing: { title: "no state is absorbing: an operator enables a DISABLED user again", states: [] }
    })
  })
})
