import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CheckoutErrors from "@cobro/domain/CheckoutErrors"
import * as Taxes from "@cobro/domain/Taxes"
import { checkoutBody, set } from "../fixtures/Terminal.js"

/** The sample checkout body with these `taxes` (`undefined`: none sent). */
const body = (taxes: unknown) => set(checkoutBody(), "amount.taxes", taxes)

const taxesOf = (taxes: unknown): Taxes.CheckoutTaxes => {
  const result = CheckoutErrors.decodeCheckoutRequest(body(taxes))
  if (Either.isLeft(result))
    throw new Error(`rejected: ${JSON.stringify(CheckoutErrors.toErrorItem(result.left))}`)
  return result.right.amount.taxes
}

const codeOf = (taxes: unknown): string | undefined =>
  Either.match(CheckoutErrors.decodeCheckoutRequest(body(taxes)), {
    onLeft: (e) => CheckoutErrors.toErrorItem(e).code,
    onRight: () => undefined
  })

const lines = (taxes: Taxes.CheckoutTaxes, total: number, tip: number) =>
  Option.getOrThrow(Taxes.taxLines(taxes, { total, tip }))

describe("A3 tax forms", () => {
  it("full form: {type: VAT, base, value} is accepted", () => {
    expect(taxesOf([{ type: "VAT", base: 10000, value: 1900 }])).toStrictEqual({
      _tag: "Full",
      lines: [{ type: "VAT", base: 10000, value: 1900 }]
    })
  })

  it("full form with VAT and CONSUMPTION lines is accepted", () => {
    expect(
      taxesOf([
        { type: "VAT", base: 10000, value: 1900 },
        { type: "CONSUMPTION", base: 10000, value: 800 }
      ])._tag
    ).toBe("Full")
  })

  it("an empty taxes list is a sale without taxes", () => {
    expect(taxesOf([])).toStrictEqual({ _tag: "Full", lines: [] })
  })

  for (const label of ["IVA_19", "IVA_5", "IAC_8"] as const) {
    it(`by label: {type: ${label}} alone is accepted`, () => {
      expect(taxesOf([{ type: label }])).toStrictEqual({ _tag: "Label", label })
    })
  }

  it("by label: only one tax may be given (two labels are AP002)", () => {
    expect(codeOf([{ type: "IVA_19" }, { type: "IAC_8" }])).toBe("AP002")
  })

  it("by value: {type: VAT, value} is accepted", () => {
    expect(taxesOf([{ type: "VAT", value: 1900 }])).toStrictEqual({
      _tag: "ByValue",
      values: [{ type: "VAT", value: 1900 }]
    })
  })

  it("by value: {type: CONSUMPTION, value} is accepted", () => {
    expect(taxesOf([{ type: "CONSUMPTION", value: 800 }])._tag).toBe("ByValue")
  })

  it("by value: one tax or both may be sent", () => {
    expect(
      taxesOf([
        { type: "VAT", value: 1900 },
        { type: "CONSUMPTION", value: 800 }
      ])._tag
    ).toBe("ByValue")
  })

  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    [
      "by value with the same type twice",
      [
        { type: "VAT", value: 1 },
        { type: "VAT", value: 2 }
      ]
    ],
    [
      "full with the same type twice",
      [
        { type: "VAT", base: 1, value: 1 },
        { type: "VAT", base: 2, value: 2 }
      ]
    ],
    ["a label with a value", [{ type: "IVA_19", value: 1900 }]],
    ["a label with base and value", [{ type: "IVA_19", base: 10000, value: 1900 }]],
    ["a type alone that is not a label", [{ type: "VAT" }]],
    ["a base without a value", [{ type: "VAT", base: 10000 }]],
    ["an unknown tax type", [{ type: "GST", value: 100 }]],
    ["an unknown label", [{ type: "IVA_16" }]],
    ["an extra member", [{ type: "VAT", base: 10000, value: 1900, rate: 19 }]],
    [
      "forms mixed in one list",
      [
        { type: "VAT", base: 10000, value: 1900 },
        { type: "CONSUMPTION", value: 800 }
      ]
    ],
    ["a label mixed with a value", [{ type: "IVA_19" }, { type: "CONSUMPTION", value: 800 }]],
    ["a value that is a string", [{ type: "VAT", value: "1900" }]],
    ["a negative value", [{ type: "VAT", base: 10000, value: -1 }]],
    ["an item that is not an object", ["VAT"]],
    ["a null item", [null]],
    [
      "three items",
      [
        { type: "VAT", value: 1 },
        { type: "CONSUMPTION", value: 1 },
        { type: "VAT", value: 1 }
      ]
    ],
    ["a lower-case type", [{ type: "vat", value: 1900 }]]
  ]
  for (const [name, taxes] of invalid) {
    it(`taxes that fit no form are AP002: ${name}`, () => {
      expect(codeOf(taxes)).toBe("AP002")
    })
  }

  it("taxes that are not a list are AP006, and missing taxes are AP005", () => {
    expect(codeOf({ type: "VAT", value: 1 })).toBe("AP006")
    expect(codeOf(undefined)).toBe("AP005")
  })

  it("each form encodes back to the shape that was sent", () => {
    for (const taxes of [
      [{ type: "VAT", base: 10000, value: 1900 }],
      [{ type: "IAC_8" }],
      [{ type: "VAT", value: 1900 }],
      []
    ]) {
      expect(
        Schema.encodeSync(Taxes.CheckoutTaxes)(Schema.decodeUnknownSync(Taxes.CheckoutTaxes)(taxes))
      ).toStrictEqual(taxes)
    }
  })
})

