/**
 * Wire schemas of the payment link API (spec B): the methods-with-limits response (B1), the link
 * create request and response (B2) and the link record (B3). Also the e-mail and https URL rules.
 */
import type { LazyArbitrary } from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import { Envelope } from "../shared/Envelope.js"
import { PaymentLinkId } from "../shared/Ids.js"
import { Amount, Currency, RequestAmount, RequestTaxLine, TaxLine } from "../shared/Money.js"
import { Nanos } from "../shared/Nanos.js"
import * as ReturnUrl from "../shared/ReturnUrl.js"
import * as SafeText from "../shared/SafeText.js"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * An e-mail address: `local@domain.tld`, no spaces or control characters, at most 254 characters.
 *
 * @category schemas
 */
export const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(EMAIL, { message: () => "expected an e-mail address" }),
  Schema.filter((s) => (SafeText.isSafe(s) && !SafeText.hasControl(s)) || "expected an e-mail address"),
  Schema.annotations({
    identifier: "Email",
    arbitrary: () => (fc) =>
      fc
        .tuple(fc.stringMatching(/^[a-z0-9._-]{1,20}$/), fc.domain())
        .map(([local, domain]) => `${local}@${domain}`)
        .filter((s) => EMAIL.test(s) && s.length <= 254)
  })
)
export type Email = typeof Email.Type

// The return-URL rule (no control characters, which the URL parser would drop silently) plus https.
const isHttpsUrl = (s: string): boolean => s.startsWith("https://") && ReturnUrl.isReturnUrl(s)

const httpsUrlArbitrary =
  (...suffixes: readonly [string, ...Array<string>]): LazyArbitrary<string> =>
  (fc) =>
    fc
      .tuple(fc.domain(), fc.stringMatching(/^[a-z0-9_-]{0,12}$/), fc.constantFrom(...suffixes))
      .map(([host, path, end]) => `https://${host}/${path}${end}`)

/**
 * A valid absolute URL that starts with `https://` (lower-case scheme, as the spec writes it).
 *
 * @category schemas
 */
export const HttpsUrl = Schema.String.pipe(
  Schema.filter((s) => isHttpsUrl(s) || "expected a valid URL starting with https://"),
  Schema.annotations({
    identifier: "HttpsUrl",
    arbitrary: () => httpsUrlArbitrary("")
  })
)
export type HttpsUrl = typeof HttpsUrl.Type

const IMAGE_PATH = /\.(png|jpg)$/i

/**
 * An https URL whose path ends with `.png` or `.jpg`. The extension is matched without regard to
 * case and on the URL's path, so a query string or fragment after it (`logo.png?v=2`) is allowed.
 *
 * @category schemas
 */
export const ImageUrl = Schema.String.pipe(
  Schema.filter(
    (s) =>
      (isHttpsUrl(s) && IMAGE_PATH.test(new URL(s).pathname)) ||
      "expected an https URL of a .png or .jpg image"
  ),
  Schema.annotations({
    identifier: "ImageUrl",
    arbitrary: () => httpsUrlArbitrary(".png", ".jpg", ".PNG", ".JPG")
  })
)
export type ImageUrl = typeof ImageUrl.Type

/**
 * Link payment methods (B1 keys, B2 `payment_methods`, B3 `payment_method`), in upper case.
 *
 * @category schemas
 */
export const LinkPaymentMethod = Schema.Literal("CREDIT_CARD", "PSE", "BOTON_BANK", "WALLET_A")
export type LinkPaymentMethod = typeof LinkPaymentMethod.Type

/**
 * The amount limits of one method: minimum and maximum.
 *
 * @category schemas
 */
export const MethodLimits = Schema.Struct({ min: Amount, max: Amount })
export type MethodLimits = typeof MethodLimits.Type

/**
 * B1 response: `payload.payment_methods`, a map from method name to its limits.
 *
 * @category schemas
 */
export const PaymentMethodsResponse = Envelope(
  Schema.Struct({
    payment_methods: Schema.partial(Schema.Record({ key: LinkPaymentMethod, value: MethodLimits }))
  })
)
export type PaymentMethodsResponse = typeof PaymentMethodsResponse.Type

/**
 * `OPEN`: the payer chooses the amount; `CLOSE`: the merchant sets it.
 *
 * @category schemas
 */
export const AmountType = Schema.Literal("OPEN", "CLOSE")
export type AmountType = typeof AmountType.Type

