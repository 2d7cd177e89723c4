/**
 * The properties every aggregate's transition table must hold under random command sequences:
 * a command the table forbids fails; an allowed one leads only to a listed state; absorbing states
 * are never left; and folding the events again gives the state the handler reached.
 */
import { expect } from "@effect/vitest"
import * as Either from "effect/Either"
import type { Aggregate } from "@cobro/domain/Aggregate"
import { fold } from "@cobro/domain/Decider"
import * as Transitions from "@cobro/domain/Transitions"

/** Runs `commands` in order and checks the table at each step; returns the visited states. */
export const checkRun = <
  C extends { _tag: string },
  E extends { _tag: string },
  S extends { _tag: string },
  Err
>(
  aggregate: Aggregate<C, E, S, Err>,
  commands: ReadonlyArray<C>
): ReadonlyArray<S["_tag"]> => {
  let state = aggregate.initialState
  const history: Array<E> = []
  const visited: Array<S["_tag"]> = [state._tag]
  for (const command of commands) {
    const from = state._tag as S["_tag"]
    const allowed = Transitions.targets(aggregate.transitions, from, command._tag as C["_tag"])
    const result = aggregate.decide(command, state)
    if (allowed === undefined) {
      expect(Either.isLeft(result), `${from} × ${command._tag} is not in the table but was accepted`).toBe(
        true
      )
      continue
    }
    if (Either.isLeft(result)) continue // a guard refused it: allowed by the table, not by the data
    const next = fold(aggregate, result.right, state)
    if (result.right.length === 0) {
      expect(next).toEqual(state)
      expect(allowed, `${from} × ${command._tag} was a no-op but ${from} is not a listed target`).toContain(
        from
      )
    } else {
      expect(allowed, `${from} × ${command._tag} led to ${next._tag}`).toContain(next._tag)
    }
    if (Transitions.isAbsorbing(aggregate.transitions, from)) expect(next._tag).toBe(from)
    history.push(...result.right)
    state = next
    visited.push(state._tag)
  }
  // Folding the whole history from scratch gives the state reached step by step.
  expect(fold(aggregate, history)).toEqual(state)
  return visited
}
