import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as FastCheck from "effect/FastCheck"
import * as Bogota from "@cobro/domain/Bogota"

/** An instant given as Bogotá wall-clock time (UTC−05:00). */
const bogota = (iso: string) => DateTime.unsafeMake(`${iso}-05:00`)

describe("Bogota", () => {
  it("void before 21:00 Bogotá on the day of the transaction is allowed (20:59:59.999)", () => {
    expect(Bogota.isWithinVoidWindow(bogota("2026-11-21T09:00:00"), bogota("2026-11-21T20:59:59.999"))).toBe(
      true
    )
  })
  it("void at 21:00 Bogotá is refused", () => {
    expect(Bogota.isWithinVoidWindow(bogota("2026-11-21T09:00:00"), bogota("2026-11-21T21:00:00"))).toBe(
      false
    )
  })
  it("void after Bogotá midnight is refused, even minutes after the sale", () => {
    expect(Bogota.isWithinVoidWindow(bogota("2026-11-21T23:55:00"), bogota("2026-11-22T00:05:00"))).toBe(
      false
    )
  })
  it("a sale at 19:30 Bogotá (00:30 UTC the next day) is voidable until 21:00 Bogotá", () => {
    const sale = DateTime.unsafeMake("2026-11-22T00:30:00Z")
    expect(Bogota.isWithinVoidWindow(sale, DateTime.unsafeMake("2026-11-22T01:59:59.999Z"))).toBe(true)
    expect(Bogota.isWithinVoidWindow(sale, DateTime.unsafeMake("2026-11-22T02:00:00Z"))).toBe(false)
  })
  it("a sale approved at or after 21:00 Bogotá is never voidable", () => {
    expect(Bogota.isWithinVoidWindow(bogota("2026-11-21T21:30:00"), bogota("2026-11-21T21:31:00"))).toBe(
      false
    )
  })
  it("the window closes at 02:00 UTC the next UTC day (21:00 Bogotá)", () => {
    expect(DateTime.formatIso(Bogota.voidWindowClosesAt(bogota("2026-11-21T00:00:00")))).toBe(
      "2026-11-22T02:00:00.000Z"
    )
  })
  it("created_at is written with the Bogotá offset", () => {
    expect(Bogota.formatIso(DateTime.unsafeMake("2026-11-22T00:30:00.123Z"))).toBe(
      "2026-11-21T19:30:00.123-05:00"
    )
  })

  // Instants from 1990 to 2100, where Bogotá has had no daylight saving.
  const instant = FastCheck.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) })
  const wallClock = (ms: number) => {
    const d = new Date(ms - 5 * 3_600_000)
    return { day: `${d.getUTCFullYear()}-${d.getUTCMonth()}-${d.getUTCDate()}`, hour: d.getUTCHours() }
  }

  it.prop(
    "voidable iff the same Bogotá calendar day, not earlier, and before 21:00",
    [instant, FastCheck.integer({ min: -3_600_000, max: 2 * 86_400_000 })],
    ([sale, delta]) => {
      const now = sale + delta
      const s = wallClock(sale)
      const n = wallClock(now)
      const expected = delta >= 0 && s.day === n.day && n.hour < 21
      expect(Bogota.isWithinVoidWindow(DateTime.unsafeMake(sale), DateTime.unsafeMake(now))).toBe(expected)
    }
  )

  it.prop("formatIso reads back as the same instant", [instant], ([ms]) => {
    const formatted = Bogota.formatIso(DateTime.unsafeMake(ms))
    expect(formatted.endsWith("-05:00")).toBe(true)
    expect(new Date(formatted).getTime()).toBe(ms)
  })
})
