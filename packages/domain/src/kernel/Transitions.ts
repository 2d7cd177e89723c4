/**
 * Transition tables: each aggregate states, as data, which commands each state accepts and what each
 * does there: lead to a state, recording events, or nothing at all (a no-op). `decide` is checked
 * against the table (`Aggregate`), `docs/state-machines.md` is generated from it and the property
 * tests walk every edge of it: one source, three readers.
 *
 * ```ts
 * Transitions.make<State["_tag"], Command["_tag"]>({
 *   Initial: { CreateLink: "ACTIVE" },
 *   PROCESSING: { CompletePayment: "PAID", FailPayment: ["ACTIVE", "REJECTED"] },
 *   // Records an event and stays APPROVED (an emitting self-loop) / records nothing (a no-op).
 *   APPROVED: { RejectVoid: "APPROVED", ApproveSale: "noop" },
 *   // Records an event when something changes, nothing when the request repeats what is there.
 *   ENABLED: { SetWebhook: ["ENABLED", "noop"] }
 * })
 * ```
 *
 * @since 0.0.0
 */
import * as Arr from "effect/Array"
import * as Record from "effect/Record"

/**
 * The outcome of a command that records nothing: accepted, no event, the state unchanged.
 *
 * @category models
 */
export const noop = "noop"

/** @category models */
export type Noop = typeof noop

/**
 * What an accepted command does in a state: the state its events (at least one) lead to, which may be
 * the state itself (an emitting self-loop), or {@link noop}: no event at all.
 *
 * @category models
 */
export type Outcome<State extends string> = State | Noop

/**
 * A state's entry for a command: one outcome, or several when the command's data decides between
 * them (`["ACTIVE", "REJECTED"]`, `["ENABLED", "noop"]`).
 *
 * @category models
 */
export type Entry<State extends string> = Outcome<State> | readonly [Outcome<State>, ...Array<Outcome<State>>]

/**
 * For each state, the commands it accepts and what each does there. A command absent from a state's
 * row is refused with a typed error.
 *
 * @category models
 */
export type Table<State extends string, Command extends string> = {
  readonly [S in State]: { readonly [C in Command]?: Entry<State> }
}

/**
 * One edge of a table: `command` accepted in `from` with `to` as its outcome.
 *
 * @category models
 */
export type Edge<State extends string, Command extends string> = readonly [
  from: State,
  command: Command,
  to: Outcome<State>
]

/**
 * Declares a table; the identity, kept for inference and for a place to hang the docs.
 *
 * @category constructors
 */
export const make = <const State extends string, const Command extends string>(
  table: Table<State, Command>
): Table<State, Command> => table

const normalise = <State extends string>(entry: Entry<State>): ReadonlyArray<Outcome<State>> =>
  typeof entry === "string" ? [entry] : entry

/**
 * The entry of `command` in `state`'s row as declared, or `undefined` when the table refuses it.
 *
 * @category getters
 */
export const entry = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): Entry<State> | undefined => table[state][command]

/**
 * The outcomes the table lists for `command` in `state`, or `undefined` when it refuses the command.
 *
 * @category getters
 */
export const outcomes = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): ReadonlyArray<Outcome<State>> | undefined => {
  const declared = table[state][command]
  return declared === undefined ? undefined : normalise(declared)
}

/**
 * The states `command` may leave `state` in (the state itself for a no-op), or `undefined` when the
 * table refuses it.
 *
 * @category getters
 */
export const targets = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): ReadonlyArray<State> | undefined =>
  outcomes(table, state, command)?.map((to) => (to === noop ? state : to))

/**
 * Whether the table lets `command` act on `state`.
 *
 * @category predicates
 */
export const allows = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State,
  command: Command
): boolean => table[state][command] !== undefined

/**
 * Whether an entry admits a decision that emitted events (`emitted`) or none. The whole check a
 * decision's size allows, without folding its events: cheap enough for every `decide`.
 *
 * @category predicates
 */
