/**
 * Exact JSON text: a reader and a writer like `JSON.parse` and `JSON.stringify`, except that integer
 * literals beyond 2^53 are kept as exact `bigint`s both ways (the spec's nanosecond timestamps, B2/B3
 * `expiration_date` and D `time`, see `Nanos`). Node 20's `JSON.parse` has no reviver
 * `context.source`, so a small parser reads such literals instead of rounding them. Measured against
 * `lossless-json` and `json-bigint` in `packages/webhooks/bench/ExactJsonBench.ts`.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * JSON text that is not valid JSON (or nests deeper than {@link MAX_DEPTH}).
 *
 * @category errors
 */
export class JsonSyntaxError extends Data.TaggedError("JsonSyntaxError")<{
  readonly message: string
  readonly position: number
}> {}

/**
 * The deepest nesting {@link parse} accepts; deeper documents are rejected, not overflowed.
 *
 * @category constants
 */
export const MAX_DEPTH = 1000

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
 *
 * @category reading
 */
export const parse = (text: string): Either.Either<unknown, JsonSyntaxError> => {
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
    let escaped = false
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        // Without an escape the string is the text between the quotes (a control character was refused).
        if (!escaped) return text.slice(start + 1, i - 1)
        // The engine decodes the escapes of the exact token found; it rejects malformed ones.
        try {
          return JSON.parse(text.slice(start, i)) as string
        } catch {
          i = start
          return stop("invalid string literal")
        }
      }
      if (c === 0x5c) {
        escaped = true
        i += 2
      } else if (c < 0x20) return stop("control character in string")
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
  /** Reads `close`, after white space, if it comes next: the object or array ends there. */
  const closes = (close: "}" | "]"): boolean => {
    skipWhitespace()
    if (text[i] !== close) return false
    i++
    return true
  }
  /** After a member or an element: the object's or array's end, or the `,` before the next one. */
  const endsOrGoesOn = (close: "}" | "]"): boolean => {
    if (closes(close)) return true
    if (text[i] !== ",") stop(`expected ',' or '${close}'`)
    i++
    return false
  }
  const readValue = (depth: number): unknown => {
    if (depth > MAX_DEPTH) stop("nesting too deep")
    skipWhitespace()
    const c = text[i]
    switch (c) {
      case "{": {
        i++
        const object: Record<string, unknown> = {}
        if (closes("}")) return object
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
          if (endsOrGoesOn("}")) return object
        }
      }
      case "[": {
        i++
        const array: Array<unknown> = []
        if (closes("]")) return array
        for (;;) {
          array.push(readValue(depth + 1))
          if (endsOrGoesOn("]")) return array
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
 * its exact integer literal (an array's holes are `null`, as there). A value with no JSON form at the top (`undefined`, a function) gives
 * `"null"`. Throws a `TypeError` on a circular structure, as `JSON.stringify` does.
 *
 * @category writing
 */
export const stringify = (value: unknown): string => {
  const ancestors: Array<object> = []
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
        return Number.isFinite(v) ? String(v) : "null"
      case "boolean":
        return v ? "true" : "false"
      case "object": {
        if (v === null) return "null"
        if (ancestors.includes(v)) throw new TypeError("Converting circular structure to JSON")
        ancestors.push(v)
        let out: string
        if (Array.isArray(v)) {
          out = "["
          for (let index = 0; index < v.length; index++) {
            if (index > 0) out += ","
            out += write(String(index), v[index]) ?? "null"
          }
          out += "]"
        } else {
          out = "{"
          for (const key of Object.keys(v)) {
            const written = write(key, (v as Record<string, unknown>)[key])
            if (written !== undefined) out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${written}`
          }
          out += "}"
        }
        ancestors.pop()
        return out
      }
      default:
        return undefined
    }
  }
  return write("", value) ?? "null"
}

/**
 * JSON text to a value and back, exactly: decodes with {@link parse}, encodes with {@link stringify}.
 * Compose it with a body schema: `Schema.compose(ExactJson, Body)`.
 *
 * @category schemas
 */
export const ExactJson = Schema.transformOrFail(Schema.String, Schema.Unknown, {
  strict: true,
  decode: (text, _, ast) =>
    Either.match(parse(text), {
      onLeft: (e) =>
        ParseResult.fail(new ParseResult.Type(ast, text, `${e.message} at position ${e.position}`)),
      onRight: (value) => ParseResult.succeed(value)
    }),
  encode: (value) => ParseResult.succeed(stringify(value))
}).annotations({ identifier: "ExactJson" })

/**
 * A schema read from and written to exact JSON text (see {@link ExactJson}).
 *
 * @category schemas
 */
export const fromExactJson = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, string, R> =>
  Schema.compose(ExactJson, schema)
