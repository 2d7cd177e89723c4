/**
 * The handlers layer the server serves: every group's handlers, the authentications, the envelope
 * fallback and idempotency around every route, `/openapi.json` and the docs at `/docs`. The server
 * provides the ports (see `HttpRequirements`) and serves it with `HttpApiBuilder.serve()`.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as Layer from "effect/Layer"
import * as AdminHandlers from "./AdminHandlers.js"
import * as AdminListHandlers from "./AdminListHandlers.js"
import { CobroApi } from "@cobro/api/Api"
import * as AuditHandlers from "./AuditHandlers.js"
import * as Authentication from "./Authentication.js"
import * as CheckoutPage from "@cobro/pages/CheckoutPage"
import * as Fallback from "./Fallback.js"
import * as HealthHandlers from "./HealthHandlers.js"
import * as Idempotency from "./Idempotency.js"
import * as LinkHandlers from "./LinkHandlers.js"
import * as ListenEndpoint from "./ListenEndpoint.js"
import * as MetricsEndpoint from "./MetricsEndpoint.js"
import * as OnlineHandlers from "./OnlineHandlers.js"
import * as PanelPage from "@cobro/panel/PanelPage"
import * as PanelUserHandlers from "./PanelUserHandlers.js"
import * as PathParams from "./PathParams.js"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as RequestId from "./RequestId.js"
import * as RequestTelemetry from "./RequestTelemetry.js"
import * as SandboxHandlers from "./SandboxHandlers.js"
import * as TerminalHandlers from "./TerminalHandlers.js"

/** Every group's handlers: one line per group. */
const Groups = Layer.mergeAll(
  AdminHandlers.layer,
  AdminListHandlers.layer,
  HealthHandlers.layer,
  LinkHandlers.layer,
  TerminalHandlers.layer,
  SandboxHandlers.layer,
  OnlineHandlers.layer,
  OnlineHandlers.layerAdmin,
  OnlineHandlers.layerChallenge,
  AuditHandlers.layer,
  AuditHandlers.layerAdmin,
  PanelUserHandlers.layer
)

/** The routes served beside the API, for 405 answers. */
const EXTRA_ROUTES = [
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/docs" },
  // The checkout page at its default path (a configured CHECKOUT_URL path still serves it; only its 405s differ).
  ...CheckoutPage.routes(PublicUrls.CHECKOUT_PATH),
  // The merchant panel (issue 22).
  ...PanelPage.routes,
  // `cobro listen`'s Server-Sent Events, beside the contract (issue: cobro listen).
  { method: "GET", path: ListenEndpoint.PATH }
]

/**
 * Path and query text checked first (`PathParams`), then unknown paths and methods, errors and
 * defects in the envelope, and idempotent POSTs, around every route of an API (exported for tests
 * that serve an API of their own). The idempotency middleware's own failures (its reads of the
 * database) are answered in the envelope too, by `Fallback.guard` around it. Outside them all, each
 * request's span and duration (`RequestTelemetry`), so that they see the answer the client gets, and
 * outermost the request id (`RequestId`): on every answer and every log line of the request.
 */
export const middlewareFor = (api: HttpApi.HttpApi.Any) => {
  const routes = Fallback.routesOf(api, EXTRA_ROUTES)
  const templates = PathParams.templatesOf(api, EXTRA_ROUTES)
  const telemetry = RequestTelemetry.middleware(
    RequestTelemetry.routesOf(api, [...EXTRA_ROUTES, { method: "GET", path: MetricsEndpoint.PATH }])
  )
  return HttpApiBuilder.middleware(
    (app) =>
      RequestId.middleware(
        telemetry(
          PathParams.middleware(templates)(
            Fallback.guard(routes)(Idempotency.middleware(Fallback.middleware(routes)(app)))
          )
        )
      ),
    { withContext: true }
  )
}

const Middleware = middlewareFor(CobroApi)

/** The API with its handlers and documents: serve it with `HttpApiBuilder.serve()`. */
export const layer = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" }),
  MetricsEndpoint.layer,
  ListenEndpoint.layer,
  CheckoutPage.layer,
  // The panel's forms run once through the API's Idempotency-Key record (`Idempotency.layerForms`).
  PanelPage.layer.pipe(Layer.provide(Idempotency.layerForms)),
  Middleware,
  PathParams.routerConfig
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(CobroApi).pipe(Layer.provide(Groups))),
  Layer.provide(Layer.mergeAll(Authentication.layer, Authentication.layerAdmin))
)

/** What the server must provide to {@link layer}. */
export type HttpRequirements = Layer.Layer.Context<typeof layer>
