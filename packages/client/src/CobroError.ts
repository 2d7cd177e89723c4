/**
 * The errors the Promise client throws: each a `CobroError`, by what went wrong. An answer of the
 * contract's errors (`@cobro/api/Errors`) is a {@link CobroApiError} subclass by status, carrying the
 * contract's error itself (`error`, with its `errors` items); the rest say the call never got a
 * usable answer.
 */
import type * as Errors from "@cobro/api/Errors"

/** One item of the error envelope: `{code, message, field?}`. */
export interface ErrorItem {
  readonly code: string
  readonly message: string
  readonly field?: string | undefined
}

/**
 * Every error the Promise client throws.
 *
 * @category errors
 */
export class CobroError extends Error {
  override readonly name: string = "CobroError"
  /** The HTTP status, when an answer came. */
  readonly status: number | undefined
  /** The envelope's items (empty when there was no envelope). */
  readonly errors: ReadonlyArray<ErrorItem>
  constructor(
    message: string,
    options: {
      readonly status?: number | undefined
      readonly errors?: ReadonlyArray<ErrorItem>
      readonly cause?: unknown
    } = {}
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = options.status
    this.errors = options.errors ?? []
  }
  /** The first item's code (`LinkNotFound`, `ValidationError`, `AP003`, …), if any. */
  get code(): string | undefined {
    return this.errors[0]?.code
  }
}

/**
 * An answer with one of the contract's errors; `error` is that error as the contract declares it.
 *
 * @category errors
 */
export class CobroApiError extends CobroError {
  override readonly name: string = "CobroApiError"
  constructor(readonly error: Errors.EnvelopeError) {
    super(messageOf(error), { status: error.status, errors: error.errors })
  }
}

const messageOf = (error: Errors.EnvelopeError) =>
  `${error.status} ${error.errors.map((e) => `${e.code}: ${e.message}${e.field === undefined ? "" : ` (${e.field})`}`).join("; ")}`

/**
 * A subclass of `Base` named `name`: each error a class of its own (for `instanceof`) whose `name`
 * is its type's literal, so that no two are interchangeable.
 */
const named = <B extends new (...args: Array<any>) => CobroError, const N extends string>(Base: B, name: N) =>
  class extends Base {
    override readonly name: N = name
  }

/** 400: the request breaks a rule; `errors` name the fields. @category errors */
export class CobroBadRequestError extends named(CobroApiError, "CobroBadRequestError") {}
/** 401: no key, or an unknown one. @category errors */
export class CobroAuthenticationError extends named(CobroApiError, "CobroAuthenticationError") {}
/** 403: the key may not do this (the other integration's key, a disabled merchant). @category errors */
export class CobroPermissionError extends named(CobroApiError, "CobroPermissionError") {}
/** 404: no such resource for this key. @category errors */
export class CobroNotFoundError extends named(CobroApiError, "CobroNotFoundError") {}
/** 409: the request conflicts with the current state (or its idempotency key's request). @category errors */
export class CobroConflictError extends named(CobroApiError, "CobroConflictError") {}
/** 5xx: the service failed (after the retries allowed). @category errors */
export class CobroServerError extends named(CobroApiError, "CobroServerError") {}

/**
 * No answer: the connection failed or every attempt timed out, after the retries allowed.
 *
 * @category errors
 */
export class CobroConnectionError extends named(CobroError, "CobroConnectionError") {}

/**
 * The call's `AbortSignal` aborted it.
 *
 * @category errors
 */
export class CobroAbortError extends named(CobroError, "CobroAbortError") {}

/**
 * The arguments break the contract's schema: nothing was sent.
 *
 * @category errors
 */
export class CobroInvalidRequestError extends named(CobroError, "CobroInvalidRequestError") {}

/**
 * An answer the contract does not declare (another status, or a body its schema does not decode).
 *
 * @category errors
 */
export class CobroUnexpectedResponseError extends named(CobroError, "CobroUnexpectedResponseError") {}

/**
 * The {@link CobroApiError} subclass of a contract error.
 *
 * @category constructors
 */
export const fromEnvelopeError = (error: Errors.EnvelopeError): CobroApiError => {
  if (error.status === 400) return new CobroBadRequestError(error)
  if (error.status === 401) return new CobroAuthenticationError(error)
  if (error.status === 403) return new CobroPermissionError(error)
  if (error.status === 404) return new CobroNotFoundError(error)
  if (error.status === 409) return new CobroConflictError(error)
  if (error.status >= 500) return new CobroServerError(error)
  return new CobroApiError(error)
}
