/**
 * How an endpoint declares its JSON body (spec-decisions "Reading JSON exactly"): the schema for the
 * OpenAPI document and a client, and the errors reading it may give. The server reads such bodies
 * itself (`@cobro/http/RequestBody`), so HttpApi's own `JSON.parse` never sees them.
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as Schema from "effect/Schema"
import * as Errors from "./Errors.js"

/**
 * Declares an endpoint's JSON body for the OpenAPI document and the errors reading it may give
 * (400, 413, 415). The handler must be a `handleRaw` that reads the body with `RequestBody.decode` or
 * `RequestBody.json` (`@cobro/http`).
 */
export const withJsonBody =
  <P extends Schema.Schema.Any>(payload: P) =>
  <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E) =>
    (endpoint as any)
      .setPayload(payload)
      .addError(Errors.BadRequest)
      .addError(Errors.PayloadTooLarge)
      .addError(Errors.UnsupportedMediaType) as E extends HttpApiEndpoint.HttpApiEndpoint<
      infer Name,
      infer Method,
      infer Path,
      infer UrlParams,
      infer _Payload,
      infer Headers,
      infer Success,
      infer Error,
      infer R,
      infer RE
    >
      ? HttpApiEndpoint.HttpApiEndpoint<
          Name,
          Method,
          Path,
          UrlParams,
          Schema.Schema.Type<P>,
          Headers,
          Success,
          Error | Errors.BadRequest | Errors.PayloadTooLarge | Errors.UnsupportedMediaType,
          R | Schema.Schema.Context<P>,
          RE
        >
      : never
