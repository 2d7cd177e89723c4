/**
 * The last word on every request (issue 4, "Bad input"): unknown paths (404) and methods (405),
 * path and query errors (400), and typed errors answer in the envelope; a defect is logged and
 * answered 500 in the envelope (AP001 on the terminal API's paths), never with a stack. Under
 * `/panel` the same answers are the panel's own pages with its security headers (issue 31, item 9).
 * A failure of the database that cannot take requests now (`Unavailability`) is answered so that a
 * client retries: with `Retry-After`, 503 where the spec leaves the status free (issue 33).
 *
 * Every 5xx is logged with its cause, and every answer's headers are checked before Node writes
 * them (`HeaderText`): one Node refuses would otherwise end as an empty 500, logged nowhere.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Errors from "@cobro/api/Errors"
import * as HeaderText from "@cobro/api/HeaderText"
import * as PanelHtml from "@cobro/panel/PanelHtml"
import * as PanelRequest from "@cobro/panel/PanelRequest"
import * as Unavailability from "./Unavailability.js"

/** A route: its method and a pattern of its path. */
export interface Route {
  readonly method: string
  readonly pattern: RegExp
}

const toPattern = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split("/")
      .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/")}/?$`
  )

/** The routes of an API, plus extra routes served beside it (`GET /openapi.json`, `GET /docs`). */
export const routesOf = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }> = []
): ReadonlyArray<Route> => {
  const routes: Array<Route> = extra.map(({ method, path }) => ({ method, pattern: toPattern(path) }))
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path) })
  })
  return routes
}

/** The terminal API's paths (A1–A4), where an unmapped failure is AP001. */
export const isTerminalPath = (path: string): boolean => path.startsWith("/payments/")

const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The merchant panel's paths, which answer its own HTML pages, never the API's JSON. */
export const isPanelPath = (path: string): boolean =>
  path === PanelHtml.PREFIX || path.startsWith(`${PanelHtml.PREFIX}/`)

/** A panel page that says why the request was not done (no session is read: it shows none). */
const panelMessage = (
  request: HttpServerRequest.HttpServerRequest,
  kind: PanelHtml.Message,
  status: number
): HttpServerResponse.HttpServerResponse =>
  PanelRequest.respond(PanelHtml.messagePage(PanelRequest.contextOf(request), kind), status)

/** A 400 of the path or query (`PathParams`): the panel's page under `/panel`, else the envelope. */
export const badRequest = (
  request: HttpServerRequest.HttpServerRequest,
  error: Errors.BadRequest
): HttpServerResponse.HttpServerResponse =>
  isPanelPath(pathOf(request.url)) ? panelMessage(request, "badRequest", 400) : Errors.toResponse(error)

const failureResponse = (
  error: unknown,
  request: HttpServerRequest.HttpServerRequest,
  routes: ReadonlyArray<Route>
): HttpServerResponse.HttpServerResponse | undefined => {
  if (Errors.isEnvelopeError(error)) return Errors.toResponse(error)
  if (Predicate.isTagged(error, "RouteNotFound")) {
    const path = pathOf(request.url)
    const allow = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
    if (isPanelPath(path)) {
      return allow.length > 0
        ? HttpServerResponse.setHeader(
            panelMessage(request, "methodNotAllowed", 405),
            "allow",
            allow.join(", ")
          )
        : panelMessage(request, "notFound", 404)
    }
    return Errors.toResponse(
      allow.length > 0
        ? new Errors.MethodNotAllowed({
            errors: [
              Errors.item(
                Errors.Codes.MethodNotAllowed,
                `${request.method} is not allowed on ${path}; use ${allow.join(", ")}`
              )
            ],
            allow
          })
        : Errors.NotFound.of(Errors.Codes.NotFound, `no route for ${request.method} ${path}`)
    )
  }
  if (Predicate.isTagged(error, "HttpApiDecodeError")) {
    const issues = (error as unknown as { readonly issues: ReadonlyArray<DecodeIssue> }).issues
    const items = issues.map((issue) =>
      Errors.item(Errors.Codes.ValidationError, issue.message, issue.path.map(String).join("."))
    )
    return Errors.toResponse(
      new Errors.BadRequest({
        errors:
          items.length > 0
            ? (items as [Errors.EnvelopeError["errors"][0]])
            : [Errors.item(Errors.Codes.ValidationError, "invalid path or query parameters")]
      })
    )
  }
  if (Predicate.isTagged(error, "RequestError")) {
    return Errors.toResponse(
      Errors.BadRequest.of(Errors.Codes.MalformedJson, "the request could not be read")
    )
  }
  return undefined
}

