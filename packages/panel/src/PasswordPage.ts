/**
 * A signed-in user changes its own password (issue 31, item 7): a form with the current password and
 * the new one. The current one is checked as a sign-in checks it (`PanelAccess.changeOwnPassword`:
 * a wrong one counts as a failed sign-in, and the account's wait applies), so that a session left
 * open cannot be used to take the account over nor to guess its password faster than the sign-in
 * form. On success every other session of the user ends, this one stays, and the user goes back to
 * the panel with a notice. Any role may change its own password; the session's CSRF token is checked.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as PanelAccess from "@cobro/domain/PanelAccess"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PanelAuth from "./PanelAuth.js"
import * as FormKey from "./FormKey.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The page's path. */
export const PATH = `${Html.PREFIX}/password`

/** Why the form is shown again. */
type Refusal = "wrong" | "weak" | { readonly seconds: number }

const form = (context: Html.Context, refusal?: Refusal): string => {
  const t = Text.messages[context.locale]
  const min = PanelAccess.MIN_PASSWORD_LENGTH
  const max = PanelAccess.MAX_PASSWORD_LENGTH
  const error =
    refusal === undefined
      ? ""
      : refusal === "wrong"
        ? Html.notice("bad", "password-error", t.password.wrong)
        : refusal === "weak"
          ? Html.notice("bad", "password-error", t.password.weak(min, max))
          : Html.notice("bad", "password-error", t.login.throttled(refusal.seconds))
  return Html.bare(
    context,
    t.password.title,
    `<h1>${Html.escape(t.password.title)}</h1>
${error}<form method="post" action="${PATH}" id="password-form" novalidate>
${Html.hiddenFields(context)}
${Html.field({ name: "current_password", label: t.password.current, type: "password", autocomplete: "current-password", required: true, maxlength: 1024 })}
${Html.field({ name: "new_password", label: t.password.next, type: "password", autocomplete: "new-password", required: true, maxlength: 1024, hint: t.password.hint(min, max) })}
<button type="submit" class="primary" id="change-password-submit">${Html.escape(t.password.submit)}</button>
</form>
<p><a id="back-to-panel" href="${Html.escape(Html.href(context, `${Html.PREFIX}/payments`))}">${Html.escape(t.password.back)}</a></p>`
  )
}

/** The answer to a change that took effect. */
const changed = (context: Html.Context) =>
  Request.redirect(Html.withNotice(Html.href(context, `${Html.PREFIX}/payments`), "passwordChanged"))

/** GET: the form. */
export const show = Guard.page((_session, context) => Effect.succeed(Request.respond(form(context))))

/**
 * POST: the change (then 303 to the payments with a notice), or the form again: 400 for a wrong
 * current password or a new one out of the length rule, 429 with `Retry-After` while the account waits.
 * Once per rendered form (`FormKey`): a re-sent form is answered again, never counted twice.
 */
export const change = FormKey.action(
  { changes: false },
  (_session, context) => Effect.succeed(changed(context)),
  (session, context, params) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* PanelAccess.changeOwnPassword({
        userId: session.userId,
        keepTokenHash: session.tokenHash,
        currentPassword: (params.get("current_password") ?? "").slice(0, 1024),
        newPassword: (params.get("new_password") ?? "").slice(0, 1024),
        address: PanelAuth.clientAddress(request),
        now: yield* DateTime.now
      }).pipe(
        Effect.as(changed(context)),
        Effect.catchTags({
          WeakPassword: () => Effect.succeed(Request.respond(form(context, "weak"), 400)),
          SignInRefused: (refused) =>
            Effect.succeed(
              Option.match(refused.retryAfterSeconds, {
                onNone: () => Request.respond(form(context, "wrong"), 400),
                onSome: (seconds) =>
                  Request.respond(form(context, { seconds }), 429).pipe(
                    HttpServerResponse.setHeader("retry-after", String(seconds))
                  )
              })
            )
        })
      )
    })
)
