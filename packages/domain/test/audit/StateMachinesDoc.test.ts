import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { renderStateMachinesDoc, sections } from "@cobro/domain/StateMachinesDoc"
import * as Transitions from "@cobro/domain/Transitions"

const doc = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "..", "docs", "state-machines.md"),
  "utf8"
)

describe("docs/state-machines.md", () => {
  it("is the rendering of the transition tables (run `npm run docs:state-machines` after changing one)", () => {
    // The domain's sections come first; the simulated terminal's follows (terminal-sim checks it).
    expect(doc.startsWith(renderStateMachinesDoc())).toBe(true)
    expect(doc.slice(renderStateMachinesDoc().length)).toMatch(/^\n## SimTerminal\n/)
  })

  it("says of every edge whether it records events: each listed no-op is marked as one", () => {
    for (const { title, table } of sections) {
      for (const [from, command, to] of Transitions.edges(table)) {
        const row =
          to === Transitions.noop
            ? `| ${from} | ${command} | ${from} | nothing (no-op) |`
            : `| ${from} | ${command} | ${to} | events`
        expect(doc, `${title}: ${Transitions.edgeName([from, command, to])}`).toContain(row)
      }
    }
  })
})
