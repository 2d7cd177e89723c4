import * as KeyVault from "@cobro/domain/KeyVault"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import * as NodeKeyVault from "../src/NodeKeyVault.js"

const vaultWith = (key: Buffer) => NodeKeyVault.make(Redacted.make(key))

const integrations = ["terminal_api", "payment_button"] as const
const modes = ["production", "test"] as const

describe("NodeKeyVault", () => {
  it.effect(
    "an issued secret key unseals to itself (round trip), for every integration and mode",
    Effect.fnUntraced(function* () {
      const vault = vaultWith(randomBytes(32))
      for (const integration of integrations) {
        for (const mode of modes) {
          const issued = yield* vault.issue(integration, mode)
          expect(issued.integration).toBe(integration)
          expect(issued.mode).toBe(mode)
          expect(yield* vault.unseal(issued.keyPair.secretKey)).toBe(issued.secretKey)
        }
      }
    })
  )

  it.prop(
    "sealing then unsealing any text gives it back",
    [FastCheck.string({ minLength: 1, maxLength: 200, unit: "binary" })],
    ([secret]) => {
      const sealer = NodeKeyVault.makeSealer(randomBytes(32))
      const result = sealer.unseal(sealer.seal(secret))
      return result.ok && result.secret === secret
    }
  )

  it.effect(
    "M2: the log keeps only the identity key's SHA-256 hash and a sealed secret, never a key in clear",
    Effect.fnUntraced(function* () {
      const vault = vaultWith(randomBytes(32))
      const issued = yield* vault.issue("terminal_api", "production")
      expect(issued.keyPair.identityKeyHash).toBe(
        createHash("sha256").update(issued.identityKey).digest("hex")
      )
      expect(Schema.is(IdentityKeyHash)(issued.keyPair.identityKeyHash)).toBe(true)
      expect(vault.hashIdentityKey(issued.identityKey)).toBe(issued.keyPair.identityKeyHash)
      const logged = JSON.stringify(issued.keyPair)
      expect(logged).not.toContain(issued.identityKey)
      expect(logged).not.toContain(issued.secretKey)
      expect(logged).not.toContain(issued.secretKey.slice(-32))
    })
  )

  it.effect(
    "keys say what they are for (MerchantAdmin.keyPrefix): identity and secret, test and live, terminal API and button",
    Effect.fnUntraced(function* () {
      const vault = vaultWith(randomBytes(32))
      const tapiTest = yield* vault.issue("terminal_api", "test")
      const btnLive = yield* vault.issue("payment_button", "production")
      expect(tapiTest.identityKey).toMatch(/^id_test_term_[A-Za-z0-9]{32}$/)
      expect(tapiTest.secretKey).toMatch(/^sk_test_term_[A-Za-z0-9]{43}$/)
      expect(btnLive.identityKey).toMatch(/^id_live_btn_[A-Za-z0-9]{32}$/)
      expect(btnLive.secretKey).toMatch(/^sk_live_btn_[A-Za-z0-9]{43}$/)
    })
  )

  it.effect(
    "every issued key is new: no two identity or secret keys repeat",
    Effect.fnUntraced(function* () {
      const vault = vaultWith(randomBytes(32))
      const issued = yield* Effect.forEach(Array.from({ length: 200 }), () =>
        vault.issue("terminal_api", "test")
      )
      expect(new Set(issued.map((i) => i.identityKey)).size).toBe(200)
      expect(new Set(issued.map((i) => i.secretKey)).size).toBe(200)
      expect(new Set(issued.map((i) => i.keyPair.secretKey)).size).toBe(200)
    })
  )

  it.effect(
    "a sealed secret altered in any byte does not unseal (tamper detection)",
    Effect.fnUntraced(function* () {
      const vault = vaultWith(randomBytes(32))
      const issued = yield* vault.issue("payment_button", "production")
      const sealed = issued.keyPair.secretKey
      const [version, id, body] = sealed.split(".") as [string, string, string]
      const bytes = Buffer.from(body, "base64url")
      for (let i = 0; i < bytes.length; i++) {
        const altered = Buffer.from(bytes)
        altered[i] = altered[i]! ^ 0x01
        const exit = yield* Effect.exit(
          vault.unseal(SealedSecret.make(`${version}.${id}.${altered.toString("base64url")}`))
        )
        expect(Exit.isFailure(exit) && !Exit.isInterrupted(exit)).toBe(true)
      }
      const truncated = yield* Effect.exit(vault.unseal(SealedSecret.make(sealed.slice(0, -4))))
      expect(Exit.isFailure(truncated)).toBe(true)
      const notSealed = yield* Effect.exit(vault.unseal(SealedSecret.make(issued.secretKey)))
      expect(Exit.isFailure(notSealed)).toBe(true)
    })
  )

  it.effect(
    "two vaults with different sealing keys cannot unseal each other's secrets",
    Effect.fnUntraced(function* () {
      const a = vaultWith(randomBytes(32))
      const b = vaultWith(randomBytes(32))
      const fromA = yield* a.issue("terminal_api", "production")
      const fromB = yield* b.issue("terminal_api", "production")
      const exitA = yield* Effect.exit(b.unseal(fromA.keyPair.secretKey))
      const exitB = yield* Effect.exit(a.unseal(fromB.keyPair.secretKey))
      expect(Exit.isFailure(exitA)).toBe(true)
      expect(Exit.isFailure(exitB)).toBe(true)
      // Even with the key id forged to match, authentication refuses the other key's ciphertext.
      const [, , body] = fromA.keyPair.secretKey.split(".")
      const forged = SealedSecret.make(`v1.${NodeKeyVault.keyId(Buffer.alloc(32, 7))}.${body}`)
      const forgedExit = yield* Effect.exit(vaultWith(Buffer.alloc(32, 7)).unseal(forged))
      expect(Exit.isFailure(forgedExit)).toBe(true)
    })
  )

  it.effect(
    "the same sealing key on two nodes unseals what either sealed",
    Effect.fnUntraced(function* () {
      const key = randomBytes(32)
      const issued = yield* vaultWith(key).issue("payment_button", "test")
      expect(yield* vaultWith(Buffer.from(key)).unseal(issued.keyPair.secretKey)).toBe(issued.secretKey)
    })
  )

  it.effect("the layer provides the KeyVault port", () =>
    Effect.gen(function* () {
      const vault = yield* KeyVault.KeyVault
      const issued = yield* vault.issue("terminal_api", "test")
      expect(yield* vault.unseal(issued.keyPair.secretKey)).toBe(issued.secretKey)
    }).pipe(Effect.provide(NodeKeyVault.layer(Redacted.make(randomBytes(32)))))
  )
})
