/**
 * The three forms of `amount.taxes` in a terminal checkout (A3, "Tax forms"): full, by label and by
 * value, and how Cobro turns each into recorded tax lines (taxable base and tax charged).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Amount, RequestAmount, type TaxLine, toCents } from "../shared/Money.js"

/**
 * The two kinds of tax a line can carry: value-added tax and consumption tax.
 *
 * @category schemas
 */
export const TaxType = Schema.Literal("VAT", "CONSUMPTION")
export type TaxType = typeof TaxType.Type

const exact = { onExcessProperty: "error" } as const

/**
 * An item of the full form: the tax, its taxable base and its value. The spec's table names only
 * VAT; Cobro also accepts CONSUMPTION here (decision: the link and notification tax lines carry both).
 * Extra fields make the item fit no form.
 *
 * @category schemas
 */
export const FullTaxItem = Schema.Struct({
  type: TaxType,
  base: RequestAmount,
  value: RequestAmount
}).annotations({
  identifier: "FullTaxItem",
  parseOptions: exact
})
export type FullTaxItem = typeof FullTaxItem.Type

/**
 * The labels of the by-label form: 19% VAT, 5% VAT and 8% consumption tax.
 *
 * @category schemas
 */
export const TaxLabel = Schema.Literal("IVA_19", "IVA_5", "IAC_8")
export type TaxLabel = typeof TaxLabel.Type

/**
 * An item of the by-label form: only `type`, one of the labels.
 *
 * @category schemas
 */
export const LabelTaxItem = Schema.Struct({ type: TaxLabel }).annotations({
  identifier: "LabelTaxItem",
  parseOptions: exact
})
export type LabelTaxItem = typeof LabelTaxItem.Type

/**
 * An item of the by-value form: the tax and its value; the service computes the base.
 *
 * @category schemas
 */
export const ValueTaxItem = Schema.Struct({ type: TaxType, value: RequestAmount }).annotations({
  identifier: "ValueTaxItem",
  parseOptions: exact
})
export type ValueTaxItem = typeof ValueTaxItem.Type

const distinctTypes = <A extends { readonly type: string }>(items: ReadonlyArray<A>): boolean =>
  new Set(items.map((item) => item.type)).size === items.length

const DUPLICATE_TYPE = "each tax type may appear only once"

const fullItems = () =>
  Schema.Array(FullTaxItem).pipe(
    Schema.maxItems(2),
    Schema.filter((items) => distinctTypes(items) || DUPLICATE_TYPE)
  )
const valueItems = () =>
  Schema.Array(ValueTaxItem).pipe(
    Schema.minItems(1),
    Schema.maxItems(2),
    Schema.filter((items) => distinctTypes(items) || DUPLICATE_TYPE)
  )

/**
 * Full form, decoded: zero, one or two lines (VAT and/or CONSUMPTION, each at most once). An empty
 * `taxes` list decodes here: a sale without taxes.
 *
 * @category schemas
 */
export const FullTaxes = Schema.transform(
  fullItems(),
  Schema.typeSchema(Schema.TaggedStruct("Full", { lines: fullItems() })),
  { strict: true, decode: (lines) => ({ _tag: "Full" as const, lines }), encode: ({ lines }) => lines }
).annotations({ identifier: "FullTaxes" })
export type FullTaxes = typeof FullTaxes.Type

/**
 * By-label form, decoded: exactly one label.
 *
 * @category schemas
 */
export const LabelTaxes = Schema.transform(
  Schema.Tuple(LabelTaxItem),
  Schema.typeSchema(Schema.TaggedStruct("Label", { label: TaxLabel })),
  {
    strict: true,
    decode: ([item]) => ({ _tag: "Label" as const, label: item.type }),
    encode: ({ label }) => [{ type: label }] as const
  }
).annotations({ identifier: "LabelTaxes" })
export type LabelTaxes = typeof LabelTaxes.Type

/**
 * By-value form, decoded: one or two values (VAT and/or CONSUMPTION, each at most once).
 *
 * @category schemas
 */
export const ValueTaxes = Schema.transform(
  valueItems(),
  Schema.typeSchema(Schema.TaggedStruct("ByValue", { values: valueItems() })),
  { strict: true, decode: (values) => ({ _tag: "ByValue" as const, values }), encode: ({ values }) => values }
).annotations({ identifier: "ValueTaxes" })
export type ValueTaxes = typeof ValueTaxes.Type

/**
 * `amount.taxes` of a checkout: a list in exactly one of the three forms (forms are not mixed in one
 * list). Any other shape is error AP002. Decodes to a tagged union: `Full`, `Label` or `ByValue`.
 *
 * @category schemas
 */
export const CheckoutTaxes = Schema.Union(FullTaxes, LabelTaxes, ValueTaxes).annotations({
  identifier: "CheckoutTaxes"
})
export type CheckoutTaxes = typeof CheckoutTaxes.Type

/** The rate and tax type each label stands for, in percent. */
export const LABEL_RATES: { readonly [L in TaxLabel]: { readonly type: TaxType; readonly percent: number } } =
  {
    IVA_19: { type: "VAT", percent: 19 },
    IVA_5: { type: "VAT", percent: 5 },
    IAC_8: { type: "CONSUMPTION", percent: 8 }
  }

const fromCents = (cents: number): Amount => Amount.make(cents / 100)

/**
 * The recorded tax lines of a checkout, given its `total` and `tip`. Totals are value-inclusive:
 * the total includes tip and taxes, and the tip is never taxed, so the taxed amount is
 * `total - tip`. Amounts are computed in hundredths and rounded half-up to 2 decimals.
 *
 * - Full: the lines as sent, when their values fit in the taxed amount.
 * - Label at rate r: `base = round2((total - tip) / (1 + r))`, `value = (total - tip) - base`, so
 *   `base + value` is exactly the taxed amount.
 * - By value: one shared base, `base = (total - tip) - sum(values)`, the amount that is neither tip
 *   nor tax; each line gets that base and its own value.
 *
 * None when the amounts cannot hold (the tip exceeds the total, or the values exceed the taxed
 * amount, in any form): the caller reports AP002.
 */
export const taxLines = (
  taxes: CheckoutTaxes,
  amounts: { readonly total: number; readonly tip: number }
): Option.Option<ReadonlyArray<TaxLine>> => {
  const taxedCents = toCents(amounts.total) - toCents(amounts.tip)
  switch (taxes._tag) {
    case "Full": {
      const valueCents = taxes.lines.reduce((sum, line) => sum + toCents(line.value), 0)
      if (taxedCents < 0 || valueCents > taxedCents) return Option.none()
      return Option.some(taxes.lines.map((line) => ({ type: line.type, base: line.base, value: line.value })))
    }
    case "Label": {
      if (taxedCents < 0) return Option.none()
      const { percent, type } = LABEL_RATES[taxes.label]
      const baseCents = Math.round((taxedCents * 100) / (100 + percent))
      return Option.some([{ type, base: fromCents(baseCents), value: fromCents(taxedCents - baseCents) }])
    }
    case "ByValue": {
      const valueCents = taxes.values.reduce((sum, item) => sum + toCents(item.value), 0)
      const baseCents = taxedCents - valueCents
      if (baseCents < 0) return Option.none()
      return Option.some(
        taxes.values.map((item) => ({ type: item.type, base: fromCents(baseCents), value: item.value }))
      )
    }
  }
}
