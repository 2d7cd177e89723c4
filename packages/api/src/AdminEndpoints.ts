/**
 * The admin API (issue 4, "Admin and sandbox contract"; scripts and tests outside the repository
 * depend on it, so its paths and bodies stay exactly as written there). Calls carry
 * `Authorization: Bearer <ADMIN_TOKEN>`. Success bodies are bare JSON; errors use the envelope.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as Merchant from "@cobro/domain/Merchant"
import { Amount } from "@cobro/domain/Money"
import { Integration, KeyMode } from "@cobro/domain/SigningKey"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

/**
 * A merchant's name: 1 to 200 characters, not only blanks.
 *
 * @category schemas
 */
export const MerchantName = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))

/**
 * `POST /admin/v1/merchants`.
 *
 * @category schemas
 */
export const CreateMerchantRequest = Schema.Struct({ name: MerchantName })

/**
 * A key pair in clear.
 *
 * @category schemas
 */
export const KeyPairBody = Schema.Struct({ identity_key: Schema.String, secret_key: Schema.String })

/**
 * Both modes of one integration's keys.
 *
 * @category schemas
 */
export const IntegrationKeysBody = Schema.Struct({ production: KeyPairBody, test: KeyPairBody })

/**
 * 201 of `POST /admin/v1/merchants`: the only time the keys are shown.
 *
 * @category schemas
 */
export const CreatedMerchantBody = Schema.Struct({
  merchant_id: Schema.String,
  keys: Schema.Struct({ terminal_api: IntegrationKeysBody, payment_button: IntegrationKeysBody })
}).annotations({ identifier: "AdminCreatedMerchant" })

/**
 * `POST /admin/v1/merchants/{merchant_id}/terminals`.
 *
 * @category schemas
 */
export const BindTerminalRequest = Schema.Struct({
  terminal_model: Schema.String.annotations({ description: "SMART or SMART_PRO" }),
  terminal_serial: TerminalSerial,
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))
})

/**
 * A bound terminal: the A2 entry plus whether it is selected for the API.
 *
 * @category schemas
 */
export const TerminalBody = Schema.Struct({
  terminal_model: Merchant.TerminalModel,
  terminal_serial: Schema.String,
  name: Schema.String,
  status: Schema.Literal("BINDED"),
  api_enabled: Schema.Boolean
}).annotations({ identifier: "AdminTerminal" })

/**
 * `PATCH /admin/v1/merchants/{merchant_id}/terminals/{terminal_serial}`.
 *
 * @category schemas
 */
export const PatchTerminalRequest = Schema.Struct({ api_enabled: Schema.Boolean })

const Bounds = Schema.Struct({ min: Amount, max: Amount })

/** The link methods a merchant offers, each with its bounds (a method not named is not offered). */
const LinkMethods = Schema.Struct({
  CREDIT_CARD: Schema.optional(Bounds),
  PSE: Schema.optional(Bounds),
  BOTON_BANK: Schema.optional(Bounds),
  WALLET_A: Schema.optional(Bounds)
})

/**
 * `PUT /admin/v1/merchants/{merchant_id}/payment-methods`: each section given replaces that section.
 *
 * @category schemas
 */
export const PaymentMethodsRequest = Schema.Struct({
  terminal: Schema.optional(
    Schema.Struct({
      POS: Schema.optional(Schema.Boolean),
      WALLET_A: Schema.optional(Schema.Boolean),
      WALLET_B: Schema.optional(Schema.Boolean),
      PAY_BY_LINK: Schema.optional(Schema.Boolean),
      PAY_BY_QR_SERVICE: Schema.optional(Schema.Boolean)
    })
  ),
  link: Schema.optional(LinkMethods)
})

/**
 * 200 of the payment methods: every terminal method with its switch, the link methods offered.
 *
 * @category schemas
 */
export const PaymentMethodsBody = Schema.Struct({
  terminal: Schema.Struct({
    POS: Schema.Boolean,
    WALLET_A: Schema.Boolean,
    WALLET_B: Schema.Boolean,
    PAY_BY_LINK: Schema.Boolean,
    PAY_BY_QR_SERVICE: Schema.Boolean
  }),
  link: LinkMethods
}).annotations({ identifier: "AdminPaymentMethods" })

/**
 * `PUT /admin/v1/merchants/{merchant_id}/webhook`: `standard_webhooks` asks for the Standard Webhooks
 * headers beside the spec's signature (W19); absent, off.
 *
 * @category schemas
 */
