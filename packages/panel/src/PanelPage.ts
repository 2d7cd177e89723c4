/**
 * The merchant panel (issue 22), served by Cobro at `/panel` on the API's port beside the checkout
 * page: its routes, and the layer that adds them to the API's router. Server-rendered HTML that works
 * without JavaScript (forms post, then a 303), in Spanish and English, on a phone. Every page needs a
 * session; every form its CSRF token; every change a role that may change (`PanelGuard`). It answers
 * HTML whatever happens: a failure of ours is logged and shown as an error page, never a stack.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import type * as IdGenerator from "@cobro/domain/IdGenerator"
import type * as KeyVault from "@cobro/domain/KeyVault"
import type * as Listings from "@cobro/domain/Listings"
import type * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as FormOnce from "./FormOnce.js"
import * as IntegrationsPage from "./IntegrationsPage.js"
import * as LinksPage from "./LinksPage.js"
import type * as LoginCsrf from "./LoginCsrf.js"
import * as LoginPage from "./LoginPage.js"
import * as NotificationsPage from "./NotificationsPage.js"
import type * as PanelAuth from "./PanelAuth.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as PasswordPage from "./PasswordPage.js"
import * as PaymentDetail from "./PaymentDetail.js"
import * as PaymentsPage from "./PaymentsPage.js"
import * as TerminalsPage from "./TerminalsPage.js"
import * as WebhooksPage from "./WebhooksPage.js"

/** What the panel's handlers use, which the server provides. */
export type Services =
  | EventStore.EventStore
  | IdempotencyStore.IdempotencyStore
  | IdGenerator.IdGenerator
  | KeyVault.KeyVault
  | Listings.Listings
  | TerminalSandbox.TerminalSandbox
  | Effect.Effect.Context<ReturnType<typeof PanelAuth.signIn>>
  | LoginCsrf.Key
  | FormOnce.FormOnce

type Handler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  unknown,
  Services | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
>

const P = Html.PREFIX

/** Every route of the panel: method, path and handler. */
const table: ReadonlyArray<{
  readonly method: "GET" | "POST"
  readonly path: string
  readonly handler: Handler
}> = [
  {
    method: "GET",
    path: P,
    handler: Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      Request.redirect(Html.href(Request.contextOf(request), PaymentsPage.PATH))
    )
  },
  { method: "GET", path: `${P}/login`, handler: LoginPage.show },
  { method: "POST", path: `${P}/login`, handler: LoginPage.signIn },
  { method: "POST", path: `${P}/logout`, handler: LoginPage.signOut },
  { method: "GET", path: PasswordPage.PATH, handler: PasswordPage.show },
  { method: "POST", path: PasswordPage.PATH, handler: PasswordPage.change },
  { method: "GET", path: PaymentsPage.PATH, handler: PaymentsPage.list },
  { method: "GET", path: `${PaymentsPage.PATH}/:transaction_id`, handler: PaymentDetail.show },
  { method: "GET", path: `${P}/notifications/:notification_id`, handler: NotificationsPage.show },
  { method: "POST", path: `${P}/notifications/:notification_id/resend`, handler: NotificationsPage.resend },
  { method: "GET", path: LinksPage.PATH, handler: LinksPage.list },
  { method: "GET", path: `${LinksPage.PATH}/new`, handler: LinksPage.newForm },
  { method: "POST", path: LinksPage.PATH, handler: LinksPage.create },
  { method: "GET", path: `${LinksPage.PATH}/:link_id/cancel`, handler: LinksPage.confirmCancel },
  { method: "POST", path: `${LinksPage.PATH}/:link_id/cancel`, handler: LinksPage.cancel },
  { method: "GET", path: IntegrationsPage.PATH, handler: IntegrationsPage.show },
  {
    method: "GET",
    path: `${IntegrationsPage.PATH}/:integration/:mode/revoke`,
    handler: IntegrationsPage.confirmRevoke
  },
  {
    method: "POST",
    path: `${IntegrationsPage.PATH}/:integration/:mode/revoke`,
    handler: IntegrationsPage.revoke
  },
  { method: "GET", path: WebhooksPage.PATH, handler: WebhooksPage.show },
  { method: "POST", path: WebhooksPage.PATH, handler: WebhooksPage.save },
  { method: "POST", path: `${WebhooksPage.PATH}/test`, handler: WebhooksPage.sendTest },
  { method: "GET", path: `${WebhooksPage.PATH}/:webhook_mode/delete`, handler: WebhooksPage.confirmDelete },
  { method: "POST", path: `${WebhooksPage.PATH}/:webhook_mode/delete`, handler: WebhooksPage.remove },
  { method: "GET", path: TerminalsPage.PATH, handler: TerminalsPage.show },
  { method: "POST", path: `${TerminalsPage.PATH}/api`, handler: TerminalsPage.setApi },
  {
    method: "POST",
    path: `${TerminalsPage.PATH}/charge-notifications`,
    handler: TerminalsPage.setChargeNotifications
  }
]

/** The panel's routes (for the fallback's 405 answers and the path parameters' names). */
export const routes: ReadonlyArray<{ readonly method: string; readonly path: string }> = table.map(
  ({ method, path }) => ({ method, path })
)

/**
 * The routes that change something of the merchant: every POST but signing in and out and changing
 * one's own password (any role may). Each refuses a `read_only` user (403) and a form without the
 * session's CSRF token (403).
 */
export const MUTATING_ROUTES = routes.filter(
  (r) =>
    r.method === "POST" && r.path !== `${P}/login` && r.path !== `${P}/logout` && r.path !== PasswordPage.PATH
)

/** Every failure we did not expect is logged and shown as the error page (never a stack, never JSON). */
const safely = (handler: Handler): Handler =>
  Effect.catchAllCause(handler, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* Effect.logError("merchant panel failure", cause).pipe(
            Effect.annotateLogs({ method: request.method, url: request.url })
          )
          return Request.respond(Html.messagePage(Request.contextOf(request), "error"), 500)
        })
  )

/** The panel's routes on the API's router. The handlers use the ports the server provides. */
export const layer: Layer.Layer<never, never, Services> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const services = yield* Effect.context<Services>()
    for (const route of table) {
      const handler = safely(route.handler).pipe(Effect.provide(services))
      const path = route.path as HttpRouter.PathInput
      yield* route.method === "GET" ? router.get(path, handler) : router.post(path, handler)
    }
  })
)
