import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as DevWebhooks from "@cobro/domain/DevWebhooks"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import { amount } from "@cobro/domain/Money"
import * as EventStore from "@cobro/domain/EventStore"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import { freshly } from "../fixtures/Scenario.js"

// A deterministic vault: key n hashes to n in hex.
const vault = Layer.effect(
  KeyVault.KeyVault,
  Effect.sync(() => {
    let n = 0
    const hash = (key: string) => IdentityKeyHash.make(key.slice(key.lastIndexOf("_") + 1).padStart(64, "0"))
    return {
      issue: (integration, mode) =>
        Effect.sync(() => {
          n++
          const identityKey = `${MerchantAdmin.keyPrefix("identity", integration, mode)}${n.toString(16)}`
          const secretKey = `${MerchantAdmin.keyPrefix("secret", integration, mode)}${n.toString(16)}`
          return {
            integration,
            mode,
            identityKey,
            secretKey,
            keyPair: {
              identityKeyHash: hash(identityKey),
              secretKey: SealedSecret.make(`sealed:${secretKey}`)
            }
          }
        }),
      hashIdentityKey: hash,
      unseal: (sealed) => Effect.succeed(sealed.slice("sealed:".length))
    } satisfies KeyVault.KeyVault["Type"]
  })
)

const TestLayer = Layer.mergeAll(MerchantDirectory.layerFromLog, vault, IdGenerator.layerSequential).pipe(
  Layer.provideMerge(InMemoryEventStore.layer)
)

/** Runs a test body on its own store, directory, vault and ids. */
const admin = freshly(TestLayer)

/** As {@link admin}, with `COBRO_DEV_WEBHOOKS=1`. */
const withDevWebhooks = freshly(
  Layer.merge(TestLayer, Layer.succeed(DevWebhooks.DevWebhooks, { enabled: true }))
)

const lookup = (identityKey: string) =>
  Effect.gen(function* () {
    const v = yield* KeyVault.KeyVault
    const directory = yield* MerchantDirectory.MerchantDirectory
    return yield* directory.findByIdentityKey(v.hashIdentityKey(identityKey))
  })

const logSize = Effect.flatMap(EventStore.EventStore, (s) => Effect.map(s.readAll(), (e) => e.length))
const serial = TerminalSerial.make("SN-0001")