/** The 500 of a request: the panel's error page under `/panel`, else the envelope. */
const internalError = (
  request: HttpServerRequest.HttpServerRequest
): HttpServerResponse.HttpServerResponse => {
  const path = pathOf(request.url)
  return isPanelPath(path)
    ? panelMessage(request, "error", 500)
    : Errors.toResponse(
        Errors.InternalServerError.of(isTerminalPath(path) ? Errors.Codes.AP001 : Errors.Codes.InternalError)
      )
}

/**
 * An answer as Node will write it: one with a header Node refuses (text from a request that reached
 * a header unchecked) is logged, naming the headers, and answered 500 instead of an empty one.
 */
const writable = (
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  // Every response passes here: the common case builds no generator.
  const refused = HeaderText.unwritable(response)
  return refused.length === 0 ? Effect.succeed(response) : unwritable(response, refused)
}

const unwritable = (
  response: HttpServerResponse.HttpServerResponse,
  refused: ReturnType<typeof HeaderText.unwritable>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* Effect.logError("an answer's header cannot be written").pipe(
      Effect.annotateLogs({
        method: request.method,
        url: request.url,
        status: response.status,
        headers: refused
      })
    )
    return internalError(request)
  })

/** A 5xx in the envelope (a typed one: AP001, 503) is logged with its cause, as a defect is. */
const logged = (response: HttpServerResponse.HttpServerResponse, cause: Cause.Cause<unknown>) =>
  response.status < 500
    ? Effect.succeed(response)
    : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.as(
          Effect.logError(`answered ${response.status}`, cause).pipe(
            Effect.annotateLogs({ method: request.method, url: request.url })
          ),
          response
        )
      )

const RETRY_AFTER = String(Unavailability.RETRY_AFTER_SECONDS)

/**
 * The answer while the database cannot take requests (a failover, `Unavailability`), with
 * `Retry-After`: 503 `Unavailable` in the envelope; on the terminal API's paths AP001, whose status
 * the spec fixes at 500; under `/panel` the panel's error page, 503. `Idempotency` answers a key
 * it cannot reserve with it too.
 */
export const unavailableResponse = (
  request: HttpServerRequest.HttpServerRequest
): HttpServerResponse.HttpServerResponse => {
  const path = pathOf(request.url)
  const response = isPanelPath(path)
    ? panelMessage(request, "error", 503)
    : Errors.toResponse(
        isTerminalPath(path)
          ? Errors.InternalServerError.of(Errors.Codes.AP001)
          : new Errors.ServiceUnavailable({
              errors: [
                Errors.item(Errors.Codes.Unavailable, "the service cannot take this request now; retry")
              ]
            })
      )
  return HttpServerResponse.setHeader(response, "retry-after", RETRY_AFTER)
}

/** The answer to a request that failed with `cause`, logged once when it is a 5xx. */
const answerOf =
  (routes: ReadonlyArray<Route>) =>
  (
    cause: Cause.Cause<unknown>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause as Cause.Cause<never>)
      if (Unavailability.isUnavailableCause(yield* Unavailability.Unavailability, cause)) {
        return yield* logged(unavailableResponse(request), cause)
      }
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some") {
        const response = failureResponse(failure.value, request, routes)
        if (response !== undefined) return yield* logged(response, cause)
      } else {
        // HttpApi's own body reading (an endpoint served with `.handle` and a payload) dies on a
        // body it cannot parse: that is the client's mistake, not ours.
        const defect = Cause.dieOption(cause)
        if (defect._tag === "Some" && Predicate.isTagged(defect.value, "RequestError")) {
          return Errors.toResponse(
            Errors.BadRequest.of(Errors.Codes.MalformedJson, "the request body could not be read")
          )
        }
      }
      yield* Effect.logError("unexpected failure", cause).pipe(
        Effect.annotateLogs({ method: request.method, url: request.url })
      )
      return internalError(request)
    })

/** Wraps an app so that it always answers, in the envelope (the panel's pages under `/panel`). */
export const middleware = (routes: ReadonlyArray<Route>) => {
  const answer = answerOf(routes)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
    Effect.catchAllCause(app, answer).pipe(Effect.flatMap(writable)) as HttpApp.Default<never, R>
}

/**
 * {@link middleware}'s answers to failures, without its check of every answer's headers: for what
 * runs around the app that `middleware` wraps (`Idempotency`, whose own reads of the database may
 * fail). A failure is answered, and logged, by the one of the two that catches it.
 */
export const guard = (routes: ReadonlyArray<Route>) => {
  const answer = answerOf(routes)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
    Effect.catchAllCause(app, answer) as HttpApp.Default<never, R>
}
