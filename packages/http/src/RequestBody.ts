/**
 * How a handler reads a JSON request body: a size limit (413), JSON only (415), exact integers
 * (`Nanos.parseJsonExact`, spec-decisions "Reading JSON exactly"), malformed JSON a 400 in the
 * envelope. Endpoints declare their body with `@cobro/api/JsonBody` for the OpenAPI document and read
 * it in a `handleRaw` handler, so HttpApi's own `JSON.parse` never sees it.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Nanos from "@cobro/domain/Nanos"
import * as SafeText from "@cobro/domain/SafeText"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Errors from "@cobro/api/Errors"

/** The largest request body accepted, in bytes: 64 KiB (the largest spec body is a few KiB). */
export const DEFAULT_LIMIT = 64 * 1024

/** The body limit in bytes; the server may provide another value. */
export class BodyLimit extends Context.Reference<BodyLimit>()("@cobro/http/RequestBody/BodyLimit", {
  defaultValue: () => DEFAULT_LIMIT
}) {}

/** The errors of reading a JSON body. */
export type BodyError = Errors.BadRequest | Errors.PayloadTooLarge | Errors.UnsupportedMediaType

const tooLarge = (limit: number) =>
  new Errors.PayloadTooLarge({
    errors: [Errors.item(Errors.Codes.PayloadTooLarge, `the request body exceeds ${limit} bytes`)]
  })

const unsupported = (contentType: string) =>
  new Errors.UnsupportedMediaType({
    errors: [
      Errors.item(
        Errors.Codes.UnsupportedMediaType,
        `the request body must be application/json, not ${contentType}`
      )
    ]
  })

const isJsonType = (contentType: string): boolean => {
  const semicolon = contentType.indexOf(";")
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase()
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"))
}

const encoder = new TextEncoder()
const byteLength = (text: string, limit: number): number =>
  // A UTF-16 unit is at most 3 bytes of UTF-8: short texts need no encoding to be known under the limit.
  text.length * 3 <= limit ? text.length : encoder.encode(text).length

/**
 * The raw body text of the current request, within the limit, when its content type is JSON (or
 * absent: the spec does not show the content type of A and B requests). A `Content-Length` above
 * the limit is refused before anything is read. The text is read once per request.
 */
export const text: Effect.Effect<
  string,
  Errors.PayloadTooLarge | Errors.UnsupportedMediaType | Errors.BadRequest,
  HttpServerRequest.HttpServerRequest
> = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const limit = yield* BodyLimit
  const contentType = request.headers["content-type"]
  if (contentType !== undefined && !isJsonType(contentType))
    return yield* Effect.fail(unsupported(contentType))
  const declared = request.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit) return yield* Effect.fail(tooLarge(limit))
  const body = yield* request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
    Effect.catchAll((error): Effect.Effect<never, Errors.PayloadTooLarge | Errors.BadRequest> =>
      String((error as { cause?: unknown }).cause).includes("maxBytes")
        ? Effect.fail(tooLarge(limit))
        : Effect.fail(Errors.BadRequest.of(Errors.Codes.MalformedJson, "the request body could not be read"))
    )
  )
  if (byteLength(body, limit) > limit) return yield* Effect.fail(tooLarge(limit))
  return body
})

/** Parses body text exactly: big integers stay exact (`bigint`), malformed JSON is a 400. */
export const parse = (body: string): Either.Either<unknown, Errors.BadRequest> =>
  Either.mapLeft(Nanos.parseJsonExact(body), (e) =>
    Errors.BadRequest.of(
      Errors.Codes.MalformedJson,
      body.trim() === ""
        ? "the request body is empty"
        : `malformed JSON: ${e.message} at position ${e.position}`
    )
  )

/** The JSON value of the current request's body, read exactly (see {@link text} and {@link parse}). */
export const json: Effect.Effect<unknown, BodyError, HttpServerRequest.HttpServerRequest> = Effect.flatMap(
  text,
  (body) => parse(body)
)

/**
 * The 400 of a body holding text that cannot be stored (a NUL or an unpaired surrogate, in a value
 * or a member name, declared by the schema or not), naming the first such field; none otherwise.
 */
export const unsafeText = (value: unknown, code: string): Errors.BadRequest | undefined => {
  const path = SafeText.firstUnsafe(value)
  return path === undefined
    ? undefined
    : Errors.BadRequest.of(code, SafeText.UNSAFE_MESSAGE, path.map(String).join("."))
}

/**
 * Reads the body and decodes it with a schema; a decoding failure is a 400 with one item per field
 * under `code` (default `ValidationError`). Text that cannot be stored is refused anywhere in the
 * body first ({@link unsafeText}), whatever the schema says. A group with its own error rules (A3)
 * decodes `json` itself instead.
 */
export const decode = <A, I, R>(
  schema: Schema.Schema<A, I, R>,
  options: { readonly code?: string; readonly onExcessProperty?: "ignore" | "error" } = {}
): Effect.Effect<A, BodyError, HttpServerRequest.HttpServerRequest | R> => {
  const decodeUnknown = Schema.decodeUnknown(schema, {
    errors: "all",
    onExcessProperty: options.onExcessProperty ?? "ignore"
  })
  const code = options.code ?? Errors.Codes.ValidationError
  return Effect.flatMap(json, (value) => {
    const unsafe = unsafeText(value, code)
    return unsafe !== undefined
      ? Effect.fail(unsafe)
      : Effect.mapError(decodeUnknown(value), (error: ParseResult.ParseError) =>
          Errors.BadRequest.fromParseError(code, error)
        )
  })
}
