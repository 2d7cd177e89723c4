/**
 * The response envelope of the spec ("Response envelope": A, B and parts of C): `{payload, errors}`,
 * and the shape Cobro gives to the items of `errors`, which the spec leaves "not shown".
 */
import * as Schema from "effect/Schema"

/**
 * One item of `errors`: a stable `code` (e.g. `AP005`), a human `message`, and, when the error is
 * about one field of the request, its dotted path (e.g. `amount.currency`).
 */
export const ErrorItem = Schema.Struct({
  code: Schema.NonEmptyString,
  message: Schema.String,
  field: Schema.optional(Schema.String)
})
export type ErrorItem = typeof ErrorItem.Type

/** Wraps a payload schema in the spec's `{payload, errors}` envelope; `errors` is empty on success. */
export const Envelope = <P extends Schema.Schema.All>(payload: P) => Schema.Struct({ payload, errors: Schema.Array(ErrorItem) })

/**
 * The body of an error response: an empty `payload` object and at least one error item. An empty
 * object rather than `null` keeps clients that read `payload.x` unconditionally from crashing.
 */
export const ErrorEnvelope = Schema.Struct({
  payload: Schema.Struct({}),
  errors: Schema.NonEmptyArray(ErrorItem)
})
export type ErrorEnvelope = typeof ErrorEnvelope.Type

/** Builds a success body: the payload and no errors. */
export const success = <A>(payload: A): { readonly payload: A; readonly errors: ReadonlyArray<ErrorItem> } => ({
  payload,
  errors: []
})

/** Builds an error body from one or more error items. */
export const failure = (first: ErrorItem, ...rest: ReadonlyArray<ErrorItem>): ErrorEnvelope => ({
  payload: {},
  errors: [first, ...rest]
})
