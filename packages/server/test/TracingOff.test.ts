import { describe, expect, it } from "@effect/vitest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeHttp from "node:http"
import * as Telemetry from "../src/Telemetry.js"

/** Answers whether the request's handler runs inside a span (the HTTP tracer middleware's). */
const app = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/span",
    Effect.map(Effect.option(Effect.currentSpan), (span) =>
      HttpServerResponse.text(Option.isSome(span) ? "span" : "none")
    )
  )
)

const served = (tracing: Layer.Layer<never>) =>
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") throw new Error("not on TCP")
    const response = yield* Effect.promise(() =>
      fetch(`http://127.0.0.1:${address.port}/span`, {
        headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }
      })
    )
    return yield* Effect.promise(() => response.text())
  }).pipe(
    Effect.provide(
      HttpServer.serve(app).pipe(
        Layer.provideMerge(NodeHttpServer.layer(NodeHttp.createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(tracing)
      )
    )
  )

describe("Telemetry.layerTracingOff", () => {
  it.scoped("a request's handler runs without the HTTP tracer middleware's span", () =>
    Effect.gen(function* () {
      // The same server without the layer does make the span: the check below can fail.
      expect(yield* served(Layer.empty)).toBe("span")
      expect(yield* served(Telemetry.layerTracingOff)).toBe("none")
    })
  )
})
