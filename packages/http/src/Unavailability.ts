/**
 * What tells a failure of the database that cannot take requests now (a failover: the connection
 * refused, reset or cut, an admin shutdown, a read-only replica, too many connections) from any
 * other defect (issue 33): the server provides the store's classifier; `Fallback` answers such a
 * failure with a status a client can act on (503 with `Retry-After`) instead of a 500.
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/** How long a client waits before retrying a key in use, or while the database is away: seconds. */
export const RETRY_AFTER_SECONDS = 1

/** The classifier: whether a defect (or a failure) says that the database cannot take requests now. */
export interface Classifier {
  readonly isUnavailable: (defect: unknown) => boolean
}

/**
 * The classifier of the request's failures, provided by the server (store-pg's); by default nothing
 * is unavailable, so every defect is a 500.
 *
 * @category services
 */
export class Unavailability extends Context.Reference<Unavailability>()("@cobro/http/Unavailability", {
  defaultValue: (): Classifier => ({ isUnavailable: () => false })
}) {}

/** The layer that classifies with `isUnavailable`. */
export const layer = (isUnavailable: (defect: unknown) => boolean): Layer.Layer<never> =>
  Layer.succeed(Unavailability, { isUnavailable })

/** Whether any failure or defect of `cause` is one the classifier calls unavailable. */
export const isUnavailableCause = (classifier: Classifier, cause: Cause.Cause<unknown>): boolean => {
  // A walk of the cause's tree without building lists: only a failed request gets here.
  const stack: Array<Cause.Cause<unknown>> = [cause]
  while (stack.length > 0) {
    const node = stack.pop()!
    switch (node._tag) {
      case "Fail":
        if (classifier.isUnavailable(node.error)) return true
        break
      case "Die":
        if (classifier.isUnavailable(node.defect)) return true
        break
      case "Sequential":
      case "Parallel":
        stack.push(node.right, node.left)
        break
    }
  }
  return false
}
