/**
 * The domain's `IdGenerator` port with `node:crypto` (spec-decisions "Id formats"): prefixed ids of
 * random letters and digits, and v4 UUIDs, unguessable and unique across nodes without coordination.
 */
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes, randomUUID } from "node:crypto"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** How many random characters follow the prefix: 24 of 62 symbols, about 143 bits. */
export const randomLength = 24

/** `length` characters drawn uniformly from letters and digits (rejection sampling: no modulo bias). */
export const randomAlphanumeric = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes at or above it would favour the first symbols.
      if (byte < 248) out += alphabet[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

/** Random ids: `next("LNK_")` is `LNK_` and {@link randomLength} letters or digits; `uuid` is a v4 UUID. */
export const layerRandom: Layer.Layer<IdGenerator.IdGenerator> = Layer.succeed(
  IdGenerator.IdGenerator,
  IdGenerator.IdGenerator.of({
    next: (prefix) => Effect.sync(() => prefix + randomAlphanumeric(randomLength)),
    uuid: Effect.sync(() => randomUUID())
  })
)
