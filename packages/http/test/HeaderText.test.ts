/**
 * Text written into a response header (issue 31, item 5): a `Location` is always a value Node
 * writes, and the last word on every answer (`Fallback`) turns one Node would refuse into a logged
 * 500 with a body, never an empty one logged nowhere; every 5xx it answers is logged with its cause.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import { validateHeaderValue } from "node:http"
import * as Errors from "@cobro/api/Errors"
import * as Fallback from "../src/Fallback.js"
import * as HeaderText from "@cobro/api/HeaderText"
import * as Html from "@cobro/panel/PanelHtml"

/** Whether Node's own check accepts the value. */
const nodeWrites = (value: string): boolean => {
  try {
    validateHeaderValue("location", value)
    return true
  } catch {
    return false
  }
}

interface Logged {
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  readonly failed: boolean
}

/** Runs `app` behind the fallback for a request of `method url`: the answer and what was logged. */
const answer = (
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>,
  url: string,
  method = "GET"
) =>
  Effect.gen(function* () {
    const logs: Array<Logged> = []
    const logger = Logger.make(({ annotations, cause, message }) => {
      logs.push({
        message,
        annotations: Object.fromEntries(HashMap.toEntries(annotations)),
        failed: cause._tag !== "Empty"
      })
    })
    const handled = Fallback.middleware([])(app as never) as Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      never,
      HttpServerRequest.HttpServerRequest
    >
    const response = yield* handled.pipe(
      Effect.provideService(
        HttpServerRequest.HttpServerRequest,
        HttpServerRequest.fromWeb(new Request(`http://localhost${url}`, { method }))
      ),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return { response, logs }
  })

describe("HeaderText (issue 31, item 5)", () => {
  it.prop(
    "a Location is always a value Node writes, and reads back as the text it was built from",
    [FastCheck.string({ unit: "binary" }), FastCheck.string({ unit: "grapheme" })],
    ([any, wellFormed]) => {
      expect(nodeWrites(HeaderText.location(any))).toBe(true)
      expect(HeaderText.isWritable(HeaderText.location(any))).toBe(true)
      const text = wellFormed.replace(/%/g, "")
      expect(decodeURIComponent(HeaderText.location(text))).toBe(text)
    }
  )

  it("printable ASCII stays as it is; anything else is percent-encoded as UTF-8", () => {
    expect(HeaderText.location("/panel/payments?mode=test&notice=resent")).toBe(
      "/panel/payments?mode=test&notice=resent"
    )
    expect(HeaderText.location("/panel/\u2028")).toBe("/panel/%E2%80%A8")
    expect(HeaderText.location("/a b\r\nSet-Cookie: x")).toBe("/a%20b%0D%0ASet-Cookie:%20x")
    expect(HeaderText.location("/caf\u00e9/\ud83d\ude00")).toBe("/caf%C3%A9/%F0%9F%98%80")
    expect(HeaderText.location("/\ud800")).toBe("/%EF%BF%BD")
  })

  it("isWritable is Node's rule: tab and printable Latin-1, nothing else", () => {
    for (const value of ["", "a\tb", "caf\u00e9", "~\u00ff"])
      expect(HeaderText.isWritable(value), value).toBe(true)
    for (const value of ["\u2028", "a\nb", "a\rb", "\u0000", "\u007f", "\u0100", "\ud83d\ude00"]) {
      expect(HeaderText.isWritable(value), JSON.stringify(value)).toBe(false)
      expect(nodeWrites(value), JSON.stringify(value)).toBe(false)
    }
  })
})

describe("Fallback: what is answered is writable, and every 5xx is logged (issue 31, item 5)", () => {
  it.effect(
    "an answer with a header Node cannot write is logged, naming the header, and answered 500 with a body",
    () =>
      Effect.gen(function* () {
        const unwritable = Effect.succeed(
          HttpServerResponse.empty({ status: 303, headers: { location: "/v1/\u2028" } })
        )
        const api = yield* answer(unwritable, "/v1/payment")
        expect(api.response.status).toBe(500)
        expect(api.response.headers["location"]).toBeUndefined()
        expect(api.logs).toHaveLength(1)
        expect(api.logs[0]!.annotations).toMatchObject({
          headers: ["location"],
          status: 303,
          url: "/v1/payment"
        })
        const panel = yield* answer(unwritable, "/panel/payments")
        expect(panel.response.status).toBe(500)
        expect(panel.response.headers["content-type"]).toMatch(/^text\/html/)
        expect(panel.response.headers["content-security-policy"]).toBe(
          Html.SECURITY_HEADERS["content-security-policy"]
        )
        expect(panel.logs).toHaveLength(1)
      })
  )

  it.effect("a typed 5xx (AP001, 503) is logged with its cause; a 4xx is not", () =>
    Effect.gen(function* () {
      const unmapped = yield* answer(
        Effect.fail(Errors.InternalServerError.of(Errors.Codes.AP001)),
        "/payments/app-checkout",
        "POST"
      )
      expect(unmapped.response.status).toBe(500)
      expect(unmapped.logs.map((l) => [l.message, l.failed])).toEqual([[["answered 500"], true]])
      const unavailable = yield* answer(
        Effect.fail(new Errors.ServiceUnavailable({ errors: [Errors.item("NotReady", "store")] })),
        "/ready"
      )
      expect(unavailable.response.status).toBe(503)
      expect(unavailable.logs).toHaveLength(1)
      const refused = yield* answer(Effect.fail(Errors.NotFound.of(Errors.Codes.NotFound, "no")), "/v1/x")
      expect(refused.response.status).toBe(404)
      expect(refused.logs).toEqual([])
    })
  )

  it.effect("a defect under /panel is logged and answered with the panel's error page", () =>
    Effect.gen(function* () {
      const { logs, response } = yield* answer(Effect.die(new Error("boom")), "/panel/payments")
      expect(response.status).toBe(500)
      expect(response.headers["content-type"]).toMatch(/^text\/html/)
      expect(response.headers["x-frame-options"]).toBe("DENY")
      expect(logs.map((l) => l.failed)).toEqual([true])
    })
  )
})
