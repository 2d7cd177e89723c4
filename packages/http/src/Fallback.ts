/**
 * The last word on every request (issue 4, "Bad input"): unknown paths (404) and methods (405),
 * path and query errors (400), and typed errors answer in the envelope; a defect is logged and
 * answered 500 in the envelope (AP001 on the terminal API's paths), never with a stack.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Errors from "./Errors.js"

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

const failureResponse = (
  error: unknown,
  request: HttpServerRequest.HttpServerRequest,
  routes: ReadonlyArray<Route>
): HttpServerResponse.HttpServerResponse | undefined => {
  if (Errors.isEnvelopeError(error)) return Errors.toResponse(error)
  if (Predicate.isTagged(error, "RouteNotFound")) {
    const path = pathOf(request.url)
    const allow = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
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

/** Wraps an app so that it always answers, in the envelope. */
export const middleware =
  (routes: ReadonlyArray<Route>) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
    Effect.catchAllCause(app, (cause) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const failure = Cause.failureOption(cause)
        if (failure._tag === "Some") {
          const response = failureResponse(failure.value, request, routes)
          if (response !== undefined) return response
        } else if (Cause.isInterruptedOnly(cause)) {
          return yield* Effect.failCause(cause as Cause.Cause<never>)
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
        return Errors.toResponse(
          Errors.InternalServerError.of(
            isTerminalPath(pathOf(request.url)) ? Errors.Codes.AP001 : Errors.Codes.InternalError
          )
        )
      })
    ) as HttpApp.Default<never, R>
