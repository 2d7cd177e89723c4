/**
 * The response envelope of the spec ("Response envelope": A, B and parts of C): `{payload, errors}`,
 * and the shape Cobro gives to the items of `errors`, which the spec leaves "not shown".
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * One item of `errors`: a stable `code` (e.g. `AP005`), a human `message`, and, when the error is
 * about one field of the request, its dotted path (e.g. `amount.currency`).
 *
 * @category schemas
 */
export const ErrorItem = Schema.Struct({
  code: Schema.NonEmptyString,
  message: Schema.String,
  field: Schema.optional(Schema.String)
})
export type ErrorItem = typeof ErrorItem.Type

/**
 * Wraps a payload schema in the spec's `{payload, errors}` envelope; `errors` is empty on success.
 *
 * @category schemas
 */
export const Envelope = <P extends Schema.Schema.All>(payload: P) =>
  Schema.Struct({ payload, errors: Schema.Array(ErrorItem) })

/**
 * The body of an error response: an empty `payload` object and at least one error item. An empty
 * object rather than `null` keeps clients that read `payload.x` unconditionally from crashing.
 *
 * @category schemas
 */
export const ErrorEnvelope = Schema.Struct({
  payload: Schema.Struct({}),
  errors: Schema.NonEmptyArray(ErrorItem)
})
export type ErrorEnvelope = typeof ErrorEnvelope.Type

/** Builds a success body: the payload and no errors. */
export const success = <A>(
  payload: A
): { readonly payload: A; readonly errors: ReadonlyArray<ErrorItem> } => ({
  payload,
  errors: []
})

/** Builds an error body from one or more error items. */
export const failure = (first: ErrorItem, ...rest: ReadonlyArray<ErrorItem>): ErrorEnvelope => ({
  payload: {},
  errors: [first, ...rest]
})

/** One problem of a decoded body: the path of the field, its dotted form and what was expected. */
export interface FieldIssue {
  readonly path: ReadonlyArray<PropertyKey>
  /** Dotted path, `""` for the body itself. */
  readonly field: string
  readonly message: string
}

const NULL_ALTERNATIVE = /^Expected null, actual /

/**
 * The problems of a parse error, one per field, in the order the schema reported them. Only the
 * deepest issues are kept, and the "expected null" alternative of a nullable optional field is
 * dropped when the field has a better message, so each field reads as the rule it broke.
 */
export const fieldIssues = (error: ParseResult.ParseError): ReadonlyArray<FieldIssue> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const deepest = issues.filter(
    (issue) =>
      !issues.some(
        (other) =>
          other.path.length > issue.path.length && issue.path.every((key, index) => other.path[index] === key)
      )
  )
  const byField = new Map<string, FieldIssue>()
  for (const issue of deepest) {
    const field = issue.path.map(String).join(".")
    const known = byField.get(field)
    if (
      known === undefined ||
      (NULL_ALTERNATIVE.test(known.message) && !NULL_ALTERNATIVE.test(issue.message))
    ) {
      byField.set(field, { path: issue.path, field, message: issue.message })
    }
  }
  return [...byField.values()]
}

/** The error items of a parse error under one `code`: a validation response's `errors`. */
export const errorItemsOf = (code: string, error: ParseResult.ParseError): ReadonlyArray<ErrorItem> =>
  fieldIssues(error).map(({ field, message }) =>
    field === "" ? { code, message } : { code, message, field }
  )
