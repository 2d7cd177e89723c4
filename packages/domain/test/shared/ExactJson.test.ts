import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as ExactJson from "@cobro/domain/ExactJson"
import * as Nanos from "@cobro/domain/Nanos"

const parse = (text: string) => Either.getOrThrow(ExactJson.parse(text))

/** JSON values, possibly holding bigints beyond 2^53 (which JSON.parse would round). */
const bigJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    // JSON text has no negative zero (`JSON.stringify(-0)` is "0"): a document cannot hold one.
    fc.jsonValue({ maxDepth: 0 }).map((leaf) => (Object.is(leaf, -0) ? 0 : leaf)),
    fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).filter((b) => String(Number(b)) !== String(b)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 4 })
  )
})).value

describe("exact JSON text", () => {
  it.prop(
    "parseJsonExact agrees with JSON.parse on JSON without large integers",
    [fc.jsonValue()],
    ([value]) => {
      const text = JSON.stringify(value)
      expect(parse(text)).toStrictEqual(JSON.parse(text))
    }
  )

  it.prop("parseJsonExact agrees with JSON.parse on pretty-printed JSON", [fc.jsonValue()], ([value]) => {
    const text = JSON.stringify(value, null, 2)
    expect(parse(text)).toStrictEqual(JSON.parse(text))
  })

  it.prop(
    "stringifyWithBigInt agrees with JSON.stringify when there is no bigint",
    [fc.jsonValue()],
    ([value]) => {
      expect(ExactJson.stringify(value)).toBe(JSON.stringify(value))
    }
  )

  it.prop("a document holding large bigints round-trips exactly", [bigJson], ([value]) => {
    expect(parse(ExactJson.stringify(value))).toStrictEqual(value)
  })

  it("an integer that writes back as sent stays a number; one that would not becomes a bigint", () => {
    expect(parse("9007199254740993")).toBe(9007199254740993n)
    expect(parse("9007199254740992")).toBe(9007199254740992)
    expect(parse("26113113396871170")).toBe(26113113396871170)
    expect(parse("-9007199254740993")).toBe(-9007199254740993n)
    expect(parse("1.5e300")).toBe(1.5e300)
    expect(parse("12345678901234567890.5")).toBe(12345678901234567890.5)
    expect(Object.is(parse("-0"), -0)).toBe(true)
  })

  it("strings that look like numbers stay strings and escapes are decoded", () => {
    expect(parse(`{"a":"12345678901234567890","b":"x\\"y\\u00f1\\n"}`)).toStrictEqual({
      a: "12345678901234567890",
      b: 'x"yñ\n'
    })
  })

  it.prop(
    "a string reads as JSON.parse reads it, written raw or escaped (lone surrogates included)",
    [fc.string({ unit: "binary", maxLength: 40 })],
    ([text]) => {
      expect(parse(JSON.stringify(text))).toBe(text)
      const raw = `"${text}"`
      const native = (() => {
        try {
          return { value: JSON.parse(raw) as unknown }
        } catch {
          return "refused"
        }
      })()
      const exact = Either.match(ExactJson.parse(raw), {
        onLeft: () => "refused",
        onRight: (value) => ({ value })
      })
      expect(exact).toStrictEqual(native)
    }
  )

  it("a __proto__ key is an own property, as with JSON.parse", () => {
    const value = parse(`{"__proto__":{"polluted":1}}`) as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.keys(value)).toEqual(["__proto__"])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("invalid JSON is a JsonSyntaxError, never an exception", () => {
    for (const bad of [
      "",
      "{",
      "[1,]",
      '{"a" 1}',
      "01",
      "1.",
      "-",
      "tru",
      '"a',
      '"\t"',
      "{} x",
      "[1 2]",
      "'a'",
      "NaN"
    ]) {
      const result = ExactJson.parse(bad)
      expect(Either.isLeft(result), bad).toBe(true)
      expect(() => JSON.parse(bad), bad).toThrow()
    }
  })

  it("nesting deeper than the limit is rejected rather than overflowing the stack", () => {
    const deep = "[".repeat(ExactJson.MAX_DEPTH + 2) + "]".repeat(ExactJson.MAX_DEPTH + 2)
    expect(Either.isLeft(ExactJson.parse(deep))).toBe(true)
  })

  it("stringifyWithBigInt drops undefined members, writes null in arrays and calls toJSON", () => {
    expect(ExactJson.stringify({ a: undefined, b: [undefined, 1n], c: new Date(0) })).toBe(
      `{"b":[null,1],"c":"1970-01-01T00:00:00.000Z"}`
    )
    expect(ExactJson.stringify(undefined)).toBe("null")
  })

  it("stringify writes an array's holes as null, as JSON.stringify does", () => {
    const sparse = [, 1n, , 2]
    expect(ExactJson.stringify(sparse)).toBe("[null,1,null,2]")
    expect(ExactJson.stringify([, 1])).toBe(JSON.stringify([, 1]))
  })

  it("stringifyWithBigInt refuses a circular structure", () => {
    const a: Record<string, unknown> = {}
    a["self"] = a
    expect(() => ExactJson.stringify(a)).toThrow(TypeError)
  })

  it("fromExactJson reads a body from text and writes it back exactly", () => {
    const schema = ExactJson.fromExactJson(Schema.Struct({ time: Nanos.Nanos }))
    expect(Schema.decodeSync(schema)(`{"time":1712345678901234567}`)).toStrictEqual({
      time: 1712345678901234567n
    })
    expect(Schema.encodeSync(schema)({ time: 1712345678901234567n })).toBe(`{"time":1712345678901234567}`)
    expect(Either.isLeft(Schema.decodeEither(schema)("{"))).toBe(true)
  })
})

describe("the exact JSON text of Nanos", () => {
  it("Nanos keeps the exact JSON reader, writer and schemas under their first names", () => {
    expect(Nanos.parseJsonExact).toBe(ExactJson.parse)
    expect(Nanos.stringifyWithBigInt).toBe(ExactJson.stringify)
    expect(Nanos.MAX_JSON_DEPTH).toBe(ExactJson.MAX_DEPTH)
    expect(Nanos.JsonSyntaxError).toBe(ExactJson.JsonSyntaxError)
    expect(Nanos.ExactJson).toBe(ExactJson.ExactJson)
    expect(Nanos.fromExactJson).toBe(ExactJson.fromExactJson)
  })
})
