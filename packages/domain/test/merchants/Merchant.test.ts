import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { fold } from "@cobro/domain/Decider"
import { MerchantId, TerminalSerial } from "@cobro/domain/Ids"
import * as Merchant from "@cobro/domain/Merchant"
import { Amount, amount } from "@cobro/domain/Money"
import { IdentityKeyHash, Integration, KeyMode, SealedSecret } from "@cobro/domain/SigningKey"
import { newMerchantMethods } from "../fixtures/Terminal.js"
import { DeciderSpec } from "../support/DeciderSpec.js"
import { runsFrom, transitionProperties } from "../support/TransitionProperties.js"

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0)
const at = (minutes: number) => DateTime.unsafeMake(T0 + minutes * 60_000)
const merchantId = MerchantId.make("MER_1")
const hash = (n: number) => IdentityKeyHash.make(n.toString(16).padStart(64, "0"))
const pair = (n: number): Merchant.KeyPair => ({
  identityKeyHash: hash(n),
  secretKey: SealedSecret.make(`sealed:${n}`)
})
const serial = TerminalSerial.make("SN-0001")
const serial2 = TerminalSerial.make("SN-0002")

const create = () => new Merchant.CreateMerchant({ merchantId, name: "Café Central", now: at(0) })
const created = () => [new Merchant.MerchantCreated({ merchantId, name: "Café Central", createdAt: at(0) })]
const disable = (minutes: number) => new Merchant.DisableMerchant({ now: at(minutes) })
const enable = (minutes: number) => new Merchant.EnableMerchant({ now: at(minutes) })
const disabled = () => new Merchant.MerchantDisabled({ at: at(1) })
const disabledAccount = () => [...created(), disabled()]
/** An integration with the key pairs number `production` and `test`: what activating it takes and records. */
const keys = (integration: "terminal_api" | "payment_button" = "terminal_api", production = 1, test = 2) => ({
  integration,
  production: pair(production),
  test: pair(test)
})
const activate = (...args: Parameters<typeof keys>) =>
  new Merchant.ActivateIntegration({ ...keys(...args), now: at(1) })
const activated = (...args: Parameters<typeof keys>) =>
  new Merchant.IntegrationActivated({ ...keys(...args), at: at(1) })
const bind = (model = "SMART_PRO", s = serial, name = "Caja 1") =>
  new Merchant.BindTerminal({ serial: s, model, name, now: at(2) })
const bound = (model: Merchant.TerminalModel = "SMART_PRO", s = serial) =>
  new Merchant.TerminalBound({ serial: s, model, name: "Caja 1", at: at(2) })
/** The bound terminal {@link serial} selected for the API. */
const selected = () => new Merchant.TerminalApiEnabled({ serial, at: at(3) })
const stateOf = (events: ReadonlyArray<Merchant.Event>) => fold(Merchant.Merchant, events)

const spec = DeciderSpec.for(Merchant.Merchant)

