/**
 * The terminal pushes under way (`readModels/TerminalPushes`, spec-decisions A-23): written with the
 * checkouts' events, the pusher's queue of claims that have lapsed. On PGlite and PostgreSQL.
 */
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import { describe, expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ReadModels from "../src/ReadModels.js"
import * as Databases from "./support/Databases.js"
import * as Fixtures from "./support/Fixtures.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (seconds: number) => DateTime.unsafeMake(T0 + seconds * 1000)

const created = (integrationId: IntegrationId) =>
  Fixtures.checkoutCreated({ integrationId, merchantId: "MER_1", sandbox: true, createdAt: at(0) })

/** Appends `events` to the checkout's stream, at its current version. */
const record = (integrationId: IntegrationId, events: ReadonlyArray<TerminalCheckout.Event>) =>
  Fixtures.recordEvents(`TerminalCheckout-${integrationId}`, events.map(Fixtures.checkoutEvent))

const due = (seconds: number) => ReadModels.duePushes({ claimedBefore: at(seconds), limit: 100 })

const suite = (name: string, database: Layer.Layer<Databases.StoreServices>) =>
  layer(database, { excludeTestServices: true })(name, (it) => {
    it.effect(
      "a claim is listed once it is as old as asked, claimed again it counts from the new claim, and whatever ends the push removes it (not a busy terminal read as unreachable)",
      () =>
        Effect.gen(function* () {
          const sent = IntegrationId.make("INT_sent")
          const cut = IntegrationId.make("INT_cut")
          const outcome = IntegrationId.make("INT_outcome")
          for (const id of [sent, cut, outcome]) {
            yield* record(id, [created(id), new TerminalCheckout.PushAttempted({ attempt: 1, at: at(0) })])
          }
          expect(yield* due(-1)).toEqual([])
          expect([...(yield* due(0))].sort()).toEqual([cut, outcome, sent].sort())
          // Answered: SENT, or an outcome that overtook the delivery report.
          yield* record(sent, [new TerminalCheckout.CheckoutSent({ lockedSince: Option.none(), at: at(1) })])
          yield* record(outcome, [
            new TerminalCheckout.SaleRejected({
              transactionId: TransactionId.make(`TRX_${outcome.slice(4)}`),
              reason: "DECLINED",
              card: Option.none(),
              at: at(1)
            })
          ])
          expect(yield* due(60)).toEqual([cut])
          // The pusher claims the cut one again at 10 s: due again from then on.
          yield* record(cut, [new TerminalCheckout.PushAttempted({ attempt: 2, at: at(10) })])
          expect(yield* due(9)).toEqual([])
          expect(yield* due(10)).toEqual([cut])
          // A busy terminal that an earlier version read as unreachable stays the pusher's.
          yield* record(cut, [
            new TerminalCheckout.DeliveryFailed({
              reason: TerminalCheckout.BUSY_READ_AS_UNREACHABLE,
              at: at(11)
            })
          ])
          expect(yield* due(10)).toEqual([cut])
          yield* record(cut, [new TerminalCheckout.PushAttempted({ attempt: 3, at: at(20) })])
          yield* record(cut, [new TerminalCheckout.DeliveryFailed({ reason: "powered off", at: at(21) })])
          expect(yield* due(60)).toEqual([])
        })
    )
  })

describe("terminal pushes under way", () => {
  suite("on PGlite", Databases.pglite)
  suite("on PostgreSQL", Databases.postgres)
})
