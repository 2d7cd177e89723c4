/**
 * Wire schemas of the terminal payment API (spec A): payment methods (A1), bound terminals (A2), the
 * checkout request and response (A3) and the fallback notifications query (A4).
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { Envelope } from "../shared/Envelope.js"
import { IntegrationId, TerminalSerial } from "../shared/Ids.js"
import { Email } from "../links/LinkApi.js"
import { Amount, CurrencyCode, RequestAmount, toCents } from "../shared/Money.js"
import { DocumentNumber, DocumentType } from "../shared/Documents.js"
import { FallbackNotification } from "../webhooks/NotificationApi.js"
import * as SafeText from "../shared/SafeText.js"
import { CheckoutTaxes } from "./Taxes.js"
import { CheckoutPaymentMethod, TerminalPaymentMethod } from "./TerminalCheckout.js"

// Values the aggregate and the payer document own; the wire module keeps offering them.
export { DocumentNumber, DocumentType } from "../shared/Documents.js"
export { CheckoutPaymentMethod, TerminalPaymentMethod } from "./TerminalCheckout.js"

/** Optional field that also accepts `null` as "absent"; omitted when encoded. */
const opt = <S extends Schema.Schema.All>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

/**
 * An entry of `payload.payment_methods[]` (A1).
 *
 * @category schemas
 */
export const PaymentMethodEntry = Schema.Struct({ name: TerminalPaymentMethod, enabled: Schema.Boolean })
export type PaymentMethodEntry = typeof PaymentMethodEntry.Type

/**
 * A1 response.
 *
 * @category schemas
 */
export const PaymentMethodsResponse = Envelope(
  Schema.Struct({ payment_methods: Schema.Array(PaymentMethodEntry) })
)
export type PaymentMethodsResponse = typeof PaymentMethodsResponse.Type

/**
 * An entry of `payload.available_terminals[]` (A2): only bound terminals are listed, as `BINDED`.
 *
 * @category schemas
 */
export const TerminalEntry = Schema.Struct({
  terminal_model: Schema.String,
  terminal_serial: TerminalSerial,
  status: Schema.Literal("BINDED"),
  name: Schema.String
})
export type TerminalEntry = typeof TerminalEntry.Type

/**
 * A2 response.
 *
 * @category schemas
 */
export const BoundTerminalsResponse = Envelope(
  Schema.Struct({ available_terminals: Schema.Array(TerminalEntry) })
)
export type BoundTerminalsResponse = typeof BoundTerminalsResponse.Type

/**
 * `payer.document`: every member optional.
 *
 * @category schemas
 */
export const PayerDocument = Schema.Struct({
  document_type: opt(DocumentType),
  document_number: opt(DocumentNumber)
})
export type PayerDocument = typeof PayerDocument.Type

/**
 * `payer`: optional as a whole; an empty object is allowed.
 *
 * @category schemas
 */
export const Payer = Schema.Struct({
  email: opt(Email),
  phone_number: opt(SafeText.SafeString),
  document: opt(PayerDocument)
})
export type Payer = typeof Payer.Type

/**
 * `amount` as sent: both spellings of the total (`total`, `total_amount`) and of the tip (`tip`,
 * `tip_amount`) are accepted.
 *
 * @category schemas
 */
export const CheckoutAmountWire = Schema.Struct({
  currency: CurrencyCode,
  total: opt(RequestAmount),
  total_amount: opt(RequestAmount),
  taxes: CheckoutTaxes,
  tip: opt(RequestAmount),
  tip_amount: opt(RequestAmount)
})

/**
 * `amount` decoded: one spelling, the samples' (`total_amount`, `tip_amount`).
 *
 * @category schemas
 */
export const CheckoutAmountDecoded = Schema.Struct({
  currency: CurrencyCode,
  total_amount: RequestAmount,
  tip_amount: RequestAmount,
  taxes: Schema.typeSchema(CheckoutTaxes)
})

/**
 * `amount` of a checkout. Either spelling of the total and of the tip decodes to `total_amount` and
 * `tip_amount`; encodes with the samples' spelling. Neither spelling present: the field is missing
 * (reported as `amount.total_amount` / `amount.tip_amount`). Both present with different values: a
 * wrong value, reported on `amount.total` / `amount.tip`.
 *
 * @category schemas
 */
