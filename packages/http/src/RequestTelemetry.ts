/**
 * What each request tells an operator: its duration in `http.server.request.duration` (by route,
 * method and status), and, when tracing is on, its server span: named by its route, never by its raw
 * path (ids are data, not names), continuing a W3C `traceparent` sent in, with the route, the status,
 * the request id and (set by `Authentication`) the merchant and mode; the use cases' spans and the
 * statements nest under it. At debug level, one log line per request. The platform's own tracer
 * middleware stays off: it records the raw URL and every header.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as FindMyWay from "find-my-way-ts"

/**
 * The platform's tracer middleware off: this module makes the request's span. Set for the rest of
 * the scope (`locallyScoped`), so the server's fibers, forked after the handlers are built, inherit it.
 */
export const layerPlatformTracerOff: Layer.Layer<never> = Layer.locallyScoped(
  HttpMiddleware.currentTracerDisabledWhen,
  () => true
)

/** Seconds, from 1 ms to 30 s: a cached read to a request that waits on a slow database. */
export const DURATION_BOUNDARIES: ReadonlyArray<number> = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
]

const durationKey = MetricKey.histogram(
  "http.server.request.duration",
  MetricBoundaries.fromIterable(DURATION_BOUNDARIES),
  "Duration of HTTP server requests."
)

/** The unit travels as a tag: Effect's metrics have none of their own (`Telemetry` reads it). */
const UNIT = MetricLabel.make("unit", "s")

/** OpenTelemetry's `http.server.request.duration`, in seconds. */
export const requestDuration: Metric.Metric.Histogram<number> = Metric.fromMetricKey(durationKey).pipe(
  Metric.taggedWithLabels([UNIT])
)

/** A request's route template (`/payments/app-checkout/:integration_id`), if it has one. */
export type RouteOf = (method: string, url: string) => string | undefined

/** The route finder of an API's endpoints and the routes served beside it. */
export const routesOf = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }> = []
): RouteOf => {
  const router = FindMyWay.make<string>({
    ignoreTrailingSlash: true,
    maxParamLength: Number.MAX_SAFE_INTEGER
  })
  const add = (method: string, path: string) => {
    try {
      router.on(method, path as FindMyWay.PathInput, path)
    } catch {
      // A route listed twice (an extra route the API also declares) keeps its first entry.
    }
  }
  for (const { method, path } of extra) add(method, path)
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path)
  })
  return (method, url) => {
    const query = url.indexOf("?")
    return router.find(method, query === -1 ? url : url.slice(0, query))?.handler
  }
}

/**
 * The histogram of one route, method and status, its key built once: a request updates it, nothing
 * more (`Metric.tagged` would build and hash the key again at every update).
 */
const durations = new Map<string, Metric.Metric.Histogram<number>>()

const durationOf = (route: string | undefined, method: string, status: number) => {
  const key = `${method} ${status} ${route ?? ""}`
  let metric = durations.get(key)
  if (metric === undefined) {
    const labels = [
      UNIT,
      MetricLabel.make("http.request.method", method),
      MetricLabel.make("http.response.status_code", String(status))
    ]
    if (route !== undefined) labels.push(MetricLabel.make("http.route", route))
    metric = Metric.fromMetricKey(MetricKey.taggedWithLabels(durationKey, labels))
    durations.set(key, metric)
  }
  return metric
}

const statusOf = (exit: Exit.Exit<{ readonly status: number }, unknown>): number =>
  Exit.isSuccess(exit) ? exit.value.status : HttpServerError.exitResponse(exit as never).status

/** The request id `RequestId` annotated the request's logs with, for the span. */
const requestIdOf = (annotations: HashMap.HashMap<string, unknown>) =>
  Option.getOrUndefined(HashMap.get(annotations, "request_id"))

/** Whether the fiber logs at debug level (the access log's level). */
const logsDebug = (fiber: { getFiberRef: <A>(ref: FiberRef.FiberRef<A>) => A }) =>
  LogLevel.greaterThanEqual(LogLevel.Debug, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))

/**
 * The middleware: the request's span (when tracing is on), its duration, and at debug level one log
 * line per request (inside the span: the line carries the trace's ids).
 */
export const middleware =
  (routeOf: RouteOf) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.withFiberRuntime((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const route = routeOf(request.method, request.url)
      const started = performance.now()
      const debug = logsDebug(fiber)
      const finish = (exit: Exit.Exit<{ readonly status: number }, unknown>) =>
        Effect.suspend(() => {
          const status = statusOf(exit)
          const millis = performance.now() - started
          durationOf(route, request.method, status).unsafeUpdate(millis / 1000, [])
          return debug
            ? Effect.logDebug(
                `${request.method} ${route ?? "(no route)"} ${status} in ${millis.toFixed(1)} ms`
              )
            : Effect.void
        })
      if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return Effect.onExit(app, finish)
      const requestId = requestIdOf(fiber.getFiberRef(FiberRef.currentLogAnnotations))
      return Effect.useSpan(
        route === undefined ? request.method : `${request.method} ${route}`,
        {
          parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
          kind: "server",
          captureStackTrace: false,
          attributes: {
            "http.request.method": request.method,
            ...(route === undefined ? {} : { "http.route": route }),
            ...(requestId === undefined ? {} : { "http.request.id": requestId })
          }
        },
        (span) =>
          Effect.onExit(Effect.withParentSpan(app, span), (exit) =>
            Effect.zipRight(
              Effect.sync(() => span.attribute("http.response.status_code", statusOf(exit))),
              Effect.withParentSpan(finish(exit), span)
            )
          )
      )
    })
