/**
 * Given/when/then specifications of a decider (emmett's `DeciderSpecification`): given past
 * events, when a command, then the events decided, or the error, or nothing. An aggregate's decisions
 * are checked against its transition table too (`Aggregate.checked`): every specification is also a
 * test of the table.
 */
import { expect } from "@effect/vitest"
import * as Either from "effect/Either"
import { inspect } from "node:util"
import type { Aggregate } from "@cobro/domain/Aggregate"
import { checked } from "@cobro/domain/Aggregate"
import type { Decider } from "@cobro/domain/Decider"
import { fold } from "@cobro/domain/Decider"

type Tagged = { readonly _tag: string }

/** An error class of the decider's error union, as `thenFails` takes it. */
type ErrorClass<Err> = abstract new (...args: ReadonlyArray<any>) => Err & Tagged

/** What a command came to, to be compared with what it should come to. */
export interface Outcome<E, Err> {
  /** The command is allowed: exactly this event, or exactly these events. */
  readonly then: (expected: E | ReadonlyArray<E>) => void
  /** The command is refused with this error class (and these fields, when given). */
  thenFails<K extends ErrorClass<Err>>(error: K, fields?: Partial<InstanceType<K>>): void
  /** The older form: refused with an error of this tag (and these fields, when given). */
  thenFails(tag: string, fields?: Record<string, unknown>): void
  /** There is nothing to do: no events, no error. */
  readonly thenNothing: () => void
}

const isAggregate = <C, E, S, Err>(
  decider: Decider<C, E, S, Err>
): decider is Decider<C, E, S, Err> & Aggregate<C & Tagged, E & Tagged, S & Tagged, Err> =>
  "transitions" in decider

export const DeciderSpec = {
  for: <C, E, S, Err>(decider: Decider<C, E, S, Err>) => {
    const decide = isAggregate(decider) ? checked(decider).decide : decider.decide
    const given = (events: ReadonlyArray<E>) => ({
      when: (command: C): Outcome<E, Err> => {
        const result = decide(command as C & Tagged, fold(decider, events) as S & Tagged)
        const refusal = () => {
          expect(Either.isLeft(result), `expected a refusal, got ${inspect(result, { depth: 6 })}`).toBe(true)
          return Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))
        }
        return {
          then: (expected) => {
            expect(result).toEqual(Either.right(Array.isArray(expected) ? expected : [expected]))
          },
          thenFails: (error: ErrorClass<Err> | string, fields: object = {}) => {
            const refused = refusal()
            if (typeof error === "string") {
              expect(refused).toMatchObject({ _tag: error, ...fields })
            } else {
              expect(refused).toBeInstanceOf(error)
              expect(refused).toMatchObject(fields)
            }
          },
          thenNothing: () => {
            expect(result).toEqual(Either.right([]))
          }
        }
      }
    })
    return {
      given,
      /**
       * Given each history, `command` is refused with `error`, whose `status` names the status the
       * history is filed under (and with `fields`, when given).
       */
      refusedIn: <K extends ErrorClass<Err>>(
        command: C,
        error: K,
        histories: Readonly<Record<string, ReadonlyArray<E>>>,
        fields: Partial<InstanceType<K>> = {}
      ) => {
        for (const [status, events] of Object.entries(histories)) {
          given(events)
            .when(command)
            .thenFails(error, { ...fields, status })
        }
      }
    }
  }
}

/**
 * The events `command` decides on a new stream (none when it is refused): the history that opens a
 * stream, to give the next specifications.
 */
export const openedBy = <C, E, S, Err>(decider: Decider<C, E, S, Err>, command: C): ReadonlyArray<E> =>
  Either.getOrElse(decider.decide(command, decider.initialState), () => [])
