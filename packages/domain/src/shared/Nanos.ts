/**
 * Nanosecond timestamps of the spec (B2/B3 `expiration_date` and `creation_date`, D `time`), which
 * exceed 2^53, plus the exact JSON text reader and writer that keep such integers intact.
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const NANOS_PER_MILLI = 1_000_000n

/** The largest instant a nanosecond timestamp may hold: below 2^63, so it fits a signed 64-bit column. */
export const MAX_NANOS = 2n ** 63n - 1n

/** Nanoseconds since the Unix epoch as a `bigint`, non-negative and below 2^63. */
export const NanosFromSelf = Schema.BigIntFromSelf.pipe(
  Schema.betweenBigInt(0n, MAX_NANOS),
  Schema.annotations({ identifier: "NanosFromSelf", description: "nanoseconds since the Unix epoch" })
)
export type NanosFromSelf = typeof NanosFromSelf.Type

const DIGITS = /^[0-9]{1,19}$/

/**
 * A nanosecond timestamp on the wire. Decodes a JSON number (an integer), a decimal string or a
 * `bigint` into an exact `bigint`; encodes to a `bigint`, which {@link stringifyWithBigInt} writes as
 * an exact integer literal (`"expiration_date": 1712345678901234567`).
 *
 * A JSON number above 2^53 read by `JSON.parse` has already lost precision before it reaches this
 * schema: read request bodies with {@link parseJsonExact} to keep it exact.
 */
