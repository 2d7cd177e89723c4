/**
 * The request id (issue 34, "Logs that join them"): `X-Request-Id` as the client sent it when it is
 * a plain token, else one made here; echoed on every response (errors, 404s, pages included) and on
 * every log line of the request (`request_id`), so that a client's report finds the server's logs.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"

/** The header, in the lower case Node gives request headers. */
export const HEADER = "x-request-id"

/** The log annotation that carries the id. */
export const LOG_KEY = "request_id"

/** The span attribute that carries the id. */
export const SPAN_ATTRIBUTE = "http.request.id"

/** An id a client may choose: 1–128 letters, digits, `.`, `_`, `:` or `-` (nothing to escape in a log or a header). */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/

/** Whether a client's `X-Request-Id` is used as it is (anything else is replaced, never echoed). */
export const isAccepted = (value: string | undefined): value is string =>
  value !== undefined && ACCEPTED.test(value)

/** A new id: `req_` and a random UUID. */
export const make = (): string => `req_${randomUUID()}`

/** The request's id: the client's when accepted, else a new one. */
export const of = (request: HttpServerRequest.HttpServerRequest): string => {
  const sent = request.headers[HEADER]
  return isAccepted(sent) ? sent : make()
}

/**
 * Gives every request its id: echoed on the response by a pre-response handler (so also on the
 * answers made outside this middleware, e.g. a failure the server turns into a 500), the logs of the
 * request annotated with `request_id`, the current span (if any) with `http.request.id`. The outermost
 * middleware of `Http.middlewareFor`.
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const id = of(request)
    return HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, HEADER, id))
    ).pipe(
      Effect.zipRight(Effect.annotateCurrentSpan(SPAN_ATTRIBUTE, id)),
      Effect.zipRight(Effect.annotateLogs(app, LOG_KEY, id))
    )
  })
