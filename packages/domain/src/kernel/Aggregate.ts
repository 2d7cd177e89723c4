/**
 * What the command handler, the docs generator and the property tests need to know of an
 * aggregate beyond its decider: its name, its streams, its event codec and its transition table;
 * and {@link make}, the skeleton every Cobro aggregate shares: a state before creation (`Initial`),
 * the refusals of a command on no instance, of a second creation and of a command the table leaves
 * out of a state, and `decide` checked against the table.
 *
 * @since 0.0.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Decider } from "./Decider.js"
import { fold } from "./Decider.js"
import * as Transitions from "./Transitions.js"

/**
 * A decider whose state and commands are tagged, with the table that governs them.
 *
 * @category models
 */
export interface Aggregate<
  Command extends { readonly _tag: string },
  Event extends { readonly _tag: string },
  State extends { readonly _tag: string },
  Error
> extends Decider<Command, Event, State, Error> {
  /** The aggregate's name, the prefix of its stream ids: `PaymentLink`. */
  readonly name: string
  /** State × command → what the command does there: the states it may lead to, or a no-op. */
  readonly transitions: Transitions.Table<State["_tag"], Command["_tag"]>
  /** The codec of its events, as stored in the log (the encoded side carries `_tag`). */
  readonly Event: Schema.Schema<Event, any>
  /** The version of the events' schema, stored with each event. */
  readonly schemaVersion: number
}

/**
 * The stream id of one aggregate instance: `PaymentLink-LNK_123`.
 *
 * @category getters
 */
export const streamId = (aggregate: { readonly name: string }, id: string): string =>
  `${aggregate.name}-${id}`

/** @category models */
export type Tagged = { readonly _tag: string }

/**
 * What `decide` answers: the events to record (none for a no-op), or why the command is refused.
 *
 * @category models
 */
export type Decision<Event, Error> = Either.Either<ReadonlyArray<Event>, Error>

/**
 * The command is accepted: record these events.
 *
 * @category constructors
 */
export const ok = <const Events extends ReadonlyArray<unknown>>(
  ...events: Events
): Decision<Events[number], never> => Either.right(events)

/**
 * The command is accepted and there is nothing to record: a no-op.
 *
 * @category constructors
 */
export const none: Decision<never, never> = Either.right([])

/**
 * The state of every aggregate before its creation: no instance on the stream yet.
 *
 * @category models
 */
export interface Initial {
  readonly _tag: "Initial"
}

/** @category constructors */
export const initial: Initial = { _tag: "Initial" }

/**
 * A decision the aggregate's own table does not list: a bug in `decide` or in the table, never a
 * refusal of the user's: it is thrown, a defect.
 *
 * @category errors
 */
export class TransitionViolation extends Data.TaggedError("TransitionViolation")<{
  readonly aggregate: string
  readonly message: string
}> {}

// ---------------------------------------------------------------------------------------------
// Any decider, guarded by its table
// ---------------------------------------------------------------------------------------------

/**
 * The parts of an aggregate whose `decide` is guarded by its table ({@link withTable}).
 *
 * @category models
 */
export interface Parts<C extends Tagged, E extends Tagged, S extends Tagged, Err> {
  readonly name: string
  readonly Event: Schema.Schema<E, any>
  /** Defaults to 1. */
  readonly schemaVersion?: number
  readonly transitions: Transitions.Table<S["_tag"], C["_tag"]>
  readonly initialState: S
  /** The refusal of a command the table leaves out of the state's row. */
  readonly refuse: (command: C, state: S) => Err
  /** Decides a command the table lets act on the state. */
  readonly decide: (command: C, state: S) => Decision<E, Err>
  readonly evolve: (state: S, event: E) => S
}

/**
 * An aggregate whose `decide` consults its table: a command the table leaves out of a state is
 * refused (`refuse`) without reaching `parts.decide`, and an accepted decision must agree with the
 * table's entry in what its size tells: a listed no-op emits nothing, an entry that lists no no-op
 * emits at least one event. A disagreement is a {@link TransitionViolation} defect.
 *
 * Where the check lives: the entry is looked up anyway to refuse, so comparing the decision's size
 * with it costs a comparison or two per command, nothing next to the append it precedes. Where the
 * events lead is known only by folding them, which the handler does again after the append; that
 * part of the check, {@link checked}, runs where it costs nothing in production: in the property
 * runs and in every given/when/then test of an aggregate.
 *
 * @category constructors
 */
