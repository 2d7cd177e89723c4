/**
 * Signing in to the merchant panel and out of it (issue 22, "Users and sign-in"): a form with the two
 * labelled fields `email` and `password`; a refusal says only that the pair was not accepted (never
 * which half), and a throttled one says how long to wait (429 with `Retry-After`). Sign-out ends the
 * session on the server and clears the cookie.
 *
 * The form carries the pre-session CSRF token of `LoginCsrf`: a post without it (or with another
 * browser's, or from another origin) is refused with 403 before anything is checked, counted or
 * recorded.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as LoginCsrf from "./LoginCsrf.js"
import * as PanelAuth from "./PanelAuth.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

const HOME = `${Html.PREFIX}/payments`

/** Why the form is shown again. */
type Refusal = { readonly _tag: "Refused" } | { readonly _tag: "Throttled"; readonly seconds: number }

const form = (
  context: Html.Context,
  csrf: string,
  next: string,
  email: string,
  refusal?: Refusal
): string => {
  const t = Text.messages[context.locale]
  const error =
    refusal === undefined
      ? ""
      : refusal._tag === "Refused"
        ? Html.notice("bad", "sign-in-error", t.login.refused)
        : `<p class="notice bad" id="sign-in-error" role="alert" data-retry-after="${refusal.seconds}">${Html.escape(
            t.login.throttled(refusal.seconds)
          )}</p>`
  return Html.bare(
    context,
    t.login.title,
    `<h1>${Html.escape(t.login.title)}</h1>
${error}<form method="post" action="${Html.PREFIX}/login" id="sign-in-form" novalidate>
<input type="hidden" name="csrf" value="${Html.escape(csrf)}">
${context.langChosen ? `<input type="hidden" name="lang" value="${context.locale}">` : ""}<input type="hidden" name="next" value="${Html.escape(next)}">
${Html.field({ name: "email", label: t.login.email, type: "email", value: email, autocomplete: "username", required: true, maxlength: 254 })}
${Html.field({ name: "password", label: t.login.password, type: "password", autocomplete: "current-password", required: true, maxlength: 1024 })}
<button type="submit" class="primary" id="sign-in">${Html.escape(t.login.submit)}</button>
</form>`
  )
}

/** GET: the form; a signed-in user goes on to the panel. */
export const show = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const context = Request.contextOf(request)
  const next = Request.returnPath(context.query.get("next"), HOME)
  const session = yield* PanelAuth.currentSession(request)
  if (Option.isSome(session)) return Request.redirect(next)
  const csrf = yield* LoginCsrf.issue(request)
  return csrf.setCookie(Request.respond(form(context, csrf.token, next, "")))
})

/**
 * POST: refused (403) unless the form's CSRF token is the browser's own (`LoginCsrf.check`); then
 * signs in and goes on (303 with the session's cookie, the form's cookie expired), or shows the form
 * again (401, 429) with the same token.
 */
export const signIn = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = yield* Request.formOf(request)
  const context = Request.contextOf(request, undefined, params)
  const csrf = params.get("csrf") ?? ""
  if (!(yield* LoginCsrf.check(request, csrf))) {
    return Request.respond(Html.messagePage(context, "csrf"), 403)
  }
  const next = Request.returnPath(params.get("next"), HOME)
  const email = Request.text(params, "email", 254)
  const password = (params.get("password") ?? "").slice(0, 1024)
  const expireForm = yield* LoginCsrf.expire(request)
  return yield* PanelAuth.signIn(request, { email, password }).pipe(
    Effect.map((signedIn) => expireForm(signedIn.setCookie(Request.redirect(next)))),
    Effect.catchTag("SignInRefused", (refused) =>
      Effect.succeed(
        Option.match(refused.retryAfterSeconds, {
          onNone: () => Request.respond(form(context, csrf, next, email, { _tag: "Refused" }), 401),
          onSome: (seconds) =>
            Request.respond(form(context, csrf, next, email, { _tag: "Throttled", seconds }), 429).pipe(
              HttpServerResponse.setHeader("retry-after", String(seconds))
            )
        })
      )
    )
  )
})

/** POST: ends the session and goes to the sign-in page. Any role may sign out; the token is checked. */
export const signOut = Guard.action({ changes: false }, (_session, context) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const expireCookie = yield* PanelAuth.signOut(request)
    return expireCookie(Request.redirect(Html.href(context, `${Html.PREFIX}/login`)))
  })
)
