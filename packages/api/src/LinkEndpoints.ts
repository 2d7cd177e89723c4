/**
 * The payment link API (spec B1–B3) with the payment-button key: the methods with their limits, link
 * creation (every field rule of the request) and the link record, bare and with exact nanoseconds.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

/**
 * The codes of the link API's own errors (beside http-core's `ValidationError`).
 *
 * @category constants
 */
export const Codes = {
  /** 404: no link with this id for this merchant and mode. */
  LinkNotFound: "LinkNotFound",
  /** 403: the merchant's account is disabled: it cannot create links (the code C1 and C4 use too). */
  MerchantDisabled: Errors.Codes.MerchantDisabled
} as const

/**
 * B3's path: the link id, any string (an id that is not a link's is a 404, not a 400).
 *
 * @category schemas
 */
export const LinkPath = Schema.Struct({ payment_link: Schema.String })

/**
 * The link API group (B1–B3): `Authorization: x-api-key <payment button identity key>`.
 *
 * @category groups
 */
export class LinkGroup extends HttpApiGroup.make("links")
  .add(
    HttpApiEndpoint.get("paymentMethods", "/online/link/v1/payment_methods")
      .addSuccess(LinkApi.PaymentMethodsResponse)
      .annotate(OpenApi.Description, "B1: the link methods the merchant offers, each with its `{min, max}`.")
  )
  .add(
    HttpApiEndpoint.post("createLink", "/online/link/v1")
      .pipe(withJsonBody(LinkApi.CreateLinkRequest))
      .addSuccess(LinkApi.CreateLinkResponse, { status: 201 })
      .addError(Errors.Forbidden)
      .annotate(
        OpenApi.Description,
        "B2: creates a link; `payload.url` is `{checkout_url}/<payment_link>`. Every broken rule is a 400 `ValidationError` item naming its field: the request's own rules, and `payment_methods.<i>` not offered by the merchant, a CLOSE `amount.total_amount` outside every allowed method's bounds or below tip plus taxes, an `expiration_date` not in the future. 403 `MerchantDisabled` when the account is disabled."
      )
  )
  .add(
    HttpApiEndpoint.get("readLink", "/online/link/v1/:payment_link")
      .setPath(LinkPath)
      .addSuccess(LinkApi.LinkRecord)
      .addError(Errors.NotFound)
      .annotate(
        OpenApi.Description,
        "B3: the link record, not enveloped; `creation_date` and `expiration_date` are exact integer nanoseconds. A link of another merchant or of the other mode (test vs production key) is a 404 `LinkNotFound`."
      )
  )
  .middleware(Security.PaymentButton)
  .annotate(OpenApi.Title, "payment links") {}
