/**
 * The domain's `KeyVault` port with `node:crypto` (spec, Authentication; spec-decisions M2): random
 * API keys, SHA-256 identity-key hashes, and secret keys sealed with AES-256-GCM under the server key.
 */
import * as KeyVault from "@cobro/domain/KeyVault"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import * as Ids from "./Ids.js"

/** The version tag of sealed secrets: `v1.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>`. */
export const sealedVersion = "v1"

const ivBytes = 12
const tagBytes = 16
// Binds every sealed text to its purpose: a ciphertext made for something else does not unseal here.
const associatedData = Buffer.from("cobro:secret-key:v1", "utf8")

/** A short, non-secret id of the sealing key, written in each sealed text: a wrong key is told apart from tampering. */
export const keyId = (key: Buffer): string =>
  createHash("sha256").update("cobro:sealing-key-id").update(key).digest("hex").slice(0, 8)

/** SHA-256 of an identity key, lower-case hex. */
export const hashIdentityKey = (identityKey: string): IdentityKeyHash =>
  IdentityKeyHash.make(createHash("sha256").update(identityKey, "utf8").digest("hex"))

/** A sealing and unsealing pair under one 32-byte key. */
export interface Sealer {
  readonly seal: (secret: string) => SealedSecret
  /** The clear secret, or a message saying why the text does not unseal (wrong key, tampered, malformed). */
  readonly unseal: (
    sealed: string
  ) => { readonly ok: true; readonly secret: string } | { readonly ok: false; readonly reason: string }
}

/** AES-256-GCM with a random 96-bit IV per secret. */
export const makeSealer = (key: Buffer): Sealer => {
  if (key.length !== 32) throw new Error("NodeKeyVault: the sealing key must be 32 bytes")
  const id = keyId(key)
  return {
    seal: (secret) => {
      const iv = randomBytes(ivBytes)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      cipher.setAAD(associatedData)
      const body = Buffer.concat([iv, cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()])
      return SealedSecret.make(`${sealedVersion}.${id}.${body.toString("base64url")}`)
    },
    unseal: (sealed) => {
      const parts = sealed.split(".")
      if (parts.length !== 3 || parts[0] !== sealedVersion)
        return { ok: false, reason: "not a sealed secret" }
      if (parts[1] !== id)
        return { ok: false, reason: `sealed with another key (id ${parts[1]}, this key is ${id})` }
      const body = Buffer.from(parts[2]!, "base64url")
      if (body.length < ivBytes + tagBytes) return { ok: false, reason: "truncated" }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, ivBytes))
        decipher.setAAD(associatedData)
        decipher.setAuthTag(body.subarray(body.length - tagBytes))
        const clear = Buffer.concat([
          decipher.update(body.subarray(ivBytes, body.length - tagBytes)),
          decipher.final()
        ])
        return { ok: true, secret: clear.toString("utf8") }
      } catch {
        return { ok: false, reason: "authentication failed (altered)" }
      }
    }
  }
}

/** The vault over one sealing key. */
export const make = (sealingKey: Redacted.Redacted<Buffer>): KeyVault.KeyVault["Type"] => {
  const sealer = makeSealer(Redacted.value(sealingKey))
  return KeyVault.KeyVault.of({
    issue: Effect.fn("NodeKeyVault.issue")(function* (integration, mode) {
      // After the domain's prefix (`id_test_term_`, `sk_live_btn_`, …), letters and digits: about
      // 190 random bits identify, 256 sign; both far beyond guessing.
      const identityKey = MerchantAdmin.keyPrefix("identity", integration, mode) + Ids.randomAlphanumeric(32)
      const secretKey = MerchantAdmin.keyPrefix("secret", integration, mode) + Ids.randomAlphanumeric(43)
      return {
        integration,
        mode,
        identityKey,
        secretKey,
        keyPair: { identityKeyHash: hashIdentityKey(identityKey), secretKey: sealer.seal(secretKey) }
      }
    }),
    hashIdentityKey,
    unseal: (sealed) =>
      Effect.suspend(() => {
        const result = sealer.unseal(sealed)
        return result.ok
          ? Effect.succeed(result.secret)
          : Effect.dieMessage(`NodeKeyVault: cannot unseal a secret key: ${result.reason}`)
      })
  })
}

/** `KeyVault` over the given 32-byte sealing key. */
export const layer = (sealingKey: Redacted.Redacted<Buffer>): Layer.Layer<KeyVault.KeyVault> =>
  Layer.sync(KeyVault.KeyVault, () => make(sealingKey))
