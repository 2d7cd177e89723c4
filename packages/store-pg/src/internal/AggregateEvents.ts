/**
 * The log's events of one aggregate, decoded with the domain's Schema: what a projection written in
 * TypeScript reads.
 * @internal
 */
import * as Aggregate from "@cobro/domain/Aggregate"
import type * as EventStore from "@cobro/domain/EventStore"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * Decodes the events of one aggregate's streams; other streams' events, and events this build
 * cannot decode (a newer schema), are skipped.
 */
export const decoder = <E, I>(aggregate: { readonly name: string; readonly Event: Schema.Schema<E, I> }) => {
  const prefix = Aggregate.streamId(aggregate, "")
  const decode = Schema.decodeUnknownOption(aggregate.Event)
  return (event: EventStore.LoggedEvent): Option.Option<E> =>
    event.streamId.startsWith(prefix) ? decode(event.data) : Option.none()
}
