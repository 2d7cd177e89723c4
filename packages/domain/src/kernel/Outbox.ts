/**
 * What a command's writes cause beyond their own streams, appended in the same commit: the log is
 * the outbox (brief, "Cost per operation": side effects scheduled with their cause). The command
 * handler hands every write (`CommandHandler.make`, `commit`, `makeBatch`) to the `Outbox` in
 * context, and appends what it returns with the write, all or nothing; no consumer then re-reads the
 * log to find the work. The default follows nothing; the server provides the notifications' policy
 * (`Notifications.outbox`: a sale's outcome schedules its webhook delivery).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as EventStore from "./EventStore.js"

/** What a command writes on one stream: the state it decided on, its events, and them as appended. */
export interface Written {
  readonly streamId: string
  /** The stream's state before the events (the aggregate's initial state for a new stream). */
  readonly before: unknown
  /** The events decided, in order. */
  readonly events: ReadonlyArray<{ readonly _tag: string }>
  /** The same events as appended: their ids and metadata. */
  readonly appended: ReadonlyArray<EventStore.NewEvent>
}

/** Turns a commit's writes into the appends they cause (on other streams, each at most once). */
export interface Policy {
  readonly follow: (
    written: ReadonlyArray<Written>
  ) => Effect.Effect<ReadonlyArray<EventStore.BatchAppend>, never, EventStore.EventStore>
}

/** A policy that causes nothing. */
export const none: Policy = { follow: () => Effect.succeed([]) }

/**
 * The outbox's policy; by default {@link none}.
 *
 * @category services
 */
export class Outbox extends Context.Reference<Outbox>()("@cobro/domain/Outbox", {
  defaultValue: (): Policy => none
}) {}
