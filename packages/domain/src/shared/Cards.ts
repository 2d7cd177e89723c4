/**
 * Card and method values shared by the merchant's configuration, the terminal checkout, online
 * payments and the notifications that report them (spec A1, A3, C4, D "`data` fields for card
 * payments").
 */
import * as Schema from "effect/Schema"

/**
 * How the card was read.
 *
 * @category schemas
 */
export const CaptureMode = Schema.Literal("CHIP", "CONTACTLESS_CHIP")
export type CaptureMode = typeof CaptureMode.Type

/**
 * The card networks, and `UNKOWN` (spelled so by the spec) when the network is not recognized.
 *
 * @category schemas
 */
export const CardBrand = Schema.Literal(
  "VISA",
  "MASTERCARD",
  "AMEX",
  "DINERS",
  "DISCOVER",
  "JCB",
  "MAESTRO",
  "ELECTRON",
  "CODENSA",
  "UNIONPAY",
  "CABAL",
  "UNKOWN"
)
export type CardBrand = typeof CardBrand.Type

/**
 * Debit or credit card.
 *
 * @category schemas
 */
export const CardType = Schema.Literal("DEBIT", "CREDIT")
export type CardType = typeof CardType.Type

/**
 * A masked card number: the first 6 and last 4 digits visible, the rest `*` (12 to 19 in all).
 *
 * @category schemas
 */
export const MaskedPan = Schema.String.pipe(
  Schema.pattern(/^[0-9]{6}\*{2,9}[0-9]{4}$/, {
    message: () => "expected 6 digits, 2 to 9 '*' and 4 digits"
  }),
  Schema.annotations({ identifier: "MaskedPan" })
)
export type MaskedPan = typeof MaskedPan.Type

/**
 * Terminal payment methods (A) of both API variants, so that an integration written against either
 * keeps working: card (`POS`), the wallets (`WALLET_B` of the beta variant only), a payment link, and
 * the service's QR (`PAY_BY_QR_SERVICE`, current variant only). A merchant enables each of them (A1)
 * and a checkout is paid with one.
 *
 * @category schemas
 */
export const TerminalMethod = Schema.Literal(
  "POS",
  "WALLET_A",
  "WALLET_B",
  "PAY_BY_LINK",
  "PAY_BY_QR_SERVICE"
)
export type TerminalMethod = typeof TerminalMethod.Type

/**
 * Card-present methods: a card, or a card tapped on a mobile device.
 *
 * @category schemas
 */
export const CardPaymentMethod = Schema.Literal("CARD", "SERVICE_TAP")
export type CardPaymentMethod = typeof CardPaymentMethod.Type

/**
 * Methods without card-present data (the spec does not show their `data`): the link and terminal
 * method names; `CREDIT_CARD` is an online card payment (no terminal capture); `CARD` is a terminal
 * card sale refused before a card was read (no `card` object, W14).
 *
 * @category schemas
 */
export const OtherPaymentMethod = Schema.Literal(
  "CARD",
  "CREDIT_CARD",
  "PSE",
  "BOTON_BANK",
  "WALLET_A",
  "WALLET_B",
  "PAY_BY_QR_SERVICE"
)
export type OtherPaymentMethod = typeof OtherPaymentMethod.Type
