/**
 * Amounts as the spec carries them: JSON numbers in the currency's major unit (COP has no minor
 * unit in practice), never negative, never NaN or infinite.
 */
import * as Schema from "effect/Schema"

/**
 * A non-negative, finite amount.
 *
 * @category schemas
 */
export const Amount = Schema.Number.pipe(Schema.finite(), Schema.nonNegative(), Schema.brand("Amount"))
export type Amount = typeof Amount.Type

/**
 * The largest amount a request may carry: 10^12 (a trillion pesos, far above any sale). In
 * hundredths it stays below 2^53, so tax and tip arithmetic in cents is exact.
 */
export const MAX_AMOUNT = 1_000_000_000_000

/** The decimals an amount may have: 2 for both currencies (ISO 4217 gives COP and USD 2). */
export const MAX_DECIMALS = 2

const hasAtMostTwoDecimals = (n: number): boolean => Math.round(n * 100) / 100 === n

/**
 * An amount as a request may send it (A3, B2, C1/C3, admin limits): finite, non-negative, at most
 * {@link MAX_AMOUNT}, at most {@link MAX_DECIMALS} decimals. Recorded amounts stay {@link Amount},
 * so events written before these bounds still read.
 *
 * @category schemas
 */
export const RequestAmount = Amount.pipe(
  Schema.filter((n) => n <= MAX_AMOUNT || `expected an amount of at most ${MAX_AMOUNT}`),
  Schema.filter((n) => hasAtMostTwoDecimals(n) || `expected at most ${MAX_DECIMALS} decimals`),
  Schema.annotations({
    identifier: "RequestAmount",
    arbitrary: () => (fc) =>
      fc.integer({ min: 0, max: 100_000_000_000 }).map((cents) => Amount.make(cents / 100))
  })
)

/** Hundredths of an amount, exact for a {@link RequestAmount}. */
export const toCents = (n: number): number => Math.round(n * 100)

/**
 * Currencies the link API accepts (B2); the sale is processed in COP.
 *
 * @category schemas
 */
export const Currency = Schema.Literal("COP", "USD")
export type Currency = typeof Currency.Type

/**
 * A tax line as recorded: `base` is the taxable base, `value` the tax charged.
 *
 * @category schemas
 */
export const TaxLine = Schema.Struct({
  type: Schema.Literal("VAT", "CONSUMPTION"),
  base: Amount,
  value: Amount
})
export type TaxLine = typeof TaxLine.Type

/**
 * A tax line as a request sends it (B2, C1/C3): both amounts {@link RequestAmount}s.
 *
 * @category schemas
 */
export const RequestTaxLine = Schema.Struct({
  type: TaxLine.fields.type,
  base: RequestAmount,
  value: RequestAmount
}).annotations({ identifier: "RequestTaxLine" })

/** Makes an `Amount` from a number known to be valid (tests, constants); throws otherwise. */
export const amount = (n: number): Amount => Amount.make(n)

/**
 * An ISO 4217 currency code: three upper-case letters.
 *
 * @category schemas
 */
export const CurrencyCode = Schema.String.pipe(
  Schema.pattern(/^[A-Z]{3}$/, { message: () => "expected a three-letter upper-case currency code" }),
  Schema.annotations({ identifier: "CurrencyCode" })
)
export type CurrencyCode = typeof CurrencyCode.Type
