/**
 * The decider: the shape every Cobro aggregate takes (emmett's `initialState` / `decide` / `evolve`).
 * `decide` is pure; the handler reads the clock and mints ids before calling it.
 */
import type * as Either from "effect/Either"

/** A pure event-sourced aggregate. */
export interface Decider<in Command, in out Event, in out State, out Error> {
  readonly initialState: State
  readonly decide: (command: Command, state: State) => Either.Either<ReadonlyArray<Event>, Error>
  readonly evolve: (state: State, event: Event) => State
}

/** The state after a history of events: what an auditor rebuilds from the log. */
export const fold = <Command, Event, State, Error>(
  decider: Decider<Command, Event, State, Error>,
  events: Iterable<Event>,
  from: State = decider.initialState
): State => {
  let state = from
  for (const event of events) state = decider.evolve(state, event)
  return state
}
