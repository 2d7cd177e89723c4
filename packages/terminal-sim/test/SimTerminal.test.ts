import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as DateTime from "effect/DateTime"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { IntegrationId, TransactionId } from "@cobro/domain/Ids"
import { amount } from "@cobro/domain/Money"
import { renderStateMachinesDoc } from "@cobro/domain/StateMachinesDoc"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as SimTerminal from "@cobro/terminal-sim/SimTerminal"
import { transitionProperties } from "../../domain/test/support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)

describe("SimTerminal", () => {
  describe("docs/state-machines.md", () => {
    it("is the rendering of the domain's tables and the simulated terminal's (`npm run docs:state-machines`)", () => {
      const doc = readFileSync(
        join(import.meta.dirname, "..", "..", "..", "docs", "state-machines.md"),
        "utf8"
      )
      expect(doc).toBe(renderStateMachinesDoc([SimTerminal.stateMachine]))
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 60 })
    // Two charges, so that a charge is often delivered, released or settled again.
    const charge = FastCheck.constantFrom(1, 2).map((n) => ({
      integrationId: IntegrationId.make(`INT_${n}`),
      transactionId: TransactionId.make(`TRX_${n}`)
    }))
    const command: FastCheck.Arbitrary<SimTerminal.Command> = FastCheck.oneof(
      FastCheck.record({
        behavior: Arbitrary.make(TerminalSandbox.Behavior),
        chargeNotifications: FastCheck.option(FastCheck.boolean(), { nil: undefined }),
        m: minute
      }).map(
        ({ behavior, chargeNotifications, m }) =>
          new SimTerminal.SetBehavior({
            behavior,
            chargeNotifications: Option.fromNullable(chargeNotifications),
            now: at(m)
          })
      ),
      minute.map((m) => new SimTerminal.Lock({ now: at(m) })),
      minute.map((m) => new SimTerminal.Unlock({ now: at(m) })),
      minute.map((m) => new SimTerminal.PowerOff({ now: at(m) })),
      minute.map((m) => new SimTerminal.PowerOn({ now: at(m) })),
      minute.map((m) => new SimTerminal.ExpireSession({ now: at(m) })),
      minute.map((m) => new SimTerminal.OpenNotification({ now: at(m) })),
      FastCheck.record({ c: charge, m: minute }).map(
        ({ c, m }) =>
          new SimTerminal.Deliver({
            ...c,
            reference: "order-1",
            paymentMethod: "POS",
            currency: "COP",
            total: amount(50_000),
            now: at(m)
          })
      ),
      FastCheck.record({ c: charge, m: minute }).map(
        ({ c, m }) => new SimTerminal.Release({ integrationId: c.integrationId, now: at(m) })
      ),
      FastCheck.record({
        c: charge,
        outcome: Arbitrary.make(SimTerminal.RecordOutcome.fields.outcome),
        m: minute
      }).map(
        ({ c, outcome, m }) =>
          new SimTerminal.RecordOutcome({ integrationId: c.integrationId, outcome, now: at(m) })
      ),
      FastCheck.record({ c: charge, m: minute }).map(
        ({ c, m }) => new SimTerminal.DropMissed({ integrationId: c.integrationId, now: at(m) })
      )
    )
    const run = FastCheck.array(command, { maxLength: 30 })

    transitionProperties({
      aggregate: SimTerminal.SimTerminal,
      run,
      id: "MER_1/SN0012345",
      absorbing: {
        title: "no state is absorbing: a terminal powered off can be powered on again",
        states: []
      }
    })
  })
})