export const WebhookRequest = Schema.Struct({
  url: Schema.String,
  mode: KeyMode,
  standard_webhooks: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "AdminWebhookRequest" })

/**
 * Its 200: the webhook as registered.
 *
 * @category schemas
 */
export const WebhookBody = Schema.Struct({
  url: Schema.String,
  mode: KeyMode,
  standard_webhooks: Schema.Boolean
}).annotations({ identifier: "AdminWebhook" })

/**
 * The 200 of `PUT …/webhook` (and `cobro webhook set --json`) for a webhook as registered.
 *
 * @category constructors
 */
export const webhookBody = (set: {
  readonly url: string
  readonly mode: KeyMode
  readonly standardWebhooks: boolean
}): typeof WebhookBody.Type => ({ url: set.url, mode: set.mode, standard_webhooks: set.standardWebhooks })

/**
 * `POST /admin/v1/merchants/{merchant_id}/keys/rotate`.
 *
 * @category schemas
 */
export const RotateKeyRequest = Schema.Struct({ integration: Integration, mode: KeyMode })

/**
 * 200 of a rotation: the new pair, which replaces the old one at once.
 *
 * @category schemas
 */
export const RotatedKeyBody = Schema.Struct({
  integration: Integration,
  mode: KeyMode,
  identity_key: Schema.String,
  secret_key: Schema.String
}).annotations({ identifier: "AdminRotatedKey" })

/**
 * The largest advance of the virtual clock in one call: ten years.
 *
 * @category constants
 */
export const MAX_ADVANCE_SECONDS = 10 * 366 * 24 * 3600

/**
 * `POST /admin/v1/clock/advance`.
 *
 * @category schemas
 */
export const AdvanceClockRequest = Schema.Struct({
  seconds: Schema.Number.pipe(
    Schema.finite(),
    Schema.nonNegative(),
    Schema.lessThanOrEqualTo(MAX_ADVANCE_SECONDS)
  )
})

/**
 * 200 of a clock advance: the new now, ISO 8601 in UTC.
 *
 * @category schemas
 */
export const ClockBody = Schema.Struct({ now: Schema.String }).annotations({ identifier: "AdminClock" })

/**
 * One delivery attempt (issue 5): `status_code` is the HTTP status answered, `null` when nothing came
 * back; then `error` says why and `response_snippet` is `null`.
 *
 * @category schemas
 */
