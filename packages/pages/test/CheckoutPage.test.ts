/**
 * The checkout page's texts and form, without a server: the language a browser's `Accept-Language`
 * picks, amounts as each currency is written, amounts as payers type them. The page through the real
 * handler is `packages/http/test/CheckoutPage.test.ts`; in Chromium, `packages/server/test/browser`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Form from "@cobro/pages/CheckoutPageForm"
import * as Text from "@cobro/pages/CheckoutPageText"

describe("the checkout page", () => {
  it("Accept-Language: the best-quality Spanish or English range wins; Spanish otherwise", () => {
    expect(Text.negotiate(undefined)).toBe("es")
    expect(Text.negotiate("en-GB")).toBe("en")
    expect(Text.negotiate("es-CO,es;q=0.9,en;q=0.8")).toBe("es")
    expect(Text.negotiate("es;q=0.2, en;q=0.8")).toBe("en")
    expect(Text.negotiate("de, fr;q=0.9")).toBe("es")
    expect(Text.negotiate("en;q=0, es")).toBe("es")
    expect(Text.negotiate(";;;,,,q=abc")).toBe("es")
    expect(Text.negotiate("en", "es")).toBe("es")
  })

  it("amounts are written as the currency is: COP without decimals, USD with two", () => {
    expect(Text.formatMoney(1234567, "COP", "es")).toBe("$ 1.234.567")
    expect(Text.formatMoney(1234567, "COP", "en")).toBe("COP 1,234,567")
    expect(Text.formatMoney(12.5, "USD", "en")).toBe("$12.50")
    expect(Text.formatMoney(12.5, "USD", "es")).toBe("US$ 12,50")
  })

  it("amounts in pesos as payers type them", () => {
    expect(Form.parseAmount("50000")).toBe(50000)
    expect(Form.parseAmount("$ 50.000")).toBe(50000)
    expect(Form.parseAmount("1,250,000")).toBe(1250000)
    expect(Form.parseAmount("12,5")).toBeUndefined()
    expect(Form.parseAmount("50.000,50")).toBeUndefined()
    expect(Form.parseAmount("-5")).toBeUndefined()
    expect(Form.parseAmount("1e6")).toBeUndefined()
  })
})
