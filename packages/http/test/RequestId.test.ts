/**
 * The request id (issue 34, "Logs that join them"; spec-decisions SV-38), over a real socket: a
 * client's `X-Request-Id` is echoed when it is a plain token and replaced when it is not, one is
 * made when none is sent, every answer carries it (404s, 405s, errors, pages) and the request's log
 * lines carry it as `request_id`.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Net from "node:net"
import * as RequestId from "../src/RequestId.js"
import * as ProbeApi from "./support/ProbeApi.js"
import * as TestApp from "./support/TestApp.js"

/** A new id as `RequestId.make` writes them. */
const MADE = /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const get = (path: string, headers: Record<string, string> = {}) => TestApp.send("GET", path, { headers })

const idOf = (reply: TestApp.Reply) => reply.headers[RequestId.HEADER]

describe("RequestId.isAccepted", () => {
  it("takes 1 to 128 letters, digits, '.', '_', ':' or '-'", () => {
    for (const id of ["a", "abc-123", "7f3c.9a_b:c-d", "x".repeat(128), "00f067aa0ba902b7"]) {
      expect(RequestId.isAccepted(id), id).toBe(true)
    }
  })

  it("refuses the empty, the too long, spaces, CR/LF, quotes, markup and non-ASCII", () => {
    for (const id of [
      undefined,
      "",
      "x".repeat(129),
      "a b",
      "a\r\nSet-Cookie: x=1",
      "a\n",
      "a\t",
      '"a"',
      "<script>",
      "a,b",
      "café",
      "a\u0000"
    ]) {
      expect(RequestId.isAccepted(id), JSON.stringify(id)).toBe(false)
    }
  })

  it.prop(
    "accepts exactly the ids the pattern allows, whatever the string",
    [FastCheck.string({ maxLength: 140 })],
    ([id]) => {
      expect(RequestId.isAccepted(id)).toBe(/^[A-Za-z0-9._:-]{1,128}$/.test(id))
    }
  )

  it("a made id is accepted, and unique", () => {
    const ids = new Set(Array.from({ length: 1000 }, RequestId.make))
    expect(ids.size).toBe(1000)
    for (const id of ids) expect(RequestId.isAccepted(id) && MADE.test(id)).toBe(true)
  })
})

TestApp.shared()("X-Request-Id on the app's answers", (it) => {
  it.effect("a valid incoming id is echoed as it was sent", () =>
    Effect.gen(function* () {
      for (const id of ["client-42", "4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7", "x".repeat(128)]) {
        const reply = yield* get("/health", { "x-request-id": id })
        expect(reply.status).toBe(200)
        expect(idOf(reply)).toBe(id)
      }
    })
  )

  it.effect("without one, each request gets a new id of its own", () =>
    Effect.gen(function* () {
      const ids = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const id = idOf(yield* get("/health"))
        expect(id).toMatch(MADE)
        ids.add(id!)
      }
      expect(ids.size).toBe(20)
    })
  )

  it.effect("an invalid id (too long, bad characters) is replaced, never echoed", () =>
    Effect.gen(function* () {
      for (const id of ["x".repeat(129), "a b", "<script>alert(1)</script>", "a;b", "é"]) {
        const reply = yield* get("/health", { "x-request-id": id })
        expect(idOf(reply)).toMatch(MADE)
      }
    })
  )

  it.effect("a 404, a 405 and an error envelope carry it", () =>
    Effect.gen(function* () {
      const notFound = yield* get("/nowhere", { "x-request-id": "r-404" })
      TestApp.expectError(notFound, 404, "NotFound")
      expect(idOf(notFound)).toBe("r-404")
      const notAllowed = yield* TestApp.send("DELETE", "/health", { headers: { "x-request-id": "r-405" } })
      expect(notAllowed.status).toBe(405)
      expect(idOf(notAllowed)).toBe("r-405")
      const unauthorized = yield* get("/online/link/v1/payment_methods", { "x-request-id": "r-401" })
      expect(unauthorized.status).toBe(401)
      expect(unauthorized.json.errors).toBeDefined()
      expect(idOf(unauthorized)).toBe("r-401")
      const refused = yield* TestApp.send("POST", "/admin/v1/merchants", {
        admin: true,
        body: "{not json",
        headers: { "x-request-id": "r-400" }
      })
      expect(refused.status).toBe(400)
      expect(idOf(refused)).toBe("r-400")
    })
  )

  it.effect("the checkout page, the panel and the API's documents carry it", () =>
    Effect.gen(function* () {
      for (const path of ["/checkout/LNK_nope", "/panel/login", "/openapi.json", "/docs"]) {
        const reply = yield* get(path, { "x-request-id": "page-1" })
        expect(idOf(reply), path).toBe("page-1")
      }
    })
  )

  it.effect("a header value a client library would not send (a tab, bytes beyond ASCII) is replaced", () =>
    Effect.gen(function* () {
      const server = yield* HttpServer.HttpServer
      const port = (server.address as HttpServer.TcpAddress).port
      for (const value of [Buffer.from("a\tb"), Buffer.from([0x61, 0xe9, 0x62]), Buffer.from("a b")]) {
        const head = Buffer.concat([
          Buffer.from("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Request-Id: "),
          value,
          Buffer.from("\r\n\r\n")
        ])
        const response = yield* Effect.promise(() => rawRequest(port, head))
        expect(response).toMatch(/^HTTP\/1\.1 200/)
        expect(/\r\nx-request-id: ([^\r\n]*)\r\n/i.exec(response)?.[1]).toMatch(MADE)
      }
    })
  )
})

/** What the request's log calls carried: their message and annotations. */
const captured: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []

const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, message }) => {
    captured.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
  })
)

layer(ProbeApi.layer().pipe(Layer.provide(capture)), { excludeTestServices: true })(
  "X-Request-Id in the request's logs",
  (it) => {
    it.effect("a 500's log line (the defect's cause) carries the request id the answer carries", () =>
      Effect.gen(function* () {
        const merchant = yield* TestApp.createMerchant()
        captured.length = 0
        const reply = yield* TestApp.send("GET", "/payments/probe/defect", {
          key: merchant.terminal.test,
          headers: { "x-request-id": "trace-me-1" }
        })
        expect(reply.status).toBe(500)
        expect(idOf(reply)).toBe("trace-me-1")
        expect(captured.length).toBeGreaterThan(0)
        for (const line of captured) expect(line.annotations["request_id"]).toBe("trace-me-1")

        captured.length = 0
        const made = yield* TestApp.send("GET", "/online/probe/defect", { key: merchant.button.test })
        expect(idOf(made)).toMatch(MADE)
        expect(captured.length).toBeGreaterThan(0)
        for (const line of captured) expect(line.annotations["request_id"]).toBe(idOf(made))
      })
    )
  }
)

/** One request written on a raw socket (header bytes as given); the response head as text. */
const rawRequest = (port: number, head: Buffer) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.connect(port, "127.0.0.1", () => socket.end(head))
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString("latin1")))
    socket.on("end", () => resolve(text))
    socket.on("error", reject)
  })
