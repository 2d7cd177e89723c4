/** The server's cache of known states: bounded, least recently used dropped first, never a version back. */
import { describe, expect, it } from "@effect/vitest"
import * as StateCache from "../src/StateCache.js"

describe("the server's cache of known states", () => {
  it("keeps at most its capacity, dropping the state read least recently", () => {
    const cache = StateCache.make(2)
    cache.set("Merchant-MER_1", { state: "one", version: 1 })
    cache.set("Merchant-MER_2", { state: "two", version: 1 })
    expect(cache.get("Merchant-MER_1")?.state).toBe("one") // MER_1 is now the most recent
    cache.set("Merchant-MER_3", { state: "three", version: 1 })
    expect(cache.get("Merchant-MER_2")).toBeUndefined()
    expect(cache.get("Merchant-MER_1")?.state).toBe("one")
    expect(cache.get("Merchant-MER_3")?.state).toBe("three")
  })

  it("never goes back to an earlier version of a stream (two requests folding it at once)", () => {
    const cache = StateCache.make(10)
    cache.set("Merchant-MER_1", { state: "v5", version: 5 })
    cache.set("Merchant-MER_1", { state: "v3", version: 3 })
    cache.set("Merchant-MER_1", { state: "v5 again", version: 5 })
    expect(cache.get("Merchant-MER_1")).toEqual({ state: "v5", version: 5 })
    cache.set("Merchant-MER_1", { state: "v6", version: 6 })
    expect(cache.get("Merchant-MER_1")).toEqual({ state: "v6", version: 6 })
  })

  it("forgets a stream on demand (its append conflicted): nothing is kept of it, and any version may be kept again", () => {
    const cache = StateCache.make(10)
    cache.set("Merchant-MER_1", { state: "v5", version: 5 })
    cache.set("Merchant-MER_2", { state: "other", version: 1 })
    cache.forget("Merchant-MER_1")
    expect(cache.get("Merchant-MER_1")).toBeUndefined()
    expect(cache.get("Merchant-MER_2")).toEqual({ state: "other", version: 1 })
    cache.set("Merchant-MER_1", { state: "v4", version: 4 })
    expect(cache.get("Merchant-MER_1")).toEqual({ state: "v4", version: 4 })
  })
})
