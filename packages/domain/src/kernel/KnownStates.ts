/**
 * States this process has already folded or written, each with the stream version it was at, so that
 * a hot path reads and folds only the events appended since (`CommandHandler.loadCurrent`) instead of
 * replaying the whole stream (the merchant, read by nearly every request), or, for a decision that
 * is written with an expected version, does not read at all (`CommandHandler.loadKnown`: a stale
 * state costs a conflict and a retry that reads, never a wrong decision); an `Outbox` decides on
 * them the same way, guarding the stream at the kept version (`Outbox.guard`). `CommandHandler.commit`
 * keeps the states it writes, and every commit forgets a stream whose append or guard conflicted. The default keeps
 * nothing; the server provides a bounded cache.
 */
import * as Context from "effect/Context"

/** A state with the stream version it was folded at. */
export interface Entry {
  readonly state: unknown
  readonly version: number
}

/** Where states are kept, by stream id. */
export interface Cache {
  readonly get: (streamId: string) => Entry | undefined
  /** Keeps `entry` unless a later version of the stream is kept already. */
  readonly set: (streamId: string, entry: Entry) => void
  /** Drops what is kept of a stream (its append conflicted: another writer moved it on). */
  readonly forget: (streamId: string) => void
}

/** A cache that keeps nothing: every load replays its stream. */
export const none: Cache = { get: () => undefined, set: () => {}, forget: () => {} }

/**
 * A cache that keeps every state it is given, without bound: for tests and short-lived programs (the
 * server bounds its own, `StateCache`).
 */
export const unbounded = (): Cache => {
  const entries = new Map<string, Entry>()
  return {
    get: (id) => entries.get(id),
    set: (id, entry) => void entries.set(id, entry),
    forget: (id) => void entries.delete(id)
  }
}

/**
 * The cache of known states; by default {@link none}.
 *
 * @category services
 */
export class KnownStates extends Context.Reference<KnownStates>()("@cobro/domain/KnownStates", {
  defaultValue: (): Cache => none
}) {}