describe("Merchant", () => {
  describe("CreateMerchant", () => {
    it("a new merchant account is ENABLED", () => {
      spec.given([]).when(create()).then(created())
      const state = stateOf(created())
      expect(Merchant.isEnabled(state)).toBe(true)
    })
    it("a merchant id is created once", () => {
      spec.given(created()).when(create()).thenFails(Merchant.MerchantAlreadyExists, { merchantId })
    })
    it("a command on a merchant that does not exist is not found", () => {
      spec.given([]).when(disable(1)).thenFails(Merchant.MerchantNotFound)
    })
  })

  describe("EnableMerchant and DisableMerchant", () => {
    it("a disabled account fails the terminal API precondition 'the merchant account is enabled'", () => {
      spec.given(created()).when(disable(1)).then(disabled())
      expect(Merchant.isEnabled(stateOf(disabledAccount()))).toBe(false)
    })
    it("a disabled account can be enabled again", () => {
      spec
        .given(disabledAccount())
        .when(enable(2))
        .then(new Merchant.MerchantEnabled({ at: at(2) }))
    })
    it("enabling an enabled account, or disabling a disabled one, changes nothing", () => {
      spec.given(created()).when(enable(1)).thenNothing()
      spec.given(disabledAccount()).when(disable(2)).thenNothing()
    })
    it("a disabled account's configuration stays editable", () => {
      spec.given(disabledAccount()).when(activate()).then([activated()])
    })
  })

  describe("ActivateIntegration", () => {
    it("on first use the merchant activates an integration's production and test keys", () => {
      spec.given(created()).when(activate()).then([activated()])
      const state = stateOf([...created(), activated()])
      expect(Merchant.isIntegrationActive(state, "terminal_api")).toBe(true)
      expect(Merchant.isIntegrationActive(state, "payment_button")).toBe(false)
      expect(Merchant.keyPairFor(state, "terminal_api", "test")).toEqual(Option.some(pair(2)))
    })
    it("the keys of the terminal API differ from those of the payment button", () => {
      spec
        .given([...created(), activated("terminal_api", 1, 2)])
        .when(activate("payment_button", 3, 1))
        .thenFails(Merchant.IdentityKeyReused)
      spec
        .given([...created(), activated("terminal_api", 1, 2)])
        .when(activate("payment_button", 3, 4))
        .then([activated("payment_button", 3, 4)])
    })
    it("the production and test versions of a key differ", () => {
      spec
        .given(created())
        .when(activate("terminal_api", 5, 5))
        .thenFails(Merchant.IdentityKeyReused)
    })
    it("an integration is activated once: a new key comes from a revocation", () => {
      spec
        .given([...created(), activated()])
        .when(activate("terminal_api", 7, 8))
        .thenFails(Merchant.IntegrationAlreadyActive, { integration: "terminal_api" })
    })
  })

  describe("RotateKey", () => {
    const rotate = (mode: "production" | "test" = "production", n = 9) =>
      new Merchant.RotateKey({ integration: "terminal_api", mode, keyPair: pair(n), now: at(3) })
    /** What {@link rotate} records on the keys of {@link activated}. */
    const rotated = new Merchant.KeyRotated({
      integration: "terminal_api",
      mode: "production",
      revokedIdentityKeyHash: hash(1),
      keyPair: pair(9),
      at: at(3)
    })
    it("revoking a key produces a new key that replaces it", () => {
      spec
        .given([...created(), activated()])
        .when(rotate())
        .then([rotated])
    })
    it("a revoked key's hash is no longer held; the other mode's key is untouched", () => {
      const state = stateOf([...created(), activated(), rotated])
      expect(Merchant.identityKeyHashes(state)).not.toContain(hash(1))
      expect([...Merchant.identityKeyHashes(state)].sort()).toEqual([hash(2), hash(9)].sort())
      expect(Merchant.keyPairFor(state, "terminal_api", "production")).toEqual(Option.some(pair(9)))
    })
    it("a rotation must produce a key the merchant does not hold", () => {
      spec
        .given([...created(), activated()])
        .when(rotate("production", 1))
        .thenFails(Merchant.IdentityKeyReused)
      spec
        .given([...created(), activated()])
        .when(rotate("production", 2))
        .thenFails(Merchant.IdentityKeyReused)
    })
    it("a key of an integration never activated cannot be rotated", () => {
      spec
        .given(created())
        .when(rotate())
        .thenFails(Merchant.IntegrationNotActive, { integration: "terminal_api" })
    })
  })

  describe("BindTerminal", () => {
    it("the Smart Pro and the Smart models are supported", () => {
      spec
        .given(created())
        .when(bind("SMART_PRO"))
        .then([bound("SMART_PRO")])
      spec
        .given(created())
        .when(bind("SMART"))
        .then([bound("SMART")])
    })
    it("any other terminal model is refused", () => {
      spec
        .given(created())
        .when(bind("SMART_MINI"))
        .thenFails(Merchant.UnsupportedTerminalModel, { model: "SMART_MINI" })
      spec.given(created()).when(bind("smart")).thenFails(Merchant.UnsupportedTerminalModel)
    })
    it("binding the same terminal again changes nothing", () => {
      spec
        .given([...created(), bound()])
        .when(bind())
        .thenNothing()
    })
    it("a serial bound already cannot be bound as something else", () => {
      spec
        .given([...created(), bound()])
        .when(bind("SMART"))
        .thenFails(Merchant.TerminalAlreadyBound, { serial })
    })
    it("a terminal that is not selected for the API does not work with the API", () => {
      const state = stateOf([...created(), bound()])
      expect(Option.isSome(Merchant.terminalFor(state, serial))).toBe(true)
      expect(Merchant.isTerminalUsable(state, serial, "SMART_PRO")).toBe(false)
      expect(Merchant.boundTerminals(state).map((t) => t.serial)).toEqual([serial])
    })
  })

  describe("UnbindTerminal", () => {
    it("a bound terminal can be unbound", () => {
      spec
        .given([...created(), bound()])
        .when(new Merchant.UnbindTerminal({ serial, now: at(3) }))
        .then([new Merchant.TerminalUnbound({ serial, at: at(3) })])
    })
    it("an unbound terminal does not work with the API, even if it was selected", () => {
      const state = stateOf([
        ...created(),
        bound(),
        selected(),
        new Merchant.TerminalUnbound({ serial, at: at(4) })
      ])
      expect(Merchant.isTerminalUsable(state, serial, "SMART_PRO")).toBe(false)
      expect(Merchant.terminalFor(state, serial)).toEqual(Option.none())
    })
    it("a terminal that is not bound cannot be unbound", () => {
      spec
        .given(created())
        .when(new Merchant.UnbindTerminal({ serial, now: at(3) }))
        .thenFails(Merchant.TerminalNotBound, { serial })
    })
  })

  describe("EnableTerminalForApi and DisableTerminalForApi", () => {
    it("a selected terminal works with the API, with the model it was bound as", () => {
      spec
        .given([...created(), bound()])
        .when(new Merchant.EnableTerminalForApi({ serial, now: at(3) }))
        .then([selected()])
      const state = stateOf([...created(), bound(), selected()])
      expect(Merchant.isTerminalUsable(state, serial, "SMART_PRO")).toBe(true)
      expect(Merchant.isTerminalUsable(state, serial, "SMART")).toBe(false)
      expect(Merchant.isTerminalUsable(state, serial2, "SMART_PRO")).toBe(false)
    })
    it("a terminal that is not bound cannot be selected", () => {
      spec
        .given(created())
        .when(new Merchant.EnableTerminalForApi({ serial, now: at(3) }))
        .thenFails(Merchant.TerminalNotBound)
    })
    it("selecting a selected terminal changes nothing", () => {
      spec
        .given([...created(), bound(), selected()])
        .when(new Merchant.EnableTerminalForApi({ serial, now: at(4) }))
        .thenNothing()
    })
    it("a deselected terminal stops working with the API", () => {
      spec
        .given([...created(), bound(), selected()])
        .when(new Merchant.DisableTerminalForApi({ serial, now: at(4) }))
        .then([new Merchant.TerminalApiDisabled({ serial, at: at(4) })])
      spec
        .given([...created(), bound()])
        .when(new Merchant.DisableTerminalForApi({ serial, now: at(4) }))
        .thenNothing()
      spec
        .given(created())
        .when(new Merchant.DisableTerminalForApi({ serial, now: at(4) }))
        .thenFails(Merchant.TerminalNotBound)
    })
  })

  describe("SetTerminalMethod", () => {
    it("a new merchant has card payment (POS) active and every other method inactive", () => {
      const state = stateOf(created())
      expect(Merchant.activeTerminalMethods(state)).toEqual(["POS"])
      expect(Merchant.terminalMethods(state)).toEqual(newMerchantMethods)
    })
    it("a method is turned on and off", () => {
      spec
        .given(created())
        .when(new Merchant.SetTerminalMethod({ method: "PAY_BY_QR_SERVICE", enabled: true, now: at(1) }))
        .then([new Merchant.TerminalMethodSet({ method: "PAY_BY_QR_SERVICE", enabled: true, at: at(1) })])
      spec
        .given(created())
        .when(new Merchant.SetTerminalMethod({ method: "POS", enabled: false, now: at(1) }))
        .then([new Merchant.TerminalMethodSet({ method: "POS", enabled: false, at: at(1) })])
      const state = stateOf([
        ...created(),
        new Merchant.TerminalMethodSet({ method: "WALLET_B", enabled: true, at: at(1) }),
        new Merchant.TerminalMethodSet({ method: "POS", enabled: false, at: at(2) })
      ])
      expect(Merchant.activeTerminalMethods(state)).toEqual(["WALLET_B"])
    })
    it("setting a method to what it is changes nothing", () => {
      spec
        .given(created())
        .when(new Merchant.SetTerminalMethod({ method: "POS", enabled: true, now: at(1) }))
        .thenNothing()
    })
  })

  describe("SetLinkMethod and RemoveLinkMethod", () => {
    const setLink = (min: number, max: number, method: Merchant.LinkMethod = "PSE") =>
      new Merchant.SetLinkMethod({ method, min: amount(min), max: amount(max), now: at(1) })
    it("a link method is offered with its minimum and maximum", () => {
      spec
        .given(created())
        .when(setLink(1_000, 5_000_000))
        .then([
          new Merchant.LinkMethodSet({ method: "PSE", min: amount(1_000), max: amount(5_000_000), at: at(1) })
        ])
      const state = stateOf([
        ...created(),
        new Merchant.LinkMethodSet({ method: "PSE", min: amount(1_000), max: amount(5_000_000), at: at(1) })
      ])
      expect(Merchant.linkMethodBounds(state)).toEqual({ PSE: { min: 1_000, max: 5_000_000 } })
    })
    it("a method's minimum may not exceed its maximum", () => {
      spec
        .given(created())
        .when(setLink(5_001, 5_000))
        .thenFails(Merchant.InvalidMethodBounds, { method: "PSE", min: amount(5_001), max: amount(5_000) })
      spec
        .given(created())
        .when(setLink(5_000, 5_000))
        .then([
          new Merchant.LinkMethodSet({ method: "PSE", min: amount(5_000), max: amount(5_000), at: at(1) })
        ])
    })
    it("bounds are never negative", () => {
      expect(() => setLink(-1, 10)).toThrow()
      expect(() => setLink(0, -10)).toThrow()
    })
    it.prop(
      "bounds are accepted exactly when min ≤ max",
      [FastCheck.nat({ max: 10_000_000 }), FastCheck.nat({ max: 10_000_000 })],
      ([min, max]) => {
        const result = Merchant.decide(setLink(min, max), stateOf(created()))
        expect(Either.isRight(result)).toBe(min <= max)
      }
    )
    it("setting the same bounds again changes nothing", () => {
      spec
        .given([
          ...created(),
          new Merchant.LinkMethodSet({ method: "PSE", min: amount(1), max: amount(2), at: at(1) })
        ])
        .when(setLink(1, 2))
        .thenNothing()
    })
    it("a method removed is no longer offered", () => {
      const history = [
        ...created(),
        new Merchant.LinkMethodSet({ method: "PSE", min: amount(1), max: amount(2), at: at(1) })
      ]
      spec
        .given(history)
        .when(new Merchant.RemoveLinkMethod({ method: "PSE", now: at(2) }))
        .then([new Merchant.LinkMethodRemoved({ method: "PSE", at: at(2) })])
      expect(
        Merchant.linkMethodBounds(
          stateOf([...history, new Merchant.LinkMethodRemoved({ method: "PSE", at: at(2) })])
        )
      ).toEqual({})
      spec
        .given(created())
        .when(new Merchant.RemoveLinkMethod({ method: "PSE", now: at(2) }))
        .thenNothing()
    })
  })

  describe("SetWebhook and DeleteWebhook", () => {
    const setHook = (mode: "production" | "test", url: string) =>
      new Merchant.SetWebhook({ mode, url, now: at(1) })
    const hookSet = (mode: "production" | "test", url: string, minutes = 1) =>
      new Merchant.WebhookSet({ mode, url, at: at(minutes) })
    /** A new merchant's `set` of the `mode` webhook to `url` registers it. */
    const registers = (mode: "production" | "test", url: string, set = setHook) =>
      spec
        .given(created())
        .when(set(mode, url))
        .then([hookSet(mode, url)])
    it("the merchant registers an HTTPS endpoint", () => {
      registers("production", "https://shop.example/hooks")
    })
    it("the production endpoint must be an https:// URL", () => {
      spec
        .given(created())
        .when(setHook("production", "http://shop.example/hooks"))
        .thenFails(Merchant.InvalidWebhookUrl, { mode: "production" })
      spec.given(created()).when(setHook("production", "shop.example")).thenFails(Merchant.InvalidWebhookUrl)
    })
    it("the test webhook may be a plain http:// URL", () => {
      registers("test", "http://localhost:4000/hooks")
    })
    it("in development (COBRO_DEV_WEBHOOKS=1) the production endpoint may be a plain http:// URL, on loopback too", () => {
      const dev = (mode: "production" | "test", url: string) =>
        new Merchant.SetWebhook({ mode, url, development: true, now: at(1) })
      registers("production", "http://127.0.0.1:4000/hooks", dev)
      registers("production", "https://localhost:4443/hooks", dev)
      // Still an http(s) URL.
      spec
        .given(created())
        .when(dev("production", "ftp://127.0.0.1/hooks"))
        .thenFails(Merchant.InvalidWebhookUrl, { mode: "production", development: true })
    })
    it("one test webhook per merchant: registering another replaces it", () => {
      const history = [...created(), hookSet("test", "https://a.example/t")]
      spec
        .given(history)
        .when(setHook("test", "https://b.example/t"))
        .then([hookSet("test", "https://b.example/t")])
      const state = stateOf([...history, hookSet("test", "https://b.example/t", 2)])
      expect(Merchant.webhookUrl(state, "test")).toEqual(Option.some("https://b.example/t"))
    })
    it("registering the same URL again changes nothing", () => {
      spec
        .given([...created(), hookSet("production", "https://a.example/p")])
        .when(setHook("production", "https://a.example/p"))
        .thenNothing()
    })
    it("an endpoint may ask for the Standard Webhooks headers: the choice is recorded only when on, and changing it alone is a change", () => {
      const on = new Merchant.SetWebhook({
        mode: "production",
        url: "https://a.example/p",
        standardWebhooks: true,
        now: at(1)
      })
      const setOn = new Merchant.WebhookSet({
        mode: "production",
        url: "https://a.example/p",
        standardWebhooks: true,
        at: at(1)
      })
      spec.given(created()).when(on).then([setOn])
      // Off is the absence of the field: a WebhookSet written before the option reads as off.
      expect(
        Schema.encodeSync(Merchant.Event)(hookSet("production", "https://a.example/p"))
      ).not.toHaveProperty("standardWebhooks")
      const off = stateOf([...created(), hookSet("production", "https://a.example/p")])
      expect(Merchant.webhookFor(off, "production")).toEqual(
        Option.some({ url: "https://a.example/p", standardWebhooks: false })
      )
      spec
        .given([...created(), hookSet("production", "https://a.example/p")])
        .when(on)
        .then([setOn])
      spec
        .given([...created(), setOn])
        .when(on)
        .thenNothing()
      spec
        .given([...created(), setOn])
        .when(setHook("production", "https://a.example/p"))
        .then([hookSet("production", "https://a.example/p")])
      // A sandbox notification sent to the panel's webhook follows that endpoint's choice.
      const panel = stateOf([...created(), setOn])
      expect(Option.map(Merchant.webhookFor(panel, "test"), (w) => w.standardWebhooks)).toEqual(
        Option.some(true)
      )
      const deleted = stateOf([
        ...created(),
        setOn,
        new Merchant.WebhookDeleted({ mode: "production", at: at(2) })
      ])
      expect(Merchant.webhookFor(deleted, "production")).toEqual(Option.none())
    })
    it("deleting the webhook stops delivery to it", () => {
      const history = [...created(), hookSet("production", "https://a.example/p")]
      spec
        .given(history)
        .when(new Merchant.DeleteWebhook({ mode: "production", now: at(2) }))
        .then([new Merchant.WebhookDeleted({ mode: "production", at: at(2) })])
      const state = stateOf([...history, new Merchant.WebhookDeleted({ mode: "production", at: at(2) })])
      expect(Merchant.webhookUrl(state, "production")).toEqual(Option.none())
      spec
        .given(created())
        .when(new Merchant.DeleteWebhook({ mode: "test", now: at(2) }))
        .thenNothing()
    })
    it("sandbox notifications go to the test webhook, or else to the webhook registered in the panel", () => {
      const panelOnly = stateOf([...created(), hookSet("production", "https://a.example/p")])
      expect(Merchant.webhookUrl(panelOnly, "test")).toEqual(Option.some("https://a.example/p"))
      const both = stateOf([
        ...created(),
        hookSet("production", "https://a.example/p"),
        hookSet("test", "https://a.example/t")
      ])
      expect(Merchant.webhookUrl(both, "test")).toEqual(Option.some("https://a.example/t"))
      expect(Merchant.webhookUrl(both, "production")).toEqual(Option.some("https://a.example/p"))
      const testOnly = stateOf([...created(), hookSet("test", "https://a.example/t")])
      expect(Merchant.webhookUrl(testOnly, "production")).toEqual(Option.none())
    })
  })

  describe("properties", () => {
    const minute = FastCheck.integer({ min: 0, max: 120 })
    const integration = Arbitrary.make(Integration)
    const mode = Arbitrary.make(KeyMode)
    const keyNo = FastCheck.integer({ min: 1, max: 8 })
    const serials = FastCheck.constantFrom(serial, serial2)
    const command: FastCheck.Arbitrary<Merchant.Command> = FastCheck.oneof(
      minute.map((m) => new Merchant.CreateMerchant({ merchantId, name: "Café Central", now: at(m) })),
      minute.map((m) => new Merchant.EnableMerchant({ now: at(m) })),
      minute.map((m) => new Merchant.DisableMerchant({ now: at(m) })),
      FastCheck.record({ i: integration, p: keyNo, t: keyNo, m: minute }).map(
        ({ i, p, t, m }) =>
          new Merchant.ActivateIntegration({ integration: i, production: pair(p), test: pair(t), now: at(m) })
      ),
      FastCheck.record({ i: integration, mode, k: keyNo, m: minute }).map(
        ({ i, mode, k, m }) => new Merchant.RotateKey({ integration: i, mode, keyPair: pair(k), now: at(m) })
      ),
      FastCheck.record({
        s: serials,
        model: FastCheck.constantFrom("SMART", "SMART_PRO", "OTHER"),
        m: minute
      }).map(({ s, model, m }) => new Merchant.BindTerminal({ serial: s, model, name: "Caja", now: at(m) })),
      FastCheck.record({ s: serials, m: minute }).map(
        ({ s, m }) => new Merchant.UnbindTerminal({ serial: s, now: at(m) })
      ),
      FastCheck.record({ s: serials, m: minute }).map(
        ({ s, m }) => new Merchant.EnableTerminalForApi({ serial: s, now: at(m) })
      ),
      FastCheck.record({ s: serials, m: minute }).map(
        ({ s, m }) => new Merchant.DisableTerminalForApi({ serial: s, now: at(m) })
      ),
      FastCheck.record({
        method: Arbitrary.make(Merchant.TerminalMethod),
        enabled: FastCheck.boolean(),
        m: minute
      }).map(({ method, enabled, m }) => new Merchant.SetTerminalMethod({ method, enabled, now: at(m) })),
      FastCheck.record({
        method: Arbitrary.make(Merchant.LinkMethod),
        // Few bounds, so that a method is often set again as it is (a no-op).
        min: FastCheck.constantFrom(0, 50, 100),
        max: FastCheck.constantFrom(0, 50, 100),
        m: minute
      }).map(
        ({ method, min, max, m }) =>
          new Merchant.SetLinkMethod({ method, min: amount(min), max: amount(max), now: at(m) })
      ),
      FastCheck.record({ method: Arbitrary.make(Merchant.LinkMethod), m: minute }).map(
        ({ method, m }) => new Merchant.RemoveLinkMethod({ method, now: at(m) })
      ),
      FastCheck.record({
        mode,
        url: FastCheck.constantFrom("https://a.example/h", "https://b.example/h", "http://c.example/h"),
        standardWebhooks: FastCheck.boolean(),
        m: minute
      }).map(
        ({ mode, url, standardWebhooks, m }) =>
          new Merchant.SetWebhook({ mode, url, standardWebhooks, now: at(m) })
      ),
      FastCheck.record({ mode, m: minute }).map(
        ({ mode, m }) => new Merchant.DeleteWebhook({ mode, now: at(m) })
      )
    )
    // From a new account, or from one already configured (keys, a terminal selected and one not, a
    // link method, a webhook), so that runs reach a disabled account with something to reconfigure.
    const configured: ReadonlyArray<Merchant.Command> = [
      create(),
      activate(),
      bind("SMART", serial),
      bind("SMART", serial2),
      new Merchant.EnableTerminalForApi({ serial, now: at(3) }),
      new Merchant.SetLinkMethod({ method: "CREDIT_CARD", min: amount(0), max: amount(100), now: at(4) }),
      new Merchant.SetWebhook({ mode: "production", url: "https://a.example/h", now: at(5) })
    ]
    const run = runsFrom(FastCheck.constantFrom([create()], configured), command, 30)

    transitionProperties({
      aggregate: Merchant.Merchant,
      run,
      id: "MER_1",
      absorbing: { title: "no state is absorbing: a disabled account can be enabled again", states: [] }
    })

    it.prop(
      "after any run: a revoked key's hash is gone, held hashes are distinct, every link method has min ≤ max, at most one webhook per mode, as last registered",
      [run],
      ([commands]) => {
        let state = Merchant.initialState
        for (const command of commands) {
          const result = Merchant.decide(command, state)
          if (Either.isLeft(result)) continue
          state = fold(Merchant.Merchant, result.right, state)
          for (const event of result.right) {
            if (event._tag === "KeyRotated") {
              expect(Merchant.identityKeyHashes(state)).not.toContain(event.revokedIdentityKeyHash)
              expect(Merchant.identityKeyHashes(state)).toContain(event.keyPair.identityKeyHash)
            }
          }
          const hashes = Merchant.identityKeyHashes(state)
          expect(new Set(hashes).size).toBe(hashes.length)
          for (const bounds of Object.values(Merchant.linkMethodBounds(state))) {
            expect(bounds!.min).toBeLessThanOrEqual(bounds!.max)
            expect(Amount.make(bounds!.min)).toBe(bounds!.min)
          }
          if (state._tag !== "Initial")
            expect(Object.keys(state.webhooks).sort()).toEqual(["production", "test"])
          if (command._tag === "SetWebhook" && state._tag !== "Initial") {
            expect(state.webhooks[command.mode]).toEqual(
              Option.some({ url: command.url, standardWebhooks: command.standardWebhooks === true })
            )
          }
          for (const t of Merchant.boundTerminals(state)) expect(["SMART", "SMART_PRO"]).toContain(t.model)
        }
      }
    )
  })
})
