/**
 * Realistic, deterministic sale data for simulated outcomes (spec D, "`data` fields for card
 * payments"): masked PAN with a real BIN of its brand (first 6 and last 4 digits), brand, capture
 * mode, card type, cardholder, installments and a 6-digit approval number. The same transaction
 * always gets the same data, so a repeated outcome is identical (and a no-op on the checkout).
 */
import * as Option from "effect/Option"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import type * as Notification from "@cobro/domain/Notification"
import { unchecked } from "@cobro/domain/Unchecked"

/** One card product: its brand, a BIN of that brand, the card number's length and type. */
interface Product {
  readonly brand: Notification.CardBrand
  readonly bin: string
  readonly length: number
  readonly cardType: Notification.CardType
}

/** BINs (first 6 digits) issued by each network, with the length of their card numbers. */
export const PRODUCTS: ReadonlyArray<Product> = [
  { brand: "VISA", bin: "450799", length: 16, cardType: "CREDIT" },
  { brand: "VISA", bin: "491268", length: 16, cardType: "DEBIT" },
  { brand: "MASTERCARD", bin: "552233", length: 16, cardType: "CREDIT" },
  { brand: "MASTERCARD", bin: "222300", length: 16, cardType: "CREDIT" },
  { brand: "MAESTRO", bin: "676770", length: 16, cardType: "DEBIT" },
  { brand: "ELECTRON", bin: "417500", length: 16, cardType: "DEBIT" },
  { brand: "AMEX", bin: "377813", length: 15, cardType: "CREDIT" },
  { brand: "DINERS", bin: "360324", length: 14, cardType: "CREDIT" },
  { brand: "DISCOVER", bin: "601100", length: 16, cardType: "CREDIT" },
  { brand: "JCB", bin: "353011", length: 16, cardType: "CREDIT" },
  { brand: "CODENSA", bin: "590712", length: 16, cardType: "CREDIT" },
  { brand: "UNIONPAY", bin: "622126", length: 16, cardType: "DEBIT" },
  { brand: "CABAL", bin: "604201", length: 16, cardType: "DEBIT" }
]

const CARDHOLDERS = [
  "ANA PEREZ",
  "CARLOS GOMEZ",
  "LUISA FERNANDA RIOS",
  "JUAN DAVID MORALES",
  "MARIA CAMILA TORRES",
  "ANDRES FELIPE CASTRO"
]

const DECLINES = ["insufficient funds", "card declined by the issuer", "incorrect PIN", "expired card"]

/** A 32-bit FNV-1a hash of the text, with a salt, as a stream of choices. */
const hash = (text: string, salt: number): number => {
  let h = (0x811c9dc5 ^ salt) >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

const pick = <A>(items: ReadonlyArray<A>, seed: string, salt: number): A =>
  items[hash(seed, salt) % items.length]!

const digits = (seed: string, salt: number, count: number): string =>
  String(hash(seed, salt) % 10 ** count).padStart(count, "0")

/** The card read for a transaction on a terminal. */
export const cardFor = (transactionId: string, terminalSerial: string): TerminalCheckout.Card => {
  const product = pick(PRODUCTS, transactionId, 1)
  const installments = product.cardType === "CREDIT" ? pick([1, 1, 1, 3, 6, 12, 24, 36], transactionId, 2) : 1
  return new TerminalCheckout.Card(
    {
      maskedPan: `${product.bin}${"*".repeat(product.length - 10)}${digits(transactionId, 3, 4)}`,
      brand: product.brand,
      captureMode: pick(["CHIP", "CONTACTLESS_CHIP"] as const, transactionId, 4),
      cardType: product.cardType,
      cardholderName: pick(CARDHOLDERS, transactionId, 5),
      installments,
      terminalId: terminalSerial
    },
    unchecked
  )
}

/** A 6-digit approval number from the network. */
export const approvalNumberFor = (transactionId: string): string => digits(transactionId, 6, 6)

/** The code that identifies the transaction on the terminal. */
export const serviceCodeFor = (transactionId: string, terminalSerial: string): string =>
  `${terminalSerial}-${digits(transactionId, 7, 8)}`

/**
 * How the customer paid for a checkout method: card (`POS`, or `""` where the customer picks card on
 * the selection screen), the wallets and the service's QR as themselves, and a payment link paid on
 * the web as an online card payment (`CREDIT_CARD`, no card present).
 */
export const salePaymentMethodFor = (checkoutMethod: string): TerminalCheckout.SalePaymentMethod => {
  switch (checkoutMethod) {
    case "WALLET_A":
    case "WALLET_B":
    case "PAY_BY_QR_SERVICE":
      return checkoutMethod
    case "PAY_BY_LINK":
      return "CREDIT_CARD"
    default:
      return "CARD"
  }
}

const isCard = (method: TerminalCheckout.SalePaymentMethod) => method === "CARD" || method === "SERVICE_TAP"

/** The approved sale a terminal reports for a transaction. */
export const saleFor = (input: {
  readonly transactionId: string
  readonly terminalSerial: string
  readonly checkoutMethod: string
  readonly payerEmail: Option.Option<string>
}): TerminalCheckout.Sale => {
  const paymentMethod = salePaymentMethodFor(input.checkoutMethod)
  return new TerminalCheckout.Sale(
    {
      paymentMethod,
      serviceCode: serviceCodeFor(input.transactionId, input.terminalSerial),
      approvalNumber: Option.some(approvalNumberFor(input.transactionId)),
      payerEmail: input.payerEmail,
      card: isCard(paymentMethod)
        ? Option.some(cardFor(input.transactionId, input.terminalSerial))
        : Option.none()
    },
    unchecked
  )
}

/** Why a transaction is declined, and the card read if it was a card payment. */
export const declineFor = (input: {
  readonly transactionId: string
  readonly terminalSerial: string
  readonly checkoutMethod: string
}): { readonly reason: string; readonly card: Option.Option<TerminalCheckout.Card> } => ({
  reason: pick(DECLINES, input.transactionId, 8),
  card: isCard(salePaymentMethodFor(input.checkoutMethod))
    ? Option.some(cardFor(input.transactionId, input.terminalSerial))
    : Option.none()
})
