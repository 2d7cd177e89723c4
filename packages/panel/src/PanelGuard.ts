/**
 * Who may see and change what in the merchant panel (issue 22), checked on the server for every
 * route: a page needs a session (else the sign-in page, 303); a form needs a session, its CSRF token
 * (else 403), and, when it changes anything, a role that may change (a `read_only` user is refused
 * with 403 whatever the page showed). Every change is recorded with the user as actor.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as PanelSessions from "@cobro/domain/PanelSessions"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as MerchantName from "./MerchantName.js"
import * as PanelAuth from "./PanelAuth.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"

/** The metadata of every event a panel user causes: `actor` is `panel:<email>`. */
export const metadataOf = (session: PanelSessions.Session): EventStore.EventMetadata => ({
  actor: `panel:${session.email}`
})

const userOf = (session: PanelSessions.Session) =>
  Effect.map(MerchantName.of(session.merchantId), (merchantName): Html.User => ({
    email: session.email,
    merchantName,
    role: session.role,
    csrf: session.csrfToken
  }))

/** The sign-in page, coming back to the page asked for (a GET) after signing in. */
const toSignIn = (request: HttpServerRequest.HttpServerRequest) => {
  const context = Request.contextOf(request)
  return Request.redirect(
    Html.href(context, `${Html.PREFIX}/login`, {
      next: request.method === "GET" ? request.url : undefined
    })
  )
}

/** What a page runs once its session is found: its answer, from the session and the page's context. */
export type PageHandler<E, R> = (
  session: PanelSessions.Session,
  context: Html.Context
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

/** What a form runs once it is authorised: its answer, from the session, the context and the form. */
export type FormHandler<E, R> = (
  session: PanelSessions.Session,
  context: Html.Context,
  form: URLSearchParams
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

/** Runs `handler` with the request and its session; without a session, the sign-in page. */
const withSession = <E, R>(
  handler: (
    request: HttpServerRequest.HttpServerRequest,
    session: PanelSessions.Session
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const session = yield* PanelAuth.currentSession(request)
    if (Option.isNone(session)) return toSignIn(request)
    return yield* handler(request, session.value)
  })

/**
 * A page: `handler` runs with the session and the page's context; without a session, the sign-in page.
 */
export const page = <E, R>(handler: PageHandler<E, R>) =>
  withSession((request, session) =>
    Effect.flatMap(userOf(session), (user) => handler(session, Request.contextOf(request, user)))
  )

/**
 * A form: `handler` runs with the session, the context and the form once the session is found, its
 * CSRF token matches, and (`changes`) the user may change things. Otherwise nothing runs: the sign-in
 * page (no session) or a 403 page (a wrong or missing token, a `read_only` user).
 */
export const action = <E, R>(options: { readonly changes: boolean }, handler: FormHandler<E, R>) =>
  withSession((request, session) =>
    Effect.gen(function* () {
      const form = yield* Request.formOf(request)
      const context = Request.contextOf(request, yield* userOf(session), form)
      if (!PanelAuth.checkCsrf(session, form.get("csrf") ?? "")) {
        return Request.respond(Html.messagePage(context, "csrf"), 403)
      }
      if (options.changes && !PanelAuth.canChange(session)) {
        return Request.respond(Html.messagePage(context, "readOnly"), 403)
      }
      return yield* handler(session, context, form)
    })
  )
