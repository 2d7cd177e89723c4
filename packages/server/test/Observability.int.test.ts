/**
 * Traces and metrics leave a real Cobro process over OTLP/HTTP to a receiver in the test (issue 34;
 * spec-decisions SV-40): one A3 sale sent with a `traceparent` gives the request's span continuing
 * it (route, status, merchant, mode), its use-case children, its statements (operation and text,
 * never values), and later the webhook attempt linked to it, whose POST carries a `traceparent` of
 * the attempt's own trace; the metrics arrive too; and the JSON log lines carry the trace ids the
 * receiver saw.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Loopback from "./support/Loopback.js"
import * as ServerProcess from "./support/ServerProcess.js"

/** A span as OTLP/JSON carries it. */
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly links?: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

/** OTLP's SPAN_KIND_SERVER. */
const SERVER = 2

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes?.find((attribute) => attribute.key === key)?.value
  if (value === undefined) return undefined
  return value["stringValue"] ?? value["intValue"] ?? value["boolValue"] ?? value["doubleValue"]
}

/** An OTLP/HTTP receiver (JSON) on a free port: the spans and metric names it was sent; closed with the scope. */
const otlpReceiver = Effect.gen(function* () {
  const spans: Array<OtlpSpan> = []
  const metrics = new Set<string>()
  const server = Http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const json = JSON.parse(body)
      if (request.url === "/v1/traces") {
        for (const resource of json.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []))
      } else if (request.url === "/v1/metrics") {
        for (const resource of json.resourceMetrics ?? [])
          for (const scope of resource.scopeMetrics ?? [])
            for (const metric of scope.metrics ?? []) metrics.add(metric.name)
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  return { url: yield* Loopback.serve(server), spans, metrics }
})

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const PARENT_SPAN_ID = "00f067aa0ba902b7"

/**
 * A server exporting its traces and metrics to an OTLP receiver of the test's, logging JSON at debug,
 * and a merchant with the terminal `OBS-1` whose test webhook is a local receiver.
 */
const givenExportingServer = Effect.gen(function* () {
  const otlp = yield* otlpReceiver
  const hook = yield* ServerProcess.webhookReceiver
  const server = yield* ServerProcess.start({
    ...(yield* ServerProcess.pgliteEnvSetUp),
    COBRO_DEV_WEBHOOKS: "1",
    COBRO_LOG_FORMAT: "json",
    COBRO_LOG_LEVEL: "debug",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_SERVICE_NAME: "cobro-observability-test",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_METRIC_EXPORT_INTERVAL: "300"
  })
  const { keys } = yield* ServerProcess.merchantWithTerminal(server, {
    name: "Observada",
    serial: "OBS-1",
    webhook: { url: hook.url, mode: "test" }
  })
  return { otlp, hook, server, keys }
})

describe("OpenTelemetry export, through a running server", () => {
  it.live(
    "an A3 sale's trace, its statements and its webhook attempt reach the receiver; metrics too; the JSON logs carry the ids",
    () =>
      Effect.gen(function* () {
        const { hook, keys, otlp, server } = yield* givenExportingServer
        const reference = "order-traced-7731"
        const sale = yield* ServerProcess.call(server, "POST", "/payments/app-checkout", {
          headers: {
            authorization: `x-api-key ${keys.terminal_api.test.identity_key}`,
            traceparent: `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`
          },
          body: ServerProcess.terminalSale("OBS-1", reference)
        })
        expect(sale.status, sale.text).toBe(201)

        // The request's span continues the trace sent in.
        const request = yield* ServerProcess.within(
          10_000,
          () => `no server span of the sale among ${otlp.spans.map((span) => span.name).join(", ")}`,
          Effect.sync(() => otlp.spans.find((span) => span.kind === SERVER && span.traceId === TRACE_ID)),
          (span) => span !== undefined
        )
        expect(request!.name).toBe("POST /payments/app-checkout")
        expect(request!.parentSpanId).toBe(PARENT_SPAN_ID)
        expect(attribute(request!, "http.route")).toBe("/payments/app-checkout")
        expect(String(attribute(request!, "http.response.status_code"))).toBe("201")
        expect(attribute(request!, "cobro.mode")).toBe("test")
        expect(String(attribute(request!, "cobro.merchant_id"))).toMatch(/\S/)

        // Its use case's spans nest under it, and the statements under them, in the same trace.
        yield* ServerProcess.within(
          10_000,
          () => "no statement span in the sale's trace",
          Effect.sync(() => otlp.spans.filter((span) => span.traceId === TRACE_ID)),
          (spans) => spans.some((span) => span.name === "sql.execute")
        )
        const trace = otlp.spans.filter((span) => span.traceId === TRACE_ID)
        expect(trace.some((span) => span.parentSpanId === request!.spanId)).toBe(true)
        const statements = trace.filter((span) => span.name === "sql.execute")
        for (const statement of statements) {
          expect(String(attribute(statement, "db.operation.name"))).toMatch(/\S/)
          const text = String(attribute(statement, "db.query.text"))
          // The statement's text, never its values.
          expect(text).not.toContain(reference)
          expect(text).not.toContain("11900")
        }

        // The webhook attempt, later and in its own trace, is linked to the request's trace; its POST
        // carries the attempt's trace.
        const attempt = yield* ServerProcess.within(
          15_000,
          () => `no linked webhook attempt among ${otlp.spans.map((span) => span.name).join(", ")}`,
          Effect.sync(() =>
            otlp.spans.find(
              (span) =>
                span.name === "Dispatcher.attempt" &&
                (span.links ?? []).some((link) => link.traceId === TRACE_ID)
            )
          ),
          (span) => span !== undefined
        )
        expect(hook.received.length).toBeGreaterThan(0)
        const traceparent = String(hook.received[0]!.headers["traceparent"] ?? "")
        expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
        expect(traceparent.split("-")[1]).toBe(attempt!.traceId)

        // Metrics over OTLP: the request duration among them.
        yield* ServerProcess.within(
          10_000,
          () => `metrics received: ${[...otlp.metrics].join(", ")}`,
          Effect.sync(() => otlp.metrics),
          (metrics) => metrics.has("http.server.request.duration") && metrics.has("cobro.sales")
        )

        // The JSON log lines: each parses, and the sale's request line carries its trace and span.
        yield* ServerProcess.stopsCleanly(server)
        const lines = server
          .output()
          .split("\n")
          .filter((line) => line.startsWith("{"))
        const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
        const saleLine = logged.find(
          (line) =>
            line["trace_id"] === TRACE_ID &&
            String(line["message"]).startsWith("POST /payments/app-checkout 201")
        )
        expect(saleLine, lines.join("\n")).toBeDefined()
        expect(otlp.spans.some((span) => span.spanId === saleLine!["span_id"])).toBe(true)
        expect(String(saleLine!["request_id"] ?? "")).toMatch(/\S/)
      }).pipe(Effect.scoped),
    60_000
  )
})