export const CheckoutAmount = Schema.transformOrFail(
  CheckoutAmountWire,
  // The decode below reports a tip above the total on its field; the filter keeps the type honest.
  Schema.typeSchema(CheckoutAmountDecoded).pipe(
    Schema.filter((a) => toCents(a.tip_amount) <= toCents(a.total_amount) || "the tip exceeds the total")
  ),
  {
    strict: true,
    decode: (wire, _, ast) => {
      const issues: Array<ParseResult.ParseIssue> = []
      const pick = (primary: "total_amount" | "tip_amount", alias: "total" | "tip"): Amount | undefined => {
        const a = wire[primary]
        const b = wire[alias]
        if (a === undefined && b === undefined) {
          issues.push(
            new ParseResult.Pointer(primary, wire, new ParseResult.Missing(new AST.Type(Amount.ast)))
          )
          return undefined
        }
        if (a !== undefined && b !== undefined && a !== b) {
          issues.push(
            new ParseResult.Pointer(
              alias,
              wire,
              new ParseResult.Type(ast, b, `amount.${alias} and amount.${primary} are both given and differ`)
            )
          )
          return undefined
        }
        return a ?? b
      }
      const total_amount = pick("total_amount", "total")
      const tip_amount = pick("tip_amount", "tip")
      const [first, ...rest] = issues
      if (first !== undefined) {
        return ParseResult.fail(
          rest.length === 0 ? first : new ParseResult.Composite(ast, wire, [first, ...rest])
        )
      }
      if (total_amount === undefined || tip_amount === undefined) {
        return ParseResult.fail(new ParseResult.Type(ast, wire)) // unreachable: a missing value pushed an issue
      }
      // The total includes the tip: a larger tip is a wrong value, on the spelling sent.
      if (toCents(tip_amount) > toCents(total_amount)) {
        const sent = wire.tip_amount !== undefined ? "tip_amount" : "tip"
        return ParseResult.fail(
          new ParseResult.Pointer(
            sent,
            wire,
            new ParseResult.Type(ast, tip_amount, "the tip exceeds the total")
          )
        )
      }
      return ParseResult.succeed({ currency: wire.currency, total_amount, tip_amount, taxes: wire.taxes })
    },
    encode: (amount) =>
      ParseResult.succeed({
        currency: amount.currency,
        total_amount: amount.total_amount,
        taxes: amount.taxes,
        tip_amount: amount.tip_amount
      })
  }
).annotations({ identifier: "CheckoutAmount" })
export type CheckoutAmount = typeof CheckoutAmount.Type

/**
 * The checkout `reference`, returned in the webhook as `data.metadata.reference`: 1 to 255
 * characters, not only blanks.
 *
 * @category schemas
 */
export const CheckoutReference = SafeText.SafeString.pipe(
  Schema.maxLength(255),
  Schema.pattern(/\S/, { message: () => "expected a non-blank reference" })
)
export type CheckoutReference = typeof CheckoutReference.Type

/**
 * A3 request. Unknown fields are ignored; optional fields accept `null` as absent. Decode it with
 * `CheckoutErrors.decodeCheckoutRequest` to get the spec's AP error codes.
 *
 * @category schemas
 */
export const CheckoutRequest = Schema.Struct({
  amount: CheckoutAmount,
  user_email: Email,
  payment_method: CheckoutPaymentMethod,
  terminal_model: SafeText.NonEmptySafeString,
  terminal_serial: TerminalSerial,
  reference: CheckoutReference,
  description: opt(SafeText.SafeString),
  payer: opt(Payer)
}).annotations({ identifier: "CheckoutRequest" })
export type CheckoutRequest = typeof CheckoutRequest.Type

/**
 * A3 response (HTTP 201): the id of the created integration.
 *
 * @category schemas
 */
export const CheckoutResponse = Envelope(Schema.Struct({ integration_id: IntegrationId }))
export type CheckoutResponse = typeof CheckoutResponse.Type

/**
 * A4 query: `is_external_reference`, `"true"` or `"false"`, default false (search by transaction id).
 *
 * @category schemas
 */
export const NotificationsQuery = Schema.Struct({
  is_external_reference: Schema.optionalWith(Schema.BooleanFromString, { default: () => false, exact: true })
})
export type NotificationsQuery = typeof NotificationsQuery.Type

/** The most notifications A4 returns. */
export const MAX_FALLBACK_NOTIFICATIONS = 10

/**
 * A4 response, not enveloped: one notification per matching payment, at most 10.
 *
 * @category schemas
 */
export const NotificationsResponse = Schema.Struct({
  notifications: Schema.Array(FallbackNotification).pipe(Schema.maxItems(MAX_FALLBACK_NOTIFICATIONS))
})
export type NotificationsResponse = typeof NotificationsResponse.Type