/**
 * The merchant's reference of a link: letters, digits, `_` and `-`, 1 to 60 characters.
 *
 * @category schemas
 */
export const LinkReference = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,60}$/, {
    message: () => "expected 1 to 60 letters, digits, '_' or '-'"
  }),
  Schema.annotations({ identifier: "LinkReference" })
)
export type LinkReference = typeof LinkReference.Type

const codePoints = (s: string): number => [...s].length

/**
 * A link description: 2 to 100 characters (counted as Unicode code points), no NUL or unpaired surrogate.
 *
 * @category schemas
 */
export const LinkDescription = SafeText.SafeString.pipe(
  Schema.filter((s) => (codePoints(s) >= 2 && codePoints(s) <= 100) || "expected 2 to 100 characters"),
  Schema.annotations({
    identifier: "LinkDescription",
    arbitrary: () => (fc) => fc.string({ minLength: 2, maxLength: 100 })
  })
)
export type LinkDescription = typeof LinkDescription.Type

/**
 * Optional field that also accepts `null` as "absent" (many client libraries write nulls); it is
 * omitted when encoded.
 */
const opt = <S extends Schema.Schema.All>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

/**
 * The `amount` of a link: every member optional; `total_amount` is required for CLOSE links.
 *
 * @category schemas
 */
export const LinkAmount = Schema.Struct({
  currency: opt(Currency),
  taxes: opt(Schema.Array(RequestTaxLine)),
  tip_amount: opt(RequestAmount),
  total_amount: opt(RequestAmount)
})
export type LinkAmount = typeof LinkAmount.Type

/**
 * B2 request. A CLOSE link must carry `amount.total_amount` (reported on that path); an OPEN link
 * may omit `amount`. Unknown fields are ignored.
 *
 * @category schemas
 */
export const CreateLinkRequest = Schema.Struct({
  amount_type: AmountType,
  amount: opt(LinkAmount),
  reference: opt(LinkReference),
  description: opt(LinkDescription),
  expiration_date: opt(Nanos),
  callback_url: opt(HttpsUrl),
  payment_methods: opt(Schema.Array(LinkPaymentMethod)),
  payer_email: opt(Email),
  image_url: opt(ImageUrl)
}).pipe(
  Schema.filter(
    (request) =>
      request.amount_type === "OPEN" ||
      request.amount?.total_amount !== undefined || {
        path: request.amount === undefined ? ["amount"] : ["amount", "total_amount"],
        message: "a CLOSE link requires amount.total_amount"
      }
  ),
  Schema.annotations({ identifier: "CreateLinkRequest" })
)
export type CreateLinkRequest = typeof CreateLinkRequest.Type

/**
 * B2 response: the link id and its checkout address `{checkout_url}/<payment_link>`.
 *
 * @category schemas
 */
export const CreateLinkResponse = Envelope(Schema.Struct({ payment_link: PaymentLinkId, url: Schema.String }))
export type CreateLinkResponse = typeof CreateLinkResponse.Type

/**
 * The states of a link (the current variant's six).
 *
 * @category schemas
 */
export const LinkStatus = Schema.Literal("ACTIVE", "PROCESSING", "PAID", "REJECTED", "CANCELLED", "EXPIRED")
export type LinkStatus = typeof LinkStatus.Type

/**
 * B3 response, not enveloped. `api_version` is the integer 1 as the sample shows; `total` (not
 * `total_amount`) as the sample shows; `payment_method` is the upper-case method used, or `""`
 * while no payment was made; both timestamps are nanoseconds.
 *
 * @category schemas
 */
export const LinkRecord = Schema.Struct({
  api_version: Schema.Literal(1),
  id: PaymentLinkId,
  total: Amount,
  subtotal: Amount,
  tip_amount: Amount,
  taxes: Schema.Array(TaxLine),
  status: LinkStatus,
  expiration_date: Schema.NullOr(Nanos),
  creation_date: Nanos,
  description: Schema.NullOr(Schema.String),
  payment_method: Schema.Union(LinkPaymentMethod, Schema.Literal("")),
  transaction_id: Schema.NullOr(Schema.String),
  amount_type: AmountType,
  is_sandbox: Schema.Boolean,
  reference: Schema.String
}).annotations({ identifier: "LinkRecord" })
export type LinkRecord = typeof LinkRecord.Type
