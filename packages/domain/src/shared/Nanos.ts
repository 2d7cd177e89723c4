/**
 * Nanosecond timestamps of the spec (B2/B3 `expiration_date` and `creation_date`, D `time`), which
 * exceed 2^53. The exact JSON text that keeps them intact is `ExactJson`'s; its reader and writer are
 * also found here under their first names.
 */
import * as DateTime from "effect/DateTime"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const NANOS_PER_MILLI = 1_000_000n

/**
 * The largest instant a nanosecond timestamp may hold: below 2^63, so it fits a signed 64-bit column.
 *
 * @category constants
 */
export const MAX_NANOS = 2n ** 63n - 1n

/**
 * Nanoseconds since the Unix epoch as a `bigint`, non-negative and below 2^63.
 *
 * @category schemas
 */
export const NanosFromSelf = Schema.BigIntFromSelf.pipe(
  Schema.betweenBigInt(0n, MAX_NANOS),
  Schema.annotations({ identifier: "NanosFromSelf", description: "nanoseconds since the Unix epoch" })
)
export type NanosFromSelf = typeof NanosFromSelf.Type

const DIGITS = /^[0-9]{1,19}$/

/**
 * A nanosecond timestamp on the wire. Decodes a JSON number (an integer), a decimal string or a
 * `bigint` into an exact `bigint`; encodes to a `bigint`, which `ExactJson.stringify` writes as an
 * exact integer literal (`"expiration_date": 1712345678901234567`).
 *
 * A JSON number above 2^53 read by `JSON.parse` has already lost precision before it reaches this
 * schema: read request bodies with `ExactJson.parse` to keep it exact.
 *
 * @category schemas
 */
export const Nanos = Schema.transformOrFail(
  Schema.Union(Schema.Number, Schema.String, Schema.BigIntFromSelf),
  NanosFromSelf,
  {
    strict: true,
    decode: (input, _, ast) => {
      if (typeof input === "bigint") return ParseResult.succeed(input)
      if (typeof input === "number") {
        // A large double's shortest decimal text is what the sender wrote (see ExactJson.parse);
        // `BigInt(input)` would give the double's binary value instead (…700 -> …688).
        return Number.isSafeInteger(input)
          ? ParseResult.succeed(BigInt(input))
          : Number.isInteger(input) && Math.abs(input) < 1e21
            ? ParseResult.succeed(BigInt(String(input)))
            : ParseResult.fail(new ParseResult.Type(ast, input, "expected an integer number of nanoseconds"))
      }
      return DIGITS.test(input)
        ? ParseResult.succeed(BigInt(input))
        : ParseResult.fail(new ParseResult.Type(ast, input, "expected a decimal integer of nanoseconds"))
    },
    encode: (nanos) => ParseResult.succeed(nanos)
  }
).annotations({
  identifier: "Nanos",
  description: "nanoseconds since the Unix epoch, an integer",
  jsonSchema: { type: "integer", format: "int64", minimum: 0 }
})
export type Nanos = typeof Nanos.Type

/** Milliseconds since the epoch of a nanosecond timestamp (rounded down to the millisecond). */
export const toEpochMillis = (nanos: bigint): number => Number(nanos / NANOS_PER_MILLI)

/** Nanoseconds of an instant given in epoch milliseconds (a fraction of a millisecond is dropped). */
export const fromEpochMillis = (millis: number): bigint => BigInt(Math.trunc(millis)) * NANOS_PER_MILLI

/** The UTC instant of a nanosecond timestamp, at millisecond precision. */
export const toDateTime = (nanos: bigint): DateTime.Utc => DateTime.unsafeMake(toEpochMillis(nanos))

/** The nanosecond timestamp of an instant. */
export const fromDateTime = (dateTime: DateTime.DateTime): bigint =>
  fromEpochMillis(DateTime.toEpochMillis(dateTime))

/**
 * The exact JSON text of these timestamps, under the names it had here first (see `ExactJson`):
 * `parseJsonExact` is `ExactJson.parse`, `stringifyWithBigInt` is `ExactJson.stringify`,
 * `MAX_JSON_DEPTH` is `ExactJson.MAX_DEPTH`.
 */
export {
  ExactJson,
  fromExactJson,
  JsonSyntaxError,
  MAX_DEPTH as MAX_JSON_DEPTH,
  parse as parseJsonExact,
  stringify as stringifyWithBigInt
} from "./ExactJson.js"
