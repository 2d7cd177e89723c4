/**
 * The guard every append of a fiber runs under (brief, "Exactly once at the edge"): a request that
 * holds an `Idempotency-Key` runs its appends under the key's fence, so that the key records, in
 * the very transaction of the request's first effect, that an effect committed (its recovery
 * point), and an append of a request that no longer holds its key commits nothing. Event stores
 * run each append (or batch) inside the fence in context; by default there is none.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

/**
 * The request's key was taken over by another request (its lease lapsed before any effect of it
 * committed): what it was about to append is not written. A defect of the append, not a typed
 * error: only the middleware that set the fence handles it.
 *
 * @category errors
 */
export class KeyLost extends Data.TaggedError("KeyLost")<{ readonly key: string }> {}

/**
 * Runs one append inside the fence: `streamId` is the first stream it writes. The store runs
 * `append` in the same transaction as the fence's own write, so both commit or neither does.
 */
export interface Fence {
  readonly around: <A, E, R>(streamId: string, append: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** No fence: the append runs as it is. */
export const none: Fence = { around: (_streamId, append) => append }

/**
 * The fence of the current fiber; by default {@link none}.
 *
 * @category services
 */
export class AppendFence extends Context.Reference<AppendFence>()("@cobro/domain/AppendFence", {
  defaultValue: (): Fence => none
}) {}
