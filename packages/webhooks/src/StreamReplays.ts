/**
 * Streams kept in memory by a notifier following the log (`Notifier.makeHandler`): each stream's
 * records with their decoded events and the state after them, computed once, so that planning a
 * notification decodes and folds neither the stream's history nor its merchant's again. What is
 * planned is what the domain plans from the same records (`Notifications.noticeFromHistory`,
 * `Notifications.planFromHistory`); only the work is saved.
 */
import { fold } from "@cobro/domain/Decider"
import type * as EventStore from "@cobro/domain/EventStore"
import * as Merchant from "@cobro/domain/Merchant"
import * as Notifications from "@cobro/domain/NotificationRules"
import * as Option from "effect/Option"

/**
 * Whether a notifier that keeps streams in memory should follow this event's stream: the streams of
 * the aggregates that raise notifications, and merchants' (whose webhooks and keys a delivery uses).
 */
export const isFollowed = (event: { readonly streamId: string }): boolean => {
  const aggregate = Notifications.aggregateOf(event)
  return (
    aggregate !== undefined &&
    (aggregate in Notifications.RAISING_EVENTS || aggregate === Merchant.Merchant.name)
  )
}

/**
 * A stream's events decoded (from its first record on) and the state after the first `folded` of
 * them. One state only: a state per event would hold, for a merchant binding many terminals, as many
 * copies of its terminals.
 */
interface Folding<S, E> {
  readonly decode: (data: unknown) => E
  readonly evolve: (state: S, event: E) => S
  readonly initial: S
  readonly events: Array<E>
  state: S
  folded: number
}

type Folded =
  | {
      readonly _tag: "Raising"
      readonly raiser: Notifications.Raiser<unknown, unknown>
      readonly folding: Folding<unknown, unknown>
    }
  | { readonly _tag: "Merchant"; readonly folding: Folding<Merchant.State, Merchant.Event> }
  | { readonly _tag: "Other" }

const folding = <S, E>({ decider, decode }: Notifications.StreamReader<S, E>): Folding<S, E> => ({
  decode,
  evolve: decider.evolve,
  initial: decider.initialState,
  events: [],
  state: decider.initialState,
  folded: 0
})

/**
 * A stream's records (from version 1) with each one's decoded event and the state after it, computed
 * once, when first needed: a notifier that keeps streams in memory plans a notification without
 * decoding and folding the stream's history, nor its merchant's, again. The owner only ever appends
 * to `records` (the events it follows, without a gap), so what was computed stays what a replay of
 * the records gives.
 */
export interface Replay {
  readonly streamId: string
  readonly records: Array<EventStore.RecordedEvent>
  readonly folded: Folded
  /** How many records from the first are in `recordedAt` order (for the merchant "as of" an instant). */
  ordered: number
}

/** The replay of a stream's records (which the caller then only appends to). */
export const replayOf = (streamId: string, records: Array<EventStore.RecordedEvent>): Replay => {
  const aggregate = Notifications.aggregateOf({ streamId })
  const raiser = Notifications.raiserOf(aggregate)
  const folded: Folded =
    raiser !== undefined
      ? { _tag: "Raising", raiser, folding: folding(raiser) }
      : aggregate === Merchant.Merchant.name
        ? { _tag: "Merchant", folding: folding(Notifications.merchantReader) }
        : { _tag: "Other" }
  return { streamId, records, folded, ordered: 0 }
}

/**
 * The state after the first `length` records, as `fold` gives it over their decoded events: each
 * record is decoded once (a record that does not decode throws, as a replay of the history does), and
 * folded once while the stream is asked about in order (an earlier prefix is folded again from its
 * decoded events).
 */
const stateAt = <S, E>(
  f: Folding<S, E>,
  records: ReadonlyArray<EventStore.RecordedEvent>,
  length: number
): S => {
  for (let i = f.events.length; i < length; i++) f.events.push(f.decode(records[i]!.data))
  const from = length >= f.folded
  let state = from ? f.state : f.initial
  for (let i = from ? f.folded : 0; i < length; i++) state = f.evolve(state, f.events[i]!)
  if (from) {
    f.state = state
    f.folded = length
  }
  return state
}

/**
 * `Notifications.noticeFromHistory` of an event over the first `length` records of its stream's
 * replay (the history up to and including the event).
 */
export const noticeFromReplay = (
  event: EventStore.RecordedEvent,
  own: Replay,
  length: number
): Option.Option<Notifications.Notice> => {
  const { folded, records } = own
  const upTo = Math.min(length, records.length)
  // Not a stream of the event's aggregate (a caller's mistake): its history decoded as the event's.
  if (Notifications.aggregateOf(event) !== Notifications.aggregateOf(own)) {
    return Notifications.noticeFromHistory(event, records.slice(0, upTo))
  }
  if (!Notifications.mayRaise(event) || upTo === 0 || folded._tag !== "Raising") return Option.none()
  const state = stateAt(folded.folding, records, upTo)
  return folded.raiser.notice(state, folded.folding.events[upTo - 1]!)
}

/**
 * The merchant of a replay as it was at `asOf`, as `Notifications.planFromHistory` folds it
 * (`Notifications.merchantFromHistory`): the records recorded at or before `asOf`. While the records
 * are in `recordedAt` order those are a prefix, folded on from the one asked before; otherwise they
 * are folded again.
 */
export const merchantAsOf = (merchant: Replay, asOf: Date): Merchant.State => {
  const { folded, records } = merchant
  const at = asOf.getTime()
  if (folded._tag !== "Merchant") return Notifications.merchantFromHistory(records, at)
  const f = folded.folding
  while (
    merchant.ordered < records.length &&
    (merchant.ordered === 0 ||
      records[merchant.ordered - 1]!.recordedAt.getTime() <= records[merchant.ordered]!.recordedAt.getTime())
  ) {
    merchant.ordered++
  }
  if (merchant.ordered === records.length) {
    let length = records.length
    while (length > 0 && records[length - 1]!.recordedAt.getTime() > at) length--
    return stateAt(f, records, length)
  }
  return fold(
    Merchant.Merchant,
    records.flatMap((r, i) =>
      r.recordedAt.getTime() <= at ? [i < f.events.length ? f.events[i]! : f.decode(r.data)] : []
    )
  )
}
