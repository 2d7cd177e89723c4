import { describe, expect, it } from "@effect/vitest"
import * as Transitions from "@cobro/domain/Transitions"

const table = Transitions.make({
  A: { Go: ["B"], Stay: ["A"] },
  B: { Stay: ["B"] }
})

describe("Transitions", () => {
  it("lists edges in declaration order", () => {
    expect(Transitions.edges(table)).toEqual([
      ["A", "Go", "B"],
      ["A", "Stay", "A"],
      ["B", "Stay", "B"]
    ])
  })
  it("a state whose every edge loops back is absorbing", () => {
    expect(Transitions.isAbsorbing(table, "B")).toBe(true)
    expect(Transitions.isAbsorbing(table, "A")).toBe(false)
  })
  it("a command missing from a state's row is not allowed", () => {
    expect(Transitions.allows(table, "B", "Go")).toBe(false)
    expect(Transitions.allows(table, "A", "Go")).toBe(true)
  })
})

describe("Transitions.toMermaid", () => {
  it("draws every edge and marks absorbing states as final", () => {
    const t = Transitions.make<"Initial" | "A" | "B", "Create" | "Go">({
      Initial: { Create: ["A"] },
      A: { Go: ["B"] },
      B: { Go: ["B"] }
    })
    expect(Transitions.toMermaid(t)).toBe(
      [
        "```mermaid",
        "stateDiagram-v2",
        "    [*] --> A: Create",
        "    A --> B: Go",
        "    B --> B: Go",
        "    B --> [*]",
        "```"
      ].join("\n")
    )
  })
})
