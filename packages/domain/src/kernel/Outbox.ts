/**
 * What a command's writes cause beyond their own streams, appended in the same commit: the log is
 * the outbox (brief, "Cost per operation": side effects scheduled with their cause). The command
 * handler hands every write (`CommandHandler.make`, `commit`, `makeBatch`) to the `Outbox` in
 * context, and appends what it returns with the write, all or nothing; no consumer then re-reads the
 * log to find the work. The default follows nothing; the server provides the notifications' policy
 * (`Notifications.outbox`: a sale's outcome schedules its webhook delivery).
 *
 * A policy may decide on another stream's state without reading it (a state `KnownStates` holds):
 * it then returns a {@link guard} of that stream at the version it decided on, which the commit's
 * `appendBatch` checks with the writes. A stale state costs a conflict on the guarded stream, which
 * the command handler forgets and decides again on; never a decision made on a state that was not
 * the stream's when the commit was written.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as EventStore from "./EventStore.js"

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

/**
 * Turns a commit's writes into the appends they cause (on other streams, each at most once) and the
 * guards of the streams those were decided on ({@link guard}), all appended with the writes.
 */
export interface Policy {
  readonly follow: (
    written: ReadonlyArray<Written>
  ) => Effect.Effect<ReadonlyArray<EventStore.BatchAppend>, never, EventStore.EventStore>
}

/** A policy that causes nothing. */
export const none: Policy = { follow: () => Effect.succeed([]) }

/**
 * "Decided on `streamId` at `version`: commit only if it is still there." A batch item of no events,
 * which the port's `appendBatch` treats as a check of the stream's version that writes nothing (and
 * that the stores check without locking the stream: a lock on a merchant's head would serialise
 * every sale of the merchant). An item of the batch like the others, so that every store checks it
 * in the same atomic write, and it fails as they do: `ConcurrencyConflict` on its stream.
 */
export const guard = (streamId: string, version: number): EventStore.BatchAppend => ({
  streamId,
  events: [],
  expected:
    version === 0 ? EventStore.ExpectedVersion.NoStream() : EventStore.ExpectedVersion.Exact({ version })
})

/** Whether a batch item only checks its stream's version (a {@link guard}). */
export const isGuard = (append: EventStore.BatchAppend): boolean => append.events.length === 0

/**
 * The outbox's policy; by default {@link none}.
 *
 * @category services
 */
export class Outbox extends Context.Reference<Outbox>()("@cobro/domain/Outbox", {
  defaultValue: (): Policy => none
}) {}
