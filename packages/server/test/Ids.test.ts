import * as IdGenerator from "@cobro/domain/IdGenerator"
import { MerchantId, PaymentLinkId, RefundId, TransactionId } from "@cobro/domain/Ids"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Ids from "../src/Ids.js"

describe("Ids.layerRandom", () => {
  it.effect("minted ids are the prefix followed by 1–64 letters or digits (spec-decisions: Id formats)", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator.IdGenerator
      expect(Schema.is(MerchantId)(yield* ids.next("MER_"))).toBe(true)
      expect(Schema.is(PaymentLinkId)(yield* ids.next("LNK_"))).toBe(true)
      expect(Schema.is(TransactionId)(yield* ids.next("TRX_"))).toBe(true)
      expect(Schema.is(RefundId)(yield* ids.next("RFD_"))).toBe(true)
      expect(yield* ids.next("INT_")).toMatch(/^INT_[A-Za-z0-9]{24}$/)
    }).pipe(Effect.provide(Ids.layerRandom))
  )

  it.effect("notification and event ids are RFC 4122 version 4 UUIDs", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator.IdGenerator
      const uuid = yield* ids.uuid
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(Schema.is(Schema.UUID)(uuid)).toBe(true)
    }).pipe(Effect.provide(Ids.layerRandom))
  )

  it.effect("ids do not repeat (10,000 draws) and use the whole alphabet", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator.IdGenerator
      const drawn = yield* Effect.forEach(Array.from({ length: 10_000 }), () => ids.next("TRX_"))
      expect(new Set(drawn).size).toBe(10_000)
      const symbols = new Set(drawn.flatMap((id) => [...id.slice(4)]))
      expect(symbols.size).toBe(62)
      const uuids = yield* Effect.forEach(Array.from({ length: 1000 }), () => ids.uuid)
      expect(new Set(uuids).size).toBe(1000)
    }).pipe(Effect.provide(Ids.layerRandom))
  )
})
