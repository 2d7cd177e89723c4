/**
 * The `WebhookTransport` port over `undici` (spec D, Registration and delivery): one POST of the
 * exact bytes, a 2-second deadline for the whole exchange, no redirects followed (undici follows
 * none unless asked), the target's addresses checked after DNS (see `UrlSafety`: the connector's
 * `lookup`). Never fails: a network error, a timeout or a refused target is a `Failed` response,
 * recorded as such. undici rather than `node:http(s)`: the same request costs about half the CPU,
 * and the dispatcher's throughput is bounded by CPU (`npm run bench -- webhooks`).
 */
import * as WebhookTransport from "@cobro/domain/WebhookTransport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { performance } from "node:perf_hooks"
import * as Tls from "node:tls"
import { Agent, type Dispatcher } from "undici"
import * as UrlSafety from "./UrlSafety.js"

/** The spec's answer time: "within at most 2 seconds". */
export const TIMEOUT_MS = 2000

/** How much of a response body is read for the recorded snippet (the decider keeps 512 characters). */
export const SNIPPET_BYTES = 2048

/** Options of the transport. */
export interface Options extends UrlSafety.Policy {
  /** Connections kept per origin (keep-alive); default 64. */
  readonly maxSockets?: number
  /** Extra trusted CA certificates (PEM) for https targets, beside the system's (tests, private CAs). */
  readonly ca?: ReadonlyArray<string>
}

/**
 * A `Retry-After` header (RFC 9110, 10.2.3) in milliseconds from `nowMillis`: delay-seconds or an
 * HTTP date; `undefined` when absent or unreadable. A date in the past is 0.
 */
export const retryAfterMillis = (value: string | ReadonlyArray<string> | undefined, nowMillis: number) => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  if (text === undefined || text === "") return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // An HTTP date starts with its day's name (IMF-fixdate, RFC 850, asctime).
  if (!/^[A-Za-z]{3}/.test(text)) return undefined
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMillis)
}

/** The answers whose `Retry-After` the dispatcher honours: too many requests, unavailable. */
const honoursRetryAfter = (status: number) => status === 429 || status === 503

const describe = (error: unknown): string => {
  // undici wraps a connector's failure (the lookup's refusal, a refused connection) in `cause`.
  const cause = (error as { cause?: unknown })?.cause
  const e = (
    error instanceof UrlSafety.UnsafeTarget || cause === undefined ? error : cause
  ) as NodeJS.ErrnoException
  if (e instanceof UrlSafety.UnsafeTarget) return `refused target: ${e.message}`
  if (e?.code === "ECONNREFUSED") return `connection refused (${e.message})`
  return e?.code ? `${e.code}: ${e.message}` : String(e)
}

/** Makes the transport; `close` ends its keep-alive connections. */
export const make = (options: Options) => {
  const lookup = UrlSafety.safeLookup(options)
  const agent = new Agent({
    connections: options.maxSockets ?? 64,
    // The deadline is the caller's (an abort), for the whole exchange, not undici's per phase.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      lookup,
      // One context for every connection: a `ca` list would be parsed again on each TLS connect.
      ...(options.ca
        ? { secureContext: Tls.createSecureContext({ ca: [...Tls.rootCertificates, ...options.ca] }) }
        : {})
    }
  })

  // Each URL parsed and checked once (a dispatcher sends to the same few endpoints again and again).
  const targets = new Map<
    string,
    { readonly origin: string; readonly path: string } | { readonly problem: string }
  >()
  const targetOf = (raw: string) => {
    let target = targets.get(raw)
    if (target === undefined) {
      const problem = UrlSafety.urlProblem(raw, options)
      if (problem !== undefined) target = { problem }
      else {
        const url = new URL(raw)
        target = { origin: url.origin, path: url.pathname + url.search }
      }
      if (targets.size >= 10_000) targets.clear()
      targets.set(raw, target)
    }
    return target
  }

  // undici's dispatcher API with a handler of callbacks: no promise, stream, async iterator or
  // AbortController per request, which the request API costs (`npm run bench -- webhooks`).
  const postCallback = (
    request: WebhookTransport.WebhookRequest,
    resume: (response: WebhookTransport.WebhookResponse) => void
  ): (() => void) => {
    const started = performance.now()
    const latency = () => Math.round((performance.now() - started) * 1000) / 1000
    const target = targetOf(request.url)
    if ("problem" in target) {
      resume({ _tag: "Failed", reason: `refused target: ${target.problem}`, latencyMs: 0 })
      return () => {}
    }
    let settled = false
    let controller: Dispatcher.DispatchController | undefined
    let status: number | undefined
    let retryAfterMs: number | undefined
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => controller?.abort(new Error("webhook attempt over"))
    const settle = (response: WebhookTransport.WebhookResponse) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(response)
    }
    const answered = () =>
      settle({
        _tag: "Answered",
        status: status!,
        latencyMs: latency(),
        snippet: Buffer.concat(chunks).toString("utf8"),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs })
      })
    const timer = setTimeout(() => {
      if (status !== undefined) answered()
      else
        settle({
          _tag: "Failed",
          reason: `timeout: no answer within ${request.timeoutMs} ms`,
          latencyMs: latency()
        })
      stop()
    }, request.timeoutMs)
    agent.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: "POST",
        headers: request.headers,
        body: request.body
      },
      {
        onRequestStart: (c) => {
          controller = c
          // Timed out or cancelled while queued for a connection.
          if (settled) stop()
        },
        onResponseStart: (_, statusCode, headers) => {
          status = statusCode
          if (honoursRetryAfter(statusCode))
            retryAfterMs = retryAfterMillis(headers["retry-after"], Date.now())
        },
        onResponseData: (_, chunk) => {
          if (bytes < SNIPPET_BYTES) chunks.push(chunk.subarray(0, SNIPPET_BYTES - bytes))
          bytes += chunk.length
          // Enough for the snippet: stop reading a large body (the connection is not reused then).
          if (bytes >= SNIPPET_BYTES) {
            answered()
            stop()
          }
        },
        onResponseEnd: () => answered(),
        onResponseError: (_, error) => {
          if (status !== undefined) answered()
          else settle({ _tag: "Failed", reason: describe(error), latencyMs: latency() })
        }
      }
    )
    return () => {
      settled = true
      clearTimeout(timer)
      stop()
    }
  }

  const post = (request: WebhookTransport.WebhookRequest): Effect.Effect<WebhookTransport.WebhookResponse> =>
    Effect.async<WebhookTransport.WebhookResponse>((resume) => {
      const cancel = postCallback(request, (response) => resume(Effect.succeed(response)))
      return Effect.sync(cancel)
    })

  return {
    post,
    postCallback,
    close: () => {
      void agent.destroy().catch(() => {})
    }
  }
}

/** The transport as the `WebhookTransport` port; keep-alive sockets end with the layer's scope. */
export const layer = (options: Options): Layer.Layer<WebhookTransport.WebhookTransport> =>
  Layer.scoped(
    WebhookTransport.WebhookTransport,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => make(options)),
        (transport) => Effect.sync(transport.close)
      ),
      (transport) => ({ post: transport.post, postCallback: transport.postCallback })
    )
  )
