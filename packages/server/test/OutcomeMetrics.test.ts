/**
 * Sales, links and payments by outcome (issue 34; spec-decisions SV-42): each outcome event an
 * append commits adds one to its counter; other events, and appends that fail, add nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Metric from "effect/Metric"
import * as OutcomeMetrics from "../src/OutcomeMetrics.js"

const TYPES = [...OutcomeMetrics.OUTCOMES.keys(), "CheckoutCreated", "PushAttempted", "LinkPaymentStarted"]

let sequence = 0
const event = (type: string): EventStore.NewEvent => ({
  eventId: crypto.randomUUID(),
  type,
  schemaVersion: 1,
  data: { _tag: type, n: sequence++ },
  metadata: {}
})

/** Every outcome counter's value, by event type. */
const counts = Effect.forEach([...OutcomeMetrics.OUTCOMES], ([type, counter]) =>
  Effect.map(Metric.value(counter), (state) => [type, state.count] as const)
).pipe(Effect.map((entries) => new Map(entries)))

const store = Effect.map(InMemoryEventStore.make, OutcomeMetrics.counting)

describe("OutcomeMetrics.counting", () => {
  it.effect.prop(
    "adds one per outcome event appended, by append or batch, and nothing for other events",
    [FastCheck.array(FastCheck.array(FastCheck.constantFrom(...TYPES), { maxLength: 4 }), { maxLength: 6 })],
    ([batches]) =>
      Effect.gen(function* () {
        const events = yield* store
        const before = yield* counts
        for (const [index, types] of batches.entries()) {
          const streamId = `Stream-${crypto.randomUUID()}`
          const appended = types.map(event)
          if (index % 2 === 0) yield* events.append(streamId, appended, EventStore.ExpectedVersion.Any())
          else
            yield* events.appendBatch([
              { streamId, events: appended, expected: EventStore.ExpectedVersion.Any() }
            ])
        }
        const after = yield* counts
        for (const type of OutcomeMetrics.OUTCOMES.keys()) {
          const expected = batches.flat().filter((t) => t === type).length
          expect(after.get(type)! - before.get(type)!, type).toBe(expected)
        }
      })
  )

  it.effect("an append that fails counts nothing", () =>
    Effect.gen(function* () {
      const events = yield* store
      const before = yield* counts
      const streamId = `Sale-${crypto.randomUUID()}`
      yield* events.append(streamId, [event("CheckoutCreated")], EventStore.ExpectedVersion.NoStream())
      const conflict = yield* Effect.flip(
        events.append(streamId, [event("SaleApproved")], EventStore.ExpectedVersion.NoStream())
      )
      expect(conflict._tag).toBe("ConcurrencyConflict")
      const failedBatch = yield* Effect.flip(
        events.appendBatch([
          {
            streamId: `Link-${crypto.randomUUID()}`,
            events: [event("LinkPaid")],
            expected: EventStore.ExpectedVersion.Any()
          },
          { streamId, events: [event("SaleRejected")], expected: EventStore.ExpectedVersion.NoStream() }
        ])
      )
      expect(failedBatch._tag).toBe("ConcurrencyConflict")
      expect(yield* counts).toStrictEqual(before)
    })
  )
})
