/**
 * The port a panel form acts once through (issue 31, item 1; brief, "Exactly once at the edge"): the
 * API's `Idempotency-Key` record, which `@cobro/http` owns and provides (`Idempotency.layerForms`),
 * so that a re-sent form and a retried API call are kept, replayed and recovered by the same code and
 * the panel imports nothing of the JSON API's handlers.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/**
 * `Idempotency-Key`'s machinery as the panel's forms use it (`FormKey`).
 *
 * @category tags
 */
export class FormOnce extends Context.Tag("@cobro/panel/FormOnce")<
  FormOnce,
  {
    /** The header a replayed answer carries (`Idempotent-Replayed`). */
    readonly replayedHeader: string
    /** The seconds `Retry-After` gives when the key's store is away. */
    readonly retryAfterSeconds: number
    /** The fingerprint of a request: method, path and the SHA-256 of its body. */
    readonly fingerprint: (method: string, path: string, body: string) => Effect.Effect<string>
    /**
     * Runs `app` once under the key of `scope` for the request fingerprinted `print`: a retry replays
     * its answer, another request under the key is refused (409, JSON), a key whose request died after
     * its effect committed is answered with `recover(resource)`.
     */
    readonly once: <E, R, R2>(
      scope: IdempotencyStore.Scope,
      print: string,
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      recover: (resource: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R2>
    ) => Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      E,
      R | R2 | IdempotencyStore.IdempotencyStore | HttpServerRequest.HttpServerRequest
    >
  }
>() {}
