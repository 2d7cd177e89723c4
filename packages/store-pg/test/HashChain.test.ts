import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as HashChain from "../src/HashChain.js"

const fields: HashChain.HashedFields = {
  streamId: "PaymentLink-LNK_1",
  streamVersion: 1,
  eventId: "5b0f9f0e-6c2d-4f61-9a3c-1d2e3f4a5b6c",
  type: "PaymentLinkCreated",
  schemaVersion: 1,
  data: { _tag: "PaymentLinkCreated", amount: { value: 1500, currency: "COP" }, note: "ñ" },
  metadata: { requestId: "r-1", actor: "MER_1" },
  recordedAt: new Date("2024-01-31T12:00:00.000Z")
}

describe("HashChain", () => {
  it("canonical JSON sorts keys, drops undefined members and has no whitespace", () => {
    expect(HashChain.canonicalJson({ b: 1, a: [true, null, "x"], c: undefined, d: { z: 0.5, y: -0 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"d":{"y":0,"z":0.5}}'
    )
  })

  it("refuses what jsonb cannot store faithfully", () => {
    expect(() => HashChain.canonicalJson(Number.NaN)).toThrow()
    expect(() => HashChain.canonicalJson(1n)).toThrow()
  })

  it("the canonical event is the documented object, and its hash a fixed vector auditors can check", () => {
    expect(HashChain.canonicalEvent(fields)).toBe(
      '{"data":{"_tag":"PaymentLinkCreated","amount":{"currency":"COP","value":1500},"note":"ñ"},' +
        '"eventId":"5b0f9f0e-6c2d-4f61-9a3c-1d2e3f4a5b6c","metadata":{"actor":"MER_1","requestId":"r-1"},' +
        '"recordedAt":"2024-01-31T12:00:00.000Z","schemaVersion":1,"streamId":"PaymentLink-LNK_1",' +
        '"streamVersion":1,"type":"PaymentLinkCreated"}'
    )
    expect(HashChain.hashEvent("", fields)).toBe(
      "7010acec0dedc8bbddb5845c140ff46881c6c3c37cd876dfe4a161fe231c295e"
    )
  })

  it.prop(
    "canonical JSON is what the value-by-value reference writes, integer-like and __proto__ keys included",
    [
      FastCheck.jsonValue(),
      FastCheck.dictionary(
        FastCheck.oneof(
          FastCheck.string(),
          FastCheck.constantFrom("0", "1", "9", "10", "01", "-1", "__proto__", "a")
        ),
        FastCheck.jsonValue()
      )
    ],
    ([value, record]) => {
      for (const candidate of [
        value,
        record,
        [record, value],
        { nested: record, list: [value, undefined] }
      ]) {
        expect(HashChain.canonicalJson(candidate)).toBe(HashChain.canonicalJsonReference(candidate))
      }
    }
  )

  it.prop(
    "canonical JSON does not depend on key order",
    [FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue())],
    ([record]) => {
      const reversed = Object.fromEntries(Object.entries(record).reverse())
      expect(HashChain.canonicalJson(reversed)).toBe(HashChain.canonicalJson(record))
    }
  )

  it.prop(
    "a normalised JSON value is stable through JSON text (as jsonb gives it back)",
    [FastCheck.jsonValue()],
    ([value]) => {
      const normalized = HashChain.normalizeJson(value)
      expect(HashChain.canonicalJson(JSON.parse(JSON.stringify(normalized)))).toBe(
        HashChain.canonicalJson(normalized)
      )
    }
  )

  it.prop(
    "the canonical text split around the stream version (as cobro_append joins it) is the canonical event",
    [
      FastCheck.record({
        streamId: FastCheck.string({ unit: "grapheme" }),
        streamVersion: FastCheck.integer({ min: 1, max: 2 ** 31 - 1 }),
        eventId: FastCheck.uuid(),
        type: FastCheck.string({ unit: "grapheme" }),
        schemaVersion: FastCheck.integer({ min: 0, max: 1000 }),
        data: FastCheck.jsonValue({ stringUnit: "grapheme" }),
        metadata: FastCheck.dictionary(FastCheck.string(), FastCheck.string({ unit: "grapheme" })),
        recordedAt: FastCheck.date({
          min: new Date(0),
          max: new Date("9999-12-31T23:59:59.999Z"),
          noInvalidDate: true
        })
      })
    ],
    ([event]) => {
      const [before, after] = HashChain.canonicalEventAround(event)
      expect(before + String(event.streamVersion) + after).toBe(HashChain.canonicalEvent(event))
    }
  )

  it("each link covers the previous hash", () => {
    const first = HashChain.hashEvent("", fields)
    const second = { ...fields, streamVersion: 2 }
    expect(HashChain.hashEvent(first, second)).not.toBe(HashChain.hashEvent("", second))
  })
})
