/**
 * The server's cache of known states (`KnownStates`): the states of the `capacity` streams read or
 * written most recently, each with its version. Per process: every node keeps its own; a state
 * another node has moved on costs a conflict and a read, never a wrong decision.
 */
import * as KnownStates from "@cobro/domain/KnownStates"
import * as Layer from "effect/Layer"

/** How many streams the server keeps states of: one per merchant, with room to spare. */
export const DEFAULT_CAPACITY = 10_000

/** A cache of at most `capacity` states, the least recently used dropped first. */
export const make = (capacity: number = DEFAULT_CAPACITY): KnownStates.Cache => {
  // A Map iterates in insertion order: re-inserting on each use keeps the least recent first.
  const entries = new Map<string, KnownStates.Entry>()
  return {
    get: (streamId) => {
      const entry = entries.get(streamId)
      if (entry !== undefined) {
        entries.delete(streamId)
        entries.set(streamId, entry)
      }
      return entry
    },
    set: (streamId, entry) => {
      const kept = entries.get(streamId)
      // Two requests may fold the same stream at once: the later version wins.
      if (kept !== undefined && kept.version >= entry.version) return
      entries.delete(streamId)
      entries.set(streamId, entry)
      if (entries.size > capacity) entries.delete(entries.keys().next().value!)
    },
    forget: (streamId) => {
      entries.delete(streamId)
    }
  }
}

/** The cache as the `KnownStates` of the layers it is provided to. */
export const layer = (capacity: number = DEFAULT_CAPACITY) =>
  Layer.succeed(KnownStates.KnownStates, make(capacity))
