/**
 * HTTP servers of the tests' own on 127.0.0.1: a proxy in front of Cobro that records every request
 * and can cut the connection after the upstream answered (the request took effect, its answer is
 * lost), and a scripted server that answers a list of responses (503 with `Retry-After`, …).
 */
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type * as Net from "node:net"

/** A request a test server received. */
export interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
  /** When it arrived (ms since the epoch). */
  readonly at: number
}

const listen = (server: Http.Server) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<string>((resolve) =>
          server.listen(0, "127.0.0.1", () =>
            resolve(`http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`)
          )
        )
    ),
    () =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      )
  )

const readBody = (req: Http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => resolve(body))
  })

/** A proxy to `upstream`: `seen` lists every request; `cutNext(n)` drops the next n answers. */
export const proxy = (upstream: string) =>
  Effect.gen(function* () {
    const seen: Array<Seen> = []
    let cuts = 0
    const server = Http.createServer(async (req, res) => {
      const body = await readBody(req)
      seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, at: Date.now() })
      const answer = await fetch(upstream + (req.url ?? "/"), {
        method: req.method ?? "GET",
        headers: Object.entries(req.headers).flatMap(([name, value]) =>
          typeof value === "string" && name !== "host" && name !== "connection"
            ? [[name, value] as [string, string]]
            : []
        ),
        ...(body === "" ? {} : { body })
      })
      const text = await answer.text()
      if (cuts > 0) {
        cuts--
        // The upstream ran the request and answered; the client never hears it.
        req.socket.destroy()
        return
      }
      const headers: Record<string, string> = {}
      answer.headers.forEach((value, name) => {
        if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection")
          headers[name] = value
      })
      res.writeHead(answer.status, headers).end(text)
    })
    const url = yield* listen(server)
    return { url, seen, cutNext: (n: number) => void (cuts += n) }
  })

/** A scripted answer: a status, headers and a body. */
export interface Scripted {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Answer only after this many milliseconds. */
  readonly delayMs?: number
}

/** A server that answers `script` in order (then its last answer again); `seen` lists the requests. */
export const scripted = (script: ReadonlyArray<Scripted>) =>
  Effect.gen(function* () {
    const seen: Array<Seen> = []
    const server = Http.createServer(async (req, res) => {
      const body = await readBody(req)
      seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, at: Date.now() })
      const answer = script[Math.min(seen.length - 1, script.length - 1)]!
      if (answer.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, answer.delayMs))
      if (res.destroyed) return
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? "")
    })
    const url = yield* listen(server)
    return { url, seen }
  })

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps the raw bodies and headers. */
export const receiver = Effect.gen(function* () {
  const received: Array<Seen> = []
  const server = Http.createServer(async (req, res) => {
    const body = await readBody(req)
    received.push({
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
      at: Date.now()
    })
    res.writeHead(200).end("ok")
  })
  const url = yield* listen(server)
  return { url: `${url}/hook`, received }
})
