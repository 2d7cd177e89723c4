/**
 * `cobro listen`'s pure parts: the Server-Sent Events parser (across any chunking), `--events`, and
 * the command's options as `@effect/cli` parses them, refused before anything is opened.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Http from "node:http"
import { UserError } from "../src/cli/CliError.js"
import * as Listen from "../src/cli/Listen.js"
import * as ServerSentEvents from "../src/cli/ServerSentEvents.js"
import * as Listener from "./support/Listener.js"
import * as Loopback from "./support/Loopback.js"
import * as ServerProcess from "./support/ServerProcess.js"

const STREAM =
  'event: ready\r\nid: 10.0\r\ndata: {"mode":"test"}\r\n\r\n' +
  ": heartbeat\n\n" +
  "event: notification\nid: 12.7\ndata: line one\ndata:line two\n\n" +
  "retry: 5\rdata: plain\r\r" +
  "event: nothing\n\n" +
  "id: 13.1\ndata\n\n"

const EXPECTED: ReadonlyArray<ServerSentEvents.ServerSentEvent> = [
  { event: "ready", data: '{"mode":"test"}', id: "10.0" },
  { event: "notification", data: "line one\nline two", id: "12.7" },
  { event: "message", data: "plain", id: "12.7" },
  { event: "message", data: "", id: "13.1" }
]

const parseIn = (chunks: ReadonlyArray<string>) => {
  const parse = ServerSentEvents.makeParser()
  return chunks.flatMap((chunk) => parse(chunk))
}

describe("the Server-Sent Events parser", () => {
  it("reads events, ids, multi-line data and every line ending, and skips comments and events without data", () => {
    expect(parseIn([STREAM])).toEqual(EXPECTED)
  })

  it.prop(
    "the events are the same however the text is cut into chunks (a CRLF split included)",
    [FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 12 })],
    ([cuts]) => {
      const points = [0, ...[...cuts].sort((a, b) => a - b), STREAM.length]
      const chunks = points.slice(1).map((end, i) => STREAM.slice(points[i], end))
      expect(parseIn(chunks)).toEqual(EXPECTED)
    }
  )

  it("an event is dispatched only once its blank line arrives", () => {
    const parse = ServerSentEvents.makeParser()
    expect(parse("data: a\n")).toEqual([])
    expect(parse("\n")).toEqual([{ event: "message", data: "a", id: undefined }])
  })
})

describe("--events", () => {
  it.effect("takes notification types separated by commas, in any case", () =>
    Effect.gen(function* () {
      expect(yield* Listen.parseEvents("SALE_APPROVED, void_rejected")).toEqual([
        "SALE_APPROVED",
        "VOID_REJECTED"
      ])
      const wrong = yield* Effect.flip(Listen.parseEvents("SALE_APPROVED,REFUND"))
      expect(wrong).toBeInstanceOf(UserError)
      expect(wrong.message).toContain("(not REFUND)")
      expect(wrong.message).toContain("SALE_APPROVED, SALE_REJECTED, VOID_APPROVED, VOID_REJECTED")
      expect(yield* Effect.flip(Listen.parseEvents(" , "))).toBeInstanceOf(UserError)
    })
  )
})

const run = (args: ReadonlyArray<string>) =>
  Command.run(Listen.command, { name: "cobro", version: "0.0.0" })(["node", "cobro", ...args]).pipe(
    Effect.provide(NodeContext.layer),
    Effect.either
  )

describe("cobro listen's options", () => {
  it.effect("--forward-to is required, and so is a key (--api-key or COBRO_API_KEY)", () =>
    Effect.gen(function* () {
      const noForward = yield* run(["--api-key", "id_test_x"])
      expect(Either.isLeft(noForward) && ValidationError.isValidationError(noForward.left)).toBe(true)
      if (process.env["COBRO_API_KEY"] === undefined) {
        const noKey = yield* run(["--forward-to", "http://127.0.0.1:9/hook"])
        expect(Either.isLeft(noKey) && ValidationError.isValidationError(noKey.left)).toBe(true)
      }
    })
  )

  it.effect("a wrong --events, --forward-to or --api-url is a usage error before anything is opened", () =>
    Effect.gen(function* () {
      const key = ["--api-key", "id_test_x"]
      const events = yield* run([...key, "--forward-to", "http://127.0.0.1:9/hook", "--events", "SALE"])
      expect(Either.flip(events)).toMatchObject({ right: { _tag: "UserError" } })
      const forward = yield* run([...key, "--forward-to", "localhost:3000/hook"])
      expect(Either.flip(forward)).toMatchObject({
        right: { _tag: "UserError", message: expect.stringContaining("--forward-to") }
      })
      const api = yield* run([...key, "--forward-to", "http://127.0.0.1:9/hook", "--api-url", "ftp://cobro"])
      expect(Either.flip(api)).toMatchObject({
        right: { _tag: "UserError", message: expect.stringContaining("--api-url") }
      })
    })
  )
})

describe("stopping cobro listen", () => {
  it.live(
    "SIGINT ends the wait (so the command ends with status 0), and the runtime's own handlers are back after it",
    () =>
      Effect.gen(function* () {
        const runtimes = () => process.listeners("SIGINT")
        const own = () => {}
        process.on("SIGINT", own)
        const before = runtimes()
        const fiber = yield* Effect.fork(Listen.signalled)
        yield* Effect.sleep("10 millis")
        // Taken over: the runtime's handler would interrupt the program (exit 130).
        expect(runtimes()).not.toContain(own)
        process.emit("SIGINT")
        yield* Fiber.join(fiber)
        expect(runtimes()).toEqual(before)
        process.removeListener("SIGINT", own)
      })
  )
})

/** A stand-in for Cobro's stream: answers each request with the next of `responses`, keeping its headers. */
const fakeStream = (responses: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const requests: Array<Http.IncomingHttpHeaders> = []
    const server = Http.createServer((req, res) => {
      const text = responses[requests.length]
      requests.push(req.headers)
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(text ?? "")
      // The last one stays open; the others end (the stream dropped).
      if (requests.length < responses.length) res.end()
    })
    return { url: yield* Loopback.serve(server), requests }
  })

