/**
 * The dispatcher's delivery counter (issue 34): `cobro.webhook.deliveries`, one count per attempt
 * once its record is written, tagged with its outcome (`delivered` a 200, `failed` an attempt to be
 * retried, `abandoned` the last one failed, W3) and its attempt number. Over the in-memory log, a
 * real local HTTPS endpoint, and the test clock for the retry schedule.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Ref from "effect/Ref"
import * as DeliveryMetrics from "../src/DeliveryMetrics.js"
import * as Dispatcher from "../src/Dispatcher.js"
import * as Notifier from "../src/Notifier.js"
import * as R from "./support/Receiver.js"
import * as TestServices from "./support/Services.js"

const Services = TestServices.overLog()

const config: Dispatcher.Config = { owner: "metrics-dispatcher" }

const HOUR = 3600
/** The spec's retry delays, in seconds after the initial attempt. */
const RETRIES = [15 * 60, HOUR, 4 * HOUR, 8 * HOUR, 24 * HOUR]

/** The notifier catches up with the log, then one dispatcher round runs. */
const step = (cursor: Ref.Ref<EventStore.Checkpoint>) =>
  Effect.zipRight(Notifier.catchUpFromLog(cursor), Dispatcher.runOnce(config))

/** Every count of the counter this suite can move, by `outcome:attempt`. */
const counts = Effect.gen(function* () {
  const all: Record<string, number> = {}
  for (const outcome of ["delivered", "failed", "abandoned"] as const) {
    for (let attempt = 1; attempt <= 6; attempt++) {
      all[`${outcome}:${attempt}`] = (yield* Metric.value(
        DeliveryMetrics.deliveriesOf(outcome, attempt)
      )).count
    }
  }
  return all
})

/** What moved between two readings of {@link counts}: only the counts that changed. */
const moved = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after).flatMap(([key, value]) =>
      value === before[key] ? [] : [[key, value - before[key]!]]
    )
  )

describe("DeliveryMetrics", () => {
  it.scoped(
    "a delivered attempt counts as delivered, a retried one as failed, the last one failed as abandoned, each under its attempt number",
    () =>
      Effect.gen(function* () {
        const rx = yield* R.receiver({ tls: true })
        const cursor = yield* Ref.make(EventStore.Start)
        yield* F.setTime(0)
        yield* F.merchant("MER_1", { production: rx.url })

        // A 200: delivered at the first attempt.
        let before = yield* counts
        yield* F.approvedSale({ merchantId: "MER_1", n: 1 })
        yield* step(cursor)
        expect(moved(before, yield* counts)).toEqual({ "delivered:1": 1 })

        // A 500 at every attempt: five failed attempts to be retried, then the sixth abandoned.
        rx.answer = () => ({ status: 500 })
        before = yield* counts
        yield* F.setTime(10)
        yield* F.approvedSale({ merchantId: "MER_1", n: 2 })
        yield* step(cursor)
        expect(moved(before, yield* counts)).toEqual({ "failed:1": 1 })
        for (const delay of RETRIES) {
          yield* F.setTime(10 + delay)
          yield* step(cursor)
        }
        expect(rx.received).toHaveLength(7)
        expect(moved(before, yield* counts)).toEqual({
          "failed:1": 1,
          "failed:2": 1,
          "failed:3": 1,
          "failed:4": 1,
          "failed:5": 1,
          "abandoned:6": 1
        })
      }).pipe(Effect.provide(Services))
  )

  it("an attempt's tags build their metric once", () => {
    expect(DeliveryMetrics.deliveriesOf("failed", 3)).toBe(DeliveryMetrics.deliveriesOf("failed", 3))
    expect(DeliveryMetrics.deliveriesOf("failed", 3)).not.toBe(DeliveryMetrics.deliveriesOf("failed", 4))
  })

  it("an attempt in flight when the webhook was deleted counts by its answer", () => {
    const answered = (statusCode: number) => ({ _tag: "Answered" as const, statusCode, snippet: "" })
    expect(DeliveryMetrics.outcomeOf("CANCELLED", answered(200))).toBe("delivered")
    expect(DeliveryMetrics.outcomeOf("CANCELLED", answered(500))).toBe("abandoned")
    expect(DeliveryMetrics.outcomeOf("CANCELLED", { _tag: "Failed", reason: "timeout" })).toBe("abandoned")
  })
})
