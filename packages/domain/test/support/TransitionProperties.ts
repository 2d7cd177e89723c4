/**
 * The properties every aggregate's transition table must hold under random command sequences, in
 * both directions: a command the table leaves out of a state is refused there; an accepted one does
 * what its entry lists (a listed no-op emits nothing, an emitting entry emits and leads to a listed
 * state); absorbing states are never left; folding the events again gives the state reached step by
 * step. The random runs must exercise EVERY EDGE of the table, not only every state: the coverage is
 * measured over a fixed-seed sample of runs, and an aggregate adds targeted generators for the edges
 * random runs reach too seldom.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import type { Aggregate } from "@cobro/domain/Aggregate"
import * as CommandHandler from "@cobro/domain/CommandHandler"
import { fold } from "@cobro/domain/Decider"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as InMemoryEventStore from "@cobro/domain/InMemoryEventStore"
import * as Transitions from "@cobro/domain/Transitions"

type Tagged = { readonly _tag: string }

/**
 * Random runs: a start (a history of commands to begin with: a creation, or a richer set-up), then
 * up to `maxLength` random commands.
 */
export const runsFrom = <C>(
  start: FastCheck.Arbitrary<ReadonlyArray<C>>,
  command: FastCheck.Arbitrary<C>,
  maxLength: number
): FastCheck.Arbitrary<ReadonlyArray<C>> =>
  FastCheck.tuple(start, FastCheck.array(command, { maxLength })).map(([from, rest]) => [...from, ...rest])

/** What a run saw: the states, the edges exercised (by name) and one state and command of each tag. */
export interface Seen<C extends Tagged, S extends Tagged> {
  readonly states: Set<string>
  readonly edges: Map<string, number>
  readonly stateOf: Map<string, S>
  readonly commandOf: Map<string, C>
}

export const emptySeen = <C extends Tagged, S extends Tagged>(): Seen<C, S> => ({
  states: new Set(),
  edges: new Map(),
  stateOf: new Map(),
  commandOf: new Map()
})

/**
 * Runs `commands` in order and checks the table at each step; records what it saw in `seen`.
 * Returns the states visited. `deep` (the default) also compares states: a no-op leaves the state
 * as it was, and the whole history folded again gives the state reached step by step.
 */
export const checkRun = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>,
  commands: ReadonlyArray<C>,
  seen: Seen<C, S> = emptySeen(),
  deep = true
): ReadonlyArray<S["_tag"]> => {
  const table = aggregate.transitions
  let state = aggregate.initialState
  const history: Array<E> = []
  const visited: Array<S["_tag"]> = [state._tag]
  const see = (s: S) => {
    seen.states.add(s._tag)
    if (!seen.stateOf.has(s._tag)) seen.stateOf.set(s._tag, s)
  }
  see(state)
  for (const command of commands) {
    if (!seen.commandOf.has(command._tag)) seen.commandOf.set(command._tag, command)
    const from = state._tag as S["_tag"]
    const tag = command._tag as C["_tag"]
    const result = aggregate.decide(command, state)
    if (!Transitions.allows(table, from, tag)) {
      if (Either.isRight(result)) expect.fail(`${from} ▸ ${tag} is not in the table but was accepted`)
      continue
    }
    if (Either.isLeft(result)) continue // a guard refused it: allowed by the table, not by the data
    const events = result.right
    const next = fold(aggregate, events, state)
    const disagreement = Transitions.disagreement(table, from, tag, events.length, next._tag)
    if (disagreement !== undefined) expect.fail(disagreement)
    if (deep && events.length === 0) expect(next).toEqual(state)
    if (next._tag !== from && Transitions.isAbsorbing(table, from))
      expect.fail(`${from} is absorbing, left for ${next._tag}`)
    const edge = Transitions.edgeName([from, tag, Transitions.outcomeOf(events.length, next._tag)])
    seen.edges.set(edge, (seen.edges.get(edge) ?? 0) + 1)
    history.push(...events)
    state = next
    visited.push(state._tag)
    see(state)
  }
  // Folding the whole history from scratch gives the state reached step by step.
  if (deep) expect(fold(aggregate, history)).toEqual(state)
  return visited
}

/** The edges of the table no run exercised. */
export const missingEdges = (table: Transitions.Table<string, string>, seen: Seen<Tagged, Tagged>) =>
  Transitions.edges(table)
    .map(Transitions.edgeName)
    .filter((edge) => !seen.edges.has(edge))

