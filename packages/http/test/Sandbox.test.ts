import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@cobro/domain/EventStore"
import * as Effect from "effect/Effect"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

const AppLayer = TestApp.layer()

const checkoutBody = (serial: string) => ({
  amount: { currency: "COP", total_amount: 11900, taxes: [{ type: "IVA_19" }], tip_amount: 0 },
  user_email: "seller@shop.co",
  payment_method: "POS",
  terminal_model: "SMART_PRO",
  terminal_serial: serial,
  reference: "order-42"
})

const behavior = (key: string, serial: string, body: unknown) =>
  TestApp.send("PUT", `/sandbox/v1/terminals/${serial}/behavior`, { key, body })
const action = (key: string, serial: string, name: string) =>
  TestApp.send("POST", `/sandbox/v1/terminals/${serial}/actions`, { key, body: { action: name } })
const checkout = (key: string, serial: string) =>
  TestApp.send("POST", "/payments/app-checkout", { key, body: checkoutBody(serial) })
const checkoutEvents = (integrationId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(`TerminalCheckout-${integrationId}`), (events) => events.map((e) => e.type))
  )

describe("terminal sandbox", () => {
  it.live("PUT behavior answers 200 with the terminal's state; the default mode is auto_approve", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const reply = yield* action(m.terminal.test, m.serial, "lock")
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({ terminal_serial: m.serial, behavior: "auto_approve", locked: true })
      const set = yield* behavior(m.terminal.test, m.serial, { mode: "manual" })
      expect(set.status).toBe(200)
      expect(set.json).toMatchObject({ behavior: "manual", charge_notifications: true, power: "on" })
    }).pipe(Effect.provide(AppLayer))
  )

  it.live("end to end: checkout → auto_approve → the checkout's events show the sale", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const created = yield* checkout(m.terminal.test, m.serial)
      expect(created.status).toBe(201)
      expect(yield* checkoutEvents(created.json.payload.integration_id)).toEqual([
        "CheckoutCreated",
        "PushAttempted",
        "CheckoutSent",
        "SaleApproved"
      ])
    }).pipe(Effect.provide(AppLayer))
  )

  it.live("end to end: manual waits for the approve action; auto_reject rejects", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
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
    }).pipe(Effect.provide(AppLayer))
  )

  it.live(
    "R1 over HTTP: locked for more than 2 minutes (virtual clock) the payment is held until unlock",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        yield* action(m.terminal.test, m.serial, "lock")
        yield* Effect.flatMap(TestClock.VirtualTime, (t) => t.advance(121_000))
        const created = yield* checkout(m.terminal.test, m.serial)
        expect(created.status).toBe(201)
        const id = created.json.payload.integration_id
        expect((yield* checkoutEvents(id)).at(-1)).toBe("CheckoutHeld")
        const unlocked = yield* action(m.terminal.test, m.serial, "unlock")
        expect(unlocked.json.pending_requests).toEqual([])
        expect((yield* checkoutEvents(id)).slice(-2)).toEqual(["CheckoutReleased", "SaleApproved"])
      }).pipe(Effect.provide(AppLayer))
  )

  it.live(
    "R5 over HTTP: a powered-off terminal still gets a 201; the checkout goes through on power_on",
    () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        expect((yield* action(m.terminal.test, m.serial, "power_off")).json.reachable).toBe(false)
        const created = yield* checkout(m.terminal.test, m.serial)
        expect(created.status).toBe(201)
        const id = created.json.payload.integration_id
        expect((yield* checkoutEvents(id)).at(-1)).toBe("DeliveryFailed")
        yield* action(m.terminal.test, m.serial, "power_on")
        expect((yield* checkoutEvents(id)).at(-1)).toBe("SaleApproved")
      }).pipe(Effect.provide(AppLayer))
  )

  it.live("an action the terminal cannot do now is 409 ActionRefused", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const reply = yield* action(m.terminal.test, m.serial, "approve")
      expect(reply.status).toBe(409)
      expect(reply.json.errors[0].code).toBe("ActionRefused")
    }).pipe(Effect.provide(AppLayer))
  )

  it.live("an unknown mode or action is a 400 naming the field", () =>
    Effect.gen(function* () {
      const m = yield* TestApp.createMerchantWithTerminal()
      const mode = yield* behavior(m.terminal.test, m.serial, { mode: "sometimes" })
      expect(mode.status).toBe(400)
      expect(mode.json.errors[0].field).toBe("mode")
      const act = yield* action(m.terminal.test, m.serial, "dance")
      expect(act.status).toBe(400)
      expect(act.json.errors[0].field).toBe("action")
    }).pipe(Effect.provide(AppLayer))
  )

  describe("isolation", () => {
    it.live("a production key is 403: the sandbox takes a test key", () =>
      Effect.gen(function* () {
        const m = yield* TestApp.createMerchantWithTerminal()
        const reply = yield* action(m.terminal.production, m.serial, "lock")
        expect(reply.status).toBe(403)
        expect((yield* behavior(m.terminal.production, m.serial, { mode: "manual" })).status).toBe(403)
      }).pipe(Effect.provide(AppLayer))
    )

    it.live("another merchant's terminal is 404, and a serial the merchant has not bound too", () =>
      Effect.gen(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* action(other.terminal.test, owner.serial, "power_off")
        expect(reply.status).toBe(404)
        expect(reply.json.errors[0].code).toBe("TerminalNotFound")
        expect((yield* behavior(owner.terminal.test, "SN-NONE", { mode: "manual" })).status).toBe(404)
        const untouched = yield* action(owner.terminal.test, owner.serial, "lock")
        expect(untouched.json.power).toBe("on")
      }).pipe(Effect.provide(AppLayer))
    )

    it.live("another merchant cannot use the terminal in a checkout either (AP004)", () =>
      Effect.gen(function* () {
        const owner = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OWNED" })
        const other = yield* TestApp.createMerchant("Other shop")
        const reply = yield* checkout(other.terminal.test, owner.serial)
        expect(reply.status).toBe(400)
        expect(reply.json.errors[0].code).toBe("AP004")
      }).pipe(Effect.provide(AppLayer))
    )
  })
})
