/**
 * The merchant panel's users and sign-in (issue 22, "Users and sign-in"): the admin endpoint that
 * creates users, and `PanelAuth` (sign-in, the session cookie, sign-out, CSRF, roles, throttling) as
 * the panel's routes call it, on requests made here with the address and headers a test chooses.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cookies from "@effect/platform/Cookies"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as EventStore from "@cobro/domain/EventStore"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as PanelAuth from "@cobro/panel/PanelAuth"
import * as PasswordHashing from "@cobro/panel/PasswordHashing"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const PASSWORD = "correct horse battery"
const HOUR = 3_600_000

const usersPath = (merchantId: string) => `/admin/v1/merchants/${merchantId}/users`

/** Creates a panel user of a new merchant through the admin API. */
const givenUser = (email = "ana@cafe.example", role: PanelUser.Role = "full_access") =>
  Effect.gen(function* () {
    const merchant = yield* TestApp.createMerchant()
    const reply = yield* TestApp.admin("POST", usersPath(merchant.merchantId), {
      email,
      password: PASSWORD,
      role
    })
    expect(reply.status, reply.text).toBe(201)
    return { merchantId: merchant.merchantId, userId: reply.json.user_id as string, email }
  })

/** A panel request from `address`, with the session cookie `cookie` and `headers` when given. */
const request = (
  options: {
    readonly cookie?: string
    readonly address?: string
    readonly headers?: Record<string, string>
  } = {}
) =>
  HttpServerRequest.fromWeb(
    new Request("http://cobro.test/panel/login", {
      method: "POST",
      headers: {
        ...(options.cookie === undefined ? {} : { cookie: `${PanelAuth.COOKIE}=${options.cookie}` }),
        ...options.headers
      }
    })
  ).modify({ remoteAddress: options.address ?? "10.0.0.1" })

/** The cookie a sign-in (or sign-out) sets, as the `Set-Cookie` header reads. */
const setCookieOf = (
  transform: (r: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
) => Cookies.toSetCookieHeaders(transform(HttpServerResponse.empty()).cookies)

/** The token a sign-in's cookie carries. */
const tokenOf = (signedIn: PanelAuth.SignedIn): string => {
  const [header] = setCookieOf(signedIn.setCookie)
  return /^cobro_panel=([^;]+)/.exec(header ?? "")![1]!
}

const signIn = (email: string, password: string, from: Parameters<typeof request>[0] = {}) =>
  PanelAuth.signIn(request(from), { email, password })

const refusedWith = (effect: Effect.Effect<unknown, PanelAuth.SignInRefused, any>) =>
  Effect.map(Effect.flip(effect), (refused) => Option.getOrNull(refused.retryAfterSeconds))

const advance = (millis: number) => Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(millis))

const userStream = (email: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => store.readStream(`PanelUser-${PanelUser.userIdOf(email)}`))

