import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { streamId } from "@cobro/domain/Aggregate"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import * as EventStore from "@cobro/domain/EventStore"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import type { Amount } from "@cobro/domain/Money"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import { unchecked } from "@cobro/domain/Unchecked"
import { createLinkCommand } from "../fixtures/Links.js"
import { freshly } from "../fixtures/Scenario.js"

/** A CLOSE link whose total breaks `Amount` (negative), built without the constructor's check. */
const withTotal = (total: number) =>
  new PaymentLink.CreateLink(
    {
      ...createLinkCommand(7),
      amountType: "CLOSE",
      amount: Option.some(
        new PaymentLink.LinkAmount(
          { currency: "COP", total: total as Amount, tip: 0 as Amount, taxes: [] },
          unchecked
        )
      )
    },
    unchecked
  )

describe("unchecked construction", () => {
  it("a validating constructor refuses what `unchecked` lets through", () => {
    expect(
      () => new PaymentLink.LinkAmount({ currency: "COP", total: -1 as Amount, tip: 0 as Amount, taxes: [] })
    ).toThrow()
    expect(withTotal(-1).amount.pipe(Option.map((a) => a.total))).toEqual(Option.some(-1))
  })

  it.effect(
    "the append's encoding still checks what is stored: an unchecked invalid event is a defect, nothing is written",
    () =>
      freshly(InMemoryEventStore.layerWithSequentialIds)(function* () {
        const handle = CommandHandler.make(PaymentLink.PaymentLink)
        const refused = yield* Effect.exit(handle("LNK_7", withTotal(-1)))
        expect(Exit.isFailure(refused) && Exit.causeOption(refused).pipe(Option.map((c) => c._tag))).toEqual(
          Option.some("Die")
        )
        const store = yield* EventStore.EventStore
        expect(yield* store.readStream(streamId(PaymentLink.PaymentLink, "LNK_7"))).toEqual([])
        // The same command with a valid total is written.
        yield* handle("LNK_7", withTotal(50_000))
        expect((yield* CommandHandler.load(PaymentLink.PaymentLink)("LNK_7")).version).toBe(1)
      })
  )
})
