/**
 * Success responses whose body holds `bigint` nanoseconds (B3 `creation_date`, `expiration_date`;
 * A4 `time`): HttpApi writes bodies with `JSON.stringify`, which refuses a `bigint`, so these are
 * written with `Nanos.stringifyWithBigInt` as exact integer literals (spec-decisions "Nanosecond
 * timestamps above 2^53").
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Nanos from "@cobro/domain/Nanos"
import * as Schema from "effect/Schema"

/** A JSON response of an already encoded value; `bigint`s are written exactly. */
export const json = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(Nanos.stringifyWithBigInt(body), { status, contentType: "application/json" })

/** Encodes a value with its schema, then writes it as {@link json}. */
export const encoded = <A, I>(schema: Schema.Schema<A, I, never>) => {
  // Built once per schema, not per response.
  const encode = Schema.encodeSync(schema)
  return (value: A, status = 200): HttpServerResponse.HttpServerResponse => json(encode(value), status)
}
