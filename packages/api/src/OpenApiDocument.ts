/**
 * Finishing touches of the OpenAPI document served at `/openapi.json`: every error is shown as the
 * spec's envelope, HttpApi's own decode error (which Cobro never sends) is replaced by it, and every
 * POST, PUT, PATCH and DELETE documents `Idempotency-Key` and its 409.
 */
import * as JSONSchema from "effect/JSONSchema"
import * as Envelope from "@cobro/domain/Envelope"
import * as Errors from "./Errors.js"

/** The description of the API in the document. */
export const DESCRIPTION = [
  "Cobro: terminal payments (A), payment links (B), online payments (C), webhooks (D).",
  "Every request of A, B and C carries `Authorization: x-api-key <identity key>`.",
  'Errors use the envelope `{"payload": {}, "errors": [{"code", "message", "field"?}]}`.',
  "Every POST, PUT, PATCH and DELETE accepts an `Idempotency-Key` header: the same key and body within 24 hours returns the first response, and a request whose effect committed is never run again."
].join(" ")

const ENVELOPE = "ErrorEnvelope"
const DECODE_ERROR = "HttpApiDecodeError"

const envelopeSchema = (): Record<string, unknown> => {
  const { $schema: _schema, ...schema } = JSONSchema.make(Envelope.ErrorEnvelope, {
    target: "openApi3.1"
  }) as unknown as Record<string, unknown>
  return schema
}

const rewriteRefs = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    const items = value.map(rewriteRefs)
    // An `anyOf` that named several error classes now names the envelope several times: once is enough.
    const seen = new Set<string>()
    return items.filter((item) => {
      const key = JSON.stringify(item)
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") {
        const name = inner.slice(inner.lastIndexOf("/") + 1)
        out[key] =
          Errors.ENVELOPE_ERROR_TAGS.has(name) || name === DECODE_ERROR
            ? `#/components/schemas/${ENVELOPE}`
            : inner
      } else {
        out[key] = rewriteRefs(inner)
      }
    }
    if (Array.isArray(out.anyOf) && out.anyOf.length === 1) {
      const { anyOf, ...rest } = out
      return { ...rest, ...(anyOf[0] as object) }
    }
    return out
  }
  return value
}

/** The operations that may have an effect, and so take an `Idempotency-Key`. */
const EFFECT_METHODS = ["post", "put", "patch", "delete"]

const idempotencyHeader = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Replays the first response of the same request within 24 hours; the same key with another body is a 409.",
  schema: { type: "string", minLength: 1, maxLength: 255 }
}

/** The transform applied to the generated document. */
export const transform = (spec: Record<string, any>): Record<string, any> => {
  const out = rewriteRefs(spec) as Record<string, any>
  const schemas = out.components.schemas as Record<string, unknown>
  for (const tag of [...Errors.ENVELOPE_ERROR_TAGS, DECODE_ERROR]) delete schemas[tag]
  schemas[ENVELOPE] = envelopeSchema()
  for (const post of Object.values(out.paths as Record<string, Record<string, any>>).flatMap((path) =>
    EFFECT_METHODS.flatMap((method) => (path[method] === undefined ? [] : [path[method]]))
  )) {
    post.parameters = [...(post.parameters ?? []), idempotencyHeader]
    post.responses["409"] ??= {
      description: "Idempotency-Key reused with another request, or still running",
      content: { "application/json": { schema: { $ref: `#/components/schemas/${ENVELOPE}` } } }
    }
  }
  return out
}
