/**
 * The command line's pure parts: instants as `--at` takes them, the progress display, and the
 * domain's catalog that resolves ids to streams and replays a history with the aggregate's `evolve`.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Histories from "@cobro/domain/Histories"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { TerminalSerial } from "@cobro/domain/Ids"
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Audit from "../src/cli/Audit.js"
import * as Instant from "../src/cli/Instant.js"
import * as Progress from "../src/cli/Progress.js"
import * as NodeKeyVault from "../src/NodeKeyVault.js"

const instants = FastCheck.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) })

describe("instants (--at, --since, --until)", () => {
  it.prop(
    "an instant written in UTC or with any offset parses to the same millisecond",
    [instants, FastCheck.integer({ min: -14 * 60, max: 14 * 60 })],
    ([millis, offset]) => {
      expect(Either.getOrThrow(Instant.parse(new Date(millis).toISOString()))).toEqual(new Date(millis))
      const local = new Date(millis + offset * 60_000).toISOString().slice(0, 23)
      const sign = offset < 0 ? "-" : "+"
      const abs = Math.abs(offset)
      const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
      expect(Either.getOrThrow(Instant.parse(`${local}${zone}`))).toEqual(new Date(millis))
    }
  )

  it("a time without a zone, an impossible date or anything else is refused with the reason", () => {
    expect(Instant.parse("2026-01-31T14:30:00")).toMatchObject({
      left: expect.stringContaining("no time zone")
    })
    expect(Instant.parse("2026-02-29T00:00:00Z")).toMatchObject({ left: expect.stringContaining("day 29") })
    expect(Either.isRight(Instant.parse("2024-02-29T00:00:00Z"))).toBe(true)
    expect(Instant.parse("2026-01-31T24:00:00Z")).toMatchObject({
      left: expect.stringContaining("time out of range")
    })
    expect(Instant.parse("now")).toMatchObject({ left: expect.stringContaining("not an ISO-8601 instant") })
    // Nanoseconds are truncated to the millisecond the log records.
    expect(Either.getOrThrow(Instant.parse("2026-01-31T14:30:00.123999999Z")).toISOString()).toBe(
      "2026-01-31T14:30:00.123Z"
    )
  })
})

describe("progress display", () => {
  it("the bar shows events done, events per second and the time left", () => {
    const line = Progress.bar("verify", { done: 250_000, total: 1_000_000, elapsedMillis: 5_000 }, 20)
    expect(line).toBe(
      "verify [#####---------------]  25% 250,000/1,000,000 events  50,000 events/s  15 s left"
    )
    expect(Progress.plainLine("rebuild", { done: 500, total: 1000, elapsedMillis: 1000 })).toBe(
      "rebuild: 500/1000 events (50%), 500 events/s, about 1 s left"
    )
    expect(Progress.duration(3725)).toBe("1 h 02 min")
    expect(Progress.duration(65)).toBe("1 min 05 s")
  })
})

const layer = Layer.mergeAll(
  InMemoryEventStore.layer,
  IdGenerator.layerSequential,
  NodeKeyVault.layer(Redacted.make(randomBytes(32)))
)

describe("the catalog of histories", () => {
  it("resource ids and stream ids resolve to their aggregate's stream; anything else to none", () => {
    const resolve = (id: string) => Option.map(Histories.resolve(Audit.catalog, id), (r) => r.streamId)
    expect(resolve("LNK_abc")).toEqual(Option.some("PaymentLink-LNK_abc"))
    expect(resolve("INT_1")).toEqual(Option.some("TerminalCheckout-INT_1"))
    expect(resolve("TRX_1")).toEqual(Option.some("Payment-TRX_1"))
    expect(resolve("RFD_1")).toEqual(Option.some("Refund-RFD_1"))
    expect(resolve("MER_1")).toEqual(Option.some("Merchant-MER_1"))
    expect(resolve("MER_1:test:order-1")).toEqual(Option.some("PaymentIntent-MER_1:test:order-1"))
    expect(resolve("MER_1/SP-1")).toEqual(Option.some("SimTerminal-MER_1/SP-1"))
    expect(resolve("MER_1:live/SP-1")).toEqual(Option.some("SimTerminal-MER_1:live/SP-1"))
    expect(resolve("MER_1:live:order-1")).toEqual(Option.some("PaymentIntent-MER_1:live:order-1"))
    expect(resolve("0F8FAD5B-D9CB-469F-A165-70867728950E")).toEqual(
      Option.some("WebhookDelivery-0f8fad5b-d9cb-469f-a165-70867728950e")
    )
    expect(resolve("PaymentLink-LNK_9")).toEqual(Option.some("PaymentLink-LNK_9"))
    expect(resolve("hello")).toEqual(Option.none())
    expect(resolve("PaymentLink-")).toEqual(Option.none())
  })

  it.effect("a history replays the stream with the aggregate's evolve, the state after each event", () =>
    Effect.gen(function* () {
      const created = yield* MerchantAdmin.createMerchant("Tienda", { actor: "test" })
      yield* MerchantAdmin.bindTerminal(created.merchantId, {
        model: "SMART",
        serial: TerminalSerial.make("S-1"),
        name: "Caja"
      })
      const store = yield* EventStore.EventStore
      const resolved = Option.getOrThrow(Histories.resolve(Audit.catalog, created.merchantId))
      const steps = Either.getOrThrow(
        Histories.replay(resolved.entry.aggregate, yield* store.readStream(resolved.streamId))
      )
      expect(steps.map((s) => s.event._tag)).toEqual([
        "MerchantCreated",
        "IntegrationActivated",
        "IntegrationActivated",
        "TerminalBound"
      ])
      const last = Histories.toJson(steps[3]!.state) as any
      expect(last).toMatchObject({
        _tag: "ENABLED",
        name: "Tienda",
        terminals: [{ serial: "S-1", apiEnabled: false }]
      })
      expect(typeof last.createdAt).toBe("string")
      expect(Histories.toJson(steps[3]!.state)).toEqual(JSON.parse(JSON.stringify(last)))
      // An event this build cannot decode is named, not folded.
      const bad = { ...(yield* store.readStream(resolved.streamId))[0]!, data: { _tag: "MerchantCreated" } }
      expect(Histories.replay(resolved.entry.aggregate, [bad])).toMatchObject({
        left: { _tag: "UndecodableEvent", streamVersion: 1, type: "MerchantCreated" }
      })
    }).pipe(Effect.provide(layer))
  )

  it("toJson turns Options, DateTimes and bigints into plain JSON", () => {
    expect(
      Histories.toJson({
        a: Option.some(DateTime.unsafeMake("2026-01-01T00:00:00Z")),
        b: Option.none(),
        c: 10n,
        d: [Option.some(1)]
      })
    ).toEqual({ a: "2026-01-01T00:00:00.000Z", b: null, c: "10", d: [1] })
  })
})
