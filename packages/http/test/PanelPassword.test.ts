/**
 * A panel user changes its own password (issue 31, item 7) through the real handler: the current
 * password required, the change recorded with the user as actor, the user's other sessions ended and
 * this one kept; a wrong current password counted as a failed sign-in; any role may; the session's
 * CSRF token required.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as Calls from "./support/Calls.js"
import * as PanelBrowser from "./support/PanelBrowser.js"
import * as TestApp from "./support/TestApp.js"

const PASSWORD = TestApp.PANEL_PASSWORD
const NEW = "a brand new password"

const givenUser = TestApp.createPanelUser

const postSignIn = PanelBrowser.postSignIn

/** A browser signed in as the user: its cookie, and the CSRF token the password page's form carries. */
const signIn = (email: string, password = PASSWORD) => PanelBrowser.signIn(email, password, "/panel/password")

const change = (browser: PanelBrowser.Browser, current: string, next: string, csrf = browser.csrf) =>
  Calls.postForm(
    "/panel/password",
    { csrf, current_password: current, new_password: next },
    { cookie: browser.cookie }
  )

const userEvents = (userId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`PanelUser-${userId}`), (events) =>
      events.map((e) => [e.type, e.metadata.actor])
    )
  )

const status = (cookie: string) =>
  Effect.map(TestApp.send("GET", "/panel/payments", { headers: { cookie } }), (reply) => reply.status)

describe("a panel user's own password", { timeout: 120_000 }, () => {
  it.live(
    "with the current password: PasswordChanged by the user, its other sessions end and this one stays; the old password is refused, the new one signs in",
    TestApp.withMerchant(function* (cafe) {
      const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example", "read_only")
      const here = yield* signIn("ana@cafe.example")
      const elsewhere = yield* signIn("ana@cafe.example")
      const page = yield* TestApp.send("GET", "/panel/payments", { headers: { cookie: here.cookie } })
      expect(page.text).toContain('id="change-password" href="/panel/password"')
      const reply = yield* change(here, PASSWORD, NEW)
      expect(reply.status, reply.text).toBe(303)
      expect(reply.headers.location).toBe("/panel/payments?notice=passwordChanged")
      expect((yield* userEvents(ana)).at(-1)).toEqual(["PasswordChanged", "panel:ana@cafe.example"])
      expect(yield* status(here.cookie)).toBe(200)
      expect(yield* status(elsewhere.cookie)).toBe(303)
      TestApp.expectPage(yield* postSignIn("ana@cafe.example"), 401)
      yield* signIn("ana@cafe.example", NEW)
    })
  )

  it.live(
    "a wrong current password or a new one out of the rule shows the form again (400) and changes nothing; wrong ones count as failed sign-ins until the account waits (429)",
    TestApp.withMerchant(function* (cafe) {
      const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
      const browser = yield* signIn("ana@cafe.example")
      const weak = yield* change(browser, PASSWORD, "too short")
      TestApp.expectPage(weak, 400)
      expect(weak.text).toContain('id="password-error"')
      expect(weak.text).not.toContain("too short")
      const wrong = yield* change(browser, "not the password", NEW)
      TestApp.expectPage(wrong, 400)
      expect(wrong.text).not.toContain("not the password")
      for (let i = 0; i < 4; i++) yield* change(browser, "not the password", NEW)
      const waiting = yield* change(browser, PASSWORD, NEW)
      TestApp.expectPage(waiting, 429)
      expect(Number(waiting.headers["retry-after"])).toBeGreaterThan(0)
      const events = yield* userEvents(ana)
      expect(events.filter(([type]) => type === "SignInFailed")).toHaveLength(5)
      expect(events.map(([type]) => type)).not.toContain("PasswordChanged")
    })
  )

  it.live(
    "without the session's CSRF token the change is refused (403); without a session the form goes to the sign-in page",
    TestApp.withMerchant(function* (cafe) {
      const ana = yield* givenUser(cafe.merchantId, "ana@cafe.example")
      const browser = yield* signIn("ana@cafe.example")
      TestApp.expectPage(yield* change(browser, PASSWORD, NEW, "forged"), 403)
      const anonymous = yield* TestApp.send("GET", "/panel/password")
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.location).toMatch(/^\/panel\/login\?next=/)
      expect((yield* userEvents(ana)).map(([type]) => type)).not.toContain("PasswordChanged")
    })
  )
})
