import { describe, expect, it } from "@effect/vitest"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import * as Domain from "@cobro/domain"

describe("@cobro/domain's index", () => {
  it("re-exports every module as a namespace", () => {
    const modules = readdirSync(join(import.meta.dirname, "..", "src"))
      .filter((f) => f.endsWith(".ts") && f !== "index.ts")
      .map((f) => f.slice(0, -3))
      .sort()
    expect(Object.keys(Domain).sort()).toEqual(modules)
  })
})
