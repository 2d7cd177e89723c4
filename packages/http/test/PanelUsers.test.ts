/**
 * The operator's management of panel users (issue 22): `GET /admin/v1/merchants/{merchant_id}/users`
 * (`Listings.users`, newest first, paged as the operator's other lists) and
 * `PATCH …/users/{user_id}` (a role change, a new password, disabling and enabling again; issue 31:
 * a session follows its user's current status and role whatever happened to the revocations), through
 * the real handler; and `Idempotency-Key` on the creation, whose fingerprint leaves the password out.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import type * as Listings from "@cobro/domain/Listings"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as PanelUser from "@cobro/domain/PanelUser"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as Idempotency from "../src/Idempotency.js"
import * as Calls from "./support/Calls.js"
import * as PanelBrowser from "./support/PanelBrowser.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const PASSWORD = TestApp.PANEL_PASSWORD
const MINUTE = 60_000

const usersPath = (merchantId: string) => `/admin/v1/merchants/${merchantId}/users`

/** Creates a panel user through the admin API: its id. */
const givenUser = TestApp.createPanelUser

const advance = (millis: number) => Effect.flatMap(TestClock.VirtualTime, (time) => time.advance(millis))

type Browser = PanelBrowser.Browser

const { postSignIn, signIn } = PanelBrowser

/** A change made from the panel: a new payment link of the test mode (CREDIT_CARD must be offered). */
const createLink = (browser: Browser) =>
  Calls.postForm(
    "/panel/links",
    {
      csrf: browser.csrf,
      mode: "test",
      amount_type: "CLOSE",
      total_amount: "50.000",
      currency: "COP",
      description: "Dos cafés",
      payment_methods: "CREDIT_CARD"
    },
    { cookie: browser.cookie }
  )

/** A merchant offering CREDIT_CARD links, and its user ana@cafe.example (the id) signed in. */
const anaSignedInToLinks = Effect.gen(function* () {
  const cafe = yield* TestApp.createMerchant()
  yield* TestApp.setLinkMethods(cafe.merchantId, { CREDIT_CARD: { min: 1000, max: 5000000 } })
  const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
  return { cafe, ana, browser: yield* signIn("ana@cafe.example") }
})

const patch = (merchantId: string, userId: string, body: unknown) =>
  TestApp.admin("PATCH", `${usersPath(merchantId)}/${userId}`, body)

const list = (merchantId: string, query = "") => TestApp.admin("GET", `${usersPath(merchantId)}${query}`)

const userEvents = (userId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`PanelUser-${userId}`), (events) => events.map((e) => [e.type, e.metadata]))
  )