describe("computed taxable base and value", () => {
  it.each([
    ["label IVA_19 on a total of 11900: base 10000, VAT 1900", ["IVA_19", 11900, 0], ["VAT", 10000, 1900]],
    ["label IVA_5 on a total of 10500: base 10000, VAT 500", ["IVA_5", 10500, 0], ["VAT", 10000, 500]],
    [
      "label IAC_8 on a total of 10800: base 10000, consumption tax 800",
      ["IAC_8", 10800, 0],
      ["CONSUMPTION", 10000, 800]
    ],
    [
      "the tip is not taxed: label IVA_19 on 12900 with a tip of 1000 gives base 10000",
      ["IVA_19", 12900, 1000],
      ["VAT", 10000, 1900]
    ],
    [
      "label amounts round to 2 decimals and add up to the taxed total",
      ["IVA_19", 100, 0],
      ["VAT", 84.03, 15.97]
    ]
  ] as const)("%s", (_title, [label, total, tip], [type, base, value]) => {
    expect(lines({ _tag: "Label", label }, total, tip)).toStrictEqual([{ type, base, value }])
  })

  it("by value: the base is the total less tip and tax values", () => {
    const values = [
      { type: "VAT", value: 1900 },
      { type: "CONSUMPTION", value: 800 }
    ] as const
    const taxes = Schema.decodeUnknownSync(Taxes.CheckoutTaxes)(values)
    expect(lines(taxes, 13700, 1000)).toStrictEqual([
      { type: "VAT", base: 10000, value: 1900 },
      { type: "CONSUMPTION", base: 10000, value: 800 }
    ])
  })

  it("full form lines are recorded as sent", () => {
    const taxes = Schema.decodeUnknownSync(Taxes.CheckoutTaxes)([{ type: "VAT", base: 5, value: 7 }])
    expect(lines(taxes, 11900, 0)).toStrictEqual([{ type: "VAT", base: 5, value: 7 }])
  })

  it("amounts that cannot hold (values above the taxed total, tip above total) give none", () => {
    const taxes = Schema.decodeUnknownSync(Taxes.CheckoutTaxes)([{ type: "VAT", value: 20000 }])
    expect(Option.isNone(Taxes.taxLines(taxes, { total: 11900, tip: 0 }))).toBe(true)
    expect(Option.isNone(Taxes.taxLines({ _tag: "Label", label: "IVA_5" }, { total: 100, tip: 200 }))).toBe(
      true
    )
  })

  it.prop(
    "a label's base plus value is exactly the total less the tip, in hundredths",
    [fc.integer({ min: 0, max: 10_000_000_00 }), fc.integer({ min: 0, max: 1_000_000_00 }), Taxes.TaxLabel],
    ([totalCents, tipCents, label]) => {
      const result = Taxes.taxLines(
        { _tag: "Label", label },
        { total: (totalCents + tipCents) / 100, tip: tipCents / 100 }
      )
      const [line] = Option.getOrThrow(result)
      expect(Math.round(line!.base * 100) + Math.round(line!.value * 100)).toBe(totalCents)
      expect(line!.base).toBeLessThanOrEqual(totalCents / 100)
    }
  )
})
