/**
 * Transition tables: each aggregate states, as data, which commands each state accepts and which
 * states they may lead to. `decide` consults the table, `docs/state-machines.md` is generated from
 * it and the property tests walk it: one source, three readers.
 */
import * as Arr from "effect/Array"
import * as Record from "effect/Record"

/** For each state, the commands it accepts and the states each may lead to (itself for a no-op). */
export type Table<State extends string, Command extends string> = {
  readonly [S in State]: { readonly [C in Command]?: ReadonlyArray<State> }
}

/** Declares a table; the identity, kept for inference and for a place to hang the docs. */
export const make = <const State extends string, const Command extends string>(
  table: Table<State, Command>
): Table<State, Command> => table

/** The states `command` may lead to from `state`, or `undefined` when the table forbids it. */
export const targets = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): ReadonlyArray<State> | undefined => table[state][command]

/** Whether the table lets `command` act on `state`. */
export const allows = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): boolean => targets(table, state, command) !== undefined

/** A state no command leaves: every entry of it leads only back to itself. */
export const isAbsorbing = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State
): boolean =>
  Object.values<ReadonlyArray<State> | undefined>(table[state]).every(
    (to) => to === undefined || to.every((s) => s === state)
  )

/** Every state of the table. */
export const states = <State extends string, Command extends string>(
  table: Table<State, Command>
): ReadonlyArray<State> => Record.keys(table) as ReadonlyArray<State>

/** Every edge of the table, as `[from, command, to]`, in declaration order. */
export const edges = <State extends string, Command extends string>(
  table: Table<State, Command>
): ReadonlyArray<readonly [State, Command, State]> =>
  Arr.flatMap(states(table), (from) =>
    Arr.flatMap(Object.entries(table[from]) as Array<[Command, ReadonlyArray<State>]>, ([command, tos]) =>
      Arr.map(tos, (to) => [from, command, to] as const)
    )
  )

/**
 * The table as a Mermaid state diagram: `[*]` stands for `Initial`; no-op self-loops are drawn,
 * so that what a state tolerates is as visible as what it leads to.
 */
export const toMermaid = <State extends string, Command extends string>(
  table: Table<State, Command>
): string => {
  const node = (s: State) => (s === "Initial" ? "[*]" : s)
  const lines = edges(table).map(([from, command, to]) => `    ${node(from)} --> ${node(to)}: ${command}`)
  const absorbing = states(table)
    .filter((s) => s !== "Initial" && isAbsorbing(table, s))
    .map((s) => `    ${s} --> [*]`)
  return ["```mermaid", "stateDiagram-v2", ...lines, ...absorbing, "```"].join("\n")
}
