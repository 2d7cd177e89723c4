/**
 * OpenTelemetry, configured by its standard variables: traces and metrics exported over OTLP/HTTP
 * when an endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the `_TRACES_`/`_METRICS_` variants),
 * and the metrics in Prometheus's text format on `GET /metrics` (on by default; `COBRO_METRICS=off`
 * refuses it, `COBRO_METRICS_PORT` serves it on a port of its own). With no endpoint set, tracing
 * stays off and nothing is exported: a request builds no span.
 *
 * Effect's `Metric`s are the one source of both: `@effect/opentelemetry` reads them for OTLP, and the
 * exposition serializes the same reading with OpenTelemetry's Prometheus serializer. The gauges read
 * from the database are sampled at each reading (`OperationalGauges.sample`).
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as OtelResource from "@effect/opentelemetry/Resource"
import * as MetricsEndpoint from "@cobro/http/MetricsEndpoint"
import * as RequestTelemetry from "@cobro/http/RequestTelemetry"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import type { CollectionResult, MetricProducer, ResourceMetrics } from "@opentelemetry/sdk-metrics"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as NodeHttp from "node:http"

/** What the environment asks of telemetry. */
export interface TelemetryConfig {
  /** Where spans are sent (OTLP/HTTP), if anywhere. */
  readonly tracesUrl: Option.Option<string>
  /** Where metrics are sent (OTLP/HTTP), if anywhere. */
  readonly metricsUrl: Option.Option<string>
  /** How often metrics are sent, in milliseconds (`OTEL_METRIC_EXPORT_INTERVAL`, default 60000). */
  readonly metricExportIntervalMillis: number
  /** `OTEL_SERVICE_NAME`, default `cobro`. */
  readonly serviceName: string
  /** `/metrics` served on the HTTP port (`on`), on a port of its own, or not at all (`off`). */
  readonly prometheus:
    { readonly _tag: "Off" } | { readonly _tag: "On"; readonly port: Option.Option<number> }
}

/** No export and `/metrics` on the HTTP port: what an unset environment gives. */
export const defaults: TelemetryConfig = {
  tracesUrl: Option.none(),
  metricsUrl: Option.none(),
  metricExportIntervalMillis: 60_000,
  serviceName: "cobro",
  prometheus: { _tag: "On", port: Option.none() }
}

const nonEmpty = (name: string) =>
  Config.string(name).pipe(Config.option, Config.map(Option.filter((value) => value.trim() !== "")))

/** An exporter's URL: its own variable as given, else the common endpoint with the signal's path. */
const signalUrl = (signal: "traces" | "metrics") =>
  Config.all([
    nonEmpty(`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`),
    nonEmpty("OTEL_EXPORTER_OTLP_ENDPOINT"),
    Config.string(`OTEL_${signal.toUpperCase()}_EXPORTER`).pipe(Config.withDefault("otlp"))
  ]).pipe(
    Config.map(([own, common, exporter]) =>
      exporter.trim().toLowerCase() === "none"
        ? Option.none()
        : Option.orElse(own, () => Option.map(common, (base) => `${base.replace(/\/+$/, "")}/v1/${signal}`))
    )
  )

/** The telemetry the environment configures (OpenTelemetry's variables, and `COBRO_METRICS*`). */
export const config: Config.Config<TelemetryConfig> = Config.all({
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  tracesUrl: signalUrl("traces"),
  metricsUrl: signalUrl("metrics"),
  metricExportIntervalMillis: Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(60_000)
  ),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("cobro")),
  metrics: Config.literal("on", "off")("COBRO_METRICS").pipe(Config.withDefault("on" as const)),
  metricsPort: Config.port("COBRO_METRICS_PORT").pipe(Config.option)
}).pipe(
  Config.map(({ disabled, metrics, metricsPort, ...rest }) => ({
    ...rest,
    tracesUrl: disabled ? Option.none() : rest.tracesUrl,
    metricsUrl: disabled ? Option.none() : rest.metricsUrl,
    prometheus: metrics === "off" ? { _tag: "Off" as const } : { _tag: "On" as const, port: metricsPort }
  }))
)

/**
 * Tracing off: no tracer, so `Effect.fn`'s spans are not built, and the platform's tracer middleware
 * off (`locallyScoped`: `HttpMiddleware.withTracerDisabledWhen` holds only while its own layer is
 * built).
 */
export const layerTracingOff = Layer.mergeAll(
  Layer.setTracerEnabled(false),
  RequestTelemetry.layerPlatformTracerOff
)

/**
 * Tracing to `tracesUrl` when set (batched, sampled as `OTEL_TRACES_SAMPLER` says), else off. The
 * platform's tracer middleware stays off either way: `RequestTelemetry` makes the request's span,
 * named by its route, without the raw URL and headers.
 */
