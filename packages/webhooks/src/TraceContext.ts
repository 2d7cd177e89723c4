/**
 * W3C trace context (`traceparent`) of a webhook attempt (issue 34): the attempt's span links to the
 * span that scheduled the delivery (its traceparent, stored beside the queue row, comes with the
 * claim), and the POST carries the attempt's own traceparent, so that a merchant's tracing can join
 * it. Nothing when tracing is off (a noop span). `@cobro/store-pg` has the same few lines
 * (`TraceContext`): adapters do not import each other.
 */
import * as Context from "effect/Context"
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

/** The `traceparent` of the span active in `context` (see {@link traceparentOf}); `undefined` without one. */
export const traceparentIn = (context: Context.Context<never>): string | undefined => {
  const span = Context.getOption(context, Tracer.ParentSpan)
  return span._tag === "Some" ? traceparentOf(span.value) : undefined
}

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

/** The header a POST carries its traceparent in. */
export const HEADER = "traceparent"

/** A link to the span a stored `traceparent` names; `undefined` for none or an unreadable one. */
export const linkTo = (traceparent: string | null | undefined): Tracer.SpanLink | undefined => {
  const span = spanOf(traceparent)
  return span === undefined ? undefined : { _tag: "SpanLink", span, attributes: {} }
}