export const Nanos = Schema.transformOrFail(
  Schema.Union(Schema.Number, Schema.String, Schema.BigIntFromSelf),
  NanosFromSelf,
  {
    strict: true,
    decode: (input, _, ast) => {
      if (typeof input === "bigint") return ParseResult.succeed(input)
      if (typeof input === "number") {
        // A large double's shortest decimal text is what the sender wrote (see parseJsonExact);
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

// ---------------------------------------------------------------------------------------------
// Exact JSON text. Node 20's `JSON.parse` has no reviver `context.source`, so a small parser reads
// integer literals beyond 2^53 as `bigint` instead of rounding them.
// ---------------------------------------------------------------------------------------------

/** JSON text that is not valid JSON (or nests deeper than {@link MAX_JSON_DEPTH}). */
export class JsonSyntaxError extends Data.TaggedError("JsonSyntaxError")<{
  readonly message: string
  readonly position: number
}> {}

/** The deepest nesting {@link parseJsonExact} accepts; deeper documents are rejected, not overflowed. */
export const MAX_JSON_DEPTH = 1000

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y

class Stop {
  constructor(
    readonly message: string,
    readonly position: number
  ) {}
}

/**
 * Parses JSON text like `JSON.parse`, except that an integer literal (no fraction, no exponent) that
 * does not survive the trip through a double (`1712345678901234567` would write back as
 * `1712345678901234700`) becomes an exact `bigint`. Every other value is what `JSON.parse` gives, so
 * number fields still read numbers.
 */
export const parseJsonExact = (text: string): Either.Either<unknown, JsonSyntaxError> => {
  let i = 0
  const n = text.length
  const stop = (message: string): never => {
    throw new Stop(message, i)
  }
  const skipWhitespace = () => {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++
      else break
    }
  }
  const readString = (): string => {
    const start = i
    i++ // opening quote
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        // The engine decodes the escapes of the exact token found; it rejects malformed ones.
        try {
          return JSON.parse(text.slice(start, i)) as string
        } catch {
          i = start
          return stop("invalid string literal")
        }
      }
      if (c === 0x5c) i += 2
      else if (c < 0x20) return stop("control character in string")
      else i++
    }
    return stop("unterminated string")
  }
  const readNumber = (): number | bigint => {
    NUMBER.lastIndex = i
    const match = NUMBER.exec(text)
    if (match === null) return stop("invalid number")
    const token = match[0]
    i += token.length
    const value = Number(token)
    if (match[1] !== undefined || match[2] !== undefined || Number.isSafeInteger(value)) return value
    // A large integer literal: a number when that number writes back as the same text (so nothing
    // of what was sent is lost), else the exact bigint.
    return String(value) === token ? value : BigInt(token)
  }
  const readLiteral = <A>(word: string, value: A): A => {
    if (text.startsWith(word, i)) {
      i += word.length
      return value
    }
    return stop("unexpected token")
  }
  const readValue = (depth: number): unknown => {
    if (depth > MAX_JSON_DEPTH) stop("nesting too deep")
    skipWhitespace()
    const c = text[i]
    switch (c) {
      case "{": {
        i++
        const object: Record<string, unknown> = {}
        skipWhitespace()
        if (text[i] === "}") {
          i++
          return object
        }
        for (;;) {
          skipWhitespace()
          if (text[i] !== '"') stop("expected a property name")
          const key = readString()
          skipWhitespace()
          if (text[i] !== ":") stop("expected ':'")
          i++
          const value = readValue(depth + 1)
          if (key === "__proto__") {
            Object.defineProperty(object, key, {
              value,
              writable: true,
              enumerable: true,
              configurable: true
            })
          } else {
            object[key] = value
          }
          skipWhitespace()
          if (text[i] === ",") i++
          else if (text[i] === "}") {
            i++
            return object
          } else stop("expected ',' or '}'")
        }
      }
      case "[": {
        i++
        const array: Array<unknown> = []
        skipWhitespace()
        if (text[i] === "]") {
          i++
          return array
        }
        for (;;) {
          array.push(readValue(depth + 1))
          skipWhitespace()
          if (text[i] === ",") i++
          else if (text[i] === "]") {
            i++
            return array
          } else stop("expected ',' or ']'")
        }
      }
      case '"':
        return readString()
      case "t":
        return readLiteral("true", true)
      case "f":
        return readLiteral("false", false)
      case "n":
        return readLiteral("null", null)
      default:
        return c === "-" || (c !== undefined && c >= "0" && c <= "9")
          ? readNumber()
          : stop(c === undefined ? "unexpected end of input" : "unexpected token")
    }
  }
  try {
    const value = readValue(0)
    skipWhitespace()
    if (i !== n) stop("unexpected text after the JSON value")
    return Either.right(value)
  } catch (e) {
    if (e instanceof Stop)
      return Either.left(new JsonSyntaxError({ message: e.message, position: e.position }))
    throw e
  }
}

/**
 * Writes a value as compact JSON text like `JSON.stringify`, except that a `bigint` is written as
 * its exact integer literal. A value with no JSON form at the top (`undefined`, a function) gives
 * `"null"`. Throws a `TypeError` on a circular structure, as `JSON.stringify` does.
 */
export const stringifyWithBigInt = (value: unknown): string => {
  const ancestors = new Set<object>()
  const write = (holderKey: string, input: unknown): string | undefined => {
    let v = input
    if (
      v !== null &&
      (typeof v === "object" || typeof v === "bigint") &&
      typeof (v as { toJSON?: unknown }).toJSON === "function"
    ) {
      v = (v as { toJSON: (key: string) => unknown }).toJSON(holderKey)
    }
    switch (typeof v) {
      case "bigint":
        return v.toString()
      case "string":
        return JSON.stringify(v)
      case "number":
        return Number.isFinite(v) ? JSON.stringify(v) : "null"
      case "boolean":
        return v ? "true" : "false"
      case "object": {
        if (v === null) return "null"
        if (ancestors.has(v)) throw new TypeError("Converting circular structure to JSON")
        ancestors.add(v)
        let out: string
        if (Array.isArray(v)) {
          out = `[${v.map((item, index) => write(String(index), item) ?? "null").join(",")}]`
        } else {
          const parts: Array<string> = []
          for (const key of Object.keys(v)) {
            const written = write(key, (v as Record<string, unknown>)[key])
            if (written !== undefined) parts.push(`${JSON.stringify(key)}:${written}`)
          }
          out = `{${parts.join(",")}}`
        }
        ancestors.delete(v)
        return out
      }
      default:
        return undefined
    }
  }
  return write("", value) ?? "null"
}

/**
 * JSON text to a value and back, exactly: decodes with {@link parseJsonExact}, encodes with
 * {@link stringifyWithBigInt}. Compose it with a body schema: `Schema.compose(ExactJson, Body)`.
 */
export const ExactJson = Schema.transformOrFail(Schema.String, Schema.Unknown, {
  strict: true,
  decode: (text, _, ast) =>
    Either.match(parseJsonExact(text), {
      onLeft: (e) =>
        ParseResult.fail(new ParseResult.Type(ast, text, `${e.message} at position ${e.position}`)),
      onRight: (value) => ParseResult.succeed(value)
    }),
  encode: (value) => ParseResult.succeed(stringifyWithBigInt(value))
}).annotations({ identifier: "ExactJson" })

/** A schema read from and written to exact JSON text (see {@link ExactJson}). */
export const fromExactJson = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, string, R> =>
  Schema.compose(ExactJson, schema)
