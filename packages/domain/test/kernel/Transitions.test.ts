import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Aggregate, none, ok, TransitionViolation } from "@cobro/domain/Aggregate"
import * as Transitions from "@cobro/domain/Transitions"

const table = Transitions.make({
  A: { Go: "B", Stay: "noop", Touch: ["A", "noop"] },
  B: { Stay: "noop" }
})

describe("Transitions", () => {
  it("lists edges in declaration order", () => {
    expect(Transitions.edges(table)).toEqual([
      ["A", "Go", "B"],
      ["A", "Stay", "noop"],
      ["A", "Touch", "A"],
      ["A", "Touch", "noop"],
      ["B", "Stay", "noop"]
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
  it("an entry says whether the command emits: a no-op emits nothing, a move or an emitting self-loop emits", () => {
    expect(Transitions.outcomes(table, "A", "Touch")).toEqual(["A", "noop"])
    expect(Transitions.targets(table, "A", "Stay")).toEqual(["A"])
    expect(Transitions.admits("noop", false)).toBe(true)
    expect(Transitions.admits("noop", true)).toBe(false)
    expect(Transitions.admits("B", true)).toBe(true)
    expect(Transitions.admits("B", false)).toBe(false)
    expect(Transitions.admits(["A", "noop"], true)).toBe(true)
    expect(Transitions.admits(["A", "noop"], false)).toBe(true)
  })
  it("a decision disagrees with the table when a no-op emits, a move emits nothing or leads elsewhere", () => {
    expect(Transitions.disagreement(table, "A", "Stay", 0, "A")).toBeUndefined()
    expect(Transitions.disagreement(table, "A", "Touch", 1, "A")).toBeUndefined()
    expect(Transitions.disagreement(table, "A", "Stay", 1, "A")).toMatch(/emitted 1 event/)
    expect(Transitions.disagreement(table, "A", "Go", 0, "A")).toMatch(/emitted nothing/)
    expect(Transitions.disagreement(table, "A", "Go", 1, "A")).toMatch(/leading to A/)
    expect(Transitions.disagreement(table, "B", "Go", 1, "A")).toMatch(/not in the table/)
  })
})

describe("Transitions.toMermaid", () => {
  it("draws every edge and marks absorbing states as final", () => {
    const t = Transitions.make<"Initial" | "A" | "B", "Create" | "Go">({
      Initial: { Create: "A" },
      A: { Go: "B" },
      B: { Go: "B" }
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
  it("draws an emitting self-loop as an arrow and lists a state's no-ops in a note beside it", () => {
    expect(Transitions.toMermaid(table)).toBe(
      [
        "```mermaid",
        "stateDiagram-v2",
        "    A --> B: Go",
        "    A --> A: Touch",
        "    B --> [*]",
        "    note right of A : no-op on Stay, Touch",
        "    note right of B : no-op on Stay",
        "```"
      ].join("\n")
    )
  })
})

// A toy aggregate whose decide lies about its table on purpose, to show the kernel's check.
class Tick extends Schema.TaggedClass<Tick>()("Tick", {}) {}
class Ticked extends Schema.TaggedClass<Ticked>()("Ticked", {}) {}
class Refused extends Schema.TaggedError<Refused>()("Refused", {}) {}
type State = { readonly _tag: "ON" }
const toy = (decide: () => Either.Either<ReadonlyArray<Ticked>, Refused>, entry: Transitions.Entry<"ON">) =>
  Aggregate.withTable<Tick, Ticked, State, Refused>({
    name: "Toy",
    Event: Ticked,
    transitions: { ON: { Tick: entry } },
    initialState: { _tag: "ON" },
    refuse: () => new Refused(),
    decide,
    evolve: (state) => state
  })

describe("the table check of Aggregate.withTable and Aggregate.checked", () => {
  it("a decision that agrees with its entry passes", () => {
    expect(toy(() => none, "noop").decide(new Tick(), { _tag: "ON" })).toEqual(Either.right([]))
    expect(toy(() => ok(new Ticked()), "ON").decide(new Tick(), { _tag: "ON" })).toEqual(
      Either.right([new Ticked()])
    )
  })
  it("a listed no-op that emits, or an emitting entry that emits nothing, is a TransitionViolation defect", () => {
    expect(() => toy(() => ok(new Ticked()), "noop").decide(new Tick(), { _tag: "ON" })).toThrow(
      TransitionViolation
    )
    expect(() => toy(() => none, "ON").decide(new Tick(), { _tag: "ON" })).toThrow(TransitionViolation)
  })
  it("checked also folds the events: a move to a state the entry does not list is a violation", () => {
    const lying = Aggregate.checked({
      ...toy(() => ok(new Ticked()), "ON"),
      transitions: { ON: { Tick: "ON" } },
      evolve: () => ({ _tag: "OFF" }) as unknown as State
    })
    expect(() => lying.decide(new Tick(), { _tag: "ON" })).toThrow(/leading to OFF/)
  })
})
