/**
 * What a request tells an operator (issue 34; spec-decisions SV-40, SV-42): its duration by route
 * template, method and status in `http.server.request.duration`, and, while tracing is on, a server span named
 * by its route that continues a `traceparent` sent in and names the merchant and the mode; never
 * the raw path with its ids. `GET /metrics` answers the exposition the server gives, or 404.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { CobroApi } from "@cobro/api/Api"
import * as Errors from "@cobro/api/Errors"
import * as Idempotency from "../src/Idempotency.js"
import * as MetricsEndpoint from "../src/MetricsEndpoint.js"
import * as RequestTelemetry from "../src/RequestTelemetry.js"
import * as Bodies from "./support/Bodies.js"
import * as TestApp from "./support/TestApp.js"

/** A tracer that keeps every span it makes (Effect's native spans, so attributes and links are read back). */
const recording = () => {
  const native = Effect.runSync(Effect.tracer)
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = native.span(name, parent, context, links, startTime, kind, options)
      spans.push(span)
      return span
    },
    context: native.context
  })
  return { tracer, spans }
}

/** The count of requests of one route, method and status so far. */
const countOf = (route: string, method: string, status: number) =>
  Metric.value(
    RequestTelemetry.requestDuration.pipe(
      Metric.tagged("http.request.method", method),
      Metric.tagged("http.response.status_code", String(status)),
      Metric.tagged("http.route", route)
    )
  ).pipe(Effect.map((state: MetricState.MetricState.Histogram) => state.count))

const withoutPropagation = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locally(effect, HttpClient.currentTracerPropagation, false)

describe("RequestTelemetry.routesOf", () => {
  const routeOf = RequestTelemetry.routesOf(CobroApi, [{ method: "GET", path: MetricsEndpoint.PATH }])

  it.prop(
    "names any id in a path by its route's template, and ignores the query",
    {
      id: FastCheck.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
      query: FastCheck.stringMatching(/^[a-z=&0-9]{0,20}$/)
    },
    ({ id, query }) => {
      expect(routeOf("GET", `/payments/webhook/notifications/${id}${query === "" ? "" : `?${query}`}`)).toBe(
        "/payments/webhook/notifications/:payment_id"
      )
      expect(routeOf("POST", `/admin/v1/merchants/${id}/terminals`)).toBe(
        "/admin/v1/merchants/:merchant_id/terminals"
      )
    }
  )

  it("knows the static routes and the extra ones, and no route for an unknown path or method", () => {
    expect(routeOf("POST", "/payments/app-checkout")).toBe("/payments/app-checkout")
    expect(routeOf("GET", "/metrics")).toBe("/metrics")
    expect(routeOf("GET", "/no/such/path")).toBeUndefined()
    expect(routeOf("DELETE", "/payments/app-checkout")).toBeUndefined()
  })
})

