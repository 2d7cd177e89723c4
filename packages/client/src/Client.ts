/**
 * The Effect client: derived with `HttpApiClient` from Cobro's contract (`@cobro/api/Api`), so every
 * group (terminal, links, online, admin, adminLists, audit, …) and endpoint is a method whose
 * payload, success and errors are the contract's own. Under it, the transport adds the credential,
 * the user agent, an `Idempotency-Key` per call with an effect, retries and timeouts.
 *
 *   const cobro = yield* Client.make({ baseUrl, apiKey })
 *   const link = yield* cobro.links.createLink({ payload: { amount_type: "OPEN" } })
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import { CobroApi } from "@cobro/api/Api"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Transport from "./internal/transport.js"
import * as Retry from "./Retry.js"

/**
 * How a client is made.
 *
 * @category models
 */
export interface Options {
  /** Where Cobro answers, e.g. `https://cobro.example` (a path prefix is kept). */
  readonly baseUrl: string | URL
  /**
   * The merchant's identity key (`Authorization: x-api-key <key>`): the terminal API key for
   * `terminal`, the payment button key for `links` and `online`.
   */
  readonly apiKey?: string | Redacted.Redacted<string> | undefined
  /** The operator's token (`Authorization: Bearer <token>`), sent on `/admin/v1/…` and inclusion proofs. */
  readonly adminToken?: string | Redacted.Redacted<string> | undefined
  /** Retries after the first attempt of a call (default 3); 0 never retries. */
  readonly maxRetries?: number | undefined
  /** The longest one attempt may take (default 30 s); a slower attempt is cut and retried. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The backoff: the first retry's (default 500 ms), the longest (10 s), the longest `Retry-After` waited (60 s). */
  readonly backoff?: Partial<Omit<Retry.Policy, "maxRetries">> | undefined
}

/**
 * The default timeout of one attempt.
 *
 * @category constants
 */
export const DEFAULT_TIMEOUT: Duration.DurationInput = "30 seconds"

const redacted = (value: string | Redacted.Redacted<string> | undefined) =>
  value === undefined ? undefined : Redacted.isRedacted(value) ? value : Redacted.make(value)

/**
 * The transport options of a client's options.
 *
 * @category constructors
 */
export const transportOptions = (options: Options): Transport.Options => ({
  apiKey: redacted(options.apiKey),
  adminToken: redacted(options.adminToken),
  policy: {
    ...Retry.defaults,
    ...options.backoff,
    maxRetries: options.maxRetries ?? Retry.defaults.maxRetries
  },
  timeout: options.timeout ?? DEFAULT_TIMEOUT
})

const baseUrlOf = (baseUrl: string | URL) => baseUrl.toString().replace(/\/+$/, "")

const encodeSegment = (value: unknown) => (typeof value === "string" ? encodeURIComponent(value) : value)

/** A call of the client with its request's string path parameters percent-encoded. */
const withEncodedPath =
  (call: (request?: any) => unknown) =>
  (request?: any): unknown =>
    call(
      request?.path === undefined
        ? request
        : {
            ...request,
            path: Object.fromEntries(
              Object.entries(request.path as Record<string, unknown>).map(([name, value]) => [
                name,
                encodeSegment(value)
              ])
            )
          }
    )

/**
 * The client with every string path parameter written as one URL segment (`encodeURIComponent`):
 * `HttpApiClient` (@effect/platform 0.97) puts them into the URL as given, so a `/`, `?`, `#` or
 * `%` in a value (an intent's `reference_id` may hold any of them) reached another route. The
 * contract's path schemas are plain strings (or numbers, left as they are), so encoding before
 * them changes nothing else; the server decodes each segment back.
 */
const encodePathParams = <C extends object>(client: C): C =>
  Object.fromEntries(
    Object.entries(client).map(([key, member]) => [
      key,
      typeof member === "function"
        ? withEncodedPath(member)
        : Object.fromEntries(
            Object.entries(member as Record<string, (request?: any) => unknown>).map(([name, call]) => [
              name,
              withEncodedPath(call)
            ])
          )
    ])
  ) as C

/**
 * A client of the whole contract over the `HttpClient` in context.
 *
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.map(
    HttpApiClient.make(CobroApi, {
      baseUrl: baseUrlOf(options.baseUrl),
      transformClient: Transport.transform(transportOptions(options))
    }),
    encodePathParams
  )

/**
 * The client: one property per group of the contract, one method per endpoint.
 *
 * @category models
 */
export type Client = Effect.Effect.Success<ReturnType<typeof make>>

/**
 * The client as a service.
 *
 * @category tags
 */
export class Cobro extends Context.Tag("@cobro/client/Client/Cobro")<Cobro, Client>() {}

/**
 * The client as a layer, over the `HttpClient` in context.
 *
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Cobro, never, HttpClient.HttpClient> =>
  Layer.effect(Cobro, make(options))

/**
 * The client as a layer over the platform's `fetch`.
 *
 * @category layers
 */
export const layerFetch = (options: Options): Layer.Layer<Cobro> =>
  layer(options).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * Options for one call: its own timeout per attempt, idempotency key or retries.
 *
 * @category models
 */
export type CallOptions = Transport.CallOptions

/**
 * Runs `effect` (calls of the client) with `options`:
 * `cobro.links.createLink({ payload }).pipe(Client.withCallOptions({ idempotencyKey: "order-42" }))`.
 *
 * @category combinators
 */
export const withCallOptions =
  (options: CallOptions) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, Transport.currentCallOptions, options)
