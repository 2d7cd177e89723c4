/**
 * Sandbox isolation through the real handler (issue 17; TT-8 "sandbox control must never touch
 * production data"): a merchant with production and test checkouts on the same simulated terminal.
 * The test key's sandbox calls see and decide sandbox payments only; a production sale ends as the
 * simulator leaves it without interference. Every sandbox route refuses every other key and changes
 * nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import { CobroApi } from "@cobro/api/Api"
import { saleAmountIva19, terminalSale } from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import * as TestApp from "./support/TestApp.js"
import * as TestClock from "./support/TestClock.js"

/**
 * What an untouched simulated terminal does with a charge (TT-4): acknowledges it, then approves it.
 * (A4 answers from the notifications the webhooks notifier derives from these events; the notifier
 * does not run in the HTTP test app, so the tests read the events.)
 */
const UNTOUCHED = ["CheckoutCreated", "PushAttempted", "CheckoutSent", "SaleApproved"]

/** A3 with the key: the checkout's integration id. */
const sale = (key: string, serial: string, reference: string) =>
  Effect.gen(function* () {
    const reply = yield* Calls.checkout(key, terminalSale(serial, { amount: saleAmountIva19, reference }))
    expect(reply.status, reply.text).toBe(201)
    return reply.json.payload.integration_id as string
  })

const { action, behavior } = Calls

/** The checkout's events, by type. */
const history = Calls.checkoutEvents

/** A sandbox answer must not name the production checkout in any way. */
const expectBlind = (reply: TestApp.Reply, productionId: string, productionReference: string) => {
  expect(reply.text).not.toContain(productionId)
  expect(reply.text).not.toContain(productionReference)
}

/** Given a terminal whose sandbox device is manual: the merchant and its production sale `live-order`. */
const givenManualWithLiveSale = Effect.gen(function* () {
  const m = yield* TestApp.createMerchantWithTerminal()
  yield* behavior(m.terminal.test, m.serial, { mode: "manual" })
  return { m, live: yield* sale(m.terminal.production, m.serial, "live-order") }
})

