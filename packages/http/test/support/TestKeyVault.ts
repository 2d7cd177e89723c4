/**
 * A `KeyVault` for tests, on `node:crypto`: random keys with the formats of `MerchantAdmin.keyPrefix`,
 * SHA-256 identity hashes, and secrets "sealed" by a reversible test encoding (never use it in a server).
 */
import * as KeyVault from "@cobro/domain/KeyVault"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { IdentityKeyHash, SealedSecret } from "@cobro/domain/SigningKey"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash, randomBytes } from "node:crypto"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** 32 random base-62 characters (about 190 bits). */
export const randomToken = (): string => Array.from(randomBytes(32), (byte) => ALPHABET[byte % 62]).join("")

/** SHA-256 of an identity key, lower-case hex. */
export const hashIdentityKey = (identityKey: string): IdentityKeyHash =>
  IdentityKeyHash.make(createHash("sha256").update(identityKey, "utf8").digest("hex"))

const SEAL = "test-sealed:"

/** The test key vault. */
export const layer: Layer.Layer<KeyVault.KeyVault> = Layer.succeed(KeyVault.KeyVault, {
  issue: (integration, mode) =>
    Effect.sync(() => {
      const identityKey = MerchantAdmin.keyPrefix("identity", integration, mode) + randomToken()
      const secretKey = MerchantAdmin.keyPrefix("secret", integration, mode) + randomToken()
      return {
        integration,
        mode,
        identityKey,
        secretKey,
        keyPair: {
          identityKeyHash: hashIdentityKey(identityKey),
          secretKey: SealedSecret.make(SEAL + Buffer.from(secretKey).toString("base64"))
        }
      }
    }),
  hashIdentityKey,
  unseal: (sealed) =>
    sealed.startsWith(SEAL)
      ? Effect.succeed(Buffer.from(sealed.slice(SEAL.length), "base64").toString("utf8"))
      : Effect.die(new Error("a secret this vault did not seal"))
})