export const admits = <State extends string>(declared: Entry<State>, emitted: boolean): boolean =>
  typeof declared === "string"
    ? (declared === noop) !== emitted
    : declared.some((to) => (to === noop) !== emitted)

/**
 * The outcome a decision had: {@link noop} when it emitted nothing, else the state its events led to.
 *
 * @category getters
 */
export const outcomeOf = <State extends string>(eventCount: number, to: State): Outcome<State> =>
  eventCount === 0 ? noop : to

/**
 * Why an accepted decision disagrees with the table, or `undefined` when the table lists its outcome:
 * a listed no-op emitted events, an emitting entry emitted none, or the events led to a state the
 * entry does not list.
 *
 * @category getters
 */
export const disagreement = <State extends string, Command extends string>(
  table: Table<State, Command>,
  from: State,
  command: Command,
  eventCount: number,
  to: State
): string | undefined => {
  const listed = outcomes(table, from, command)
  if (listed === undefined) return `${from} ▸ ${command} is not in the table but was accepted`
  const outcome = outcomeOf(eventCount, to)
  if (listed.includes(outcome)) return undefined
  const expected = listed.join(" | ")
  return eventCount === 0
    ? `${from} ▸ ${command} emitted nothing, but the table lists ${expected}`
    : `${from} ▸ ${command} emitted ${eventCount} event(s) leading to ${to}, but the table lists ${expected}`
}

/**
 * A state no command leaves: each of its entries is a no-op or leads back to it.
 *
 * @category predicates
 */
export const isAbsorbing = <State extends string, Command extends string>(
  table: Table<State, Command>,
  state: State
): boolean =>
  Object.values<Entry<State> | undefined>(table[state]).every(
    (declared) => declared === undefined || normalise(declared).every((to) => to === noop || to === state)
  )

/**
 * Every state of the table.
 *
 * @category getters
 */
export const states = <State extends string, Command extends string>(
  table: Table<State, Command>
): ReadonlyArray<State> => Record.keys(table) as ReadonlyArray<State>

/**
 * Every edge of the table, as `[from, command, to]` (`to` a state or {@link noop}), in declaration order.
 *
 * @category getters
 */
export const edges = <State extends string, Command extends string>(
  table: Table<State, Command>
): ReadonlyArray<Edge<State, Command>> =>
  Arr.flatMap(states(table), (from) =>
    Arr.flatMap(Object.entries(table[from]) as Array<[Command, Entry<State>]>, ([command, declared]) =>
      Arr.map(normalise(declared), (to): Edge<State, Command> => [from, command, to])
    )
  )

/**
 * An edge as one line of text, `PROCESSING ▸ FailPayment → ACTIVE`: for coverage reports and messages.
 *
 * @category getters
 */
export const edgeName = <State extends string, Command extends string>([from, command, to]: Edge<
  State,
  Command
>): string => `${from} ▸ ${command} → ${to}`

/**
 * The table as a Mermaid state diagram: `[*]` stands for `Initial`. Every edge that records events is
 * an arrow, an emitting self-loop included; the no-ops of a state, which record nothing, are listed in
 * a note beside it, so that what a state tolerates is as visible as what it leads to.
 *
 * @category rendering
 */
export const toMermaid = <State extends string, Command extends string>(
  table: Table<State, Command>
): string => {
  const node = (s: State) => (s === "Initial" ? "[*]" : s)
  const all = edges(table)
  const arrows = all
    .filter(([, , to]) => to !== noop)
    .map(([from, command, to]) => `    ${node(from)} --> ${node(to as State)}: ${command}`)
  const notes = states(table).flatMap((s) => {
    const noops = all.filter(([from, , to]) => from === s && to === noop).map(([, command]) => command)
    return noops.length === 0 ? [] : [`    note right of ${node(s)} : no-op on ${noops.join(", ")}`]
  })
  const absorbing = states(table)
    .filter((s) => s !== "Initial" && isAbsorbing(table, s))
    .map((s) => `    ${s} --> [*]`)
  return ["```mermaid", "stateDiagram-v2", ...arrows, ...absorbing, ...notes, "```"].join("\n")
}