export const AttemptBody = Schema.Struct({
  attempt: Schema.Int,
  time: Schema.String.annotations({ description: "ISO 8601, UTC" }),
  delivered: Schema.Boolean,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  latency_ms: Schema.Number,
  response_snippet: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AdminDeliveryAttempt" })

/**
 * A notification's delivery and every attempt made, in order (issue 5, W4/W5).
 *
 * @category schemas
 */
export const DeliveryBody = Schema.Struct({
  notification_id: Schema.String,
  merchant_id: Schema.String,
  subject: Schema.String,
  type: WebhookDelivery.NotificationType,
  status: WebhookDelivery.Status,
  sandbox: Schema.Boolean,
  url: Schema.String,
  next_due_at: Schema.NullOr(Schema.String).annotations({
    description: "ISO 8601, UTC; null unless PENDING"
  }),
  attempts: Schema.Array(AttemptBody)
}).annotations({ identifier: "AdminDelivery" })

/**
 * `PUT /admin/v1/merchants/{merchant_id}/status`: enable or disable the account (M1, L6a).
 *
 * @category schemas
 */
export const MerchantStatusRequest = Schema.Struct({ status: Merchant.Status })

/**
 * 200 of a status change: the account's status after it (the same when it had it already).
 *
 * @category schemas
 */
export const MerchantStatusBody = Schema.Struct({
  merchant_id: Schema.String,
  status: Merchant.Status
}).annotations({ identifier: "AdminMerchantStatus" })

/**
 * The codes of the admin link call's own errors.
 *
 * @category constants
 */
export const LinkCodes = {
  /** 404: no payment link with this id (in either mode). */
  LinkNotFound: "LinkNotFound",
  /** 409: the link is PROCESSING, PAID, REJECTED or EXPIRED: only an ACTIVE link can be cancelled. */
  LinkNotInState: "LinkNotInState"
} as const

/** A link id from the path: any string (an id that is not a link's is a 404, not a 400). */
const AdminLinkPath = Schema.Struct({ payment_link: Schema.String })

const NotificationPath = Schema.Struct({ notification_id: Schema.String })

const MerchantPath = Schema.Struct({ merchant_id: Schema.String })
const TerminalPath = Schema.Struct({ merchant_id: Schema.String, terminal_serial: Schema.String })

/**
 * The admin group.
 *
 * @category groups
 */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createMerchant", "/admin/v1/merchants")
      .pipe(withJsonBody(CreateMerchantRequest))
      .addSuccess(CreatedMerchantBody, { status: 201 })
  )
  .add(
    HttpApiEndpoint.post("bindTerminal", "/admin/v1/merchants/:merchant_id/terminals")
      .setPath(MerchantPath)
      .pipe(withJsonBody(BindTerminalRequest))
      .addSuccess(TerminalBody, { status: 201 })
  )
  .add(
    HttpApiEndpoint.patch("patchTerminal", "/admin/v1/merchants/:merchant_id/terminals/:terminal_serial")
      .setPath(TerminalPath)
      .pipe(withJsonBody(PatchTerminalRequest))
      .addSuccess(TerminalBody)
  )
  .add(
    HttpApiEndpoint.put("setPaymentMethods", "/admin/v1/merchants/:merchant_id/payment-methods")
      .setPath(MerchantPath)
      .pipe(withJsonBody(PaymentMethodsRequest))
      .addSuccess(PaymentMethodsBody)
  )
  .add(
    HttpApiEndpoint.put("setWebhook", "/admin/v1/merchants/:merchant_id/webhook")
      .setPath(MerchantPath)
      .pipe(withJsonBody(WebhookRequest))
      .addSuccess(WebhookBody)
  )
  .add(
    HttpApiEndpoint.del("deleteWebhook", "/admin/v1/merchants/:merchant_id/webhook")
      .setPath(MerchantPath)
      .setUrlParams(Schema.Struct({ mode: KeyMode }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Errors.BadRequest)
  )
  .add(
    HttpApiEndpoint.post("rotateKey", "/admin/v1/merchants/:merchant_id/keys/rotate")
      .setPath(MerchantPath)
      .pipe(withJsonBody(RotateKeyRequest))
      .addSuccess(RotatedKeyBody)
  )
  .add(
    HttpApiEndpoint.put("setMerchantStatus", "/admin/v1/merchants/:merchant_id/status")
      .setPath(MerchantPath)
      .pipe(withJsonBody(MerchantStatusRequest))
      .addSuccess(MerchantStatusBody)
      .annotate(
        OpenApi.Description,
        "Enables or disables the merchant's account. A disabled account cannot ask for payments (A3 is AP004, B2, C1 and C4 are 403 `MerchantDisabled`, its links cannot be paid) and still answers every read. Setting the status it has is a 200 that changes nothing."
      )
  )
  .add(
    HttpApiEndpoint.post("cancelLink", "/admin/v1/links/:payment_link/cancel")
      .setPath(AdminLinkPath)
      .addSuccess(LinkApi.LinkRecord)
      .annotate(
        OpenApi.Description,
        "Cancels a payment link (the spec has no public call for it): 200 with its B3 record, status CANCELLED; the link can no longer be paid. Cancelling a CANCELLED link is a 200 that changes nothing. 404 `LinkNotFound`; 409 `LinkNotInState` when the link is being paid (PROCESSING), or PAID, REJECTED or EXPIRED."
      )
  )
  .add(
    HttpApiEndpoint.post("advanceClock", "/admin/v1/clock/advance")
      .pipe(withJsonBody(AdvanceClockRequest))
      .addSuccess(ClockBody)
  )
  .add(
    HttpApiEndpoint.get("listDeliveryAttempts", "/admin/v1/notifications/:notification_id/attempts")
      .setPath(NotificationPath)
      .addSuccess(DeliveryBody)
  )
  .add(
    HttpApiEndpoint.post("resendNotification", "/admin/v1/notifications/:notification_id/resend")
      .setPath(NotificationPath)
      .addSuccess(DeliveryBody, { status: 202 })
  )
  .addError(Errors.NotFound)
  .addError(Errors.Conflict)
  .middleware(Security.Admin)
  .annotate(OpenApi.Title, "admin")
  .annotate(
    OpenApi.Description,
    "Operator API: merchants (and their status), keys, terminals, methods, webhooks, payment links (cancel), webhook deliveries, the sandbox clock. `Authorization: Bearer <ADMIN_TOKEN>`."
  ) {}