describe("MerchantAdmin", () => {
  it.effect(
    "createMerchant opens an ENABLED account with both integrations' production and test keys, once",
    () =>
      admin(function* () {
        const created = yield* MerchantAdmin.createMerchant("Café Central")
        expect(created.merchantId).toBe("MER_1")
        expect(created.keys.terminal_api.production.identityKey).toMatch(/^id_live_term_/)
        expect(created.keys.terminal_api.test.identityKey).toMatch(/^id_test_term_/)
        expect(created.keys.payment_button.production.identityKey).toMatch(/^id_live_btn_/)
        expect(created.keys.payment_button.test.secretKey).toMatch(/^sk_test_btn_/)
        const state = yield* MerchantAdmin.getMerchant(created.merchantId)
        expect(state._tag).toBe("ENABLED")
        expect(Option.isSome(state.keys.terminal_api) && Option.isSome(state.keys.payment_button)).toBe(true)
        // Created in one append: three events of one stream, recorded together.
        expect(yield* logSize).toBe(3)
      })
  )

  it.effect("the directory from the log resolves each of the four keys to its integration and mode", () =>
    admin(function* () {
      const { merchantId, keys } = yield* MerchantAdmin.createMerchant("A")
      const credential = Option.getOrThrow(yield* lookup(keys.payment_button.test.identityKey))
      expect([credential.merchantId, credential.integration, credential.mode, credential.sandbox]).toEqual([
        merchantId,
        "payment_button",
        "test",
        true
      ])
      const production = Option.getOrThrow(yield* lookup(keys.terminal_api.production.identityKey))
      expect([production.integration, production.mode, production.sandbox]).toEqual([
        "terminal_api",
        "production",
        false
      ])
      expect(Option.isNone(yield* lookup("id_live_term_ffff"))).toBe(true)
    })
  )

  it.effect(
    "rotateKey: the old key stops resolving at once, the new one resolves, the other mode is untouched",
    () =>
      admin(function* () {
        const { merchantId, keys } = yield* MerchantAdmin.createMerchant("A")
        expect(Option.isSome(yield* lookup(keys.terminal_api.test.identityKey))).toBe(true)
        const fresh = yield* MerchantAdmin.rotateKey(merchantId, "terminal_api", "test")
        expect(Option.isNone(yield* lookup(keys.terminal_api.test.identityKey))).toBe(true)
        expect(Option.getOrThrow(yield* lookup(fresh.identityKey)).mode).toBe("test")
        expect(Option.isSome(yield* lookup(keys.terminal_api.production.identityKey))).toBe(true)
      })
  )

  it.effect("bindTerminal binds a terminal not selected for the API; setTerminalApiEnabled selects it", () =>
    admin(function* () {
      const { merchantId } = yield* MerchantAdmin.createMerchant("A")
      const bound = yield* MerchantAdmin.bindTerminal(merchantId, { model: "SMART", serial, name: "Caja 1" })
      expect([bound.model, bound.apiEnabled]).toEqual(["SMART", false])
      const selected = yield* MerchantAdmin.setTerminalApiEnabled(merchantId, serial, true)
      expect(selected.apiEnabled).toBe(true)
      const error = yield* Effect.flip(
        MerchantAdmin.setTerminalApiEnabled(merchantId, TerminalSerial.make("SN-9"), true)
      )
      expect(error._tag).toBe("TerminalNotBound")
    })
  )

  it.effect("setPaymentMethods replaces the sections given, all or nothing", () =>
    admin(function* () {
      const { merchantId } = yield* MerchantAdmin.createMerchant("A")
      const methods = yield* MerchantAdmin.setPaymentMethods(merchantId, {
        terminal: { WALLET_A: true },
        link: { PSE: { min: amount(1), max: amount(10) } }
      })
      expect(methods.terminal).toEqual({
        POS: false,
        WALLET_A: true,
        WALLET_B: false,
        PAY_BY_LINK: false,
        PAY_BY_QR_SERVICE: false
      })
      expect(methods.link).toEqual({ PSE: { min: 1, max: 10 } })
      const before = yield* logSize
      const error = yield* Effect.flip(
        MerchantAdmin.setPaymentMethods(merchantId, {
          terminal: { POS: true },
          link: { CREDIT_CARD: { min: amount(5), max: amount(1) } }
        })
      )
      expect(error._tag).toBe("InvalidMethodBounds")
      expect(yield* logSize).toBe(before)
    })
  )

  it.effect(
    "setWebhook: production needs https; a test webhook may be http unless allowInsecure is false",
    () =>
      admin(function* () {
        const { merchantId } = yield* MerchantAdmin.createMerchant("A")
        expect(
          (yield* Effect.flip(MerchantAdmin.setWebhook(merchantId, "production", "http://a.example/h")))._tag
        ).toBe("InvalidWebhookUrl")
        expect(yield* MerchantAdmin.setWebhook(merchantId, "test", "http://localhost/h")).toEqual({
          mode: "test",
          url: "http://localhost/h",
          standardWebhooks: false
        })
        const strict = yield* Effect.flip(
          MerchantAdmin.setWebhook(merchantId, "test", "http://localhost/h", { allowInsecure: false })
        )
        expect(strict._tag).toBe("InvalidWebhookUrl")
        yield* MerchantAdmin.deleteWebhook(merchantId, "test")
        const state = yield* MerchantAdmin.getMerchant(merchantId)
        expect(Option.isNone(state.webhooks.test)).toBe(true)
      })
  )

  it.effect(
    "setWebhook under DevWebhooks (COBRO_DEV_WEBHOOKS=1): the production webhook may be http:// on loopback",
    () =>
      withDevWebhooks(function* () {
        const { merchantId } = yield* MerchantAdmin.createMerchant("A")
        const url = "http://127.0.0.1:4000/hooks"
        expect(yield* MerchantAdmin.setWebhook(merchantId, "production", url)).toEqual({
          mode: "production",
          url,
          standardWebhooks: false
        })
        const state = yield* MerchantAdmin.getMerchant(merchantId)
        expect(Option.map(state.webhooks.production, (w) => w.url)).toEqual(Option.some(url))
      })
  )

  it.effect(
    "setStatus disables and enables the account; setting the status it has records nothing (M1)",
    () =>
      admin(function* () {
        const { merchantId } = yield* MerchantAdmin.createMerchant("A")
        const start = yield* logSize
        expect(yield* MerchantAdmin.setStatus(merchantId, "DISABLED", { actor: "admin" })).toEqual({
          merchantId,
          status: "DISABLED"
        })
        expect((yield* MerchantAdmin.getMerchant(merchantId))._tag).toBe("DISABLED")
        expect(yield* logSize).toBe(start + 1)
        expect((yield* MerchantAdmin.setStatus(merchantId, "DISABLED")).status).toBe("DISABLED")
        expect(yield* logSize).toBe(start + 1)
        expect((yield* MerchantAdmin.setStatus(merchantId, "ENABLED")).status).toBe("ENABLED")
        expect((yield* MerchantAdmin.getMerchant(merchantId))._tag).toBe("ENABLED")
        expect(yield* logSize).toBe(start + 2)
        expect((yield* MerchantAdmin.setStatus(merchantId, "ENABLED")).status).toBe("ENABLED")
        expect(yield* logSize).toBe(start + 2)
        // The operator's metadata is kept on the event.
        const store = yield* EventStore.EventStore
        const events = yield* store.readAll()
        expect(events[start]?.type).toBe("MerchantDisabled")
        expect(events[start]?.metadata).toMatchObject({ actor: "admin" })
      })
  )

  it.effect(
    "a disabled account keeps its keys: they still resolve (disabling stops payments, not support)",
    () =>
      admin(function* () {
        const { merchantId, keys } = yield* MerchantAdmin.createMerchant("A")
        yield* MerchantAdmin.setStatus(merchantId, "DISABLED")
        const credential = yield* lookup(keys.terminal_api.production.identityKey)
        expect(Option.getOrThrow(credential).merchantId).toBe(merchantId)
      })
  )

  it.effect("every use case on an unknown merchant fails MerchantNotFound and writes nothing", () =>
    admin(function* () {
      const id = "MER_404"
      const errors = yield* Effect.all([
        Effect.flip(MerchantAdmin.getMerchant(id)),
        Effect.flip(MerchantAdmin.bindTerminal(id, { model: "SMART", serial, name: "x" })),
        Effect.flip(MerchantAdmin.setTerminalApiEnabled(id, serial, true)),
        Effect.flip(MerchantAdmin.setPaymentMethods(id, { terminal: {} })),
        Effect.flip(MerchantAdmin.setWebhook(id, "production", "https://a.example/h")),
        Effect.flip(MerchantAdmin.deleteWebhook(id, "production")),
        Effect.flip(MerchantAdmin.rotateKey(id, "terminal_api", "test")),
        Effect.flip(MerchantAdmin.setStatus(id, "DISABLED")),
        Effect.flip(MerchantAdmin.setStatus(id, "ENABLED"))
      ])
      expect(errors.map((e) => e._tag)).toEqual(Array(9).fill("MerchantNotFound"))
      expect(yield* logSize).toBe(0)
    })
  )
})