export interface Options<C extends Tagged, E extends Tagged, S extends Tagged, Err> {
  readonly aggregate: Aggregate<C, E, S, Err>
  /** Random runs of commands, from the initial state. */
  readonly run: FastCheck.Arbitrary<ReadonlyArray<C>>
  /** The stream the handler's property writes. */
  readonly id: string
  /**
   * Runs aimed at edges the random runs reach too seldom, by the edge they aim at; each is sampled
   * like the random runs, and must exercise its edge.
   */
  readonly targeted?: { readonly [edge: string]: FastCheck.Arbitrary<ReadonlyArray<C>> }
  /** How many random runs the coverage is measured over (fixed seed); 1000 unless given. */
  readonly numRuns?: number
  /** The absorbing states, the title of the test that pins them, and what else that test checks. */
  readonly absorbing: {
    readonly title: string
    readonly states: ReadonlyArray<S["_tag"]>
    readonly also?: () => void
  }
}

/** The coverage of `options`' random runs (fixed seed), then of its targeted runs. */
export const measure = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  options: Options<C, E, S, Err>
) => {
  const random = emptySeen<C, S>()
  for (const commands of FastCheck.sample(options.run, { numRuns: options.numRuns ?? 1000, seed: 42 })) {
    checkRun(options.aggregate, commands, random, false)
  }
  const randomEdges = new Set(random.edges.keys())
  const all = random
  const targetedMissed: Array<string> = []
  for (const [edge, run] of Object.entries(options.targeted ?? {})) {
    const own = emptySeen<C, S>()
    for (const commands of FastCheck.sample(run, { numRuns: 20, seed: 42 })) {
      checkRun(options.aggregate, commands, own, false)
      checkRun(options.aggregate, commands, all, false)
    }
    if (!own.edges.has(edge)) targetedMissed.push(edge)
  }
  const total = Transitions.edges(options.aggregate.transitions).length
  return { all, randomEdges, targetedMissed, total }
}

/**
 * Declares, in the current `describe`, the transition-table properties of an aggregate: the random
 * runs against the table, their state and edge coverage, the no-ops, the refusals, the handler's
 * fold and the absorbing states.
 */
export const transitionProperties = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  options: Options<C, E, S, Err>
): void => {
  const { aggregate, run } = options
  const table = aggregate.transitions
  let measured: ReturnType<typeof measure<C, E, S, Err>> | undefined
  const coverage = () => (measured ??= measure(options))

  it.prop("random commands never leave the transition table nor an absorbing state", [run], ([commands]) => {
    checkRun(aggregate, commands)
  })

  it("random runs reach every state of the table", () => {
    expect([...coverage().all.states].sort()).toEqual([...Transitions.states(table)].sort())
  })

  it("random runs exercise every edge of the table, the targeted runs those random runs miss", () => {
    const { all, randomEdges, targetedMissed, total } = coverage()
    if (process.env["TRANSITIONS_COVERAGE"] !== undefined) {
      console.log(
        `${aggregate.name}: ${total} edges, ${randomEdges.size} by random runs, ${all.edges.size} in all`
      )
    }
    expect(targetedMissed, "targeted runs that miss the edge they aim at").toEqual([])
    expect(missingEdges(table, all), "edges no run exercised").toEqual([])
  })

  it("each listed no-op emits nothing: every no-op edge is exercised and records no event", () => {
    const noops = Transitions.edges(table).filter(([, , to]) => to === Transitions.noop)
    // checkRun fails any step whose events disagree with its entry; here, every no-op was reached.
    expect(noops.map(Transitions.edgeName).filter((edge) => !coverage().all.edges.has(edge))).toEqual([])
  })

  it("every command the table leaves out of a state is refused there", () => {
    const { stateOf, commandOf } = coverage().all
    const accepted: Array<string> = []
    for (const [from, state] of stateOf) {
      for (const [tag, command] of commandOf) {
        if (Transitions.allows(table, from as S["_tag"], tag as C["_tag"])) continue
        if (Either.isRight(aggregate.decide(command, state))) accepted.push(`${from} ▸ ${tag}`)
      }
    }
    expect(commandOf.size, "a command of every kind was tried").toBe(
      new Set(Transitions.states(table).flatMap((s) => Object.keys(table[s]))).size
    )
    expect(accepted).toEqual([])
  })

  it.effect.prop("the handler's state is the fold of the stored events", [run], ([commands]) =>
    Effect.gen(function* () {
      const handle = CommandHandler.make(aggregate)
      let last: S = aggregate.initialState
      for (const command of commands) {
        const result = yield* Effect.either(handle(options.id, command))
        if (result._tag === "Right") last = result.right.state
      }
      const loaded = yield* CommandHandler.load(aggregate)(options.id)
      expect(loaded.state).toEqual(last)
    }).pipe(Effect.provide(Layer.merge(InMemoryEventStore.layer, IdGenerator.layerSequential)))
  )

  it(options.absorbing.title, () => {
    const absorbing = Transitions.states(table).filter((s) => Transitions.isAbsorbing(table, s))
    expect([...absorbing].sort()).toEqual([...options.absorbing.states].sort())
    options.absorbing.also?.()
  })
}
