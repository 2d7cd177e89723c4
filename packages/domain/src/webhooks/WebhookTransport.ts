/**
 * The webhook transport port (spec D): one HTTP POST of a signed notification to a merchant's
 * endpoint. `@cobro/webhooks` implements it; only HTTP 200 within 2 seconds counts as delivered.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** One delivery attempt as sent. */
export interface WebhookRequest {
  readonly url: string
  /** The exact bytes sent: the signature is computed over them. */
  readonly body: Uint8Array
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

/** What came back, or why nothing did. */
export type WebhookResponse =
  | {
      readonly _tag: "Answered"
      readonly status: number
      readonly latencyMs: number
      readonly snippet: string
      /** What a 429 or 503 asked with `Retry-After`, in milliseconds from the answer. */
      readonly retryAfterMs?: number
    }
  | { readonly _tag: "Failed"; readonly reason: string; readonly latencyMs: number }

/**
 * The webhook transport port. Never fails: a network error is a `Failed` response.
 *
 * @category services
 */
export class WebhookTransport extends Context.Tag("@cobro/domain/WebhookTransport")<
  WebhookTransport,
  {
    readonly post: (request: WebhookRequest) => Effect.Effect<WebhookResponse>
    /**
     * The same POST with a callback instead of an effect, where a transport offers it: a sender of
     * thousands a second saves a fiber per request (about 30 µs of CPU). Returns a canceller.
     */
    readonly postCallback?: (
      request: WebhookRequest,
      onResponse: (response: WebhookResponse) => void
    ) => () => void
  }
>() {}
