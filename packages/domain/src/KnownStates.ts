/**
 * States this process has already folded, each with the stream version it was folded at, so that a
 * hot path reads and folds only the events appended since (`CommandHandler.loadCurrent`) instead of
 * replaying the whole stream: the merchant, read by nearly every request, is the first user. A
 * state kept here is never used as it is: the events after its version are always read, so a
 * cached load is exactly as fresh as a full one. The default keeps nothing; the server provides a
 * bounded cache.
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
}

/** A cache that keeps nothing: every load replays its stream. */
export const none: Cache = { get: () => undefined, set: () => {} }

/** The cache of known states; by default {@link none}. */
export class KnownStates extends Context.Reference<KnownStates>()("@cobro/domain/KnownStates", {
  defaultValue: (): Cache => none
}) {}
