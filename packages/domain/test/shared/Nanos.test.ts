import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"

const decodeNanos = Schema.decodeUnknownEither(Nanos.Nanos)
const parse = (text: string) => Either.getOrThrow(Nanos.parseJsonExact(text))

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

describe("Nanos", () => {
  it("a nanosecond timestamp above 2^53 survives parse, decode, encode and stringify exactly", () => {
    const text = `{"expiration_date":1712345678901234567,"creation_date":9007199254740993}`
    const schema = Schema.Struct({ expiration_date: Nanos.Nanos, creation_date: Nanos.Nanos })
    const decoded = Schema.decodeUnknownSync(schema)(parse(text))
    expect(decoded).toStrictEqual({ expiration_date: 1712345678901234567n, creation_date: 9007199254740993n })
    expect(Nanos.stringifyWithBigInt(Schema.encodeSync(schema)(decoded))).toBe(text)
  })

  it.prop(
    "every nanosecond timestamp below 2^63 survives stringify, parse and decode exactly",
    [fc.bigInt({ min: 0n, max: Nanos.MAX_NANOS })],
    ([nanos]) => {
      const text = Nanos.stringifyWithBigInt({ time: Schema.encodeSync(Nanos.Nanos)(nanos) })
      const decoded = Schema.decodeUnknownSync(Schema.Struct({ time: Nanos.Nanos }))(parse(text))
      expect(decoded.time).toBe(nanos)
    }
  )

  it("decodes a JSON number, a decimal string or a bigint", () => {
    expect(decodeNanos(1712345678000000000)).toStrictEqual(Either.right(1712345678000000000n))
    expect(decodeNanos("1712345678901234567")).toStrictEqual(Either.right(1712345678901234567n))
    expect(decodeNanos(1712345678901234567n)).toStrictEqual(Either.right(1712345678901234567n))
    expect(decodeNanos(0)).toStrictEqual(Either.right(0n))
  })

  it("a large double reads as the decimal text it was written with, not its binary value", () => {
    // 1712345678901234700 is held by the double 1712345678901234688.
    expect(decodeNanos(1712345678901234700)).toStrictEqual(Either.right(1712345678901234700n))
  })

  it("rejects fractions, negatives, non-digit strings and values from 2^63", () => {
    for (const bad of [1.5, -1, "-1", "12a", "", " 1", "1e9", 2n ** 63n, -1n, null, true]) {
      expect(Either.isLeft(decodeNanos(bad)), String(bad)).toBe(true)
    }
  })

  it("numbers whose decimal text has an exponent are refused, never thrown (-1e21, 1e21, ±Infinity, NaN)", () => {
    for (const bad of [-1e21, -1e300, 1e21, 1e300, Infinity, -Infinity, NaN, -(2 ** 60)]) {
      expect(Either.isLeft(decodeNanos(bad)), String(bad)).toBe(true)
    }
  })

  it("converts to and from epoch milliseconds and DateTime.Utc", () => {
    const nanos = 1712345678901234567n
    expect(Nanos.toEpochMillis(nanos)).toBe(1712345678901)
    expect(Nanos.fromEpochMillis(1712345678901)).toBe(1712345678901000000n)
    const dt = Nanos.toDateTime(nanos)
    expect(DateTime.formatIso(dt)).toBe("2024-04-05T19:34:38.901Z")
    expect(Nanos.fromDateTime(dt)).toBe(1712345678901000000n)
  })

  it.prop(
    "DateTime to nanoseconds and back is the identity",
    [fc.integer({ min: 0, max: 4102444800000 })],
    ([ms]) => {
      const dt = DateTime.unsafeMake(ms)
      expect(DateTime.toEpochMillis(Nanos.toDateTime(Nanos.fromDateTime(dt)))).toBe(ms)
    }
  )

  it("the notification `time` keeps every digit through the exact JSON path", () => {
    const time = 1744644662123456789n
    const schema = Schema.Struct({ time: Nanos.Nanos, type: Notification.NotificationType })
    const text = Nanos.stringifyWithBigInt(Schema.encodeSync(schema)({ time, type: "SALE_APPROVED" }))
    expect(text).toBe(`{"time":1744644662123456789,"type":"SALE_APPROVED"}`)
    expect(BigInt(JSON.parse(text).time)).not.toBe(time) // JSON.parse rounds; parseJsonExact does not
    expect(Schema.decodeUnknownSync(schema)(parse(text)).time).toBe(time)
  })
})

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
      expect(Nanos.stringifyWithBigInt(value)).toBe(JSON.stringify(value))
    }
  )

  it.prop("a document holding large bigints round-trips exactly", [bigJson], ([value]) => {
    expect(parse(Nanos.stringifyWithBigInt(value))).toStrictEqual(value)
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
      const result = Nanos.parseJsonExact(bad)
      expect(Either.isLeft(result), bad).toBe(true)
      expect(() => JSON.parse(bad), bad).toThrow()
    }
  })

  it("nesting deeper than the limit is rejected rather than overflowing the stack", () => {
    const deep = "[".repeat(Nanos.MAX_JSON_DEPTH + 2) + "]".repeat(Nanos.MAX_JSON_DEPTH + 2)
    expect(Either.isLeft(Nanos.parseJsonExact(deep))).toBe(true)
  })

  it("stringifyWithBigInt drops undefined members, writes null in arrays and calls toJSON", () => {
    expect(Nanos.stringifyWithBigInt({ a: undefined, b: [undefined, 1n], c: new Date(0) })).toBe(
      `{"b":[null,1],"c":"1970-01-01T00:00:00.000Z"}`
    )
    expect(Nanos.stringifyWithBigInt(undefined)).toBe("null")
  })

  it("stringifyWithBigInt refuses a circular structure", () => {
    const a: Record<string, unknown> = {}
    a["self"] = a
    expect(() => Nanos.stringifyWithBigInt(a)).toThrow(TypeError)
  })

  it("fromExactJson reads a body from text and writes it back exactly", () => {
    const schema = Nanos.fromExactJson(Schema.Struct({ time: Nanos.Nanos }))
    expect(Schema.decodeSync(schema)(`{"time":1712345678901234567}`)).toStrictEqual({
      time: 1712345678901234567n
    })
    expect(Schema.encodeSync(schema)({ time: 1712345678901234567n })).toBe(`{"time":1712345678901234567}`)
    expect(Either.isLeft(Schema.decodeEither(schema)("{"))).toBe(true)
  })
})
