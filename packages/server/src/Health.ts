/**
 * `GET /health` and `GET /ready` for orchestrators (issue 4, "Running it"): the process answers, and
 * the database answers. The server serves these alone when no HTTP API layer is given.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Store from "./Store.js"

const envelope = (payload: object, errors: ReadonlyArray<object> = []) =>
  HttpServerResponse.unsafeJson({ payload, errors }, { status: errors.length === 0 ? 200 : 503 })

/** 200 while the process serves. */
export const health = Effect.succeed(envelope({ status: "ok" }))

/** 200 when the database answers a query within 2 seconds, else 503. */
export const ready: Effect.Effect<HttpServerResponse.HttpServerResponse, never, SqlClient.SqlClient> =
  Effect.map(Store.ping, (ok) =>
    ok
      ? envelope({ status: "ready" })
      : envelope({}, [{ code: "NOT_READY", message: "The database does not answer" }])
  )

/** The two routes; anything else is a 404 in the envelope. */
export const app = HttpRouter.empty.pipe(
  HttpRouter.get("/health", health),
  HttpRouter.get("/ready", ready),
  Effect.catchTag("RouteNotFound", () =>
    Effect.succeed(
      HttpServerResponse.unsafeJson(
        { payload: {}, errors: [{ code: "NOT_FOUND", message: "No such resource" }] },
        { status: 404 }
      )
    )
  )
)