export const layerTracing = (telemetry: TelemetryConfig): Layer.Layer<never> =>
  Option.match(telemetry.tracesUrl, {
    onNone: () => layerTracingOff,
    onSome: (url) =>
      Layer.mergeAll(
        NodeSdk.layer(() => ({
          spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url })),
          resource: { serviceName: telemetry.serviceName }
        })),
        RequestTelemetry.layerPlatformTracerOff
      )
  })

/** The resource: `OTEL_RESOURCE_ATTRIBUTES`, and the service's name. */
const layerResource = (telemetry: TelemetryConfig) =>
  OtelResource.layerFromEnv(OtelResource.configToAttributes({ serviceName: telemetry.serviceName }))

/** Prometheus names carry their unit: `http.server.request.duration` (s) is `…_duration_seconds`. */
const PROMETHEUS_UNITS: Readonly<Record<string, string>> = { s: "seconds", By: "bytes" }

/**
 * Effect's metrics as OpenTelemetry reads them, sampling the gauges first. The unit travels as a
 * metric's `unit` tag (`time_unit` for Effect's own): Effect's metrics have no unit of their own; it
 * names the descriptor's unit and is no attribute of the points.
 */
const producerOf = (effectProducer: MetricProducer, sample: () => Promise<void>): MetricProducer => ({
  collect: async (options) => {
    await sample()
    const result = await effectProducer.collect(options)
    for (const scope of result.resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        for (const point of metric.dataPoints) {
          const attributes = point.attributes as Record<string, unknown>
          delete attributes["unit"]
          delete attributes["time_unit"]
        }
      }
    }
    return result
  }
})

/** The Prometheus text of one reading. */
export const toPrometheus = (resourceMetrics: ResourceMetrics): string => {
  const renamed: ResourceMetrics = {
    ...resourceMetrics,
    scopeMetrics: resourceMetrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map((metric) => {
        const suffix = PROMETHEUS_UNITS[metric.descriptor.unit]
        return suffix === undefined || metric.descriptor.name.endsWith(suffix)
          ? metric
          : { ...metric, descriptor: { ...metric.descriptor, name: `${metric.descriptor.name}_${suffix}` } }
      })
    }))
  } as ResourceMetrics
  // No `otel_scope_name` label on every series: all come from the one producer.
  return new PrometheusSerializer(undefined, false, undefined, false, true).serialize(renamed)
}

/** The exposition's text, rendered per scrape. */
export type Exposition = Effect.Effect<string>

/** `/metrics` on a port of its own (`COBRO_METRICS_PORT`): that path answers, any other 404. */
const layerOwnPort = (host: string, port: number, exposition: Exposition) =>
  Layer.scopedDiscard(
    Effect.acquireRelease(
      Effect.async<NodeHttp.Server, Error>((resume) => {
        const server = NodeHttp.createServer((request, response) => {
          const path = (request.url ?? "/").split("?")[0]
          if (request.method !== "GET" || path !== MetricsEndpoint.PATH) {
            response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n")
            return
          }
          Effect.runPromise(exposition).then(
            (text) => response.writeHead(200, { "content-type": MetricsEndpoint.CONTENT_TYPE }).end(text),
            () => response.writeHead(500).end()
          )
        })
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(port, host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
        })
    ).pipe(Effect.orDie)
  )

/**
 * The metrics' readers: `/metrics` (on the HTTP port through `MetricsExposition`, or on its own
 * port) and the OTLP export when `metricsUrl` is set. `sample` sets the gauges before each reading.
 */
export const layerMetrics = <R>(
  telemetry: TelemetryConfig,
  host: string,
  sample: Effect.Effect<void, never, R>
): Layer.Layer<MetricsEndpoint.MetricsExposition, never, R> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<R>()
      const effectProducer = yield* OtelMetrics.makeProducer
      const producer = producerOf(effectProducer, () => Runtime.runPromise(runtime)(sample))
      if (Option.isSome(telemetry.metricsUrl)) {
        const url = telemetry.metricsUrl.value
        yield* OtelMetrics.registerProducer(
          producer,
          () =>
            new PeriodicExportingMetricReader({
              exporter: new OTLPMetricExporter({ url }),
              exportIntervalMillis: telemetry.metricExportIntervalMillis
            })
        )
      }
      const exposition: Exposition = Effect.promise(() =>
        producer.collect().then((result: CollectionResult) => toPrometheus(result.resourceMetrics))
      )
      const onHttpPort =
        telemetry.prometheus._tag === "On" && Option.isNone(telemetry.prometheus.port)
          ? Option.some(exposition)
          : Option.none()
      if (telemetry.prometheus._tag === "On" && Option.isSome(telemetry.prometheus.port)) {
        yield* Layer.buildWithScope(
          layerOwnPort(host, telemetry.prometheus.port.value, exposition),
          yield* Effect.scope
        )
      }
      return Context.make(MetricsEndpoint.MetricsExposition, onHttpPort)
    })
  ).pipe(Layer.provide(layerResource(telemetry)))
