/**
 * The terminal sandbox (issue 4, "Admin and sandbox contract": scripts outside the repository depend
 * on it, keep it exact): set a simulated terminal's behaviour and act on it, with a terminal-API
 * test key of the terminal's merchant. Success bodies are the terminal's state, bare.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"
import { withJsonBody } from "./JsonBody.js"

/**
 * The terminal named in the path.
 *
 * @category schemas
 */
export const TerminalPath = Schema.Struct({ terminal_serial: Schema.String })

/**
 * `PUT …/behavior`: the mode, and optionally the R6 charge-notification setting (default on).
 *
 * @category schemas
 */
export const BehaviorRequest = Schema.Struct({
  mode: TerminalSandbox.Behavior,
  charge_notifications: Schema.optionalWith(Schema.Boolean, { nullable: true, exact: true })
}).annotations({ identifier: "SandboxBehaviorRequest" })

/**
 * `POST …/actions`.
 *
 * @category schemas
 */
export const ActionRequest = Schema.Struct({ action: TerminalSandbox.Action }).annotations({
  identifier: "SandboxActionRequest"
})

/**
 * The sandbox group: `Authorization: x-api-key <terminal API test identity key>`.
 *
 * @category groups
 */
export class SandboxGroup extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.put("setBehavior", "/sandbox/v1/terminals/:terminal_serial/behavior")
      .setPath(TerminalPath)
      .pipe(withJsonBody(BehaviorRequest))
      .addSuccess(TerminalSandbox.TerminalState)
  )
  .add(
    HttpApiEndpoint.post("performAction", "/sandbox/v1/terminals/:terminal_serial/actions")
      .setPath(TerminalPath)
      .pipe(withJsonBody(ActionRequest))
      .addSuccess(TerminalSandbox.TerminalState)
      .addError(Errors.Conflict)
  )
  // A production key is 403 and another merchant's terminal 404 on both.
  .addError(Errors.Forbidden)
  .addError(Errors.NotFound)
  .middleware(Security.TerminalApi)
  .annotate(OpenApi.Title, "terminal sandbox")
  .annotate(
    OpenApi.Description,
    "Simulated Smart and Smart Pro terminals, sandbox side: the state shows and the actions decide sandbox checkouts only; production checkouts on the same serial are approved at once by an untouched production terminal. A production key is 403; another merchant's terminal is 404; an action the terminal cannot do now is 409 ActionRefused."
  ) {}
