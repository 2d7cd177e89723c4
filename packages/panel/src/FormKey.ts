/**
 * A form of the merchant panel acts once (issue 31, item 1; brief, "Exactly once at the edge"): a
 * browser sends a form again on a double click, a reload after a timeout or back-and-resubmit, and
 * each rendered form with an effect carries a one-time `form_key` of its own (`PanelHtml.hiddenFields`).
 * Its POST runs through `Idempotency.once` (the `FormOnce` port) as an `Idempotency-Key` of the API does: once, under the
 * key's fence; a re-sent form gets the first answer again (the same 303), a form still running is
 * waited for, and after a crash past its commit the route's 303 after success is made from what it
 * wrote (`recover`). A form without a key (an old page, a script) runs as before.
 *
 * Authorisation comes first (`PanelGuard.action`: session, CSRF, role), so a refused form never takes
 * a key. A key is scoped to the signed-in user (`<user id>:<form_key>` under the user's merchant and
 * the mode `panel`), so two users' keys never meet. The fingerprint covers the method, the path and
 * the form without its CSRF token (the session's, not the request's: it may be rotated while the form
 * stays the same), its key (the scope holds it) and its passwords (never hashed to be kept a day).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import type * as PanelSessions from "@cobro/domain/PanelSessions"
import * as Effect from "effect/Effect"
import * as FormOnce from "./FormOnce.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"

/** The scope's mode of every panel form's key: the API's keys (`test`, `production`, admin) never meet it. */
export const MODE = "panel"

/** The longest `form_key` taken (the panel writes UUIDs); a longer one is a 400 page. */
export const MAX_LENGTH = 64

/** The form's fields its fingerprint leaves out. */
export const UNFINGERPRINTED: ReadonlySet<string> = new Set([
  "csrf",
  Html.FORM_KEY,
  "current_password",
  "new_password"
])

/** The form as its fingerprint covers it: every field but {@link UNFINGERPRINTED}, in the order sent. */
export const fingerprintedForm = (form: URLSearchParams): string => {
  const kept = new URLSearchParams()
  for (const [name, value] of form) if (!UNFINGERPRINTED.has(name)) kept.append(name, value)
  return kept.toString()
}

/** The scope of a user's form key. */
export const scopeOf = (
  session: Pick<PanelSessions.Session, "merchantId" | "userId">,
  formKey: string
): IdempotencyStore.Scope => ({
  merchantId: session.merchantId,
  mode: MODE,
  key: `${session.userId}:${formKey}`
})

/**
 * The content type a panel answer is kept under: the answer as JSON with its headers (a 303's
 * `Location`, a 429's `Retry-After`, the security headers), which the store alone would not keep.
 * A page's forms carry the session's CSRF token: it is kept as {@link CSRF_PLACEHOLDER} and given back
 * as the session's token of the request answered, so the store holds no token and a replayed page's
 * forms work with the session's token as it is then.
 */
const KEPT = "application/x-cobro-panel-answer"

interface Kept {
  readonly headers: Readonly<Record<string, string>>
  readonly contentType: string | undefined
  readonly body: string
}

const decoder = new TextDecoder()

/**
 * What a kept page holds in place of the session's CSRF token: markup no page writes, and no text
 * written into a page can be (its `<` is escaped).
 */
const CSRF_PLACEHOLDER = "<cobro-csrf>"

/** A panel answer as the key keeps it; one whose body is a stream stays as it is (never kept). */
const toKept = (
  csrf: string,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (body._tag !== "Empty" && body._tag !== "Uint8Array") return response
  const kept: Kept = {
    headers: response.headers,
    contentType: body._tag === "Uint8Array" ? body.contentType : undefined,
    body:
      body._tag !== "Uint8Array"
        ? ""
        : csrf === ""
          ? decoder.decode(body.body)
          : decoder.decode(body.body).replaceAll(csrf, CSRF_PLACEHOLDER)
  }
  return HttpServerResponse.text(JSON.stringify(kept), { status: response.status, contentType: KEPT })
}

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined =>
  response.body._tag === "Uint8Array" ? response.body.contentType : undefined

