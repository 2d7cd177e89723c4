/**
 * `GET /ready` names what is not ready (issue 17): each reason of the server's check, such as a
 * background worker down too long, is a `NotReady` item of the 503.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Http from "../src/Http.js"
import * as Readiness from "../src/Readiness.js"
import * as TestApp from "./support/TestApp.js"

/** The app whose `/ready` runs `check`. */
const appWith = (check: Effect.Effect<void, unknown>) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(Http.layer),
    Layer.provide(Layer.succeed(Readiness.Readiness, { check })),
    Layer.provideMerge(TestApp.TestPorts()),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )

const workerDown = 'background worker "Webhook dispatcher" has been down for 41 s'

describe("readiness", () => {
  it.live("GET /ready is 503 with a NotReady item naming the background worker that is down", () =>
    Effect.gen(function* () {
      const ready = yield* TestApp.send("GET", "/ready")
      expect([ready.status, ready.json]).toEqual([
        503,
        { payload: {}, errors: [{ code: "NotReady", message: workerDown }] }
      ])
      expect((yield* TestApp.send("GET", "/health")).status).toBe(200)
    }).pipe(Effect.provide(appWith(Effect.fail(new Readiness.NotReady({ reasons: [workerDown] })))))
  )

  it.live(
    "Readiness.all gives the reasons of every check that is not ready: the store's and the workers'",
    () =>
      Effect.gen(function* () {
        const ready = yield* TestApp.send("GET", "/ready")
        expect([ready.status, ready.json]).toEqual([
          503,
          {
            payload: {},
            errors: [
              { code: "NotReady", message: Readiness.STORE_DOWN },
              { code: "NotReady", message: workerDown }
            ]
          }
        ])
      }).pipe(
        Effect.provide(
          appWith(
            Readiness.all([
              Effect.fail(new Readiness.NotReady({ reasons: [Readiness.STORE_DOWN] })),
              Effect.void,
              Effect.fail(new Readiness.NotReady({ reasons: [workerDown] }))
            ])
          )
        )
      )
  )

  it.live("GET /ready is 200 when every check passes", () =>
    Effect.gen(function* () {
      const ready = yield* TestApp.send("GET", "/ready")
      expect([ready.status, ready.json]).toEqual([200, { payload: { status: "ok" }, errors: [] }])
    }).pipe(Effect.provide(appWith(Readiness.all([Effect.void, Effect.void]))))
  )
})
