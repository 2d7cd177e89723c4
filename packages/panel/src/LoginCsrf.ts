/**
 * The sign-in form's CSRF protection (login CSRF): without it a page elsewhere could post the
 * attacker's own email and password to `/panel/login` from the victim's browser, sign the victim into
 * the attacker's account, and read whatever the victim then typed into it. There is no session yet
 * to hold a token, so the form uses a pre-session, signed double submit: `GET /panel/login` sets the
 * cookie {@link COOKIE} to a token and puts the same value in the form's hidden `csrf` field, and
 * `POST /panel/login` goes ahead only when the field equals the cookie (constant time), the token is
 * one this server made and not older than {@link LIFETIME}, and an `Origin` header, when the browser
 * sends one, is Cobro's own. Another site can neither read the cookie nor set it (`HttpOnly`,
 * `SameSite=Strict`, its path only the sign-in form's), so it cannot fill the field.
 *
 * A token is `<issued, seconds since 1970>.<16 random bytes>.<HMAC-SHA256>`, the HMAC of the first two
 * parts under a key derived from the server's sealing key ({@link Key}; issue 31, item 11). A cookie
 * and field an attacker chose, planted through a sibling domain or a man in the middle of plain http
 * (cookies are not isolated by port or scheme), are refused: the attacker cannot make the HMAC, and a
 * pair it obtained from the server itself expires with its lifetime.
 *
 * The cookie is `Secure` exactly when the session's cookie is (`PanelAuth.isHttps`), lives
 * {@link LIFETIME}, is kept across the form's GETs (two tabs of the form both work), and is expired at
 * a successful sign-in.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as PanelAuth from "./PanelAuth.js"

/** The cookie's name. */
export const COOKIE = "cobro_panel_login"

/** The only path the cookie is sent on: the sign-in form's. */
export const COOKIE_PATH = "/panel/login"

/** How long a form may stay open before it must be loaded again: one hour. */
export const LIFETIME = Duration.hours(1)

/**
 * The HMAC key of the tokens, this server's (every node derives the same from the sealing key, so a
 * form served by one node is taken by another).
 *
 * @category services
 */
export class Key extends Context.Tag("@cobro/panel/LoginCsrf/Key")<Key, Redacted.Redacted<Buffer>>() {}

/**
 * The key: HKDF-SHA256 of the sealing key, for this use only.
 *
 * @category layers
 */
export const layer = (sealingKey: Redacted.Redacted<Buffer>): Layer.Layer<Key> =>
  Layer.succeed(
    Key,
    Redacted.make(
      Buffer.from(
        hkdfSync("sha256", Redacted.value(sealingKey), Buffer.alloc(0), "cobro panel login csrf", 32)
      )
    )
  )

/** A token's shape: issued (decimal seconds), 16 bytes and 32 bytes in base64url. */
const TOKEN = /^([0-9]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

const macOf = (key: Redacted.Redacted<Buffer>, issued: string, nonce: string): string =>
  createHmac("sha256", Redacted.value(key)).update(`${issued}.${nonce}`).digest("base64url")

/**
 * A new token, issued at `now`.
 *
 * @category tokens
 */
export const mint = (key: Redacted.Redacted<Buffer>, now: DateTime.Utc): string => {
  const issued = String(Math.floor(DateTime.toEpochMillis(now) / 1000))
  const nonce = randomBytes(16).toString("base64url")
  return `${issued}.${nonce}.${macOf(key, issued, nonce)}`
}

/**
 * Whether `token` is one made with `key` and still within {@link LIFETIME} at `now` (a token from a
 * little in the future, a clock apart between nodes, is taken).
 *
 * @category tokens
 */
export const isGenuine = (key: Redacted.Redacted<Buffer>, token: string, now: DateTime.Utc): boolean => {
  const parts = TOKEN.exec(token)
  if (parts === null) return false
  const [, issued, nonce, mac] = parts as unknown as [string, string, string, string]
  const age = DateTime.toEpochMillis(now) - Number(issued) * 1000
  if (age >= Duration.toMillis(LIFETIME) || age < -Duration.toMillis(Duration.minutes(5))) return false
  const expected = Buffer.from(macOf(key, issued, nonce))
  const given = Buffer.from(mac)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

const cookieOptions = (secure: boolean) =>
  ({ httpOnly: true, sameSite: "strict", path: COOKIE_PATH, secure }) as const

/** The token the request's cookie carries, when it has the shape of one. */
const presented = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> =>
  Option.filter(Option.fromNullable(request.cookies[COOKIE]), (token) => TOKEN.test(token))

/**
 * The token a form served to this browser carries: the one its cookie has already when it is genuine
 * and more than half its lifetime remains (another tab's form keeps working), else a new one; and
 * how to set (or renew) the cookie on the response.
 *
 * @category tokens
 */
export const issue = Effect.fn("LoginCsrf.issue")(function* (request: HttpServerRequest.HttpServerRequest) {
  const key = yield* Key
  const now = yield* DateTime.now
  const halfLater = DateTime.addDuration(now, Duration.unsafeDivide(LIFETIME, 2))
  const token = Option.getOrElse(
    Option.filter(presented(request), (kept) => isGenuine(key, kept, halfLater)),
    () => mint(key, now)
  )
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
 * compared in constant time), the token is genuine and unexpired ({@link isGenuine}), and its
 * `Origin`, when sent, is one of Cobro's own (`null`, which browsers send from opaque origins, is not).
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
  // The tokens' length is no secret: only the bytes are compared in constant time.
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false
  return isGenuine(yield* Key, cookie.value, yield* DateTime.now)
})
