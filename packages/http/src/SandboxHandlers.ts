/**
 * Handlers of the terminal sandbox (issue 4, "Admin and sandbox contract") over the `TerminalSandbox`
 * port: a terminal-API test key of the terminal's merchant (403 for a production key, 404 for a
 * terminal the merchant has not bound, 409 for an action the terminal cannot do now).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CobroApi } from "@cobro/api/Api"
import * as Security from "@cobro/api/Security"
import * as Errors from "@cobro/api/Errors"
import * as RequestBody from "./RequestBody.js"
import * as SandboxEndpoints from "@cobro/api/SandboxEndpoints"

const terminalNotFound = (serial: string) =>
  Errors.NotFound.of(
    Errors.Codes.TerminalNotFound,
    `no terminal ${serial} is bound to this merchant`,
    "terminal_serial"
  )

/** The sandbox error of the port's errors. */
export const fromSandboxError = (
  error: TerminalSandbox.UnknownTerminal | TerminalSandbox.ActionRefused
): Errors.NotFound | Errors.Conflict =>
  error._tag === "UnknownTerminal"
    ? terminalNotFound(error.terminalSerial)
    : Errors.Conflict.of("ActionRefused", `${error.action}: ${error.reason}`, "action")

/** The terminal of the request: a test key's merchant and the path's serial. */
const terminalOf = (serial: string) =>
  Effect.gen(function* () {
    const credential = yield* Security.CurrentCredential
    if (!credential.sandbox) {
      return yield* Effect.fail(
        Errors.Forbidden.of("the sandbox takes a test key: production keys cannot control terminals")
      )
    }
    const terminalSerial = yield* Schema.decodeUnknown(TerminalSerial)(serial).pipe(
      Effect.mapError(() => terminalNotFound(serial))
    )
    return { merchantId: credential.merchantId, terminalSerial } satisfies TerminalSandbox.TerminalRef
  })

/** The sandbox's handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "sandbox", (handlers) =>
  handlers
    .handleRaw("setBehavior", ({ path }) =>
      Effect.gen(function* () {
        const terminal = yield* terminalOf(path.terminal_serial)
        const body = yield* RequestBody.decode(SandboxEndpoints.BehaviorRequest)
        const sandbox = yield* TerminalSandbox.TerminalSandbox
        return yield* sandbox
          .setBehavior(terminal, body.mode, { chargeNotifications: body.charge_notifications })
          .pipe(Effect.mapError((e) => terminalNotFound(e.terminalSerial)))
      })
    )
    .handleRaw("performAction", ({ path }) =>
      Effect.gen(function* () {
        const terminal = yield* terminalOf(path.terminal_serial)
        const body = yield* RequestBody.decode(SandboxEndpoints.ActionRequest)
        const sandbox = yield* TerminalSandbox.TerminalSandbox
        return yield* sandbox.perform(terminal, body.action).pipe(Effect.mapError(fromSandboxError))
      })
    )
)
