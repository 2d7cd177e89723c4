import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { saleAmountIva19, terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const { action, behavior, checkoutEvents } = Calls
const checkout = (key: string, serial: string) =>
  Calls.checkout(key, terminalSale(serial, { amount: saleAmountIva19 }))

describe("terminal sandbox", () => {
  it.live(
    "PUT behavior answers 200 with the terminal's state; the default mode is auto_approve",
    TestApp.withTerminal(function* (m) {
      const reply = yield* action(m.terminal.test, m.serial, "lock")
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({ terminal_serial: m.serial, behavior: "auto_approve", locked: true })
      const set = yield* behavior(m.terminal.test, m.serial, { mode: "manual" })
      expect(set.status).toBe(200)
      expect(set.json).toMatchObject({ behavior: "manual", charge_notifications: true, power: "on" })
    })
  )

  it.live(
    "end to end: checkout → auto_approve → the checkout's events show the sale",
    TestApp.withTerminal(function* (m) {
      const created = yield* checkout(m.terminal.test, m.serial)
      expect(created.status).toBe(201)
      expect(yield* checkoutEvents(created.json.payload.integration_id)).toEqual([
        "CheckoutCreated",
        "PushAttempted",
        "CheckoutSent",
        "SaleApproved"
      ])
    })
  )

  it.live(
    "end to end: manual waits for the approve action; auto_reject rejects",
    TestApp.withTerminal(function* (m) {
      yield* behavior(m.terminal.test, m.serial, { mode: "manual" })
      const created = yield* checkout(m.terminal.test, m.serial)
      const id = created.json.payload.integration_id
      expect(yield* checkoutEvents(id)).toEqual(["CheckoutCreated", "PushAttempted", "CheckoutSent"])
      const approved = yield* action(m.terminal.test, m.serial, "approve")
      expect(approved.status).toBe(200)
      expect(approved.json.on_confirmation_screen).toBe(true)
      expect((yield* checkoutEvents(id)).at(-1)).toBe("SaleApproved")
      yield* behavior(m.terminal.test, m.serial, { mode: "auto_reject" })
      const rejected = yield* checkout(m.terminal.test, m.serial)
      expect((yield* checkoutEvents(rejected.json.payload.integration_id)).at(-1)).toBe("SaleRejected")
    })
  )

  it.live(
    "R1 over HTTP: locked for more than 2 minutes (virtual clock) the payment is held until unlock",
    TestApp.withTerminal(function* (m) {
      yield* action(m.terminal.test, m.serial, "lock")
      yield* Effect.flatMap(TestClock.VirtualTime, (t) => t.advance(121_000))
      const created = yield* checkout(m.terminal.test, m.serial)
      expect(created.status).toBe(201)
      const id = created.json.payload.integration_id
      expect((yield* checkoutEvents(id)).at(-1)).toBe("CheckoutHeld")
      const unlocked = yield* action(m.terminal.test, m.serial, "unlock")
      expect(unlocked.json.pending_requests).toEqual([])
      expect((yield* checkoutEvents(id)).slice(-2)).toEqual(["CheckoutReleased", "SaleApproved"])
    })
  )

  it.live(
    "R5 over HTTP: a powered-off terminal still gets a 201; the checkout goes through on power_on",
    TestApp.withTerminal(function* (m) {
      expect((yield* action(m.terminal.test, m.serial, "power_off")).json.reachable).toBe(false)
      const created = yield* checkout(m.terminal.test, m.serial)
      expect(created.status).toBe(201)
      const id = created.json.payload.integration_id
      expect((yield* checkoutEvents(id)).at(-1)).toBe("DeliveryFailed")
      yield* action(m.terminal.test, m.serial, "power_on")
      expect((yield* checkoutEvents(id)).at(-1)).toBe("SaleApproved")
    })
  )

  it.live(
    "an action the terminal cannot do now is 409 ActionRefused",
    TestApp.withTerminal(function* (m) {
      const reply = yield* action(m.terminal.test, m.serial, "approve")
      TestApp.expectError(reply, 409, "ActionRefused")
    })
  )

  it.live(
    "an unknown mode or action is a 400 naming the field",
    TestApp.withTerminal(function* (m) {
      const mode = yield* behavior(m.terminal.test, m.serial, { mode: "sometimes" })
      expect(mode.status).toBe(400)
      expect(mode.json.errors[0].field).toBe("mode")
      const act = yield* action(m.terminal.test, m.serial, "dance")
      expect(act.status).toBe(400)
      expect(act.json.errors[0].field).toBe("action")
    })
  )

  describe("isolation", () => {
    it.live(
      "a production key is 403: the sandbox takes a test key",
      TestApp.withTerminal(function* (m) {
        expect((yield* action(m.terminal.production, m.serial, "lock")).status).toBe(403)
        expect((yield* behavior(m.terminal.production, m.serial, { mode: "manual" })).status).toBe(403)
      })
    )

    it.live(
      "another merchant's terminal is 404, and a serial the merchant has not bound too",
      TestApp.fresh(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* action(other.terminal.test, owner.serial, "power_off")
        TestApp.expectError(reply, 404, "TerminalNotFound")
        expect((yield* behavior(owner.terminal.test, "SN-NONE", { mode: "manual" })).status).toBe(404)
        const untouched = yield* action(owner.terminal.test, owner.serial, "lock")
        expect(untouched.json.power).toBe("on")
      })
    )

    it.live(
      "another merchant cannot use the terminal in a checkout either (AP004)",
      TestApp.fresh(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* checkout(other.terminal.test, owner.serial)
        TestApp.expectError(reply, 400, "AP004")
      })
    )
  })
})
