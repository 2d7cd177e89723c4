/**
 * Telemetry's configuration from OpenTelemetry's standard variables and `COBRO_METRICS*`, and the
 * Prometheus exposition of Effect's metrics: names with their unit, counters `_total`, histograms with
 * their buckets, no unit label, values escaped; `/metrics` on a port of its own (spec-decisions SV-40,
 * SV-42).
 */
import { describe, expect, it } from "@effect/vitest"
import * as MetricsEndpoint from "@cobro/http/MetricsEndpoint"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Option from "effect/Option"
import * as Telemetry from "../src/Telemetry.js"
import * as ServerProcess from "./support/ServerProcess.js"

const read = (env: Record<string, string>) =>
  Effect.withConfigProvider(Telemetry.config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("Telemetry.config", () => {
  it.effect("unset: nothing exported, /metrics on the HTTP port, service `cobro`", () =>
    Effect.map(read({}), (config) => expect(config).toStrictEqual(Telemetry.defaults))
  )

  it.effect("the common endpoint gives each signal its path; a signal's own endpoint is taken as it is", () =>
    Effect.gen(function* () {
      const common = yield* read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
      expect(common.tracesUrl).toStrictEqual(Option.some("http://collector:4318/v1/traces"))
      expect(common.metricsUrl).toStrictEqual(Option.some("http://collector:4318/v1/metrics"))
      const own = yield* read({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/custom"
      })
      expect(own.tracesUrl).toStrictEqual(Option.some("http://traces:9999/custom"))
      expect(own.metricsUrl).toStrictEqual(Option.some("http://collector:4318/v1/metrics"))
      const metricsOnly = yield* read({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://m:4318/v1/metrics" })
      expect(metricsOnly.tracesUrl).toStrictEqual(Option.none())
    })
  )

  it.effect("`none` exporters and OTEL_SDK_DISABLED turn the export off; the service name is read", () =>
    Effect.gen(function* () {
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
      const noTraces = yield* read({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })
      expect(noTraces.tracesUrl).toStrictEqual(Option.none())
      expect(Option.isSome(noTraces.metricsUrl)).toBe(true)
      const disabled = yield* read({ ...endpoint, OTEL_SDK_DISABLED: "true" })
      expect([disabled.tracesUrl, disabled.metricsUrl]).toStrictEqual([Option.none(), Option.none()])
      expect((yield* read({ OTEL_SERVICE_NAME: "cobro-eu" })).serviceName).toBe("cobro-eu")
      expect((yield* read({ OTEL_METRIC_EXPORT_INTERVAL: "5000" })).metricExportIntervalMillis).toBe(5000)
    })
  )

  it.effect("COBRO_METRICS=off refuses /metrics; COBRO_METRICS_PORT moves it; bad values fail", () =>
    Effect.gen(function* () {
      expect((yield* read({ COBRO_METRICS: "off" })).prometheus).toStrictEqual({ _tag: "Off" })
      expect((yield* read({ COBRO_METRICS_PORT: "9464" })).prometheus).toStrictEqual({
        _tag: "On",
        port: Option.some(9464)
      })
      for (const env of [
        { COBRO_METRICS: "maybe" },
        { COBRO_METRICS_PORT: "http" },
        { OTEL_METRIC_EXPORT_INTERVAL: "0" }
      ]) {
        expect(Option.isSome(Option.getLeft(yield* Effect.either(read(env)))), JSON.stringify(env)).toBe(true)
      }
    })
  )
})

/** The exposition a `layerMetrics` of `telemetry` gives the HTTP port. */
const expositionOf = (telemetry: Telemetry.TelemetryConfig, sample: Effect.Effect<void> = Effect.void) =>
  Effect.flatMap(MetricsEndpoint.MetricsExposition, (exposition) =>
    Option.match(exposition, { onNone: () => Effect.succeed(undefined), onSome: (render) => render })
  ).pipe(Effect.provide(Telemetry.layerMetrics(telemetry, "127.0.0.1", sample)))

describe("Telemetry.layerMetrics", () => {
  it.effect("renders Effect's metrics in Prometheus's text format, sampling the gauges first", () =>
    Effect.gen(function* () {
      const duration = Metric.histogram(
        "test.telemetry.duration",
        MetricBoundaries.fromIterable([0.005, 0.05]),
        "A probe."
      ).pipe(Metric.tagged("unit", "s"), Metric.tagged("route", '/a "quoted"\nroute'))
      yield* Metric.update(duration, 0.001)
      yield* Metric.update(duration, 0.01)
      const counter = Metric.counter("test.telemetry.events", { incremental: true }).pipe(
        Metric.tagged("outcome", "approved")
      )
      yield* Metric.increment(counter)
      const gauge = Metric.gauge("test.telemetry.depth")
      const text = yield* expositionOf(Telemetry.defaults, Metric.set(gauge, 7))
      expect(text).toBeDefined()
      const lines = text!.split("\n")
      const route = 'route="/a \\"quoted\\"\\nroute"'
      expect(lines).toContain("# TYPE test_telemetry_duration_seconds histogram")
      expect(lines).toContain(`test_telemetry_duration_seconds_bucket{${route},le="0.005"} 1`)
      expect(lines).toContain(`test_telemetry_duration_seconds_bucket{${route},le="0.05"} 2`)
      expect(lines).toContain(`test_telemetry_duration_seconds_bucket{${route},le="+Inf"} 2`)
      expect(lines).toContain(`test_telemetry_duration_seconds_count{${route}} 2`)
      expect(lines).toContain('test_telemetry_events_total{outcome="approved"} 1')
      expect(lines).toContain("test_telemetry_depth 7")
      expect(text).not.toMatch(/[{,]unit="/)
      expect(text).not.toContain("otel_scope_name")
    })
  )

  it.effect("COBRO_METRICS=off, or a port of its own: no exposition on the HTTP port", () =>
    Effect.gen(function* () {
      expect(yield* expositionOf({ ...Telemetry.defaults, prometheus: { _tag: "Off" } })).toBeUndefined()
    })
  )

  it.live("on a port of its own: GET /metrics answers there, any other request 404", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(() => ServerProcess.freePort())
      const telemetry: Telemetry.TelemetryConfig = {
        ...Telemetry.defaults,
        prometheus: { _tag: "On", port: Option.some(port) }
      }
      yield* Effect.gen(function* () {
        expect(Option.isNone(yield* MetricsEndpoint.MetricsExposition)).toBe(true)
        const base = `http://127.0.0.1:${port}`
        const metrics = yield* Effect.promise(() => fetch(`${base}/metrics`))
        expect(metrics.status).toBe(200)
        expect(metrics.headers.get("content-type")).toBe(MetricsEndpoint.CONTENT_TYPE)
        expect(yield* Effect.promise(() => metrics.text())).toContain("# TYPE target_info gauge")
        expect((yield* Effect.promise(() => fetch(`${base}/other`))).status).toBe(404)
        expect((yield* Effect.promise(() => fetch(`${base}/metrics`, { method: "POST" }))).status).toBe(404)
      }).pipe(Effect.provide(Telemetry.layerMetrics(telemetry, "127.0.0.1", Effect.void)))
      // Closed with its scope.
      const after = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/metrics`).then(
          () => "open",
          () => "closed"
        )
      )
      expect(after).toBe("closed")
    })
  )
})
