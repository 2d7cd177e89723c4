/**
 * Health endpoints for orchestrators (issue 4 "Running it"): `GET /health` answers while the process
 * runs; `GET /ready` answers 200 when the store answers and no background worker has been down too
 * long, else 503 with a `NotReady` item per reason. No key is needed.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Envelope from "@cobro/domain/Envelope"
import * as Schema from "effect/Schema"
import * as Errors from "./Errors.js"

/**
 * The body of a healthy answer.
 *
 * @category schemas
 */
export const Status = Envelope.Envelope(Schema.Struct({ status: Schema.Literal("ok") }))

/**
 * The health group.
 *
 * @category groups
 */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Status))
  .add(HttpApiEndpoint.get("ready", "/ready").addSuccess(Status).addError(Errors.ServiceUnavailable))
  .annotate(OpenApi.Description, "Liveness and readiness for orchestrators; no key needed.") {}
