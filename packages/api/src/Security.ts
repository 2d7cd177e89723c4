/**
 * How the contract's groups authenticate (spec: Authentication): the middleware tags a group names
 * and the credential they provide. `@cobro/http` implements them; a client sends what they declare.
 * Merchants send `Authorization: x-api-key <identity key>` (one tag per integration); operators send
 * `Authorization: Bearer <ADMIN_TOKEN>`.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import * as Errors from "./Errors.js"

/** The credential of the request's key: merchant, integration and mode (test keys see sandbox data only). */
export class CurrentCredential extends Context.Tag("@cobro/api/Security/CurrentCredential")<
  CurrentCredential,
  MerchantDirectory.Credential
>() {}

/** The `Authorization` header as the OpenAPI document shows it. */
export const apiKey = HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "`Authorization: x-api-key <identity key>`. Test keys (`id_test_…`) see sandbox data only; production keys (`id_live_…`) production data only."
  )
)

const failure = Schema.Union(Errors.Unauthorized, Errors.Forbidden)

/** Requires a key of the terminal API integration (A1–A4, sandbox). */
export class TerminalApi extends HttpApiMiddleware.Tag<TerminalApi>()("@cobro/api/Security/TerminalApi", {
  failure,
  provides: CurrentCredential,
  security: { apiKey }
}) {}

/** Requires a key of the payment button integration (B1–B3, C1–C9: "the link API uses the same identity key as the payment button"). */
export class PaymentButton extends HttpApiMiddleware.Tag<PaymentButton>()(
  "@cobro/api/Security/PaymentButton",
  { failure, provides: CurrentCredential, security: { apiKey } }
) {}

/** Requires `Authorization: Bearer <ADMIN_TOKEN>`. */
export class Admin extends HttpApiMiddleware.Tag<Admin>()("@cobro/api/Security/Admin", {
  failure: Errors.Unauthorized,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "`Authorization: Bearer <ADMIN_TOKEN>`")
    )
  }
}) {}
