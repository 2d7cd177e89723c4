import { describe, expect, it } from "@effect/vitest"
import * as ReturnUrl from "@cobro/domain/ReturnUrl"
import * as Money from "@cobro/domain/Money"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import * as SafeText from "@cobro/domain/SafeText"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const decodeAmount = Schema.decodeUnknownEither(Money.RequestAmount)
const decodeIntent = Schema.decodeUnknownEither(OnlineApi.IntentCreateRequest)

describe("request amounts (issue 17)", () => {
  it("a request amount is finite, non-negative, at most 10^12 and has at most 2 decimals", () => {
    for (const ok of [0, 0.01, 10.15, 1234.5, 999_999_999_999.99, Money.MAX_AMOUNT]) {
      expect(Either.isRight(decodeAmount(ok)), String(ok)).toBe(true)
    }
    for (const bad of [-0.01, Infinity, -Infinity, NaN, 1e308, Money.MAX_AMOUNT + 0.01, 10.125, 1e-45]) {
      expect(Either.isLeft(decodeAmount(bad)), String(bad)).toBe(true)
    }
  })

  it("an intent's tip above its total, or a tip and tax values above it together, is refused on its field", () => {
    const fieldOf = (amount: unknown) =>
      Either.match(decodeIntent({ reference_id: "r", amount }), {
        onLeft: (e) => String(e),
        onRight: () => "accepted"
      })
    expect(fieldOf({ currency: "COP", total_amount: 1000, tip_amount: 1000 })).toBe("accepted")
    expect(fieldOf({ currency: "COP", total_amount: 1000, tip_amount: 1000.01 })).toContain('["tip_amount"]')
    expect(
      fieldOf({
        currency: "COP",
        total_amount: 1000,
        tip_amount: 100,
        taxes: [{ type: "VAT", base: 800, value: 901 }]
      })
    ).toContain('["taxes"]')
  })
})

describe("return URLs (issue 17)", () => {
  it("script, data and local-file schemes, control characters, spaces, no host and over 2048 characters are refused", () => {
    for (const bad of [
      "javascript:alert(1)",
      "JAVASCRIPT://x/%0aalert(1)",
      "data:text/html,x",
      "vbscript:x",
      "file:///etc/passwd",
      "blob:https://a.example/x",
      "about:blank",
      "https://a.example/\r\nx",
      "https://a.example/\u007f",
      "https://a.example/ x",
      "https://a.example/\u0000",
      "https://a.example/\ud800",
      "myapp:return",
      "not a url",
      `https://a.example/${"x".repeat(2048)}`
    ]) {
      expect(Option.isSome(ReturnUrl.problem(bad)), JSON.stringify(bad)).toBe(true)
    }
  })

  it("https, http and an app's own scheme with a host are accepted", () => {
    for (const ok of [
      "https://shop.example/back?o=1#x",
      "http://localhost:3000/r",
      "myapp://return",
      "com.shop.app://pay/done"
    ]) {
      expect(ReturnUrl.problem(ok), ok).toEqual(Option.none())
    }
  })

  it("the Location of a return URL is printable ASCII, and none for a URL the rule refuses", () => {
    expect(ReturnUrl.toLocation("https://shöp.example/ä?q=ñ")).toEqual(
      Option.some("https://xn--shp-tna.example/%C3%A4?q=%C3%B1")
    )
    expect(ReturnUrl.toLocation("https://a.example/\r\nSet-Cookie: a=b")).toEqual(Option.none())
    expect(ReturnUrl.toLocation("javascript:alert(1)")).toEqual(Option.none())
  })
})

describe("safe text (issue 17)", () => {
  const poison = FastCheck.constantFrom("\u0000", "\ud800", "\udfff")

  it.prop(
    "a NUL or an unpaired surrogate anywhere in a JSON value is found, with the path to it",
    [
      FastCheck.jsonValue(),
      poison,
      FastCheck.array(FastCheck.string({ minLength: 1, maxLength: 4 }), { maxLength: 3 })
    ],
    ([value, bad, path]) => {
      const nested = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), `x${bad}y`)
      expect(SafeText.firstUnsafe([value, nested])).toEqual([1, ...path])
    }
  )

  it.prop(
    "text without NUL or unpaired surrogates is safe, paired surrogates (emoji) included",
    [FastCheck.string({ unit: "grapheme" })],
    ([s]) => {
      expect(SafeText.isSafe(s.replace(/\u0000/g, ""))).toBe(true)
    }
  )
})
