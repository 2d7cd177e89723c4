/**
 * The errors every Cobro endpoint answers with, each an HTTP status and a body in the spec's error
 * envelope `{payload: {}, errors: [{code, message, field?}]}` (spec: Errors; spec-decisions "Shape of
 * an `errors` item"). Handlers fail with these; `Http.ts` writes them.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Envelope from "@cobro/domain/Envelope"
import type * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * The stable codes of the errors Cobro produces itself (A3 keeps AP001–AP006, C's 404 is
 * `PaymentNotFound`; a group may add its own codes, listed in its decisions).
 *
 * @category constants
 */
export const Codes = {
  /** 400: the body is not JSON text. */
  MalformedJson: "MalformedJson",
  /** 400: a body, path or query field breaks its rule; `field` names it. */
  ValidationError: "ValidationError",
  /** 400: the `Idempotency-Key` header is empty or longer than 255 characters. */
  InvalidIdempotencyKey: "InvalidIdempotencyKey",
  /** 400 (audit): a tree size past the tree's, below 1, or `from` after `to`; the message gives the tree's size. */
  TreeSizeOutOfRange: "TreeSizeOutOfRange",
  /** 401: no `Authorization` header, a malformed one, or a key that is not (or no longer) valid. */
  Unauthorized: "Unauthorized",
  /** 403: a valid key of the other integration (terminal API vs payment button). */
  Forbidden: "Forbidden",
  /**
   * 403 (B2, C1, C4): the merchant's account is disabled: it cannot ask for payments. A3 answers
   * AP004 instead (the only code of A3 that fits, TT-2).
   */
  MerchantDisabled: "MerchantDisabled",
  /** 404: no route has this path. */
  NotFound: "NotFound",
  /** 404 (admin): no merchant with this id. */
  MerchantNotFound: "MerchantNotFound",
  /** 404 (admin): no terminal with this serial is bound to the merchant. */
  TerminalNotFound: "TerminalNotFound",
  /** 404 (C): the payment, intent or refund does not exist for this key. */
  PaymentNotFound: "PaymentNotFound",
  /** 404 (audit): no checkpoint has been signed yet, or none at this tree size. */
  CheckpointNotFound: "CheckpointNotFound",
  /** 404 (audit, admin): no event with this id is in the transparency log's tree. */
  EventNotFound: "EventNotFound",
  /** 404 (audit, admin): the event's leaf index is not below `tree_size`; ask a larger checkpoint. */
  EventNotInTree: "EventNotInTree",
  /** 405: the path exists, not with this method (the `Allow` header lists the methods). */
  MethodNotAllowed: "MethodNotAllowed",
  /** 409: the `Idempotency-Key` was used with another method, path or body. */
  IdempotencyKeyReused: "IdempotencyKeyReused",
  /** 409: a request with this `Idempotency-Key` is still running. */
  IdempotencyKeyInUse: "IdempotencyKeyInUse",
  /**
   * 409: the request with this `Idempotency-Key` took effect but its answer was lost (its node
   * stopped) and the route cannot make it again: read the resource.
   */
  IdempotencyKeyUnanswered: "IdempotencyKeyUnanswered",
  /** 503: the database cannot take the request now; retry after `Retry-After` seconds. */
  Unavailable: "Unavailable",
  /** 409 (admin): the serial is bound already with another model or name. */
  TerminalAlreadyBound: "TerminalAlreadyBound",
  /** 409 (admin): the server does not run on the virtual clock. */
  ClockNotVirtual: "ClockNotVirtual",
  /** 413: the body is larger than the limit. */
  PayloadTooLarge: "PayloadTooLarge",
  /** 415: a content type other than JSON. */
  UnsupportedMediaType: "UnsupportedMediaType",
  /** 500: an unexpected failure (AP001 on the terminal API's paths). */
  InternalError: "InternalError",
  /** 500 on the terminal API (A3): "failure not mapped to a specific error". */
  AP001: "AP001"
} as const

/**
 * One item of `errors`.
 *
 * @category constructors
 */
export const item = (code: string, message: string, field?: string): Envelope.ErrorItem =>
  field === undefined || field === "" ? { code, message } : { code, message, field }

const Items = Schema.NonEmptyArray(Envelope.ErrorItem)

/**
 * What every envelope error carries: its status and its items.
 *
 * @category models
 */
export interface EnvelopeError {
  readonly _tag: string
  readonly status: number
  readonly errors: readonly [Envelope.ErrorItem, ...Array<Envelope.ErrorItem>]
}

const TAGS = new Set<string>()
const tagged = <T extends string>(tag: T): T => {
  TAGS.add(tag)
  return tag
}

