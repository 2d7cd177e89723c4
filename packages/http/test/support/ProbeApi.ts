/**
 * A small API served with the real foundation (authentication, body reading, the envelope fallback,
 * idempotency) beside the admin group, to test the foundation before other groups exist.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type { YieldWrap } from "effect/Utils"
import * as AdminEndpoints from "@cobro/api/AdminEndpoints"
import * as AdminHandlers from "../../src/AdminHandlers.js"
import * as Authentication from "../../src/Authentication.js"
import * as Security from "@cobro/api/Security"
import * as Errors from "@cobro/api/Errors"
import * as Http from "../../src/Http.js"
import * as RequestBody from "../../src/RequestBody.js"
import * as JsonBody from "@cobro/api/JsonBody"
import * as Respond from "../../src/Respond.js"
import * as TestApp from "./TestApp.js"

const Who = Schema.Struct({ merchant_id: Schema.String, integration: Schema.String, mode: Schema.String })

class TerminalProbe extends HttpApiGroup.make("terminalProbe")
  .add(HttpApiEndpoint.get("who", "/payments/probe/who").addSuccess(Who))
  .add(HttpApiEndpoint.get("defect", "/payments/probe/defect").addSuccess(Who))
  .add(
    HttpApiEndpoint.post("count", "/payments/probe/count")
      .pipe(JsonBody.withJsonBody(Schema.Struct({ n: Schema.Number })))
      .addSuccess(Schema.Struct({ n: Schema.Number, calls: Schema.Number }), { status: 201 })
  )
  .middleware(Security.TerminalApi) {}

class ButtonProbe extends HttpApiGroup.make("buttonProbe")
  .add(HttpApiEndpoint.get("who", "/online/probe/who").addSuccess(Who))
  .add(
    HttpApiEndpoint.post("echo", "/online/probe/echo")
      .pipe(JsonBody.withJsonBody(Schema.Unknown))
      .addSuccess(Schema.Unknown)
  )
  .add(HttpApiEndpoint.get("defect", "/online/probe/defect").addSuccess(Who))
  .add(HttpApiEndpoint.post("fail", "/online/probe/fail").addSuccess(Who))
  .middleware(Security.PaymentButton) {}

/** The probe API: the admin group and two probe groups. */
// Same id as CobroApi, so that the real admin handlers serve its admin group.
export class ProbeApi extends HttpApi.make("cobro")
  .add(AdminEndpoints.AdminGroup)
  .add(TerminalProbe)
  .add(ButtonProbe)
  .addError(Errors.InternalServerError) {}

const who = Effect.map(Security.CurrentCredential, (c) => ({
  merchant_id: c.merchantId,
  integration: c.integration,
  mode: c.mode
}))

/** How many times `POST /payments/probe/count` ran (idempotent replays do not run it). */
export const calls = Effect.runSync(Ref.make(0))

const TerminalProbeLive = HttpApiBuilder.group(ProbeApi, "terminalProbe", (handlers) =>
  handlers
    .handle("who", () => who)
    .handle("defect", () => Effect.die(new Error("boom: a stack that must not leak")))
    .handleRaw("count", () =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(Schema.Struct({ n: Schema.Number }))
        const n = yield* Ref.updateAndGet(calls, (k) => k + 1)
        yield* Effect.sleep(body.n)
        return { n: body.n, calls: n }
      })
    )
)

const ButtonProbeLive = HttpApiBuilder.group(ProbeApi, "buttonProbe", (handlers) =>
  handlers
    .handle("who", () => who)
    .handleRaw("echo", () =>
      Effect.map(RequestBody.json, (value) => Respond.json({ payload: value, errors: [] }))
    )
    .handle("defect", () => Effect.die(new Error("boom")))
    .handle("fail", () => Effect.fail(Errors.InternalServerError.of()))
)

/**
 * The probe API served on a socket next to the real app's ports; `clock` as in `TestApp.TestPorts`
 * (e.g. `TestClock.layerNotVirtual` to run on the test's own `TestClock`).
 */
export const layer = (options: { readonly clock?: Layer.Layer<any> } = {}) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(
      Layer.mergeAll(Http.middlewareFor(ProbeApi)).pipe(
        Layer.provideMerge(
          HttpApiBuilder.api(ProbeApi).pipe(
            Layer.provide(Layer.mergeAll(AdminHandlers.layer, TerminalProbeLive, ButtonProbeLive))
          )
        ),
        Layer.provide(Layer.mergeAll(Authentication.layer, Authentication.layerAdmin))
      )
    ),
    Layer.provideMerge(TestApp.TestPorts(options)),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )

/** Runs a test's effect on a fresh probe app of its own. */
export const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  Effect.provide(effect, layer()) as Effect.Effect<A, E>

/** A test's body run on a fresh probe app of its own: `it.live("…", ProbeApi.fresh(function* () { … }))`. */
export const fresh =
  <Eff extends YieldWrap<Effect.Effect<any, any, any>>, A>(body: () => Generator<Eff, A, never>) =>
  () =>
    run(Effect.gen(body))
