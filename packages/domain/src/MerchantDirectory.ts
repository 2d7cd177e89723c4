/**
 * The merchant directory port (spec, Authentication): which merchant, integration and mode an
 * identity key belongs to. The store implements it with a read model of the `Merchant` streams; a
 * rotated key stops resolving as soon as the rotation is recorded.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { MerchantId } from "./Ids.js"
import { IdentityKeyHash, Integration, KeyMode } from "./SigningKey.js"

/** What a valid identity key grants: one merchant, one integration, production or test data. */
export class Credential extends Schema.Class<Credential>("Credential")({
  merchantId: MerchantId,
  integration: Integration,
  mode: KeyMode,
  identityKeyHash: IdentityKeyHash
}) {
  /** Test keys see only sandbox data (spec, Authentication). */
  get sandbox(): boolean {
    return this.mode === "test"
  }
}

/** The merchant directory port. */
export class MerchantDirectory extends Context.Tag("@cobro/domain/MerchantDirectory")<
  MerchantDirectory,
  {
    /**
     * The credential of a current (not rotated) identity key. Reads its own writes: a key issued
     * by a command that has returned resolves at once, on every node.
     */
    readonly findByIdentityKey: (hash: IdentityKeyHash) => Effect.Effect<Option.Option<Credential>>
  }
>() {}