describe("panel users and sign-in", () => {
  describe("POST /admin/v1/merchants/{merchant_id}/users", () => {
    it.live(
      "creates a panel user: 201 with user_id, merchant_id, email, role and created, never the password or its hash",
      TestApp.withMerchant(function* (merchant) {
        const reply = yield* TestApp.admin("POST", usersPath(merchant.merchantId), {
          email: " Ana@Cafe.example",
          password: PASSWORD,
          role: "read_only"
        })
        expect(reply.status, reply.text).toBe(201)
        expect(reply.json).toStrictEqual({
          user_id: PanelUser.userIdOf("ana@cafe.example"),
          merchant_id: merchant.merchantId,
          email: "ana@cafe.example",
          role: "read_only",
          created: "2026-11-21T15:00:00.000Z"
        })
        expect(reply.text).not.toContain(PASSWORD)
        expect(reply.text).not.toContain("scrypt")
        const [created] = yield* userStream("ana@cafe.example")
        expect(created).toMatchObject({ type: "PanelUserCreated", metadata: { actor: "admin" } })
        // The log holds the scrypt hash sealed under the server's key, never in clear.
        const stored = (created!.data as { passwordHash: string }).passwordHash
        expect(stored).toMatch(/^sealed\$[A-Za-z0-9+/]{16}\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/]{22}==$/)
        const inner = PasswordHashing.unseal(PasswordHashing.sealingKeyFor(TestApp.TEST_SEALING_KEY), stored)
        expect(inner).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
      })
    )

    it.live(
      "400 ValidationError naming email, password or role, without quoting the password; nothing is stored",
      TestApp.withMerchant(function* (merchant) {
        const before = yield* TestApp.logSize
        const cases: ReadonlyArray<readonly [unknown, string]> = [
          [{ email: "ana", password: PASSWORD, role: "full_access" }, "email"],
          [{ password: PASSWORD, role: "full_access" }, "email"],
          [{ email: "ana@cafe.example", password: "eleven char", role: "full_access" }, "password"],
          [{ email: "ana@cafe.example", password: "x".repeat(257), role: "full_access" }, "password"],
          [{ email: "ana@cafe.example", password: 123456789012345, role: "full_access" }, "password"],
          [{ email: "ana@cafe.example", role: "full_access" }, "password"],
          [{ email: "ana@cafe.example", password: PASSWORD, role: "admin" }, "role"],
          [{ email: "ana@cafe.example", password: PASSWORD }, "role"]
        ]
        for (const [body, field] of cases) {
          const reply = yield* TestApp.admin("POST", usersPath(merchant.merchantId), body)
          TestApp.expectError(reply, 400, "ValidationError")
          expect(
            reply.json.errors.map((e: { field: string }) => e.field),
            reply.text
          ).toContain(field)
          expect(reply.text).not.toContain(PASSWORD)
          expect(reply.text).not.toContain("eleven char")
          expect(reply.text).not.toContain("123456789012345")
        }
        expect(yield* TestApp.logSize).toBe(before)
      })
    )

    it.live(
      "404 MerchantNotFound for an unknown merchant and 401 without the admin token; nothing is stored",
      TestApp.fresh(function* () {
        const body = { email: "ana@cafe.example", password: PASSWORD, role: "full_access" }
        const before = yield* TestApp.logSize
        TestApp.expectError(yield* TestApp.admin("POST", usersPath("MER_404"), body), 404, "MerchantNotFound")
        TestApp.expectError(yield* TestApp.admin("POST", usersPath("nobody"), body), 404, "MerchantNotFound")
        const merchant = yield* TestApp.createMerchant()
        const unauthenticated = yield* TestApp.send("POST", usersPath(merchant.merchantId), { body })
        expect(unauthenticated.status).toBe(401)
        expect(yield* TestApp.logSize).toBe(before + 3)
      })
    )

    it.live(
      "409 UserAlreadyExists when the email is a user already, of any merchant, in any case",
      TestApp.fresh(function* () {
        const ana = yield* givenUser()
        const other = yield* TestApp.createMerchant("Otro Café")
        const before = yield* TestApp.logSize
        for (const [merchantId, email] of [
          [ana.merchantId, "ana@cafe.example"],
          [other.merchantId, "ANA@cafe.example "]
        ] as const) {
          const reply = yield* TestApp.admin("POST", usersPath(merchantId), {
            email,
            password: "another long password",
            role: "read_only"
          })
          expect(reply.json, reply.text).toEqual({
            payload: {},
            errors: [
              {
                code: "UserAlreadyExists",
                message: "a panel user with this email exists already",
                field: "email"
              }
            ]
          })
          expect(reply.status).toBe(409)
        }
        expect(yield* TestApp.logSize).toBe(before)
      })
    )
  })

  describe("PanelAuth", () => {
    it.live(
      "signIn opens a 12-hour session and sets its cookie HttpOnly, SameSite=Lax, Path=/panel; the store keeps the token's SHA-256",
      TestApp.fresh(function* () {
        const ana = yield* givenUser()
        const signedIn = yield* signIn(" ANA@cafe.example", PASSWORD, { address: "10.0.0.7" })
        const token = tokenOf(signedIn)
        expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(setCookieOf(signedIn.setCookie)).toEqual([
          `cobro_panel=${token}; Max-Age=43200; Path=/panel; HttpOnly; SameSite=Lax`
        ])
        const { session } = signedIn
        expect(session).toEqual({
          tokenHash: createHash("sha256").update(token).digest("hex"),
          userId: ana.userId,
          merchantId: ana.merchantId,
          email: "ana@cafe.example",
          role: "full_access",
          csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          createdAt: new Date(TestClock.START),
          expiresAt: new Date(TestClock.START + 12 * HOUR)
        })
        expect(session.csrfToken).not.toBe(token)
        expect(yield* PanelAuth.currentSession(request({ cookie: token }))).toEqual(Option.some(session))
        // The store cannot sign anyone in with what it keeps.
        expect(yield* PanelAuth.currentSession(request({ cookie: session.tokenHash }))).toEqual(Option.none())
        const events = yield* userStream("ana@cafe.example")
        expect(events.map((e) => [e.type, e.data, e.metadata])).toEqual([
          ["PanelUserCreated", expect.anything(), { actor: "admin" }],
          [
            "SignedIn",
            { _tag: "SignedIn", at: "2026-11-21T15:00:00.000Z", address: "10.0.0.7" },
            { actor: "panel:ana@cafe.example" }
          ]
        ])
        expect(JSON.stringify(events.map((e) => e.data))).not.toContain(token)
      })
    )

    it.live(
      "the cookie is Secure behind https: X-Forwarded-Proto https, or an https PUBLIC_URL or CHECKOUT_URL",
      TestApp.fresh(function* () {
        yield* givenUser()
        const secure = (
          from: Parameters<typeof request>[0],
          urls: Parameters<typeof PublicUrls.layer>[0] = {}
        ) =>
          Effect.map(
            signIn("ana@cafe.example", PASSWORD, from).pipe(Effect.provide(PublicUrls.layer(urls))),
            (s) => setCookieOf(s.setCookie)[0]!.includes("; Secure")
          )
        expect(yield* secure({})).toBe(false)
        expect(yield* secure({ headers: { "x-forwarded-proto": "http" } })).toBe(false)
        expect(yield* secure({ headers: { "x-forwarded-proto": "https" } })).toBe(true)
        expect(yield* secure({ headers: { "x-forwarded-proto": "HTTPS, http" } })).toBe(true)
        expect(yield* secure({}, { publicUrl: "https://pay.example" })).toBe(true)
        expect(yield* secure({}, { publicUrl: "http://localhost:3000" })).toBe(false)
        expect(yield* secure({}, { checkoutUrl: "https://pay.example/checkout" })).toBe(true)
        const signedIn = yield* signIn("ana@cafe.example", PASSWORD, {
          headers: { "x-forwarded-proto": "https" }
        })
        const signOut = yield* PanelAuth.signOut(
          request({ cookie: tokenOf(signedIn), headers: { "x-forwarded-proto": "https" } })
        )
        expect(setCookieOf(signOut)[0]).toMatch(/; Secure/)
      })
    )

    it.live(
      "currentSession is none without a cookie, with a malformed or unknown token, and after 12 hours",
      TestApp.fresh(function* () {
        yield* givenUser()
        const token = tokenOf(yield* signIn("ana@cafe.example", PASSWORD))
        expect(yield* PanelAuth.currentSession(request())).toEqual(Option.none())
        for (const cookie of [
          "",
          "x",
          `${token}x`,
          token.slice(1),
          "A".repeat(43),
          `${token.slice(0, 42)}!`
        ]) {
          expect(yield* PanelAuth.currentSession(request({ cookie })), cookie).toEqual(Option.none())
        }
        yield* advance(12 * HOUR - 1)
        expect(Option.isSome(yield* PanelAuth.currentSession(request({ cookie: token })))).toBe(true)
        yield* advance(1)
        expect(yield* PanelAuth.currentSession(request({ cookie: token }))).toEqual(Option.none())
      })
    )

    it.live(
      "signOut revokes the session and expires the cookie",
      TestApp.fresh(function* () {
        yield* givenUser()
        const token = tokenOf(yield* signIn("ana@cafe.example", PASSWORD))
        const other = tokenOf(yield* signIn("ana@cafe.example", PASSWORD))
        const expire = yield* PanelAuth.signOut(request({ cookie: token }))
        const [header] = setCookieOf(expire)
        expect(header).toMatch(/^cobro_panel=; Max-Age=0; Path=\/panel; HttpOnly; SameSite=Lax$/)
        expect(yield* PanelAuth.currentSession(request({ cookie: token }))).toEqual(Option.none())
        // Another session of the same user (another browser) stays.
        expect(Option.isSome(yield* PanelAuth.currentSession(request({ cookie: other })))).toBe(true)
        // Signing out without a session only expires the cookie.
        expect(setCookieOf(yield* PanelAuth.signOut(request()))).toHaveLength(1)
      })
    )

    it.live(
      "session fixation: a token presented before sign-in is never the session after it, and is revoked",
      TestApp.fresh(function* () {
        yield* givenUser()
        yield* givenUser("bob@cafe.example", "read_only")
        // An attacker's own valid session, planted in the victim's browser.
        const planted = tokenOf(yield* signIn("bob@cafe.example", PASSWORD, { address: "10.6.6.6" }))
        const signedIn = yield* signIn("ana@cafe.example", PASSWORD, { cookie: planted })
        const token = tokenOf(signedIn)
        expect(token).not.toBe(planted)
        expect(signedIn.session.tokenHash).not.toBe(PanelAuth.tokenHash(planted))
        expect(yield* PanelAuth.currentSession(request({ cookie: planted }))).toEqual(Option.none())
        expect(yield* PanelAuth.currentSession(request({ cookie: token }))).toEqual(
          Option.some(signedIn.session)
        )
        // A token the attacker made up is not taken either.
        const madeUp = "M".repeat(43)
        expect(tokenOf(yield* signIn("ana@cafe.example", PASSWORD, { cookie: madeUp }))).not.toBe(madeUp)
        // Signing in again (the same user) gives a new token too: the old one ends.
        const again = yield* signIn("ana@cafe.example", PASSWORD, { cookie: token })
        expect(tokenOf(again)).not.toBe(token)
        expect(yield* PanelAuth.currentSession(request({ cookie: token }))).toEqual(Option.none())
      })
    )

    it.live(
      "checkCsrf passes only the session's own token; canChange only a full_access session",
      TestApp.fresh(function* () {
        yield* givenUser()
        yield* givenUser("bob@cafe.example", "read_only")
        const ana = (yield* signIn("ana@cafe.example", PASSWORD)).session
        const bob = (yield* signIn("bob@cafe.example", PASSWORD)).session
        expect(PanelAuth.checkCsrf(ana, ana.csrfToken)).toBe(true)
        for (const token of [
          bob.csrfToken,
          "",
          undefined,
          null,
          ana.csrfToken.slice(1),
          `${ana.csrfToken} `,
          ana.tokenHash
        ]) {
          expect(PanelAuth.checkCsrf(ana, token), String(token)).toBe(false)
        }
        const flipped = `${ana.csrfToken.slice(0, 42)}${ana.csrfToken.endsWith("A") ? "B" : "A"}`
        expect(PanelAuth.checkCsrf(ana, flipped)).toBe(false)
        expect(PanelAuth.canChange(ana)).toBe(true)
        expect(PanelAuth.canChange(bob)).toBe(false)
      })
    )

    it.live(
      "a wrong password, an unknown email and a malformed one are one refusal, with no wait",
      TestApp.fresh(function* () {
        yield* givenUser()
        const wrong = yield* Effect.flip(signIn("ana@cafe.example", "not the password"))
        const unknown = yield* Effect.flip(signIn("nobody@cafe.example", PASSWORD))
        const malformed = yield* Effect.flip(signIn("nobody", PASSWORD))
        expect(wrong).toBeInstanceOf(PanelAuth.SignInRefused)
        expect(wrong.retryAfterSeconds).toEqual(Option.none())
        expect(unknown).toEqual(wrong)
        expect(malformed).toEqual(wrong)
      })
    )

    it.live(
      "failed sign-ins slow the account: after 5 in a row, from any addresses, the next waits 1 s, then 2 s; a success forgives",
      TestApp.fresh(function* () {
        yield* givenUser()
        for (let i = 1; i <= 5; i++) {
          expect(
            yield* refusedWith(signIn("ana@cafe.example", "wrong password", { address: `10.1.0.${i}` }))
          ).toBe(null)
        }
        const before = yield* TestApp.logSize
        // Even the right password waits, from a fresh address: refused unchecked, nothing recorded.
        expect(yield* refusedWith(signIn("ana@cafe.example", PASSWORD, { address: "10.2.0.1" }))).toBe(1)
        expect(yield* TestApp.logSize).toBe(before)
        yield* advance(1_000)
        expect(
          yield* refusedWith(signIn("ana@cafe.example", "wrong password", { address: "10.2.0.2" }))
        ).toBe(null)
        expect(yield* refusedWith(signIn("ana@cafe.example", PASSWORD, { address: "10.2.0.3" }))).toBe(2)
        yield* advance(2_000)
        expect((yield* signIn("ana@cafe.example", PASSWORD, { address: "10.2.0.4" })).session.email).toBe(
          "ana@cafe.example"
        )
        for (let i = 1; i <= 4; i++) {
          expect(
            yield* refusedWith(signIn("ana@cafe.example", "wrong password", { address: `10.3.0.${i}` }))
          ).toBe(null)
        }
        expect(
          Either.isRight(yield* Effect.either(signIn("ana@cafe.example", PASSWORD, { address: "10.3.0.9" })))
        ).toBe(true)
      })
    )

    it.live(
      "an unknown email is slowed as a known one is: the wait tells no one whether the email is a user's",
      TestApp.fresh(function* () {
        yield* givenUser()
        const waits = (email: string) =>
          Effect.gen(function* () {
            const seen: Array<number | null> = []
            for (let i = 1; i <= 6; i++) {
              seen.push(
                yield* refusedWith(signIn(email, "wrong password", { address: `10.4.${email.length}.${i}` }))
              )
            }
            return seen
          })
        const known = yield* waits("ana@cafe.example")
        const unknown = yield* waits("zoe@cafe.example")
        expect(known).toEqual([null, null, null, null, null, 1])
        expect(unknown).toEqual(known)
      })
    )

    it.live(
      "failed sign-ins slow the address: after 10 within 15 minutes it waits 1 s, doubling, for any email; other addresses do not",
      TestApp.fresh(function* () {
        yield* givenUser()
        const from = { address: "10.9.9.9" }
        // Ten failures on ten emails: no account waits, the address does.
        for (let i = 1; i <= 10; i++) {
          expect(yield* refusedWith(signIn(`guess${i}@cafe.example`, "wrong password", from))).toBe(null)
        }
        expect(yield* refusedWith(signIn("ana@cafe.example", PASSWORD, from))).toBe(1)
        expect((yield* signIn("ana@cafe.example", PASSWORD, { address: "10.9.9.8" })).session.email).toBe(
          "ana@cafe.example"
        )
        yield* advance(1_000)
        expect(yield* refusedWith(signIn("guess11@cafe.example", "wrong password", from))).toBe(null)
        expect(yield* refusedWith(signIn("ana@cafe.example", PASSWORD, from))).toBe(2)
        // The window slides: 15 minutes after those failures the address starts afresh.
        yield* advance(15 * 60_000)
        expect((yield* signIn("ana@cafe.example", PASSWORD, from)).session.email).toBe("ana@cafe.example")
      })
    )
  })
})
