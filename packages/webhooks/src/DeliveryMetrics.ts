/**
 * The webhook dispatcher's metrics (issue 34): `cobro.webhook.deliveries`, a counter of attempts by
 * their outcome (`delivered`, `failed` and to be retried, `abandoned` after the last one, W3) and
 * attempt number, counted once each attempt's record is written. Effect `Metric`s: the server
 * exports them (OTLP, `GET /metrics`); nothing is exported unless it is configured.
 */
import * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import type * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"

/** The counter's name. */
export const DELIVERIES = "cobro.webhook.deliveries"

/** What an attempt came to, as the counter's `outcome` tag says it. */
export type Outcome = "delivered" | "failed" | "abandoned"

const key = MetricKey.counter(DELIVERIES, {
  description: "Webhook delivery attempts recorded, by outcome and attempt number",
  incremental: true
})

/** The counter, untagged: every attempt is counted under its `outcome` and `attempt` tags. */
export const deliveries: Metric.Metric.Counter<number> = Metric.fromMetricKey(key)

// One metric per tag pair, its key built once: `Metric.tagged` would build (and hash) a key per update.
const tagged = new Map<string, Metric.Metric.Counter<number>>()

/** The counter of the attempts numbered `attempt` that came to `outcome` (built once, then cached). */
export const deliveriesOf = (outcome: Outcome, attempt: number): Metric.Metric.Counter<number> => {
  const name = `${outcome}:${attempt}`
  let metric = tagged.get(name)
  if (metric === undefined) {
    metric = Metric.fromMetricKey(
      MetricKey.taggedWithLabels(key, [
        MetricLabel.make("outcome", outcome),
        MetricLabel.make("attempt", String(attempt))
      ])
    )
    tagged.set(name, metric)
  }
  return metric
}

/**
 * The outcome of a recorded attempt from the delivery's status after it: DELIVERED is `delivered`,
 * PENDING (a retry scheduled) `failed`, EXHAUSTED `abandoned`; an attempt in flight when the
 * webhook was deleted (CANCELLED) is `delivered` if it was answered 200, else `abandoned`.
 */
export const outcomeOf = (status: WebhookDelivery.Status, result: WebhookDelivery.AttemptResult): Outcome => {
  switch (status) {
    case "DELIVERED":
      return "delivered"
    case "PENDING":
      return "failed"
    case "EXHAUSTED":
      return "abandoned"
    case "CANCELLED":
      return result._tag === "Answered" && WebhookDelivery.isDelivered(result.statusCode)
        ? "delivered"
        : "abandoned"
  }
}

/** Counts one recorded attempt. */
export const recordAttempt = (outcome: Outcome, attempt: number): Effect.Effect<void> =>
  Metric.increment(deliveriesOf(outcome, attempt))
