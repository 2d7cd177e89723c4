/**
 * The `WebhookTransport` port over `node:http`/`node:https` (spec D, Registration and delivery):
 * one POST of the exact bytes, a 2-second deadline for the whole exchange, no redirects followed,
 * the target's addresses checked after DNS (see `UrlSafety`). Never fails: a network error, a
 * timeout or a refused target is a `Failed` response, recorded as such.
 */
import * as WebhookTransport from "@cobro/domain/WebhookTransport"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Http from "node:http"
import * as Https from "node:https"
import { performance } from "node:perf_hooks"
import * as Tls from "node:tls"
import * as UrlSafety from "./UrlSafety.js"

/** The spec's answer time: "within at most 2 seconds". */
export const TIMEOUT_MS = 2000

/** How much of a response body is read for the recorded snippet (the decider keeps 512 characters). */
export const SNIPPET_BYTES = 2048

/** Options of the transport. */
export interface Options extends UrlSafety.Policy {
  /** Sockets kept per host (keep-alive); default 64. */
  readonly maxSockets?: number
  /** Extra trusted CA certificates (PEM) for https targets, beside the system's (tests, private CAs). */
  readonly ca?: ReadonlyArray<string>
}

const describe = (error: unknown): string => {
  if (error instanceof UrlSafety.UnsafeTarget) return `refused target: ${error.message}`
  const e = error as NodeJS.ErrnoException
  if (e?.code === "ECONNREFUSED") return `connection refused (${e.message})`
  return e?.code ? `${e.code}: ${e.message}` : String(error)
}

/** Makes the transport; `close` ends its keep-alive sockets. */
export const make = (options: Options) => {
  const lookup = UrlSafety.safeLookup(options)
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64, lookup } as const
  const httpAgent = new Http.Agent(agentOptions)
  const httpsAgent = new Https.Agent({
    ...agentOptions,
    ...(options.ca ? { ca: [...Tls.rootCertificates, ...options.ca] } : {})
  })

  const post = (request: WebhookTransport.WebhookRequest): Effect.Effect<WebhookTransport.WebhookResponse> =>
    Effect.async<WebhookTransport.WebhookResponse>((resume) => {
      const started = performance.now()
      const latency = () => Math.round((performance.now() - started) * 1000) / 1000
      const problem = UrlSafety.urlProblem(request.url, options)
      if (problem !== undefined) {
        resume(Effect.succeed({ _tag: "Failed", reason: `refused target: ${problem}`, latencyMs: 0 }))
        return
      }
      const url = new URL(request.url)
      let settled = false
      const settle = (response: WebhookTransport.WebhookResponse) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(Effect.succeed(response))
      }
      const transport = url.protocol === "https:" ? Https : Http
      const req = transport.request(url, {
        method: "POST",
        agent: url.protocol === "https:" ? httpsAgent : httpAgent,
        lookup,
        headers: { ...request.headers, "content-length": String(request.body.byteLength) }
      })
      let status: number | undefined
      const chunks: Array<Buffer> = []
      let bytes = 0
      const answered = () =>
        settle({
          _tag: "Answered",
          status: status!,
          latencyMs: latency(),
          snippet: Buffer.concat(chunks).toString("utf8")
        })
      const timer = setTimeout(() => {
        if (status !== undefined) answered()
        else
          settle({
            _tag: "Failed",
            reason: `timeout: no answer within ${request.timeoutMs} ms`,
            latencyMs: latency()
          })
        req.destroy()
      }, request.timeoutMs)
      req.on("response", (res) => {
        status = res.statusCode ?? 0
        res.on("data", (chunk: Buffer) => {
          if (bytes < SNIPPET_BYTES) chunks.push(chunk.subarray(0, SNIPPET_BYTES - bytes))
          bytes += chunk.length
          // Enough for the snippet: stop reading a large body (the socket is not reused then).
          if (bytes >= SNIPPET_BYTES) {
            answered()
            res.destroy()
          }
        })
        res.on("end", answered)
        res.on("error", answered)
        res.on("close", answered)
      })
      req.on("error", (error) => {
        if (status !== undefined) answered()
        else settle({ _tag: "Failed", reason: describe(error), latencyMs: latency() })
      })
      req.end(request.body)
      return Effect.sync(() => {
        clearTimeout(timer)
        req.destroy()
      })
    })

  return {
    post,
    close: () => {
      httpAgent.destroy()
      httpsAgent.destroy()
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
      (transport) => ({ post: transport.post })
    )
  )
