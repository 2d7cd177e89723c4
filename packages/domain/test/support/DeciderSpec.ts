/**
 * Given/when/then specifications of a decider (emmett's `DeciderSpecification`): given past
 * events, when a command, then the events decided, or the error, or nothing.
 */
import { expect } from "@effect/vitest"
import * as Either from "effect/Either"
import { inspect } from "node:util"
import type { Decider } from "@cobro/domain/Decider"
import { fold } from "@cobro/domain/Decider"

export const DeciderSpec = {
  for: <C, E, S, Err>(decider: Decider<C, E, S, Err>) => ({
    given: (events: ReadonlyArray<E>) => ({
      when: (command: C) => {
        const result = decider.decide(command, fold(decider, events))
        return {
          /** The command is allowed: exactly these events. */
          then: (expected: ReadonlyArray<E>) => {
            expect(result).toEqual(Either.right(expected))
          },
          /** The command is forbidden: an error with this tag (and these fields, when given). */
          thenFails: (tag: string, fields: Record<string, unknown> = {}) => {
            expect(Either.isLeft(result), `expected ${tag}, got ${inspect(result, { depth: 6 })}`).toBe(true)
            const error = Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))
            expect(error).toMatchObject({ _tag: tag, ...fields })
          },
          /** There is nothing to do: no events, no error. */
          thenNothing: () => {
            expect(result).toEqual(Either.right([]))
          }
        }
      }
    })
  })
}
