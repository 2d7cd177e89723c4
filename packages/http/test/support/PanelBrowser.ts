/**
 * A browser of the merchant panel, as the panel's suites drive it through the real handler: load
 * the sign-in form for its cookie and CSRF token, post it, and keep the session's cookie and token
 * for the pages and forms that follow.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Calls from "./Calls.js"
import * as TestApp from "./TestApp.js"

/** A signed-in browser: its session cookie and the session's CSRF token. */
export interface Browser {
  readonly cookie: string
  readonly csrf: string
}

/** A browser's sign-in form: the cookie `GET /panel/login` set, and the token of its hidden field. */
export interface LoginForm {
  readonly cookie: string
  readonly csrf: string
}

/** The CSRF token of the first form on a panel page. */
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!

/** The session cookie a successful sign-in set, as a browser sends it back. */
export const sessionCookieOf = (reply: TestApp.Reply): string =>
  `cobro_panel=${/cobro_panel=([^;]+)/.exec(reply.headers["set-cookie"] ?? "")![1]!}`

/** Loads the sign-in form (`path`: with its query) as a browser does, for its cookie and token. */
export const loginForm = (path = "/panel/login") =>
  Effect.gen(function* () {
    const reply = yield* TestApp.send("GET", path)
    expect(reply.status, reply.text).toBe(200)
    const token = /cobro_panel_login=([^;]+)/.exec(reply.headers["set-cookie"] ?? "")![1]!
    return { cookie: `cobro_panel_login=${token}`, csrf: csrfOf(reply.text) } satisfies LoginForm
  })

/** Posts the sign-in form: a freshly loaded one unless `form` is given (its cookie and token). */
export const postLogin = (
  fields: Record<string, string>,
  form?: LoginForm,
  headers: Record<string, string> = {}
) =>
  Effect.gen(function* () {
    const { cookie, csrf } = form ?? (yield* loginForm())
    return yield* Calls.postForm("/panel/login", { csrf, ...fields }, { cookie, ...headers })
  })

/** Posts a freshly loaded sign-in form with the user's email and password; the reply as it comes. */
export const postSignIn = (email: string, password = TestApp.PANEL_PASSWORD) => postLogin({ email, password })

/**
 * The browser a successful sign-in's `reply` leaves: its session cookie, and the CSRF token of the
 * panel page `page` (shown with a 200) it loads with it.
 */
export const browserOf = (reply: TestApp.Reply, page = "/panel/payments") =>
  Effect.gen(function* () {
    const cookie = sessionCookieOf(reply)
    const shown = yield* TestApp.send("GET", page, { headers: { cookie } })
    TestApp.expectPage(shown, 200)
    return { cookie, csrf: csrfOf(shown.text) } satisfies Browser
  })

/** Signs an existing user in through the sign-in form (303 checked): its browser, on `page`. */
export const signIn = (email: string, password = TestApp.PANEL_PASSWORD, page = "/panel/payments") =>
  Effect.gen(function* () {
    const reply = yield* postSignIn(email, password)
    expect(reply.status, reply.text).toBe(303)
    return yield* browserOf(reply, page)
  })
