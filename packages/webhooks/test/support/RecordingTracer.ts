/**
 * A tracer for tests that keeps every span it makes (`Tracer.make`): W3C-shaped ids (a child in its
 * parent's trace), attributes, links and whether it ended, so that a test can check what a span
 * links to and what a request carried.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type * as Context from "effect/Context"
import { randomBytes } from "node:crypto"

/** A span as recorded. */
export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly traceId: string
  readonly spanId = randomBytes(8).toString("hex")
  readonly sampled = true
  status: Tracer.SpanStatus
  readonly attributes = new Map<string, unknown>()
  links: Array<Tracer.SpanLink>
  ended = false

  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.traceId = Option.isSome(parent) ? parent.value.traceId : randomBytes(16).toString("hex")
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.ended = true
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(): void {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

/** A recording tracer and the spans it made, in the order they started. */
export const make = () => {
  const spans: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span = new RecordedSpan(name, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans }
}

/** The W3C traceparent of a span. */
export const traceparentOf = (span: Tracer.AnySpan) => `00-${span.traceId}-${span.spanId}-01`

/** Runs `effect` with `tracer`. */
export const withTracer =
  (tracer: Tracer.Tracer) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withTracer(effect, tracer)
