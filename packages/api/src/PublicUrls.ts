/**
 * The public addresses of Cobro that API answers carry: the base URL customers' browsers reach it at
 * (`PUBLIC_URL`) and `{checkout_url}` of the spec, the hosted payment page of a link (B2 `url`).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** The path of the checkout page under the public base URL, when no `checkout_url` is configured. */
export const CHECKOUT_PATH = "/checkout"

/**
 * The configured addresses, provided by the server. Each may be absent: the public base is then read
 * from the request (`Host`, `X-Forwarded-Proto`), and `{checkout_url}` is `<public base>/checkout`.
 */
export class PublicUrls extends Context.Reference<PublicUrls>()("@cobro/api/PublicUrls", {
  defaultValue: (): {
    readonly publicUrl: Option.Option<string>
    readonly checkoutUrl: Option.Option<string>
  } => ({ publicUrl: Option.none(), checkoutUrl: Option.none() })
}) {}

/** The server's layer: `PUBLIC_URL` and `CHECKOUT_URL` as configured (either may be left out). */
export const layer = (urls: {
  readonly publicUrl?: string
  readonly checkoutUrl?: string
}): Layer.Layer<never> =>
  Layer.succeed(PublicUrls, {
    publicUrl: Option.fromNullable(urls.publicUrl),
    checkoutUrl: Option.fromNullable(urls.checkoutUrl)
  })

const trimSlashes = (url: string): string => url.replace(/\/+$/, "")

const requestBase = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() || "http"
  return `${proto}://${request.headers["host"] ?? "localhost"}`
})

/** The public base URL, without a trailing slash. */
export const publicUrl: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.gen(
  function* () {
    const urls = yield* PublicUrls
    return trimSlashes(Option.isSome(urls.publicUrl) ? urls.publicUrl.value : yield* requestBase)
  }
)

/** `{checkout_url}`, without a trailing slash. */
export const checkoutUrl: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.gen(
  function* () {
    const urls = yield* PublicUrls
    return Option.isSome(urls.checkoutUrl)
      ? trimSlashes(urls.checkoutUrl.value)
      : `${yield* publicUrl}${CHECKOUT_PATH}`
  }
)

/** A link's checkout page: `{checkout_url}/<payment_link>`. */
export const linkUrl = (linkId: string): Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> =>
  Effect.map(checkoutUrl, (base) => `${base}/${encodeURIComponent(linkId)}`)