export const withTable = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  parts: Parts<C, E, S, Err>
): Aggregate<C, E, S, Err> => {
  const { name, transitions, refuse } = parts
  const decideAllowed = parts.decide
  return {
    name,
    initialState: parts.initialState,
    transitions,
    Event: parts.Event,
    schemaVersion: parts.schemaVersion ?? 1,
    evolve: parts.evolve,
    decide: (command, state) => {
      const entry = Transitions.entry(transitions, state._tag, command._tag)
      if (entry === undefined) return Either.left(refuse(command, state))
      const decision = decideAllowed(command, state)
      if (Either.isRight(decision) && !Transitions.admits(entry, decision.right.length > 0)) {
        throw new TransitionViolation({
          aggregate: name,
          message:
            decision.right.length === 0
              ? `${state._tag} ▸ ${command._tag} emitted nothing, but the table lists ${[entry].flat().join(" | ")}`
              : `${state._tag} ▸ ${command._tag} emitted events, but the table lists it as a no-op`
        })
      }
      return decision
    }
  }
}

/**
 * The aggregate with every accepted decision checked against its table down to the state its events
 * lead to, and every refusal of the table checked to be a refusal: for tests (the fold it adds is
 * what keeps it off the handler's path, see {@link withTable}).
 *
 * @category combinators
 */
export const checked = <C extends Tagged, E extends Tagged, S extends Tagged, Err>(
  aggregate: Aggregate<C, E, S, Err>
): Aggregate<C, E, S, Err> => ({
  ...aggregate,
  decide: (command, state) => {
    const decision = aggregate.decide(command, state)
    if (Either.isLeft(decision)) return decision
    const to = fold(aggregate, decision.right, state)._tag
    const why = Transitions.disagreement(
      aggregate.transitions,
      state._tag,
      command._tag,
      decision.right.length,
      to
    )
    if (why !== undefined) throw new TransitionViolation({ aggregate: aggregate.name, message: why })
    return decision
  }
})

// ---------------------------------------------------------------------------------------------
// The aggregate with a creation
// ---------------------------------------------------------------------------------------------

/**
 * How an aggregate refuses what its table leaves out.
 *
 * @category models
 */
export interface Refusals<C extends Tagged, X extends Tagged, Err> {
  /** Any command but a creation on an instance that does not exist. */
  readonly notFound: (command: C) => Err
  /** A creation on an instance that exists. */
  readonly alreadyExists: (state: X) => Err
  /** A command the table leaves out of the instance's state. */
  readonly notInState: (command: C, state: X) => Err
}

/**
 * The shared refusal errors, as schema classes to extend: `NotFound` (no fields), `AlreadyExists`
 * (the instance's key) and `NotInState` (the key, the state under `status`'s name, the command).
 *
 * ```ts
 * const Refusal = Aggregate.refusalErrors({ linkId: PaymentLinkId }, { status: Status })
 * export class LinkNotInState extends Refusal.NotInState<LinkNotInState>()("LinkNotInState") {}
 * ```
 *
 * @category constructors
 */
export const refusalErrors = <
  const Key extends Schema.Struct.Fields,
  const Status extends Schema.Struct.Fields
>(
  key: Key,
  status: Status
) => ({
  NotFound:
    <Self = never>() =>
    <Tag extends string>(tag: Tag) =>
      Schema.TaggedError<Self>()(tag, {}),
  AlreadyExists:
    <Self = never>() =>
    <Tag extends string>(tag: Tag) =>
      Schema.TaggedError<Self>()(tag, key),
  NotInState:
    <Self = never>() =>
    <Tag extends string>(tag: Tag) =>
      Schema.TaggedError<Self>()(tag, { ...key, ...status, command: Schema.String })
})

/**
 * The {@link Refusals} made of the three classes {@link refusalErrors} declares (`NotInState` with
 * its state under `status`) and of the instance's key as the errors carry it. `refine` gives a more
 * precise refusal than `NotInState` for some commands and states (`undefined` for the others).
 *
 * @category constructors
 */
export const refusals = <
  C extends Tagged,
  X extends Tagged,
  Key,
  NotFound,
  AlreadyExists,
  NotInState,
  Refined = never
>(
  errors: {
    readonly NotFound: new (props: {}) => NotFound
    readonly AlreadyExists: new (key: Key) => AlreadyExists
    readonly NotInState: new (
      props: Key & { readonly status: X["_tag"]; readonly command: string }
    ) => NotInState
  },
  key: (state: X) => Key,
  refine?: (command: C, state: X) => Refined | undefined
): Refusals<C, X, NotFound | AlreadyExists | NotInState | Refined> => ({
  notFound: () => new errors.NotFound({}),
  alreadyExists: (state) => new errors.AlreadyExists(key(state)),
  notInState: (command, state) =>
    refine?.(command, state) ??
    new errors.NotInState({ ...key(state), status: state._tag, command: command._tag })
})