const ids = (reply: TestApp.Reply): Array<string> => reply.json.data.map((row: { id: string }) => row.id)

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("the operator's panel users", { timeout: 120_000 }, () => {
  describe("GET /admin/v1/merchants/{merchant_id}/users", () => {
    it.live(
      "lists the merchant's users newest first: id, email, role, status, created_at, last_sign_in_at; never another merchant's, never a password or hash",
      TestApp.withMerchant(function* (cafe) {
        const other = yield* TestApp.createMerchant("Otro Café")
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
        yield* advance(MINUTE)
        const bob = yield* givenUser(cafe.merchantId, "bob@cafe.example", "read_only")
        yield* givenUser(other.merchantId, "zoe@otro.example")
        yield* advance(MINUTE)
        yield* signIn("ana@cafe.example")
        const reply = yield* list(cafe.merchantId)
        expect(reply.status, reply.text).toBe(200)
        expect(reply.json).toStrictEqual({
          object: "list",
          data: [
            {
              id: bob,
              merchant_id: cafe.merchantId,
              email: "bob@cafe.example",
              role: "read_only",
              status: "ACTIVE",
              created_at: "2026-11-21T15:01:00.000Z",
              last_sign_in_at: null,
              history_url: `/admin/v1/streams/PanelUser-${bob}/history`
            },
            {
              id: ana,
              merchant_id: cafe.merchantId,
              email: "ana@cafe.example",
              role: "full_access",
              status: "ACTIVE",
              created_at: "2026-11-21T15:00:00.000Z",
              last_sign_in_at: "2026-11-21T15:02:00.000Z",
              history_url: `/admin/v1/streams/PanelUser-${ana}/history`
            }
          ],
          has_more: false,
          url: `/admin/v1/merchants/${cafe.merchantId}/users`
        })
        expect(reply.text).not.toContain(PASSWORD)
        expect(reply.text).not.toContain("scrypt")
        expect(ids(yield* list(other.merchantId))).toEqual([PanelUser.userIdOf("zoe@otro.example")])
        const empty = yield* list((yield* TestApp.createMerchant("Sin Usuarios")).merchantId)
        expect(empty.json.data).toEqual([])
        // The history the row points at is the user's.
        const history = yield* TestApp.admin("GET", `/admin/v1/streams/PanelUser-${ana}/history`)
        expect(history.json.events.map((e: { type: string }) => e.type)).toEqual([
          "PanelUserCreated",
          "SignedIn"
        ])
      })
    )

    it.live(
      "pages walk the users newest first, each once: starting_after goes older, ending_before newer, has_more says what lies beyond",
      TestApp.withMerchant(function* (cafe) {
        const created: Array<string> = []
        for (let i = 1; i <= 5; i++) {
          created.push(yield* givenUser(cafe.merchantId, `user${i}@cafe.example`))
          yield* advance(1_000)
        }
        const newest = [...created].reverse()
        const first = yield* list(cafe.merchantId, "?limit=2")
        expect([ids(first), first.json.has_more]).toEqual([newest.slice(0, 2), true])
        const second = yield* list(cafe.merchantId, `?limit=2&starting_after=${newest[1]}`)
        expect([ids(second), second.json.has_more]).toEqual([newest.slice(2, 4), true])
        const last = yield* list(cafe.merchantId, `?limit=2&starting_after=${newest[3]}`)
        expect([ids(last), last.json.has_more]).toEqual([newest.slice(4), false])
        const back = yield* list(cafe.merchantId, `?limit=2&ending_before=${newest[4]}`)
        expect([ids(back), back.json.has_more]).toEqual([newest.slice(2, 4), true])
        const top = yield* list(cafe.merchantId, `?limit=2&ending_before=${newest[2]}`)
        expect([ids(top), top.json.has_more]).toEqual([newest.slice(0, 2), false])
        expect(ids(yield* list(cafe.merchantId))).toEqual(newest)
      })
    )

    it.live(
      "400 for a cursor that is none of the merchant's users (another merchant's included), both cursors, a bad limit; 404 MerchantNotFound; 401 without the admin token",
      TestApp.withMerchant(function* (cafe) {
        const other = yield* TestApp.createMerchant("Otro Café")
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
        const zoe = yield* givenUser(other.merchantId, "zoe@otro.example")
        const field = (reply: TestApp.Reply) => {
          TestApp.expectError(reply, 400, "ValidationError")
          return reply.json.errors[0].field
        }
        expect(field(yield* list(cafe.merchantId, `?starting_after=${zoe}`))).toBe("starting_after")
        expect(field(yield* list(cafe.merchantId, `?ending_before=USR_nobody`))).toBe("ending_before")
        expect(field(yield* list(cafe.merchantId, `?starting_after=${ana}&ending_before=${ana}`))).toBe(
          "ending_before"
        )
        for (const limit of ["0", "101", "-1", "x"]) {
          expect(field(yield* list(cafe.merchantId, `?limit=${limit}`)), limit).toBe("limit")
        }
        TestApp.expectError(yield* list("MER_404"), 404, "MerchantNotFound")
        expect((yield* TestApp.send("GET", usersPath(cafe.merchantId))).status).toBe(401)
      })
    )

    it.prop(
      "newestFirst orders rows by the log position that created them, descending, and loses none",
      [
        FastCheck.array(
          FastCheck.record({
            n: FastCheck.integer({ min: 0, max: 999 }),
            minute: FastCheck.integer({ min: 0, max: 3 }),
            transaction: FastCheck.bigInt({ min: 1n, max: 5n })
          }),
          { maxLength: 30 }
        )
      ],
      ([specs]) => {
        const rows = specs.map(({ minute, n, transaction }, i): Listings.UserRow => ({
          // One event creates one row: global positions are unique; transactions hold several.
          position: { transactionId: transaction, globalPosition: BigInt(i) },
          userId: PanelUser.UserId.make(`USR_${n}x${i}`),
          merchantId: "MER_1",
          email: `u${i}@cafe.example`,
          role: "full_access",
          status: "ACTIVE",
          createdAt: new Date(TestClock.START + minute * MINUTE),
          lastSignInAt: null,
          updatedAt: new Date(TestClock.START + minute * MINUTE)
        }))
        // The order `Listings.users` pages by, in memory as in the store's keyset index.
        const sorted = [...rows].sort(ListingsFromLog.newestFirst)
        expect([...sorted].sort((a, b) => (a.userId < b.userId ? -1 : 1))).toEqual(
          [...rows].sort((a, b) => (a.userId < b.userId ? -1 : 1))
        )
        for (let i = 1; i < sorted.length; i++) {
          const [a, b] = [sorted[i - 1]!.position, sorted[i]!.position]
          expect(
            a.transactionId > b.transactionId ||
              (a.transactionId === b.transactionId && a.globalPosition > b.globalPosition)
          ).toBe(true)
        }
      }
    )
  })

  describe("PATCH /admin/v1/merchants/{merchant_id}/users/{user_id}", () => {
    it.live(
      "a role change to read_only ends the user's open session: its next page asks to sign in and its forms change nothing; signed in again, its changes are refused (403)",
      TestApp.given(anaSignedInToLinks, function* ({ cafe, ana, browser }) {
        // Before: the session may change things.
        const made = yield* createLink(browser)
        expect(made.status, made.text).toBe(303)
        const reply = yield* patch(cafe.merchantId, ana, { role: "read_only" })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.json).toMatchObject({ id: ana, role: "read_only", status: "ACTIVE" })
        expect(yield* userEvents(ana)).toContainEqual(["RoleChanged", { actor: "admin" }])
        const before = yield* TestApp.logSize
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })
        expect(page.status).toBe(303)
        expect(page.headers.location).toMatch(/^\/panel\/login\?next=/)
        const stale = yield* createLink(browser)
        expect(stale.status).toBe(303)
        expect(stale.headers.location).toBe("/panel/login")
        expect(yield* TestApp.logSize).toBe(before)
        const again = yield* signIn("ana@cafe.example")
        const refused = yield* createLink(again)
        TestApp.expectPage(refused, 403)
        expect(yield* TestApp.logSize).toBe(before + 1) // the sign-in, nothing else
      })
    )

    it.live(
      "disabled: true ends the user's sessions and it cannot sign in again (the refusal a wrong password gets); again is a 200 that records nothing",
      TestApp.withMerchant(function* (cafe) {
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
        const browser = yield* signIn("ana@cafe.example")
        const reply = yield* patch(cafe.merchantId, ana, { disabled: true })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.json).toMatchObject({ id: ana, role: "full_access", status: "DISABLED" })
        expect(yield* userEvents(ana)).toContainEqual(["PanelUserDisabled", { actor: "admin" }])
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })
        expect(page.status).toBe(303)
        const before = yield* TestApp.logSize
        const refused = yield* postSignIn("ana@cafe.example")
        TestApp.expectPage(refused, 401)
        expect(refused.text).toContain("El correo o la contraseña no son correctos.")
        expect(refused.headers["set-cookie"]).toBeUndefined()
        const again = yield* patch(cafe.merchantId, ana, { disabled: true })
        expect(again.status).toBe(200)
        expect(again.json.status).toBe("DISABLED")
        expect(yield* TestApp.logSize).toBe(before)
        // Its role no longer changes, and the list shows it disabled.
        TestApp.expectError(yield* patch(cafe.merchantId, ana, { role: "read_only" }), 409, "UserDisabled")
        expect((yield* list(cafe.merchantId)).json.data[0]).toMatchObject({ id: ana, status: "DISABLED" })
        expect(yield* TestApp.logSize).toBe(before)
      })
    )

    it.live(
      "the same role again is a 200 that records nothing and keeps the sessions; role and disabled together do both",
      TestApp.withMerchant(function* (cafe) {
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example", "read_only")
        const browser = yield* signIn("ana@cafe.example")
        const before = yield* TestApp.logSize
        const same = yield* patch(cafe.merchantId, ana, { role: "read_only" })
        expect(same.status).toBe(200)
        expect(yield* TestApp.logSize).toBe(before)
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })
        expect(page.status).toBe(200)
        const both = yield* patch(cafe.merchantId, ana, { role: "full_access", disabled: true })
        expect(both.json).toMatchObject({ role: "full_access", status: "DISABLED" })
        expect((yield* userEvents(ana)).slice(-2).map(([type]) => type)).toEqual([
          "RoleChanged",
          "PanelUserDisabled"
        ])
      })
    )

    it.live(
      "404 UserNotFound for an unknown or malformed id and for another merchant's user, 404 MerchantNotFound, 401 without the admin token; nothing changes",
      TestApp.withMerchant(function* (cafe) {
        const other = yield* TestApp.createMerchant("Otro Café")
        yield* givenUser(cafe.merchantId, "ana@cafe.example")
        const zoe = yield* givenUser(other.merchantId, "zoe@otro.example")
        const zoeBrowser = yield* signIn("zoe@otro.example")
        const before = yield* TestApp.logSize
        for (const userId of [zoe, PanelUser.userIdOf("nobody@cafe.example"), "USR_", "nobody", "MER_1"]) {
          TestApp.expectError(yield* patch(cafe.merchantId, userId, { disabled: true }), 404, "UserNotFound")
        }
        TestApp.expectError(yield* patch("MER_404", zoe, { disabled: true }), 404, "MerchantNotFound")
        const unauthenticated = yield* TestApp.send("PATCH", `${usersPath(other.merchantId)}/${zoe}`, {
          body: { disabled: true }
        })
        expect(unauthenticated.status).toBe(401)
        expect(yield* TestApp.logSize).toBe(before)
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: zoeBrowser.cookie } })
        expect(page.status).toBe(200)
      })
    )

    it.live(
      "400 ValidationError for no member, a disabled that is no boolean, a role that is none, a password not 12 to 256 characters, or another member (a password is never quoted); nothing changes",
      TestApp.withMerchant(function* (cafe) {
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
        const before = yield* TestApp.logSize
        for (const [body, field] of [
          [{}, undefined],
          [{ disabled: "yes" }, "disabled"],
          [{ role: "admin" }, "role"],
          [{ role: null }, "role"],
          [{ password: 123 }, "password"],
          [{ password: "a secret" }, "password"],
          [{ role: "read_only", password: "a secret" }, "password"],
          [{ role: "read_only", email: "x@cafe.example" }, "email"]
        ] as const) {
          const reply = yield* patch(cafe.merchantId, ana, body)
          TestApp.expectError(reply, 400, "ValidationError")
          expect(reply.json.errors[0].field, reply.text).toBe(field)
          expect(reply.text).not.toContain("a secret")
        }
        expect(yield* TestApp.logSize).toBe(before)
      })
    )
  })

  describe("PATCH …/users/{user_id}: passwords, enabling, current rights (issue 31)", () => {
    it.live(
      "password sets a new password: PasswordChanged by admin, the user's sessions end, the old password is refused and the new one signs in; neither is in any answer",
      TestApp.withMerchant(function* (cafe) {
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
        const browser = yield* signIn("ana@cafe.example")
        const reply = yield* patch(cafe.merchantId, ana, { password: "a brand new password" })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.json).toMatchObject({ id: ana, status: "ACTIVE" })
        expect(reply.text).not.toContain("a brand new password")
        expect((yield* userEvents(ana)).at(-1)).toEqual(["PasswordChanged", { actor: "admin" }])
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })
        expect(page.status).toBe(303)
        TestApp.expectPage(yield* postSignIn("ana@cafe.example"), 401)
        expect((yield* postSignIn("ana@cafe.example", "a brand new password")).status).toBe(303)
      })
    )

    it.live(
      "disabled: false enables a disabled user again with its role and password (PanelUserEnabled by admin); an active one is a 200 that records nothing; a disabled user's role or password changes only with it",
      TestApp.withMerchant(function* (cafe) {
        const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example", "read_only")
        expect((yield* patch(cafe.merchantId, ana, { disabled: true })).status).toBe(200)
        const before = yield* TestApp.logSize
        TestApp.expectError(
          yield* patch(cafe.merchantId, ana, { password: "a brand new password" }),
          409,
          "UserDisabled"
        )
        TestApp.expectError(yield* patch(cafe.merchantId, ana, { role: "full_access" }), 409, "UserDisabled")
        expect(yield* TestApp.logSize).toBe(before)
        const enabled = yield* patch(cafe.merchantId, ana, { disabled: false })
        expect(enabled.status, enabled.text).toBe(200)
        expect(enabled.json).toMatchObject({ id: ana, role: "read_only", status: "ACTIVE" })
        expect((yield* userEvents(ana)).at(-1)).toEqual(["PanelUserEnabled", { actor: "admin" }])
        const again = yield* patch(cafe.merchantId, ana, { disabled: false })
        expect(again.status).toBe(200)
        expect(yield* TestApp.logSize).toBe(before + 1)
        const browser = yield* signIn("ana@cafe.example")
        TestApp.expectPage(yield* createLink(browser), 403)
        // Disabled again, then enabled with a new role and password in one call.
        yield* patch(cafe.merchantId, ana, { disabled: true })
        const both = yield* patch(cafe.merchantId, ana, {
          disabled: false,
          role: "full_access",
          password: "a brand new password"
        })
        expect(both.json).toMatchObject({ role: "full_access", status: "ACTIVE" })
        expect((yield* userEvents(ana)).slice(-3).map(([type]) => type)).toEqual([
          "PanelUserEnabled",
          "RoleChanged",
          "PasswordChanged"
        ])
        expect((yield* postSignIn("ana@cafe.example", "a brand new password")).status).toBe(303)
        // The list shows it active again.
        expect((yield* list(cafe.merchantId)).json.data[0]).toMatchObject({ id: ana, status: "ACTIVE" })
      })
    )

    it.live(
      "a session follows its user's current role and status on the next request, though no revocation ran",
      TestApp.given(anaSignedInToLinks, function* ({ ana, browser }) {
        const handle = CommandHandler.make(PanelUser.PanelUser)
        const now = yield* DateTime.now
        // The events alone, as if every revocation had failed.
        yield* handle(ana, new PanelUser.ChangeRole({ role: "read_only", now }))
        const before = yield* TestApp.logSize
        TestApp.expectPage(yield* createLink(browser), 403)
        expect(yield* TestApp.logSize).toBe(before)
        expect(
          (yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })).status
        ).toBe(200)
        yield* handle(ana, new PanelUser.DisablePanelUser({ now }))
        const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: browser.cookie } })
        expect(page.status).toBe(303)
        expect(page.headers.location).toMatch(/^\/panel\/login\?next=/)
      })
    )
  })

  describe("Idempotency-Key on POST /admin/v1/merchants/{merchant_id}/users", () => {
    /** An idempotency store that keeps a copy of everything written to it. */
    const recording = (rows: Array<unknown>) =>
      Layer.effect(
        IdempotencyStore.IdempotencyStore,
        Effect.map(IdempotencyStore.IdempotencyStore, (inner) => ({
          ...inner,
          reserve: (scope, fingerprint, now, owner) => {
            rows.push({ scope, fingerprint })
            return inner.reserve(scope, fingerprint, now, owner)
          },
          complete: (scope, owner, response) => {
            rows.push({ scope, response })
            return inner.complete(scope, owner, response)
          }
        }))
      ).pipe(Layer.provide(IdempotencyStore.layerMemory))

    it.effect(
      "the fingerprint leaves the password out: two bodies that differ only in it are stored with one fingerprint, and no stored row holds the password or its SHA-256",
      () => {
        const rows: Array<unknown> = []
        return Effect.gen(function* () {
          let runs = 0
          const app = Idempotency.middleware(
            Effect.sync(() => {
              runs++
              return HttpServerResponse.text(`{"user_id":"USR_1","run":${runs}}`, {
                status: 201,
                contentType: "application/json"
              })
            })
          )
          const post = (path: string, body: string, key = "create-ana") =>
            app.pipe(
              Effect.provideService(
                HttpServerRequest.HttpServerRequest,
                HttpServerRequest.fromWeb(
                  new Request(`http://cobro.test${path}`, {
                    method: "POST",
                    body,
                    headers: {
                      authorization: `Bearer ${TestApp.ADMIN_TOKEN}`,
                      "content-type": "application/json",
                      "idempotency-key": key
                    }
                  })
                )
              ),
              Effect.map((r) => ({
                status: r.status,
                replayed: r.headers[Idempotency.REPLAYED_HEADER] === "true"
              }))
            )
          const body = (password: string) =>
            JSON.stringify({ email: "ana@cafe.example", password, role: "full_access" })
          const first = yield* post(usersPath("MER_1"), body("first secret password"))
          const second = yield* post(usersPath("MER_1"), body("second secret password"))
          expect(first).toEqual({ status: 201, replayed: false })
          expect(second).toEqual({ status: 201, replayed: true })
          expect(runs).toBe(1)
          const prints = rows.flatMap((r) => ("fingerprint" in (r as object) ? [(r as any).fingerprint] : []))
          expect(prints).toHaveLength(2)
          expect(prints[0]).toBe(prints[1])
          // Another email under the key is another request: refused, never run.
          const other = yield* post(
            usersPath("MER_1"),
            JSON.stringify({
              email: "bob@cafe.example",
              password: "first secret password",
              role: "full_access"
            })
          )
          expect(other.status).toBe(409)
          expect(runs).toBe(1)
          // Broken JSON may hold a password too: never hashed as it is.
          yield* post(usersPath("MER_1"), `{"password":"third secret password"`, "broken")
          const stored = JSON.stringify(rows)
          for (const password of [
            "first secret password",
            "second secret password",
            "third secret password"
          ]) {
            expect(stored).not.toContain(password)
            expect(stored).not.toContain(sha256(password))
            expect(stored).not.toContain(sha256(body(password)))
          }
          // Elsewhere the body is fingerprinted whole, a `password` member included.
          expect(Idempotency.fingerprintedBody("POST", "/admin/v1/merchants", body("x"))).toBe(body("x"))
          expect(Idempotency.fingerprintedBody("POST", `${usersPath("MER_1")}?a=1`, body("y"))).toBe(
            JSON.stringify({ email: "ana@cafe.example", role: "full_access" })
          )
        }).pipe(Effect.provide(recording(rows)), Effect.provide(TestApp.TestPorts()))
      }
    )

    it.live(
      "a retry under the same key with another password answers the first response: one user, whose password is the first",
      TestApp.withMerchant(function* (cafe) {
        const create = (password: string) =>
          TestApp.send("POST", usersPath(cafe.merchantId), {
            admin: true,
            idempotencyKey: "create-ana",
            body: { email: "ana@cafe.example", password, role: "full_access" }
          })
        const first = yield* create("first secret password")
        expect(first.status, first.text).toBe(201)
        const before = yield* TestApp.logSize
        const retry = yield* create("second secret password")
        expect(retry.status).toBe(201)
        expect(retry.headers[Idempotency.REPLAYED_HEADER]).toBe("true")
        expect(retry.text).toBe(first.text)
        expect(yield* TestApp.logSize).toBe(before)
        expect((yield* postSignIn("ana@cafe.example", "second secret password")).status).toBe(401)
        expect((yield* postSignIn("ana@cafe.example", "first secret password")).status).toBe(303)
      })
    )
  })
})
