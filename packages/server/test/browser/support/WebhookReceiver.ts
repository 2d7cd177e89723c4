/**
 * A merchant's webhook endpoint for the browser suites: a real HTTP server on 127.0.0.1 that answers
 * 200 and keeps the exact body and signature of every notification.
 */
import * as Http from "node:http"
import type * as Net from "node:net"

/** One notification as received. */
export interface Received {
  readonly body: string
  readonly signature: string | undefined
  readonly json: any
}

/** A running receiver. */
export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Waits until a notification matches, or fails after `timeoutMs` with what arrived. */
  readonly waitFor: (match: (r: Received) => boolean, timeoutMs?: number) => Promise<Received>
  readonly close: () => Promise<void>
}

/** Starts a receiver on a free port. */
export const start = (): Promise<Receiver> =>
  new Promise((resolve) => {
    const received: Array<Received> = []
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const signature = req.headers["x-service-signature"]
        let json: unknown = undefined
        try {
          json = JSON.parse(body)
        } catch {
          json = undefined
        }
        received.push({ body, signature: typeof signature === "string" ? signature : undefined, json })
        res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        received,
        waitFor: async (match, timeoutMs = 90_000) => {
          const deadline = Date.now() + timeoutMs
          for (;;) {
            const found = received.find(match)
            if (found !== undefined) return found
            if (Date.now() > deadline) {
              throw new Error(
                `no matching webhook within ${timeoutMs} ms; received: ${JSON.stringify(received.map((r) => r.json))}`
              )
            }
            await new Promise((r) => setTimeout(r, 200))
          }
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
