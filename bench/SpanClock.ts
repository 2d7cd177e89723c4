/**
 * A tracer that times spans: the wall time of the spans of each name, and how many ended. Put on the
 * fibers measured (`Layer.setTracer`, `Effect.withTracer`), it shows where a phase's time goes
 * without an exporter's own cost in the figures.
 */
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { randomBytes } from "node:crypto"

export interface Timed {
  readonly count: number
  readonly ms: number
}

export interface SpanClock {
  readonly tracer: Tracer.Tracer
  /** One name's spans so far, which start again from zero. */
  take(name: string): Timed
  /** Every name starts again from zero (the spans of a warm-up, say). */
  reset(): void
  /** The 25 names with the most time, on stderr; then {@link reset}. */
  print(label: string): void
}

export const make = (): SpanClock => {
  const totals = new Map<string, { count: number; nanos: bigint }>()
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => ({
      _tag: "Span",
      name,
      spanId: randomBytes(8).toString("hex"),
      traceId: Option.match(parent, {
        onNone: () => randomBytes(16).toString("hex"),
        onSome: (p) => p.traceId
      }),
      parent,
      context,
      status: { _tag: "Started", startTime },
      attributes: new Map(),
      links,
      sampled: true,
      kind,
      end: (endTime) => {
        const entry = totals.get(name) ?? { count: 0, nanos: 0n }
        entry.count++
        entry.nanos += endTime - startTime
        totals.set(name, entry)
      },
      // Nothing reads them: keeping them would add the tracer's own work to the figures.
      attribute: () => {},
      event: () => {},
      addLinks: () => {}
    }),
    context: (f) => f()
  })
  const ms = (nanos: bigint) => Number(nanos) / 1e6
  return {
    tracer,
    take: (name) => {
      const entry = totals.get(name)
      totals.delete(name)
      return { count: entry?.count ?? 0, ms: ms(entry?.nanos ?? 0n) }
    },
    reset: () => totals.clear(),
    print: (label) => {
      const rows = [...totals].sort((a, b) => Number(b[1].nanos - a[1].nanos)).slice(0, 25)
      console.error(`spans during ${label} (count, total ms, mean ms):`)
      for (const [name, { count, nanos }] of rows)
        console.error(
          `  ${String(count).padStart(7)} ${ms(nanos).toFixed(0).padStart(8)} ${(ms(nanos) / count).toFixed(2).padStart(8)}  ${name}`
        )
      totals.clear()
    }
  }
}
