/**
 * The online payments API (spec C1–C9, beta): intents, attempts, the payment read, PSE banks, void
 * and refunds, with the payment-button key; and the operator's refund review. Bodies as the spec's
 * samples show them: intent, attempt and payment bare; 3DS, banks and refund status enveloped.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

const ReferencePath = Schema.Struct({ reference_id: Schema.String })
const TransactionPath = Schema.Struct({ transaction_id: Schema.String })

/**
 * C4's 201: the bare attempt response, or the enveloped 3DS response when a challenge is required.
 *
 * @category schemas
 */
export const AttemptSuccess = Schema.Union(
  OnlineApi.AttemptResponse,
  OnlineApi.ThreeDsAttemptResponse
).annotations({
  identifier: "AttemptSuccess"
})

/**
 * The online payments group (C1–C9): `Authorization: x-api-key <payment button identity key>`.
 *
 * @category groups
 */
export class OnlineGroup extends HttpApiGroup.make("online")
  .add(
    HttpApiEndpoint.post("createIntent", "/v1/payment-intent")
      .pipe(withJsonBody(OnlineApi.IntentCreateRequest))
      .addSuccess(OnlineApi.IntentResponse, { status: 201 })
      .addError(Errors.Forbidden)
      .addError(Errors.Conflict)
      .annotate(
        OpenApi.Description,
        "C1: creates an intent. 409 `IntentAlreadyExists` when the `reference_id` exists for this key; 403 `MerchantDisabled` when the merchant's account is disabled."
      )
  )
  .add(
    HttpApiEndpoint.get("readIntent", "/v1/payment-intent/:reference_id")
      .setPath(ReferencePath)
      .addSuccess(OnlineApi.IntentResponse)
      .addError(Errors.NotFound)
  )
  .add(
    HttpApiEndpoint.put("updateIntent", "/v1/payment-intent")
      .pipe(withJsonBody(OnlineApi.IntentUpdateRequest))
      .addSuccess(OnlineApi.IntentResponse)
      .addError(Errors.NotFound)
      .addError(Errors.Conflict)
  )
  .add(
    HttpApiEndpoint.post("attempt", "/v1/payment")
      .pipe(withJsonBody(OnlineApi.AttemptRequest))
      // One success per member: HttpApi splits a union into its members, and each keeps the 201.
      .addSuccess(OnlineApi.AttemptResponse, { status: 201 })
      .addSuccess(OnlineApi.ThreeDsAttemptResponse, { status: 201 })
      .addError(Errors.Forbidden)
      .addError(Errors.NotFound)
      .addError(Errors.Conflict)
      .annotate(
        OpenApi.Description,
        "C4: a payment attempt on an intent. 403 `MerchantDisabled` when the merchant's account is disabled (nothing is recorded)."
      )
  )
  .add(HttpApiEndpoint.get("banks", "/v1/payment/pse/banks").addSuccess(OnlineApi.BanksResponse))
  .add(
    HttpApiEndpoint.get("refundStatus", "/v1/payment/refund/:transaction_id")
      .setPath(TransactionPath)
      .addSuccess(OnlineApi.RefundStatusResponse)
      .addError(Errors.NotFound)
  )
  .add(
    HttpApiEndpoint.get("readPayment", "/v1/payment/:reference_id")
      .setPath(ReferencePath)
      .addSuccess(OnlineApi.PaymentResponse)
      .addError(Errors.NotFound)
  )
  .add(
    HttpApiEndpoint.post("voidPayment", "/v1/payment/void")
      .pipe(withJsonBody(OnlineApi.VoidRequest))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Errors.NotFound)
      .addError(Errors.Conflict)
  )
  .add(
    HttpApiEndpoint.post("requestRefund", "/v1/payment/refund")
      .pipe(withJsonBody(OnlineApi.RefundRequest))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Errors.NotFound)
      .addError(Errors.Conflict)
  )
  .middleware(Security.PaymentButton)
  .annotate(OpenApi.Title, "online payments")
  .annotate(
    OpenApi.Description,
    "Online payments (C1–C9, beta): intents, attempts with 3DS, payments, PSE banks, void and refunds. `Authorization: x-api-key <payment button identity key>`."
  ) {}

/**
 * `POST /admin/v1/refunds/{transaction_id}/review`: the service's review of a transaction's latest refund.
 *
 * @category schemas
 */
export const ReviewRefundRequest = Schema.Struct({ outcome: Schema.Literal("APPROVED", "REJECTED") })

/**
 * 200 of a review: the refund as it now stands.
 *
 * @category schemas
 */
export const ReviewedRefundBody = Schema.Struct({
  refund_id: Schema.String,
  transaction_id: Schema.String,
  status: OnlineApi.RefundStatus,
  date_applied: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AdminReviewedRefund" })

/**
 * The operator's side of online payments: the refund review (`Authorization: Bearer <ADMIN_TOKEN>`).
 *
 * @category groups
 */
export class OnlineAdminGroup extends HttpApiGroup.make("onlineAdmin")
  .add(
    HttpApiEndpoint.post("reviewRefund", "/admin/v1/refunds/:transaction_id/review")
      .setPath(TransactionPath)
      .pipe(withJsonBody(ReviewRefundRequest))
      .addSuccess(ReviewedRefundBody)
      .addError(Errors.NotFound)
      .addError(Errors.Conflict)
  )
  .middleware(Security.Admin)
  .annotate(OpenApi.Title, "admin: refunds")
  .annotate(
    OpenApi.Description,
    "The service's review of online refunds: production refunds stay PROCESSING until reviewed here; sandbox refunds are approved on their own 60 seconds after the request."
  ) {}

const ChallengePath = Schema.Struct({ transaction_id: Schema.String, token: Schema.String })

/**
 * The cardholder's decision, sent by the challenge page's form.
 *
 * @category schemas
 */
export const ChallengeDecision = Schema.Struct({ decision: Schema.Literal("approve", "decline") }).pipe(
  HttpApiSchema.withEncoding({ kind: "UrlParams" })
)

const Html = HttpApiSchema.Text({ contentType: "text/html" })

/**
 * Cobro's 3DS challenge (and bank) page, where `next_actions.redirect_url` points: HTML for the
 * cardholder's browser, no API key (the one-time token in the path authorizes it).
 *
 * @category groups
 */
export class ChallengeGroup extends HttpApiGroup.make("challenge")
  .add(
    HttpApiEndpoint.get("showChallenge", "/challenge/3ds/:transaction_id/:token")
      .setPath(ChallengePath)
      .addSuccess(Html)
      .annotate(OpenApi.Description, "The simulated 3DS challenge: the amount, approve or decline.")
  )
  .add(
    HttpApiEndpoint.post("completeChallenge", "/challenge/3ds/:transaction_id/:token")
      .setPath(ChallengePath)
      .setPayload(ChallengeDecision)
      .addSuccess(Html)
      .annotate(
        OpenApi.Description,
        "Records the decision, then sends the cardholder to the intent's callback_url (303 See Other), or shows the result."
      )
  )
  .annotate(OpenApi.Title, "3DS challenge page")
  .annotate(OpenApi.Description, "HTML for the cardholder's browser; no API key.") {}
