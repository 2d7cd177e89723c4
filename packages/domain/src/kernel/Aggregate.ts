/**
 * What the command handler, the docs generator and the property tests need to know of an
 * aggregate beyond its decider: its name, its streams, its event codec and its transition table.
 */
import type * as Schema from "effect/Schema"
import type { Decider } from "./Decider.js"
import type * as Transitions from "./Transitions.js"

/** A decider whose state and commands are tagged, with the table that governs them. */
export interface Aggregate<
  Command extends { readonly _tag: string },
  Event extends { readonly _tag: string },
  State extends { readonly _tag: string },
  Error
> extends Decider<Command, Event, State, Error> {
  /** The aggregate's name, the prefix of its stream ids: `PaymentLink`. */
  readonly name: string
  /** State × command → states it may lead to. */
  readonly transitions: Transitions.Table<State["_tag"], Command["_tag"]>
  /** The codec of its events, as stored in the log (the encoded side carries `_tag`). */
  readonly Event: Schema.Schema<Event, any>
  /** The version of the events' schema, stored with each event. */
  readonly schemaVersion: number
}

/** The stream id of one aggregate instance: `PaymentLink-LNK_123`. */
export const streamId = (aggregate: { readonly name: string }, id: string): string =>
  `${aggregate.name}-${id}`