describe("the listener against a stream", () => {
  it.scopedLive(
    "a malformed event is reported and skipped; after the stream ends it reconnects with the last event id and forwards nothing twice",
    () =>
      Effect.gen(function* () {
        const ready =
          'event: ready\nid: 1.0\ndata: {"merchant_id":"MER_x","signing_secret":"","mode":"test"}\n\n'
        const good = (id: string, position: string) =>
          `event: notification\nid: ${position}\ndata: ${JSON.stringify({
            id,
            type: "SALE_APPROVED",
            body: `{"id":"${id}"}`,
            headers: { "content-type": "application/json", "x-service-signature": "sig" }
          })}\n\n`
        const stream = yield* fakeStream([
          `${ready}event: notification\nid: 2.5\ndata: {not json\n\n${good("n-1", "3.7")}`,
          `event: ready\nid: 3.7\ndata: {"merchant_id":"MER_x","signing_secret":"","mode":"test"}\n\n${good("n-2", "4.1")}`
        ])
        const local = yield* ServerProcess.webhookReceiver
        const { out, err, stopped } = yield* Listener.fork({
          forwardTo: local.url,
          apiKey: Redacted.make("id_test_x"),
          apiUrl: stream.url,
          events: Option.none()
        })
        yield* ServerProcess.within(
          10_000,
          () => [...out, ...err].join("\n"),
          Effect.sync(() => local.received.length),
          (n) => n >= 2
        )
        expect(Exit.isSuccess(yield* stopped)).toBe(true)
        expect(local.received.map((r) => r.body)).toEqual(['{"id":"n-1"}', '{"id":"n-2"}'])
        expect(local.received[0]!.headers["x-service-signature"]).toBe("sig")
        expect(stream.requests.map((headers) => headers["last-event-id"])).toEqual([undefined, "3.7"])
        expect(stream.requests[0]!["authorization"]).toBe("x-api-key id_test_x")
        expect(err).toContain("Ignored a malformed notification event from the server.")
        expect(err.some((line) => line.startsWith("Connection lost (the server ended the stream)"))).toBe(
          true
        )
        expect(out.filter((line) => line.startsWith("Ready."))).toHaveLength(1)
        expect(out.filter((line) => / SALE_APPROVED n-\d → 200$/.test(line))).toHaveLength(2)
      })
  )
})
