/**
 * The panel's day filters (issue 31, item 6): `created_from` and `created_to` take every day an
 * `<input type="date">` can send, years 0000 to 9999, as the instant Bogotá's day starts; the store
 * holds them all (`Instant.timestamptz`), so none is refused nor answers 500.
 */
import { describe, expect, it } from "@effect/vitest"
import { startOfDay } from "../src/PanelDates.js"

describe("the panel's day filters", () => {
  it("every day of the years 0000 to 9999 is the instant Bogotá's day starts; the day after 9999-12-31 too", () => {
    expect(startOfDay("2026-11-21")).toEqual(new Date("2026-11-21T05:00:00Z"))
    expect(startOfDay("0000-01-01")).toEqual(new Date("0000-01-01T05:00:00Z"))
    expect(startOfDay("0001-01-01")).toEqual(new Date("0001-01-01T05:00:00Z"))
    expect(startOfDay("0099-12-31", 1)).toEqual(new Date("0100-01-01T05:00:00Z"))
    expect(startOfDay("0000-02-29")).toEqual(new Date("0000-02-29T05:00:00Z"))
    expect(startOfDay("9999-12-31", 1)).toEqual(new Date("+010000-01-01T05:00:00Z"))
  })

  it("a day that is none is refused: the form shows it beside its field", () => {
    for (const bad of [
      "0001-02-29",
      "2026-02-30",
      "2026-13-01",
      "2026-00-10",
      "10000-01-01",
      "26-11-21",
      ""
    ]) {
      expect(startOfDay(bad), bad).toBeUndefined()
    }
  })
})
