/**
 * What a retry under an `Idempotency-Key` answers when the key's first request committed its effect
 * and then stopped without an answer (its process died, `IdempotencyStore.Reservation.Recover`):
 * the answer that request would have given, made from the resource it wrote, never by running it
 * again. A3 and B2 answer exactly as the first request would have (their answers name only the
 * resource, fixed when it committed; what a checkout still had to do, its push, is the pusher's
 * work). Every other route answers 409 {@link Codes.IdempotencyKeyUnanswered}: its effect happened
 * once, and the resource shows its outcome.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Envelope from "@cobro/domain/Envelope"
import * as Effect from "effect/Effect"
import * as Errors from "@cobro/api/Errors"
import * as PublicUrls from "@cobro/api/PublicUrls"

/** The stream prefix of each recoverable route's resource, and how its answer is made from the id. */
interface Recovery {
  readonly method: string
  readonly path: string
  /** The first stream the route's request writes is `<prefix><id>`. */
  readonly prefix: string
  readonly answer: (
    id: string
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
}

const created = (payload: Record<string, string>) =>
  HttpServerResponse.unsafeJson(Envelope.success(payload), { status: 201 })

const recoveries: ReadonlyArray<Recovery> = [
  {
    // A3: the checkout's answer names its integration id.
    method: "POST",
    path: "/payments/app-checkout",
    prefix: "TerminalCheckout-",
    answer: (integrationId) => Effect.succeed(created({ integration_id: integrationId }))
  },
  {
    // B2: the link's id and its URL.
    method: "POST",
    path: "/online/link/v1",
    prefix: "PaymentLink-",
    answer: (linkId) =>
      Effect.map(PublicUrls.linkUrl(linkId), (url) => created({ payment_link: linkId, url }))
  }
]

/** The 409 of a route whose answer cannot be made again. */
const unanswered = (resource: string) =>
  Errors.toResponse(
    Errors.Conflict.of(
      Errors.Codes.IdempotencyKeyUnanswered,
      `the request with this Idempotency-Key took effect (on ${resource}) but its answer was lost; read the resource for its outcome, and do not send it again`
    )
  )

/**
 * The answer to a retry of `method` `path` (without the query) whose first request committed its
 * effect on `resource`, the first stream it wrote.
 */
export const answer = (
  method: string,
  path: string,
  resource: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  const recovery = recoveries.find(
    (r) => r.method === method && r.path === path && resource.startsWith(r.prefix)
  )
  return recovery === undefined
    ? Effect.succeed(unanswered(resource))
    : recovery.answer(resource.slice(recovery.prefix.length))
}
