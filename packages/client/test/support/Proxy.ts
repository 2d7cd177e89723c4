/**
 * HTTP servers of the tests' own on 127.0.0.1: a proxy in front of Cobro that records every request
 * and can cut the connection after the upstream answered (the request took effect, its answer is
 * lost), a proxy that records every answer's status, and a scripted server that answers a list of responses (503 with `Retry-After`, …).
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

/** A request a recording proxy passed on, and the status the upstream answered it with. */
export interface Answered {
  readonly method: string
  /** The path, without the query. */
  readonly path: string
  readonly status: number
}

/**
 * A proxy to `upstream` that passes every request and answer through unchanged (redirects
 * included: it never follows them) and lists in `answered` each request with the status answered.
 */
export const recorder = (upstream: string) =>
  Effect.gen(function* () {
    const answered: Array<Answered> = []
    const server = Http.createServer(async (req, res) => {
      const body = await readBody(req)
      const method = req.method ?? "GET"
      const url = req.url ?? "/"
      const answer = await fetch(upstream + url, {
        method,
        redirect: "manual",
        headers: Object.entries(req.headers).flatMap(([name, value]) =>
          typeof value === "string" && name !== "host" && name !== "connection"
            ? [[name, value] as [string, string]]
            : []
        ),
        ...(body === "" ? {} : { body })
      })
      const bytes = Buffer.from(await answer.arrayBuffer())
      answered.push({ method, path: new URL(url, upstream).pathname, status: answer.status })
      // `fetch` has decoded the body: its length and encoding are this proxy's to set.
      const dropped = new Set(["content-length", "content-encoding", "transfer-encoding", "connection"])
      const headers: Record<string, string> = {}
      answer.headers.forEach((value, name) => {
        if (!dropped.has(name)) headers[name] = value
      })
      res.writeHead(answer.status, headers).end(bytes)
    })
    const url = yield* listen(server)
    return { url, answered }
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
