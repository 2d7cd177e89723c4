import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"

const decodeNanos = Schema.decodeUnknownEither(Nanos.Nanos)
const parse = (text: string) => Either.getOrThrow(Nanos.parseJsonExact(text))

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
