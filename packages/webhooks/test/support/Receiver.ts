/**
 * A merchant's webhook endpoint for tests: a real HTTP or HTTPS server on 127.0.0.1 that records
 * the exact bytes and headers of every request and answers as the test says (status, delay).
 */
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

export interface Received {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
}

export interface Answer {
  readonly status: number
  readonly delayMs?: number
  readonly body?: string
  readonly headers?: Record<string, string>
}

/** A self-signed certificate for 127.0.0.1, made with openssl. */
export const certificate = (() => {
  let made: { key: string; cert: string } | undefined
  return () => {
    if (made) return made
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-cert-"))
    try {
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
          .concat(["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
          .concat(["-keyout", Path.join(dir, "key.pem"), "-out", Path.join(dir, "cert.pem")]),
        { stdio: "pipe" }
      )
      made = {
        key: Fs.readFileSync(Path.join(dir, "key.pem"), "utf8"),
        cert: Fs.readFileSync(Path.join(dir, "cert.pem"), "utf8")
      }
      return made
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
})()

/** Starts a receiver; `answer` decides each response. Closed with the scope. */
export const receiver = (options: { readonly tls: boolean }) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{
          readonly url: string
          readonly received: Array<Received>
          answer: (request: Received) => Answer
          readonly server: Http.Server
        }>((resolve) => {
          const state = {
            received: [] as Array<Received>,
            answer: (_: Received): Answer => ({ status: 200 })
          }
          const handler = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
            const chunks: Array<Buffer> = []
            req.on("data", (c: Buffer) => chunks.push(c))
            req.on("end", () => {
              const request = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) }
              state.received.push(request)
              const answer = state.answer(request)
              const send = () => {
                if (res.destroyed) return
                res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers })
                res.end(answer.body ?? "ok")
              }
              if (answer.delayMs) setTimeout(send, answer.delayMs)
              else send()
            })
          }
          const server = options.tls ? Https.createServer(certificate(), handler) : Http.createServer(handler)
          server.listen(0, "127.0.0.1", () => {
            const port = (server.address() as Net.AddressInfo).port
            const result = {
              url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}/hook`,
              received: state.received,
              get answer() {
                return state.answer
              },
              set answer(f) {
                state.answer = f
              },
              server
            }
            resolve(result)
          })
        })
    ),
    ({ server }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      )
  )

/** A URL on 127.0.0.1 where nothing listens (a refused connection). */
export const closedPortUrl = (tls: boolean) =>
  Effect.promise(
    () =>
      new Promise<string>((resolve) => {
        const server = Http.createServer()
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as Net.AddressInfo).port
          server.close(() => resolve(`${tls ? "https" : "http"}://127.0.0.1:${port}/hook`))
        })
      })
  )

/** `openssl dgst -sha256 -hmac <secret>` of the Base64 of `bytes`: the spec's signature, computed by openssl. */
export const opensslSignature = (bytes: Buffer, secret: string): string => {
  const out = spawnSync("openssl", ["dgst", "-sha256", "-hmac", secret], {
    input: bytes.toString("base64"),
    encoding: "utf8"
  })
  if (out.status !== 0) throw new Error(`openssl failed: ${out.stderr}`)
  return out.stdout.trim().split("= ").pop()!
}
