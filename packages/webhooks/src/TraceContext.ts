/**
 * W3C trace context (`traceparent`) of a webhook attempt (issue 34): the attempt's span links to the
 * span that scheduled the delivery (its traceparent, stored beside the queue row by the store's
 * `TraceContext`, comes with the claim), and the POST carries the attempt's own traceparent, so that
 * a merchant's tracing can join it. Nothing when tracing is off (a noop span).
 */
import { spanOf, traceparentOf } from "@cobro/domain/Traceparent"
import type * as Tracer from "effect/Tracer"

export { spanOf, traceparentOf }

/** The header a POST carries its traceparent in. */
export const HEADER = "traceparent"

/** A link to the span a stored `traceparent` names; `undefined` for none or an unreadable one. */
export const linkTo = (traceparent: string | null | undefined): Tracer.SpanLink | undefined => {
  const span = spanOf(traceparent)
  return span === undefined ? undefined : { _tag: "SpanLink", span, attributes: {} }
}