/** `Idempotency.once`'s answer that no form wrote: its key is in use (it says when to retry). */
const isBusy = (response: HttpServerResponse.HttpServerResponse): boolean =>
  contentTypeOf(response) === "application/json" &&
  response.status === 409 &&
  response.headers["retry-after"] !== undefined

/**
 * The answer to the browser: a kept answer as it was first given (plus `Idempotent-Replayed` when it
 * is given again); `Idempotency.once`'s own refusals, in the API's JSON, as the panel's pages.
 */
const toBrowser = (
  forms: FormOnce.FormOnce["Type"],
  csrf: string,
  context: Html.Context,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  if (response.body._tag === "Uint8Array" && response.body.contentType === KEPT) {
    const kept = JSON.parse(decoder.decode(response.body.body)) as Kept
    const replayed = response.headers[forms.replayedHeader]
    const base =
      kept.body === "" && kept.contentType === undefined
        ? HttpServerResponse.empty({ status: response.status })
        : HttpServerResponse.text(kept.body.replaceAll(CSRF_PLACEHOLDER, csrf), {
            status: response.status,
            ...(kept.contentType === undefined ? {} : { contentType: kept.contentType })
          })
    return HttpServerResponse.setHeaders(
      base,
      replayed === undefined ? kept.headers : { ...kept.headers, [forms.replayedHeader]: replayed }
    )
  }
  if (contentTypeOf(response) !== "application/json") return response
  if (response.status === 409) {
    const page = Request.respond(Html.messagePage(context, isBusy(response) ? "formBusy" : "formUsed"), 409)
    return isBusy(response)
      ? HttpServerResponse.setHeader(page, "retry-after", response.headers["retry-after"]!)
      : page
  }
  // The store is away (503): the error page, with when to try again.
  return Request.respond(Html.messagePage(context, "error"), response.status).pipe(
    HttpServerResponse.setHeader("retry-after", String(forms.retryAfterSeconds))
  )
}

/** How long a re-sent form waits for the first one still running, in steps of {@link WAIT_STEP_MS}. */
const WAIT_STEPS = 100
const WAIT_STEP_MS = 100

/**
 * Runs `app`, the form's effect and answer, once for the form's `form_key` (as it is when the form
 * has none): see the module. `recover(resource)` answers when the form's first request committed its
 * effect on `resource` (the first stream it wrote) and died before answering. Call it once the form
 * is authorised.
 */
export const once = <E, R, R2>(
  session: PanelSessions.Session,
  context: Html.Context,
  form: URLSearchParams,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  recover: (resource: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R2>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  R | R2 | IdempotencyStore.IdempotencyStore | HttpServerRequest.HttpServerRequest | FormOnce.FormOnce
> =>
  Effect.gen(function* () {
    const formKey = form.get(Html.FORM_KEY)
    if (formKey === null) return yield* app
    if (formKey === "" || formKey.length > MAX_LENGTH) {
      return Request.respond(Html.messagePage(context, "badRequest"), 400)
    }
    const forms = yield* FormOnce.FormOnce
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = Request.pathOf(request.url)
    const print = yield* forms.fingerprint(request.method, path, fingerprintedForm(form))
    const keep = (response: HttpServerResponse.HttpServerResponse) => toKept(session.csrfToken, response)
    const run = forms.once(scopeOf(session, formKey), print, Effect.map(app, keep), (resource) =>
      Effect.map(recover(resource), keep)
    )
    // A double click's second request waits for the first, then gets its answer: the browser shows
    // the second one's, and the first may still be running.
    let answer = yield* run
    for (let step = 0; step < WAIT_STEPS && isBusy(answer); step++) {
      yield* Effect.sleep(WAIT_STEP_MS)
      answer = yield* run
    }
    return toBrowser(forms, session.csrfToken, context, answer)
  })

/**
 * A form with an effect: `PanelGuard.action` (session, CSRF, role), then `handler` {@link once} for
 * its `form_key`, recovered with `recover`.
 */
export const action = <E, R, R2>(
  options: { readonly changes: boolean },
  recover: (
    session: PanelSessions.Session,
    context: Html.Context,
    form: URLSearchParams,
    resource: string
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R2>,
  handler: Guard.FormHandler<E, R>
) =>
  Guard.action(options, (session, context, form) =>
    once(session, context, form, handler(session, context, form), (resource) =>
      recover(session, context, form, resource)
    )
  )
