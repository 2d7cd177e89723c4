/**
 * `GET /metrics`: the process's metrics in Prometheus's text format, for a scraper. It takes no API
 * key (a scraper holds none, and the figures name no merchant); the server renders the text
 * (`MetricsExposition`). Without one (the configuration refuses it, or serves it on a port of its
 * own) there is no such route: 404 like any unknown path.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** Where the route is served. */
export const PATH = "/metrics"

/** The content type of Prometheus's text exposition format. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** The exposition's text, rendered per scrape; none when metrics are not served on this port. */
export class MetricsExposition extends Context.Reference<MetricsExposition>()(
  "@cobro/http/MetricsEndpoint/MetricsExposition",
  { defaultValue: (): Option.Option<Effect.Effect<string>> => Option.none() }
) {}

/** The exposition as a response. */
export const respond = (
  render: Effect.Effect<string>
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(render, (text) => HttpServerResponse.text(text, { contentType: CONTENT_TYPE }))

/** The route on the API's router, when the layer is built with an exposition; else no route (404). */
export const layer: Layer.Layer<never> = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(
    MetricsExposition,
    Option.match({
      onNone: () => Effect.void,
      onSome: (render) => router.get(PATH, respond(render))
    })
  )
)
