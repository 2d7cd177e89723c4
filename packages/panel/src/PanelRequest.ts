/**
 * How the merchant panel reads a request and answers it (issue 22): the page's language (`lang`,
 * else `Accept-Language`) and mode (`mode`, production unless test), its query and form, path
 * parameters, and HTML answers and 303 redirects with the panel's security headers.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Listings from "@cobro/domain/Listings"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HeaderText from "@cobro/api/HeaderText"
import * as Html from "./PanelHtml.js"
import * as Text from "./PanelText.js"

/** The largest form body read: the panel's largest form (a link) is about a kilobyte. */
export const MAX_BODY_BYTES = 16 * 1024

/** The path of a URL, without its query. */
export const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The query of a URL; one that cannot be parsed is empty. */
export const queryOf = (url: string): URLSearchParams => {
  const query = url.indexOf("?")
  try {
    return new URLSearchParams(query === -1 ? "" : url.slice(query + 1))
  } catch {
    return new URLSearchParams()
  }
}

/** The mode a page shows: `test` when asked, production otherwise (a merchant's real data first). */
export const modeOf = (value: string | null | undefined): Listings.Mode =>
  value === "test" ? "test" : "production"

/**
 * The page's context: language and mode from the form (a POST) or the query, else the browser's
 * `Accept-Language` and production.
 */
export const contextOf = (
  request: HttpServerRequest.HttpServerRequest,
  user?: Html.User,
  form?: URLSearchParams
): Html.Context => {
  const query = queryOf(request.url)
  const lang = form?.get("lang") ?? query.get("lang")
  const chosen = lang === "es" || lang === "en"
  return {
    locale: Text.negotiate(request.headers["accept-language"], chosen ? lang : undefined),
    langChosen: chosen,
    mode: modeOf(form?.get("mode") ?? query.get("mode")),
    path: pathOf(request.url),
    query,
    user
  }
}

/** An HTML answer with the panel's headers. */
export const respond = (body: string, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.html(body).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(Html.SECURITY_HEADERS)
  )

/**
 * A 303 to another panel page (after a POST, or to the sign-in page). The target is percent-encoded
 * to what a header can hold (`HeaderText.location`): a `Location` Node refused would answer an empty
 * 500 after the action had run.
 */
export const redirect = (location: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.redirect(HeaderText.location(location), { status: 303, headers: Html.SECURITY_HEADERS })

/**
 * The form body, at most {@link MAX_BODY_BYTES}: a body that cannot be read, or a longer one, is an
 * empty form (whose missing CSRF token refuses it, or whose fields show their errors).
 */
export const formOf = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<URLSearchParams> => {
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) return Effect.succeed(new URLSearchParams())
  return request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
    Effect.map((text) => {
      try {
        return new URLSearchParams(text)
      } catch {
        return new URLSearchParams()
      }
    }),
    Effect.orElseSucceed(() => new URLSearchParams())
  )
}

/** A form field, trimmed, at most `max` characters (absent: ""). */
export const text = (form: URLSearchParams, name: string, max = 500): string =>
  (form.get(name) ?? "").trim().slice(0, max)

/** A path parameter of the route ("" when absent). */
export const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/**
 * A panel path a form may send the browser back to: under the panel, not protocol-relative, no
 * backslash (browsers read `\` as `/`), no `..` segment, printable ASCII only (the addresses the panel
 * writes are; anything else was typed or forged, and could not be a `Location` as it is). Anything
 * else is `fallback`: no open redirect, and checked before the form's action runs.
 */
export const returnPath = (value: string | null, fallback: string): string =>
  value !== null &&
  value.startsWith(`${Html.PREFIX}/`) &&
  !value.startsWith("//") &&
  !value.includes("\\") &&
  !/(^|\/)(\.|%2e){2}(\/|$|\?)/i.test(value) &&
  /^[\x21-\x7e]+$/.test(value)
    ? value
    : fallback
