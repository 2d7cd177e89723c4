/**
 * Amounts as the spec carries them: JSON numbers in the currency's major unit (COP has no minor
 * unit in practice), never negative, never NaN or infinite.
 */
import * as Schema from "effect/Schema"

/** A non-negative, finite amount. */
export const Amount = Schema.Number.pipe(Schema.finite(), Schema.nonNegative(), Schema.brand("Amount"))
export type Amount = typeof Amount.Type

/** Currencies the link API accepts (B2); the sale is processed in COP. */
export const Currency = Schema.Literal("COP", "USD")
export type Currency = typeof Currency.Type

/** A tax line as recorded: `base` is the taxable base, `value` the tax charged. */
export const TaxLine = Schema.Struct({
  type: Schema.Literal("VAT", "CONSUMPTION"),
  base: Amount,
  value: Amount
})
export type TaxLine = typeof TaxLine.Type

/** Makes an `Amount` from a number known to be valid (tests, constants); throws otherwise. */
export const amount = (n: number): Amount => Amount.make(n)