describe("RequestTelemetry.middleware", () => {
  it.live(
    "counts each request under its route, method and status, including 404s without a route",
    TestApp.withTerminal(function* (merchant) {
      const created = "/payments/app-checkout"
      const before = yield* countOf(created, "POST", 201)
      const sale = yield* TestApp.send("POST", created, {
        key: merchant.terminal.test,
        body: Bodies.terminalSale(merchant.serial)
      })
      expect(sale.status, sale.text).toBe(201)
      expect(yield* countOf(created, "POST", 201)).toBe(before + 1)

      const read = "/admin/v1/merchants/:merchant_id/links"
      const readsBefore = yield* countOf(read, "GET", 404)
      const missing = yield* TestApp.admin("GET", "/admin/v1/merchants/MER_nothing/links")
      expect(missing.status).toBe(404)
      expect(yield* countOf(read, "GET", 404)).toBe(readsBefore + 1)

      // No route: no `http.route` label (an unknown path is not a name).
      const unrouted = RequestTelemetry.requestDuration.pipe(
        Metric.tagged("http.request.method", "GET"),
        Metric.tagged("http.response.status_code", "404")
      )
      const unroutedBefore = (yield* Metric.value(unrouted)).count
      expect((yield* TestApp.send("GET", "/no/such/path/ID_123")).status).toBe(404)
      expect((yield* Metric.value(unrouted)).count).toBe(unroutedBefore + 1)
    })
  )

  const { tracer, spans } = recording()
  const traceId = "0af7651916cd43dd8448eb211c80319c"
  const parentSpanId = "b7ad6b7169203331"

  it.live(
    "makes the request's span: named by its route, continuing the traceparent, with status, merchant and mode",
    TestApp.fresh(
      function* () {
        const merchant = yield* TestApp.createMerchantWithTerminal()
        spans.length = 0
        const sale = yield* withoutPropagation(
          TestApp.send("POST", "/payments/app-checkout", {
            key: merchant.terminal.test,
            body: Bodies.terminalSale(merchant.serial),
            headers: { traceparent: `00-${traceId}-${parentSpanId}-01` }
          })
        )
        expect(sale.status, sale.text).toBe(201)
        const server = spans.filter((span) => span.kind === "server")
        expect(server.map((span) => span.name)).toEqual(["POST /payments/app-checkout"])
        const span = server[0]!
        expect(span.traceId).toBe(traceId)
        expect(Option.map(span.parent, (parent) => parent.spanId)).toEqual(Option.some(parentSpanId))
        expect(span.attributes.get("http.route")).toBe("/payments/app-checkout")
        expect(span.attributes.get("http.request.method")).toBe("POST")
        expect(span.attributes.get("http.response.status_code")).toBe(201)
        expect(span.attributes.get("cobro.merchant_id")).toBe(merchant.merchantId)
        expect(span.attributes.get("cobro.mode")).toBe("test")
        // The use case's spans are its children, in the same trace.
        const children = spans.filter(
          (other) => Option.isSome(other.parent) && other.parent.value.spanId === span.spanId
        )
        expect(children.length).toBeGreaterThan(0)
        // Every span but the test's own client span is in the trace sent in.
        const others = spans.filter(
          (other) => other.kind !== "client" || !other.name.startsWith("http.client")
        )
        expect(others.filter((other) => other.traceId !== traceId).map((other) => other.name)).toEqual([])

        spans.length = 0
        const id = merchant.merchantId as string
        const read = yield* withoutPropagation(TestApp.admin("GET", `/admin/v1/merchants/${id}/links`))
        expect(read.status).toBe(200)
        const readSpan = spans.find((span) => span.kind === "server")!
        // The route, never the id.
        expect(readSpan.name).toBe("GET /admin/v1/merchants/:merchant_id/links")
        for (const value of readSpan.attributes.values()) expect(String(value)).not.toContain(id)
      },
      { tracer }
    )
  )

  it.live("counts while tracing is off, when the request builds no span", () =>
    TestApp.run(
      Effect.gen(function* () {
        const before = yield* countOf("/health", "GET", 200)
        expect((yield* TestApp.send("GET", "/health")).status).toBe(200)
        expect(yield* countOf("/health", "GET", 200)).toBe(before + 1)
      })
    ).pipe(Effect.provide(Layer.setTracerEnabled(false)))
  )
})

describe("Idempotency.conflicts", () => {
  it.live(
    "counts a key reused with another request under its code",
    TestApp.withTerminal(function* (merchant) {
      const reused = Metric.tagged(Idempotency.conflicts, "code", Errors.Codes.IdempotencyKeyReused)
      const before = (yield* Metric.value(reused)).count
      const send = (reference: string) =>
        TestApp.send("POST", "/payments/app-checkout", {
          key: merchant.terminal.test,
          idempotencyKey: "conflicting-key-1",
          body: Bodies.terminalSale(merchant.serial, { reference })
        })
      expect((yield* send("first")).status).toBe(201)
      expect((yield* send("first")).status).toBe(201)
      expect((yield* Metric.value(reused)).count).toBe(before)
      const conflict = yield* send("second")
      expect(conflict.status).toBe(409)
      expect((yield* Metric.value(reused)).count).toBe(before + 1)
    })
  )
})

describe("MetricsEndpoint", () => {
  it.live(
    "answers 404 in the envelope when the server gives no exposition",
    TestApp.fresh(function* () {
      const reply = yield* TestApp.send("GET", MetricsEndpoint.PATH)
      expect(reply.status).toBe(404)
    })
  )

  it.live("answers the exposition in Prometheus's text format, without an API key", () =>
    Effect.gen(function* () {
      const reply = yield* TestApp.send("GET", MetricsEndpoint.PATH)
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe(MetricsEndpoint.CONTENT_TYPE)
      expect(reply.text).toBe("# TYPE probe counter\nprobe_total 1\n")
    }).pipe(
      Effect.provide(
        TestApp.layer().pipe(
          Layer.provide(
            Layer.succeed(
              MetricsEndpoint.MetricsExposition,
              Option.some(Effect.succeed("# TYPE probe counter\nprobe_total 1\n"))
            )
          )
        )
      )
    )
  )
})
