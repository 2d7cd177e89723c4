/**
 * Sign-in, sessions and CSRF of the merchant panel (issue 22, "Users and sign-in"), for the panel's
 * pages and routes to call: {@link signIn} checks email and password (`PanelAccess.signIn`) behind the
 * per-address throttle and opens a session, {@link currentSession} reads it back from the cookie,
 * {@link signOut} ends it, {@link checkCsrf} checks a form's token, {@link canChange} says whether the
 * session may change anything.
 *
 * The cookie `cobro_panel` carries 32 random bytes (base64url), new at every sign-in; the store keeps
 * only their SHA-256 (`PanelSessions`). It is `HttpOnly`, `SameSite=Lax`, `Path=/panel`, lives 12 hours,
 * and is `Secure` when the request came over https (`X-Forwarded-Proto: https`) or the configured
 * public address is https. The client's address is the socket's peer: no header is trusted for it
 * (nothing else in Cobro trusts `X-Forwarded-For` either), so behind a proxy every client counts as
 * the proxy's address.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as PublicUrls from "@cobro/api/PublicUrls"
import { SignInThrottle } from "./SignInThrottle.js"

/** The session cookie's name. */
export const COOKIE = "cobro_panel"

/** The path the cookie is sent on: the panel's pages only, never the API. */
export const COOKIE_PATH = "/panel"

/** How long a session lasts from its sign-in: 12 hours (a working day; then sign in again). */
export const SESSION_LIFETIME = Duration.hours(12)

/** The refusal of a sign-in (re-exported for the pages): the same whatever was wrong. */
export const SignInRefused = PanelAccess.SignInRefused
export type SignInRefused = PanelAccess.SignInRefused

/** A session token as the cookie carries it: 32 bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** 32 random bytes in base64url: a session token or a CSRF token. */
const randomToken = (): string => randomBytes(32).toString("base64url")

/**
 * What the store keeps of a token: its SHA-256 in hex.
 *
 * @category getters
 */
export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex")

/**
 * The client's address: the socket's peer (`unknown` when the server has none).
 *
 * @category getters
 */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => PanelAccess.UNKNOWN_ADDRESS)

/**
 * Whether the browser reached Cobro over https: the proxy said so (`X-Forwarded-Proto: https`), or
 * `PUBLIC_URL` (else `CHECKOUT_URL`) is an https address.
 *
 * @category getters
 */
export const isHttps = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<boolean> =>
  Effect.map(PublicUrls.PublicUrls, (urls) => {
    const forwarded = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
    if (forwarded === "https") return true
    return Option.exists(
      Option.orElse(urls.publicUrl, () => urls.checkoutUrl),
      (url) => url.trim().toLowerCase().startsWith("https://")
    )
  })

const cookieOptions = (secure: boolean) =>
  ({ httpOnly: true, sameSite: "lax", path: COOKIE_PATH, secure }) as const

/** The token the request's cookie carries, when it has the shape of one. */
const presentedToken = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> =>
  Option.filter(Option.fromNullable(request.cookies[COOKIE]), (token) => TOKEN.test(token))

/**
 * A sign-in that succeeded: the session opened, and how to hand its cookie to the browser.
 *
 * @category models
 */
export interface SignedIn {
  readonly session: PanelSessions.Session
  /** Sets the session's cookie on the response (the token is in no other place). */
  readonly setCookie: (
    response: HttpServerResponse.HttpServerResponse
  ) => HttpServerResponse.HttpServerResponse
}

/**
 * Signs a user in from the request's address: refused (`SignInRefused`, with the wait) while the
 * address or the email must wait (`SignInThrottle`), else checked by `PanelAccess.signIn`, the
 * failures counted. On success a new session of 12 hours with a new token and a new CSRF token; the
 * token a request presented before (session fixation) is revoked, never reused.
 *
 * @category sign-in
 */
export const signIn = Effect.fn("PanelAuth.signIn")(function* (
  request: HttpServerRequest.HttpServerRequest,
  credentials: { readonly email: string; readonly password: string }
) {
  const now = yield* DateTime.now
  const address = clientAddress(request)
  const throttle = yield* SignInThrottle
  const wait = yield* throttle.wait(address, credentials.email, now)
  if (wait > 0) return yield* PanelAccess.SignInRefused.waitMillis(wait)
  const user = yield* PanelAccess.signIn({ ...credentials, address, now }).pipe(
    // A refusal with a wait was not checked: it counts as no failure.
    Effect.tapError((refused) =>
      Option.isNone(refused.retryAfterSeconds)
        ? throttle.failed(address, credentials.email, now)
        : Effect.void
    )
  )
  yield* throttle.succeeded(credentials.email)
  const sessions = yield* PanelSessions.PanelSessions
  const presented = presentedToken(request)
  if (Option.isSome(presented)) yield* sessions.revoke(tokenHash(presented.value))
  const token = randomToken()
  const createdAt = DateTime.toDateUtc(now)
  const opened: PanelSessions.NewSession = {
    tokenHash: tokenHash(token),
    userId: user.userId,
    merchantId: user.merchantId,
    email: user.email,
    csrfToken: randomToken(),
    createdAt,
    expiresAt: new Date(createdAt.getTime() + Duration.toMillis(SESSION_LIFETIME))
  }
  yield* sessions.create(opened)
  const session: PanelSessions.Session = { ...opened, role: user.role }
  const options = { ...cookieOptions(yield* isHttps(request)), maxAge: SESSION_LIFETIME }
  return {
    session,
    setCookie: (response) => HttpServerResponse.unsafeSetCookie(response, COOKIE, token, options)
  } satisfies SignedIn
})

/**
 * The session of the request's cookie, if it names one that has not expired nor been revoked and its
 * user is ACTIVE, with the user's current role (`PanelSessions.find`: one lookup).
 * (Untraced: every panel request reads it.)
 *
 * @category sessions
 */
export const currentSession = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
  const token = presentedToken(request)
  if (Option.isNone(token)) return Option.none<PanelSessions.Session>()
  const sessions = yield* PanelSessions.PanelSessions
  return yield* sessions.find(tokenHash(token.value), DateTime.toDateUtc(yield* DateTime.now))
})

/**
 * Signs out: the request's session is revoked, and the returned function expires the cookie on the
 * response.
 *
 * @category sessions
 */
export const signOut = Effect.fn("PanelAuth.signOut")(function* (
  request: HttpServerRequest.HttpServerRequest
) {
  const token = presentedToken(request)
  if (Option.isSome(token)) {
    yield* Effect.flatMap(PanelSessions.PanelSessions, (sessions) => sessions.revoke(tokenHash(token.value)))
  }
  const options = cookieOptions(yield* isHttps(request))
  return (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
    HttpServerResponse.expireCookie(response, COOKIE, options)
})

/**
 * Whether a form's token is the session's CSRF token, compared in constant time.
 *
 * @category csrf
 */
export const checkCsrf = (session: PanelSessions.Session, formToken: string | null | undefined): boolean => {
  if (typeof formToken !== "string") return false
  const expected = Buffer.from(session.csrfToken, "utf8")
  const given = Buffer.from(formToken, "utf8")
  // The tokens' length is no secret (always 43): only the bytes are compared in constant time.
  return expected.length === given.length && timingSafeEqual(expected, given)
}

/**
 * Whether the session may change anything: its user's role, as the lookup read it, is `full_access`;
 * a `read_only` one only reads.
 *
 * @category roles
 */
export const canChange = (session: PanelSessions.Session): boolean => session.role === "full_access"