describe("IdempotencyStore.layerMemory", () => {
  const scope = { merchantId: "MER_1", mode: "test", key: "k" }
  const response = { status: 201, contentType: "application/json", body: '{"a":1}' }
  const at = (ms: number) => DateTime.unsafeMake(Date.UTC(2026, 10, 21) + ms)
  /** Runs a test body on its own, empty idempotency store. */
  const idempotency = freshly(IdempotencyStore.layerMemory)
  /** Given: the key reserved at 0 by owner `o1` for a request of fingerprint `f1`. The store. */
  const givenReserved = Effect.flatMap(IdempotencyStore.IdempotencyStore, (store) =>
    Effect.as(store.reserve(scope, "f1", at(0), "o1"), store)
  )

  it.effect("a key is reserved, completed, then replayed; another fingerprint is a mismatch", () =>
    idempotency(function* () {
      const store = yield* IdempotencyStore.IdempotencyStore
      expect((yield* store.reserve(scope, "f1", at(0), "o1"))._tag).toBe("Reserved")
      expect((yield* store.reserve(scope, "f1", at(1), "o1"))._tag).toBe("InProgress")
      yield* store.complete(scope, "o1", response)
      expect(yield* store.reserve(scope, "f1", at(2), "o1")).toEqual(
        IdempotencyStore.Reservation.Replay({ response })
      )
      expect((yield* store.reserve(scope, "f2", at(3), "o1"))._tag).toBe("Mismatch")
      expect((yield* store.reserve({ ...scope, merchantId: "MER_2" }, "f2", at(3), "o1"))._tag).toBe(
        "Reserved"
      )
    })
  )

  it.effect("a key is remembered for 24 hours from its first use, then it is new again", () =>
    idempotency(function* () {
      const store = yield* givenReserved
      yield* store.complete(scope, "o1", response)
      expect((yield* store.reserve(scope, "f2", at(IdempotencyStore.RETENTION_MS - 1), "o1"))._tag).toBe(
        "Mismatch"
      )
      expect((yield* store.reserve(scope, "f2", at(IdempotencyStore.RETENTION_MS), "o1"))._tag).toBe(
        "Reserved"
      )
    })
  )

  it.effect("a released key can be used again at once", () =>
    idempotency(function* () {
      const store = yield* givenReserved
      yield* store.release(scope, "o1")
      expect((yield* store.reserve(scope, "f2", at(1), "o1"))._tag).toBe("Reserved")
    })
  )

  it.effect(
    "a released key whose request committed an effect is recovered by the next reservation at once, whatever its clock",
    () =>
      idempotency(function* () {
        const store = yield* givenReserved
        // An effect of its request commits under the key's fence.
        yield* store.fence(scope, "o1").around("PaymentLink-LNK_1", Effect.void)
        // Its answer was a refusal for now (a 503 with Retry-After): released, not forgotten.
        yield* store.release(scope, "o1")
        expect((yield* store.reserve(scope, "f2", at(1), "o2"))._tag).toBe("Mismatch")
        expect(yield* store.reserve(scope, "f1", at(-5_000), "o2")).toEqual(
          IdempotencyStore.Reservation.Recover({ resource: "PaymentLink-LNK_1" })
        )
        expect((yield* store.reserve(scope, "f1", at(2), "o3"))._tag).toBe("InProgress")
      })
  )

  it.effect(
    "a running key's lease lapses 30 seconds after its last renewal, then the key is new; a stale owner records nothing",
    () =>
      idempotency(function* () {
        const store = yield* givenReserved
        const lease = IdempotencyStore.LEASE_MS
        expect((yield* store.reserve(scope, "f1", at(lease - 1), "o2"))._tag).toBe("InProgress")
        expect(yield* store.renew(scope, "o1", at(lease - 1))).toBe(true)
        expect((yield* store.reserve(scope, "f1", at(2 * lease - 2), "o2"))._tag).toBe("InProgress")
        expect((yield* store.reserve(scope, "f2", at(2 * lease - 1), "o2"))._tag).toBe("Reserved")
        expect(yield* store.renew(scope, "o1", at(2 * lease))).toBe(false)
        expect(yield* store.complete(scope, "o1", response)).toBe("Lost")
        yield* store.release(scope, "o1")
        expect((yield* store.reserve(scope, "f2", at(2 * lease), "o3"))._tag).toBe("InProgress")
        expect(yield* store.complete(scope, "o2", response)).toBe("Recorded")
        expect(yield* store.reserve(scope, "f2", at(2 * lease), "o3")).toEqual(
          IdempotencyStore.Reservation.Replay({ response })
        )
      })
  )
})