type Of<U, Tag> = Extract<U, { readonly _tag: Tag }>
type Besides<U, Tag> = Exclude<U, { readonly _tag: Tag }>

/**
 * An aggregate with a creation: `Initial` until one of the `create` commands (the table's `Initial`
 * row) records one of the `created` events; from then on, an instance `X` in one of its states.
 *
 * @category models
 */
export interface Lifecycle<
  C extends Tagged,
  E extends Tagged,
  X extends Tagged,
  Err,
  Create extends C["_tag"],
  Created extends E["_tag"]
> {
  readonly name: string
  readonly Event: Schema.Schema<E, any>
  /** Defaults to 1. */
  readonly schemaVersion?: number
  readonly transitions: Transitions.Table<"Initial" | NoInfer<X>["_tag"], NoInfer<C>["_tag"]>
  readonly refuse: Refusals<NoInfer<C>, NoInfer<X>, NoInfer<Err>>
  /** Decides a creation, on no instance. */
  readonly create: {
    readonly [T in Create]: (command: NoInfer<Of<C, T>>) => Decision<NoInfer<E>, NoInfer<Err>>
  }
  /** Decides any other command the table lets act on the instance's state. */
  readonly decide: (
    command: NoInfer<Besides<C, Create>>,
    state: NoInfer<X>
  ) => Decision<NoInfer<E>, NoInfer<Err>>
  /** The instance a creation event starts. */
  readonly created: { readonly [T in Created]: (event: NoInfer<Of<E, T>>) => NoInfer<X> }
  /** Applies any other event to the instance. */
  readonly evolve: (state: NoInfer<X>, event: NoInfer<Besides<E, Created>>) => NoInfer<X>
}

/**
 * Makes an aggregate with a creation: the command, event, instance and error types come from the
 * annotation it is assigned to (`const PaymentLink: Aggregate<Command, Event, State, Error> = …`).
 * Its `decide` refuses a command on no instance (`notFound`), a creation on an instance
 * (`alreadyExists`) and a command the table leaves out of the state (`notInState`), decides the rest
 * with `create` or `decide`, and is checked against the table ({@link withTable}). Its `evolve`
 * starts the instance on a creation event and ignores any other event on no instance (it cannot be in
 * a well-formed stream).
 *
 * @category constructors
 */
export const make = <
  C extends Tagged,
  E extends Tagged,
  X extends Tagged,
  Err,
  Create extends C["_tag"],
  Created extends E["_tag"]
>(
  spec: Lifecycle<C, E, X, Err, Create, Created>
): Aggregate<C, E, Initial | X, Err> => {
  const creations = Object.keys(spec.create)
  const initialRow = Object.keys(spec.transitions.Initial)
  if (creations.length !== initialRow.length || !creations.every((c) => initialRow.includes(c))) {
    throw new Error(`${spec.name}: the creations ${creations} are not the table's Initial row ${initialRow}`)
  }
  const create = spec.create as unknown as Record<string, (command: C) => Decision<E, Err>>
  const created = spec.created as unknown as Record<string, (event: E) => X>
  const decide = spec.decide as (command: C, state: X) => Decision<E, Err>
  const evolve = spec.evolve as (state: X, event: E) => X
  const isCreation = (command: C) => Object.hasOwn(create, command._tag)
  const { notFound, alreadyExists, notInState } = spec.refuse
  return withTable<C, E, Initial | X, Err>({
    name: spec.name,
    Event: spec.Event,
    ...(spec.schemaVersion === undefined ? {} : { schemaVersion: spec.schemaVersion }),
    transitions: spec.transitions as Transitions.Table<(Initial | X)["_tag"], C["_tag"]>,
    initialState: initial,
    refuse: (command, state) =>
      state._tag === "Initial"
        ? notFound(command)
        : isCreation(command)
          ? alreadyExists(state as X)
          : notInState(command, state as X),
    decide: (command, state) =>
      state._tag === "Initial"
        ? create[command._tag]!(command)
        : isCreation(command)
          ? Either.left(alreadyExists(state as X))
          : decide(command, state as X),
    evolve: (state, event) =>
      Object.hasOwn(created, event._tag)
        ? created[event._tag]!(event)
        : state._tag === "Initial"
          ? state
          : evolve(state as X, event)
  })
}

/**
 * The constructors under the interface's name, so that an aggregate module imports one name for
 * both the type of its aggregate and `Aggregate.make`.
 *
 * @category constructors
 */
export const Aggregate = { make, withTable, checked, refusalErrors, refusals, initial } as const
