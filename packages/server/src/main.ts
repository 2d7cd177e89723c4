/**
 * `npm start`: runs Cobro on one port until SIGTERM or SIGINT, then shuts down gracefully (in-flight
 * requests finish, the database closes). Configuration: see `Config.ts`, `Logging.ts` (the logs) and
 * the README.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CheckpointKey from "./CheckpointKey.js"
import * as Logging from "./Logging.js"
import * as SealingKey from "./SealingKey.js"
import * as Server from "./Server.js"
import * as Store from "./Store.js"

/** A start-up failure in a sentence, or the full cause for anything unexpected. */
const describe = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (ConfigError.isConfigError(error)) return `Cobro cannot start: invalid configuration: ${String(error)}`
    if (
      error instanceof SealingKey.SealingKeyError ||
      error instanceof CheckpointKey.CheckpointKeyError ||
      error instanceof Store.SealingKeyMismatch ||
      error instanceof Store.CheckpointKeyMismatch
    ) {
      return `Cobro cannot start: ${error.message}`
    }
  }
  // A database error's own message (e.g. PostgreSQL's) is in its `cause`, which `Cause.pretty` omits.
  const detail = (Cause.squash(cause) as { cause?: { message?: unknown } } | undefined)?.cause?.message
  return `Cobro stopped on an error:\n${Cause.pretty(cause)}${typeof detail === "string" ? `\nCaused by: ${detail}` : ""}`
}

/** A start-up failure or a crash, on stderr; an interruption (SIGTERM, SIGINT) is no failure. */
const report = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause) ? Effect.void : Console.error(describe(cause))

const program = Effect.flatMap(Server.settings, (settings) => Layer.launch(Server.layer(settings))).pipe(
  Effect.tapErrorCause(report),
  Effect.ensuring(Console.log("Cobro stopped.")),
  // Everything above logs the way COBRO_LOG_FORMAT and COBRO_LOG_LEVEL say, start-up included. An
  // invalid value of theirs is reported like any other invalid configuration.
  Effect.provide(
    Logging.layer.pipe(
      Layer.tapErrorCause((cause) => Effect.zipRight(report(cause), Console.log("Cobro stopped.")))
    )
  )
)

// The logging layer installs the logger (pretty or JSON): runMain's own pretty logger would print
// every log call a second time, not as JSON.
NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
