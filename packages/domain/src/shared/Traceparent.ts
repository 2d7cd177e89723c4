/**
 * The W3C trace context's `traceparent` (https://www.w3.org/TR/trace-context/): the text of a span,
 * and the span a text names. Kept with a durable intent (a delivery's schedule, a push's claim) so
 * that the worker finishing it later links its span to the request that caused it; the store, the
 * dispatcher and the pusher share this one reading of it.
 */
import * as Tracer from "effect/Tracer"

const TRACE_ID = /^[0-9a-f]{32}$/
const SPAN_ID = /^[0-9a-f]{16}$/
const ZERO_TRACE_ID = "0".repeat(32)
const ZERO_SPAN_ID = "0".repeat(16)
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

const valid = (traceId: string, spanId: string) =>
  TRACE_ID.test(traceId) && SPAN_ID.test(spanId) && traceId !== ZERO_TRACE_ID && spanId !== ZERO_SPAN_ID

/**
 * The `traceparent` of a span (`00-<trace id>-<span id>-01`), or `undefined` when it is not recorded:
 * a noop span (tracing off: `sampled` false, ids `"noop"`), an unsampled one, or ids that are not W3C's.
 */
export const traceparentOf = (span: Tracer.AnySpan): string | undefined =>
  span.sampled && valid(span.traceId, span.spanId) ? `00-${span.traceId}-${span.spanId}-01` : undefined

/** The span a stored `traceparent` names, to link to; `undefined` for none or an unreadable one. */
export const spanOf = (traceparent: string | null | undefined): Tracer.ExternalSpan | undefined => {
  if (traceparent === null || traceparent === undefined) return undefined
  const match = TRACEPARENT.exec(traceparent)
  if (match === null || !valid(match[1]!, match[2]!)) return undefined
  return Tracer.externalSpan({
    traceId: match[1]!,
    spanId: match[2]!,
    sampled: (parseInt(match[3]!, 16) & 1) === 1
  })
}
