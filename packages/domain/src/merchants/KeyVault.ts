/**
 * The key vault port (spec, Authentication): mints merchants' API key pairs, hashes identity keys
 * and seals secret keys, so that the domain and the log never hold a key in clear. The server
 * implements it with `node:crypto`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { KeyPair } from "./Merchant.js"
import type { IdentityKeyHash, Integration, KeyMode, SealedSecret } from "./SigningKey.js"

/** A key pair just minted: the clear keys, shown once to the merchant, and what the log keeps. */
export interface IssuedKeyPair {
  readonly integration: Integration
  readonly mode: KeyMode
  /** The identity key, sent by the merchant as `Authorization: x-api-key <identity key>`. */
  readonly identityKey: string
  /** The secret key that signs webhooks (spec D, Signature). */
  readonly secretKey: string
  /** The identity key's hash and the sealed secret, as `Merchant` events carry them. */
  readonly keyPair: KeyPair
}

/**
 * The key vault port.
 *
 * @category services
 */
export class KeyVault extends Context.Tag("@cobro/domain/KeyVault")<
  KeyVault,
  {
    /** Mints a new random key pair of one integration and mode. */
    readonly issue: (integration: Integration, mode: KeyMode) => Effect.Effect<IssuedKeyPair>
    /** SHA-256 of an identity key as sent by a client, lower-case hex. */
    readonly hashIdentityKey: (identityKey: string) => IdentityKeyHash
    /** The secret key in clear, for signing; a secret this vault did not seal is a defect. */
    readonly unseal: (sealed: SealedSecret) => Effect.Effect<string>
  }
>() {}
