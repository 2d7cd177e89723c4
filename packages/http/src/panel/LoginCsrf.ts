/**
 * The sign-in form's CSRF protection (login CSRF): without it a page elsewhere could post the
 * attacker's own email and password to `/panel/login` from the victim's browser, sign the victim into
 * the attacker's account, and read whatever the victim then typed into it. There is no session yet
 * to hold a token, so the form uses a pre-session double submit: `GET /panel/login` sets the cookie
 * {@link COOKIE} to 32 random bytes and puts the same value in the form's hidden `csrf` field, and
 * `POST /panel/login` goes ahead only when the field equals the cookie (constant time) and an `Origin`
 * header, when the browser sends one, is Cobro's own. Another site can neither read the cookie nor set
 * it (`HttpOnly`, `SameSite=Strict`, its path only the sign-in form's), so it cannot fill the field.
 *
 * The cookie is `Secure` exactly when the session's cookie is (`PanelAuth.isHttps`), lives
 * {@link LIFETIME}, is kept across the form's GETs (two tabs of the form both work), and is expired at
 * a successful sign-in.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomBytes, timingSafeEqual } from "node:crypto"
import * as PublicUrls from "../PublicUrls.js"
import * as PanelAuth from "./PanelAuth.js"

/** The cookie's name. */
export const COOKIE = "cobro_panel_login"

/** The only path the cookie is sent on: the sign-in form's. */
export const COOKIE_PATH = "/panel/login"

/** How long a form may stay open before it must be loaded again: one hour. */
export const LIFETIME = Duration.hours(1)

/** 32 bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

const cookieOptions = (secure: boolean) =>
  ({ httpOnly: true, sameSite: "strict", path: COOKIE_PATH, secure }) as const

/** The token the request's cookie carries, when it has the shape of one. */
const presented = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> =>
  Option.filter(Option.fromNullable(request.cookies[COOKIE]), (token) => TOKEN.test(token))

/**
 * The token a form served to this browser carries: the one its cookie has already (another tab's
 * form keeps working), else a new random one; and how to set (or renew) the cookie on the response.
 *
 * @category tokens
 */
export const issue = Effect.fn("LoginCsrf.issue")(function* (request: HttpServerRequest.HttpServerRequest) {
  const token = Option.getOrElse(presented(request), () => randomBytes(32).toString("base64url"))
  const options = { ...cookieOptions(yield* PanelAuth.isHttps(request)), maxAge: LIFETIME }
  return {
    token,
    setCookie: (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.unsafeSetCookie(response, COOKIE, token, options)
  }
})

/**
 * Expires the cookie on the response (after a successful sign-in: the form is done with).
 *
 * @category tokens
 */
export const expire = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    PanelAuth.isHttps(request),
    (secure) => (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.expireCookie(response, COOKIE, cookieOptions(secure))
  )

/** The origin of an address (`scheme://host[:port]`, lower-cased, no default port), if it is one. */
const originOf = (url: string): Option.Option<string> => {
  try {
    const origin = new URL(url).origin
    return origin === "null" ? Option.none() : Option.some(origin)
  } catch {
    return Option.none()
  }
}

/**
 * The origins the request may come from: the one it was sent to (`Host`, and `X-Forwarded-Proto` as
 * `PublicUrls` reads the public base), and those of `PUBLIC_URL` and `CHECKOUT_URL` (a proxy that
 * rewrites `Host` still serves those).
 */
const ownOrigins = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(PublicUrls.PublicUrls, (urls) => {
    const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() || "http"
    const host = request.headers["host"]
    return [
      host === undefined ? Option.none() : originOf(`${proto}://${host}`),
      Option.flatMap(urls.publicUrl, originOf),
      Option.flatMap(urls.checkoutUrl, originOf)
    ].flatMap(Option.toArray)
  })

/**
 * Whether a sign-in form may be taken: its `csrf` field equals the request's cookie (both present,
 * compared in constant time), and its `Origin`, when sent, is one of Cobro's own (`null`, which
 * browsers send from opaque origins, is not).
 *
 * @category checks
 */
export const check = Effect.fn("LoginCsrf.check")(function* (
  request: HttpServerRequest.HttpServerRequest,
  formToken: string | null | undefined
) {
  const origin = request.headers["origin"]
  if (origin !== undefined) {
    const own = yield* ownOrigins(request)
    if (!Option.exists(originOf(origin), (o) => own.includes(o))) return false
  }
  const cookie = presented(request)
  if (Option.isNone(cookie) || typeof formToken !== "string") return false
  const expected = Buffer.from(cookie.value, "utf8")
  const given = Buffer.from(formToken, "utf8")
  // The tokens' length is no secret (always 43): only the bytes are compared in constant time.
  return expected.length === given.length && timingSafeEqual(expected, given)
})