/**
 * 400: the request is invalid (malformed JSON, a field error, A3's AP002–AP006).
 *
 * @category errors
 */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  tagged("BadRequest"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 400, description: "The request is invalid" })
) {
  readonly status = 400
  /** One error item. */
  static of(code: string, message: string, field?: string): BadRequest {
    return new BadRequest({ errors: [item(code, message, field)] })
  }
  /** One item per field of a parse error, under one code (spec-decisions: one error item per field). */
  static fromParseError(code: string, error: ParseResult.ParseError): BadRequest {
    const items = Envelope.errorItemsOf(code, error)
    return new BadRequest({
      errors: items.length > 0 ? (items as [Envelope.ErrorItem]) : [item(code, "the request is invalid")]
    })
  }
}

/**
 * 401: a missing, malformed or unknown key.
 *
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  tagged("Unauthorized"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 401, description: "Missing or unknown key" })
) {
  readonly status = 401
  static of(message: string, code: string = Codes.Unauthorized): Unauthorized {
    return new Unauthorized({ errors: [item(code, message)] })
  }
}

/**
 * 403: a key that may not use this API or resource.
 *
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  tagged("Forbidden"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 403, description: "The key may not use this API" })
) {
  readonly status = 403
  static of(message: string, code: string = Codes.Forbidden): Forbidden {
    return new Forbidden({ errors: [item(code, message)] })
  }
}

/**
 * 404: no such resource (or route).
 *
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>()(
  tagged("NotFound"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 404, description: "Not found" })
) {
  readonly status = 404
  static of(code: string, message: string, field?: string): NotFound {
    return new NotFound({ errors: [item(code, message, field)] })
  }
}

/**
 * 405: the path exists with other methods; `allow` lists them.
 *
 * @category errors
 */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  tagged("MethodNotAllowed"),
  { errors: Items, allow: Schema.Array(Schema.String) },
  HttpApiSchema.annotations({ status: 405, description: "Method not allowed" })
) {
  readonly status = 405
}

/**
 * 409: the request conflicts with the current state (duplicate reference, idempotency key…).
 *
 * @category errors
 */
export class Conflict extends Schema.TaggedError<Conflict>()(
  tagged("Conflict"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 409, description: "Conflict with the current state" })
) {
  readonly status = 409
  static of(code: string, message: string, field?: string): Conflict {
    return new Conflict({ errors: [item(code, message, field)] })
  }
}

/**
 * 413: the body exceeds the limit.
 *
 * @category errors
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  tagged("PayloadTooLarge"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 413, description: "The body exceeds the limit" })
) {
  readonly status = 413
}

/**
 * 415: a body that is not `application/json`.
 *
 * @category errors
 */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  tagged("UnsupportedMediaType"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 415, description: "The body is not application/json" })
) {
  readonly status = 415
}

/**
 * 500: an unexpected failure; the details are logged, never sent.
 *
 * @category errors
 */
export class InternalServerError extends Schema.TaggedError<InternalServerError>()(
  tagged("InternalServerError"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 500, description: "Internal error" })
) {
  readonly status = 500
  static of(code: string = Codes.InternalError): InternalServerError {
    return new InternalServerError({ errors: [item(code, "internal error")] })
  }
}

/**
 * 503: the service cannot answer now (`/ready` when the store does not answer).
 *
 * @category errors
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  tagged("ServiceUnavailable"),
  { errors: Items },
  HttpApiSchema.annotations({ status: 503, description: "Not ready" })
) {
  readonly status = 503
}

/**
 * Every envelope error's tag (the OpenAPI document shows each as the envelope).
 *
 * @category constants
 */
export const ENVELOPE_ERROR_TAGS: ReadonlySet<string> = TAGS

/**
 * Whether a value is one of the envelope errors above.
 *
 * @category predicates
 */
export const isEnvelopeError = (u: unknown): u is EnvelopeError =>
  Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && TAGS.has(u._tag) && "errors" in u

/**
 * The JSON body of an error: the envelope.
 *
 * @category rendering
 */
export const bodyOf = (error: EnvelopeError): string => JSON.stringify(Envelope.failure(...error.errors))

/**
 * The HTTP response of an envelope error.
 *
 * @category rendering
 */
export const toResponse = (error: EnvelopeError): HttpServerResponse.HttpServerResponse => {
  const response = HttpServerResponse.text(bodyOf(error), {
    status: error.status,
    contentType: "application/json"
  })
  return error instanceof MethodNotAllowed
    ? HttpServerResponse.setHeader(response, "allow", error.allow.join(", "))
    : response
}