describe("sandbox isolation", () => {
  it.live(
    "a test key's PUT behavior lists only sandbox requests: a production checkout on the same terminal is not shown",
    TestApp.fresh(function* () {
      const { m, live } = yield* givenManualWithLiveSale
      const test = yield* sale(m.terminal.test, m.serial, "test-order")
      const listed = yield* behavior(m.terminal.test, m.serial, { mode: "manual" })
      expect(listed.status).toBe(200)
      expect(listed.json.pending_requests.map((p: any) => p.integration_id)).toEqual([test])
      expectBlind(listed, live, "live-order")
      expectBlind(yield* action(m.terminal.test, m.serial, "lock"), live, "live-order")
    })
  )

  it.live(
    "a test key's approve and reject decide sandbox sales only; the production sale on the same terminal stays as an untouched terminal leaves it",
    TestApp.fresh(function* () {
      const { m, live } = yield* givenManualWithLiveSale
      const before = yield* history(live)
      const first = yield* sale(m.terminal.test, m.serial, "test-1")
      const second = yield* sale(m.terminal.test, m.serial, "test-2")

      const approved = yield* action(m.terminal.test, m.serial, "approve")
      expect(approved.status, approved.text).toBe(200)
      expect(approved.json.last_outcome.integration_id).toBe(first)
      const rejected = yield* action(m.terminal.test, m.serial, "reject")
      expect(rejected.status, rejected.text).toBe(200)
      expect(rejected.json.last_outcome.integration_id).toBe(second)
      // Nothing of the sandbox's is left: the production sale is not there to approve.
      const nothing = yield* action(m.terminal.test, m.serial, "approve")
      TestApp.expectError(nothing, 409, "ActionRefused")

      expect(yield* history(live)).toEqual(before)
      expect(before).toEqual(UNTOUCHED)
      expect((yield* history(first)).at(-1)).toBe("SaleApproved")
      expect((yield* history(second)).at(-1)).toBe("SaleRejected")
    })
  )

  /** A sandbox control, what it does to a sandbox sale pushed after it, and how to undo it. */
  const controls: ReadonlyArray<{
    readonly name: string
    readonly set: (m: { terminal: { test: string }; serial: string }) => Effect.Effect<unknown, never, any>
    readonly sandboxLast: string
    readonly undo: (m: { terminal: { test: string }; serial: string }) => Effect.Effect<unknown, never, any>
  }> = [
    {
      name: "auto_reject",
      set: (m) => behavior(m.terminal.test, m.serial, { mode: "auto_reject" }),
      sandboxLast: "SaleRejected",
      undo: (m) => behavior(m.terminal.test, m.serial, { mode: "auto_approve" })
    },
    {
      name: "manual",
      set: (m) => behavior(m.terminal.test, m.serial, { mode: "manual" }),
      sandboxLast: "CheckoutSent",
      undo: (m) => action(m.terminal.test, m.serial, "approve")
    },
    {
      name: "power_off",
      set: (m) => action(m.terminal.test, m.serial, "power_off"),
      sandboxLast: "DeliveryFailed",
      undo: (m) => action(m.terminal.test, m.serial, "power_on")
    },
    {
      name: "expire_session",
      set: (m) => action(m.terminal.test, m.serial, "expire_session"),
      sandboxLast: "DeliveryFailed",
      undo: (m) =>
        Effect.andThen(action(m.terminal.test, m.serial, "lock"), action(m.terminal.test, m.serial, "unlock"))
    },
    {
      name: "lock for more than 2 minutes",
      set: (m) =>
        Effect.andThen(
          action(m.terminal.test, m.serial, "lock"),
          Effect.flatMap(TestClock.VirtualTime, (t) => t.advance(121_000))
        ),
      sandboxLast: "CheckoutHeld",
      undo: (m) => action(m.terminal.test, m.serial, "unlock")
    }
  ]

  for (const control of controls) {
    it.live(
      `${control.name} set with a test key reaches the sandbox sale and not the production sale on the same terminal`,
      TestApp.withTerminal(function* (m) {
        yield* control.set(m)
        const live = yield* sale(m.terminal.production, m.serial, "live-order")
        const test = yield* sale(m.terminal.test, m.serial, "test-order")
        expect((yield* history(test)).at(-1)).toBe(control.sandboxLast)
        expect(yield* history(live)).toEqual(UNTOUCHED)
        yield* control.undo(m)
        expect(yield* history(live)).toEqual(UNTOUCHED)
      })
    )
  }

  type Step =
    | { readonly _tag: "behavior"; readonly mode: TerminalSandbox.Behavior; readonly notifications: boolean }
    | { readonly _tag: "action"; readonly action: TerminalSandbox.Action }
    | { readonly _tag: "sale"; readonly sandbox: boolean }
    | { readonly _tag: "advance" }

  const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
    FastCheck.record({
      _tag: FastCheck.constant("behavior" as const),
      mode: FastCheck.constantFrom(...TerminalSandbox.Behavior.literals),
      notifications: FastCheck.boolean()
    }),
    FastCheck.record({
      _tag: FastCheck.constant("action" as const),
      action: FastCheck.constantFrom(...TerminalSandbox.Action.literals)
    }),
    FastCheck.record({ _tag: FastCheck.constant("sale" as const), sandbox: FastCheck.boolean() }),
    FastCheck.constant({ _tag: "advance" as const })
  )

  it.live.prop(
    "whatever a test key does on the sandbox, every production sale on the terminal ends as an untouched terminal leaves it and no sandbox answer names it",
    [FastCheck.array(step, { minLength: 1, maxLength: 14 })],
    ([steps]) =>
      TestApp.run(
        Effect.gen(function* () {
          const m = yield* TestApp.createMerchantWithTerminal()
          const production: Array<string> = []
          const answers: Array<TestApp.Reply> = []
          for (const [i, s] of steps.entries()) {
            switch (s._tag) {
              case "behavior":
                answers.push(
                  yield* behavior(m.terminal.test, m.serial, {
                    mode: s.mode,
                    charge_notifications: s.notifications
                  })
                )
                break
              case "action":
                answers.push(yield* action(m.terminal.test, m.serial, s.action))
                break
              case "sale":
                if (s.sandbox) yield* sale(m.terminal.test, m.serial, `test-${i}`)
                else production.push(yield* sale(m.terminal.production, m.serial, `live-${i}`))
                break
              case "advance":
                yield* Effect.flatMap(TestClock.VirtualTime, (t) => t.advance(150_000))
                break
            }
          }
          for (const id of production) {
            expect(yield* history(id)).toEqual(UNTOUCHED)
            for (const reply of answers) expect(reply.text).not.toContain(id)
          }
          for (const reply of answers) expect([200, 409], reply.text).toContain(reply.status)
        })
      ),
    { fastCheck: { numRuns: 25 }, timeout: 180_000 }
  )

  /** Every route under /sandbox/, read from the API, so a new one is covered when it is added. */
  const sandboxRoutes: ReadonlyArray<{ readonly method: "PUT" | "POST"; readonly path: string }> = (() => {
    const out: Array<{ method: "PUT" | "POST"; path: string }> = []
    HttpApi.reflect(CobroApi, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        if (endpoint.path.startsWith("/sandbox/"))
          out.push({ method: endpoint.method as "PUT" | "POST", path: endpoint.path })
      }
    })
    return out
  })()

  /** A body each sandbox route accepts from the right key. */
  const validBody = (path: string) => (path.endsWith("/behavior") ? { mode: "manual" } : { action: "lock" })

  it("the table covers every sandbox route", () => {
    expect(sandboxRoutes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      "POST /sandbox/v1/terminals/:terminal_serial/actions",
      "PUT /sandbox/v1/terminals/:terminal_serial/behavior"
    ])
  })

  it.live(
    "every sandbox route × every key: only a test key of the terminal's merchant gets through; no key, a production key, a payment-button key or another merchant's key is refused and changes nothing",
    TestApp.withTerminal(function* (m) {
      const other = yield* TestApp.createMerchantWithTerminal({ serial: "SN-OTHER" })
      const live = yield* sale(m.terminal.production, m.serial, "live-order")
      const keys: ReadonlyArray<{
        readonly who: string
        readonly options: TestApp.SendOptions
        readonly status: number
      }> = [
        { who: "no key", options: {}, status: 401 },
        { who: "an unknown key", options: { key: "id_test_nobody" }, status: 401 },
        { who: "the admin token", options: { admin: true }, status: 401 },
        { who: "the terminal production key", options: { key: m.terminal.production }, status: 403 },
        { who: "the payment-button test key", options: { key: m.button.test }, status: 403 },
        { who: "the payment-button production key", options: { key: m.button.production }, status: 403 },
        { who: "another merchant's test key", options: { key: other.terminal.test }, status: 404 },
        {
          who: "another merchant's production key",
          options: { key: other.terminal.production },
          status: 403
        }
      ]
      for (const route of sandboxRoutes) {
        const path = route.path.replace(":terminal_serial", m.serial)
        for (const key of keys) {
          const before = yield* TestApp.logSize
          const reply = yield* TestApp.send(route.method, path, { ...key.options, body: validBody(path) })
          expect(reply.status, `${route.method} ${path} with ${key.who}: ${reply.text}`).toBe(key.status)
          expect(yield* TestApp.logSize, `${route.method} ${path} with ${key.who} must store nothing`).toBe(
            before
          )
        }
        const allowed = yield* TestApp.send(route.method, path, {
          key: m.terminal.test,
          body: validBody(path)
        })
        expect(allowed.status, allowed.text).toBe(200)
        expectBlind(allowed, live, "live-order")
      }
      expect(yield* history(live)).toEqual(UNTOUCHED)
    })
  )

  it.live(
    "the virtual clock is the operator's: a merchant's key of either mode cannot advance it",
    TestApp.withTerminal(function* (m) {
      const time = yield* TestClock.VirtualTime
      const start = time.now()
      for (const key of [m.terminal.test, m.terminal.production, m.button.test, m.button.production]) {
        const reply = yield* TestApp.send("POST", "/admin/v1/clock/advance", {
          key,
          body: { seconds: 3600 }
        })
        expect(reply.status, reply.text).toBe(401)
      }
      expect(time.now()).toBe(start)
    })
  )
})
