/**
 * The streams a notifier keeps in memory (`StreamReplays`) plan what the domain plans from the same
 * records read again (`Notifications.noticeFromHistory`, `Notifications.planFromHistory`).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifications from "@cobro/domain/Notifications"
import type * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as StreamReplays from "@cobro/webhooks/StreamReplays"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as F from "@cobro/domain/testing/WebhookFixtures"
import { buttonActivation, changeMerchant } from "./support/LogSteps.js"

const Store = Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)
const PROD = "https://merchant.example/webhooks"
const TEST = "https://merchant.example/test-webhooks"

describe("replays kept in memory", () => {
  /** A log of sales, links and online payments of two merchants whose webhooks and keys change between them. */
  const log = (steps: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      yield* F.setTime(0)
      yield* F.merchant("MER_1", { production: PROD, test: TEST })
      yield* F.merchant("MER_2", { keyBase: 10 })
      for (const [i, kind] of steps.entries()) {
        const n = i + 1
        const merchantId = `MER_${(n % 2) + 1}`
        switch (kind) {
          case 0:
            yield* F.approvedSale({ merchantId, n, sandbox: n % 3 === 0 })
            break
          case 1:
            yield* F.approvedSale({ merchantId, n })
            yield* F.checkoutOutcome(n, "void")
            break
          case 2:
            yield* F.linkPayment({ merchantId, n }, n % 2 === 0 ? "paid" : "failed")
            break
          case 3:
            yield* F.onlinePayment({ merchantId, n }, ["approve", "void"])
            break
          case 4:
            yield* changeMerchant(
              merchantId,
              (now) => new Merchant.SetWebhook({ mode: "production", url: `${PROD}/${n}`, now })
            )
            break
          case 5:
            yield* F.deleteWebhook(merchantId, n % 2 === 0 ? "production" : "test").pipe(Effect.ignore)
            break
          case 6:
            yield* changeMerchant(merchantId, (now) => buttonActivation(now, 100 + n, 200 + n)).pipe(
              Effect.ignore
            )
            break
          default:
            yield* F.setTime(n * 3)
        }
      }
      return yield* F.allEvents
    }).pipe(Effect.provide(Store))

  /** A plan as bytes: the append it leads to, or why it schedules nothing. */
  const bytes = (
    event: EventStore.RecordedEvent,
    plan: Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Notifications.Unscheduled>>
  ) =>
    JSON.stringify(
      Option.map(
        plan,
        Either.map((command) => Notifications.scheduleAppend(event, command))
      )
    )

  it.effect.prop(
    "a replay kept as the log is followed plans what planFromHistory plans from the same records, in recordedAt order or not",
    [
      FastCheck.array(FastCheck.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 30 }),
      FastCheck.array(FastCheck.integer({ min: -20_000, max: 20_000 }), { minLength: 1, maxLength: 40 }),
      FastCheck.boolean()
    ],
    ([steps, shifts, merchantsToo]) =>
      Effect.gen(function* () {
        // Every other record moved in time (a clock that jumps back, commits out of order): the
        // merchants' too (out of `recordedAt` order), or only the others' (a merchant asked as of an
        // instant before some of its records, after a later one).
        const moved = (e: EventStore.RecordedEvent, i: number) =>
          i % 2 === 1 && (merchantsToo || !e.streamId.startsWith(Notifications.merchantStreamOf("")))
        const records = (yield* log(steps)).map((e, i) =>
          moved(e, i)
            ? { ...e, recordedAt: new Date(e.recordedAt.getTime() + shifts[i % shifts.length]!) }
            : e
        )
        const histories = new Map<string, Array<EventStore.RecordedEvent>>()
        const replays = new Map<string, StreamReplays.Replay>()
        let planned = 0
        for (const event of records) {
          const history = [...(histories.get(event.streamId) ?? []), event]
          histories.set(event.streamId, history)
          const replay = replays.get(event.streamId)
          if (replay === undefined)
            replays.set(event.streamId, StreamReplays.replayOf(event.streamId, [event]))
          else replay.records.push(event)
          if (!Notifications.mayRaise(event)) continue
          const notice = StreamReplays.noticeFromReplay(
            event,
            replays.get(event.streamId)!,
            event.streamVersion
          )
          expect(notice).toEqual(Notifications.noticeFromHistory(event, history))
          if (Option.isNone(notice)) continue
          const merchantStream = Notifications.merchantStreamOf(notice.value.merchantId)
          const cached = Option.some(
            Notifications.deliveryOf(
              event.eventId,
              notice.value,
              StreamReplays.merchantAsOf(replays.get(merchantStream)!, event.recordedAt)
            )
          )
          const uncached = Notifications.planFromHistory(event, history, histories.get(merchantStream)!)
          expect(bytes(event, cached)).toBe(bytes(event, uncached))
          planned++
        }
        expect(planned).toBe(records.filter(Notifications.mayRaise).length)
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
