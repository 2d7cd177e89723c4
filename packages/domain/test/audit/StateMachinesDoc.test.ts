import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { renderStateMachinesDoc } from "@cobro/domain/StateMachinesDoc"

describe("docs/state-machines.md", () => {
  it("is the rendering of the transition tables (run `npm run docs:state-machines` after changing one)", () => {
    const doc = readFileSync(
      join(import.meta.dirname, "..", "..", "..", "..", "docs", "state-machines.md"),
      "utf8"
    )
    expect(doc).toBe(renderStateMachinesDoc())
  })
})
