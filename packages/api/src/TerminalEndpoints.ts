/**
 * The terminal payment API (spec A1–A4) with the terminal-API key: payment methods, bound terminals,
 * the checkout (201 `payload.integration_id`, AP001–AP006) and the fallback notifications query.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

/**
 * A4's path: the transaction id, or the external reference with `is_external_reference=true`.
 *
 * @category schemas
 */
export const NotificationsPath = Schema.Struct({ payment_id: Schema.String })

/**
 * The terminal API group (A1–A4): `Authorization: x-api-key <terminal API identity key>`.
 *
 * @category groups
 */
export class TerminalGroup extends HttpApiGroup.make("terminal")
  .add(
    HttpApiEndpoint.get("paymentMethods", "/payments/payment-methods").addSuccess(
      TerminalApi.PaymentMethodsResponse
    )
  )
  .add(
    HttpApiEndpoint.get("boundTerminals", "/payments/binded-terminals").addSuccess(
      TerminalApi.BoundTerminalsResponse
    )
  )
  .add(
    HttpApiEndpoint.post("checkout", "/payments/app-checkout")
      .pipe(withJsonBody(TerminalApi.CheckoutRequest))
      .addSuccess(TerminalApi.CheckoutResponse, { status: 201 })
      .addError(Errors.InternalServerError)
      .annotate(
        OpenApi.Description,
        "AP002–AP006 (400) name the field in `errors[0].field`; AP001 (500) is any failure not mapped. An unreachable terminal still answers 201: the checkout waits and is pushed again when the terminal is back."
      )
  )
  .add(
    HttpApiEndpoint.get("notifications", "/payments/webhook/notifications/:payment_id")
      .setPath(NotificationsPath)
      .setUrlParams(TerminalApi.NotificationsQuery)
      .addSuccess(TerminalApi.NotificationsResponse)
  )
  .middleware(Security.TerminalApi)
  .annotate(OpenApi.Title, "terminal payments") {}
