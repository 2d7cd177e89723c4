/**
 * W3C trace context (`traceparent`) kept with a durable intent (issue 34): the store writes the
 * traceparent of the span that appends a delivery's schedule or a terminal push's claim beside the
 * queue row (never in the events), so that the worker that finishes the intent later can link its
 * span to the request that caused it. Trace metadata, not domain data: NULL when no span was active
 * or tracing was off. The dispatcher and the pusher read it back (`spanOf`) to link their spans.
 */
import * as Context from "effect/Context"
import * as Tracer from "effect/Tracer"
import { spanOf, traceparentOf } from "@cobro/domain/Traceparent"

export { spanOf, traceparentOf }

/** The `traceparent` of the span active in `context` (see {@link traceparentOf}); `undefined` without one. */
export const traceparentIn = (context: Context.Context<never>): string | undefined => {
  const span = Context.getOption(context, Tracer.ParentSpan)
  return span._tag === "Some" ? traceparentOf(span.value) : undefined
}

/**
 * The events whose read-model rows keep the appending span's traceparent: a delivery's schedule and
 * its resend (`readModels/WebhookDeliveries`), a push's claim (`readModels/TerminalPushes`). Only an
 * append that carries one of them sends its traceparent (`AppendStatements.traced`).
 */
export const intentTypes: ReadonlySet<string> = new Set([
  "DeliveryScheduled",
  "ResendRequested",
  "PushAttempted"
])

/**
 * The SQL of the traceparent the appending transaction set (`cobro_traced`, migration 18), for the
 * read models' functions; NULL when none: a setting never set in the session reads as NULL, one set
 * in an earlier transaction as ''.
 */
export const currentTraceparentSql = "nullif(current_setting('cobro.traceparent', true), '')"

/** Whether `events` hold an event of {@link intentTypes}. */
export const carriesIntent = (events: ReadonlyArray<{ readonly type: string }>): boolean => {
  for (const event of events) if (intentTypes.has(event.type)) return true
  return false
}
