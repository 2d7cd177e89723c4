/**
 * `cobro` (bin/cobro.mjs runs this): parses the command line, runs the command, and turns its end
 * into an exit code: 0 done, 1 the log does not verify or the database failed, 2 a mistake in the
 * command (a message, never a stack), 70 a bug (its cause printed in full).
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as CheckpointKey from "../CheckpointKey.js"
import * as SealingKey from "../SealingKey.js"
import * as Store from "../Store.js"
import * as Cli from "./Cli.js"
import { ExitCode, Failed, UserError } from "./CliError.js"

const say = (text: string) =>
  Effect.sync(() => {
    process.stderr.write(`cobro: ${text}\n`)
  })

/** The exit code of a failure, after printing what a person needs to read. */
const onFailure = (cause: Cause.Cause<unknown>): Effect.Effect<number> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    // @effect/cli printed the usage error and the help already.
    if (ValidationError.isValidationError(error)) return Effect.succeed(ExitCode.usage)
    if (error instanceof UserError) return Effect.as(say(error.message), ExitCode.usage)
    if (error instanceof Failed) return Effect.as(say(error.message), ExitCode.failed)
    if (ConfigError.isConfigError(error)) {
      return Effect.as(say(`invalid configuration: ${String(error)}`), ExitCode.usage)
    }
    if (
      error instanceof SealingKey.SealingKeyError ||
      error instanceof CheckpointKey.CheckpointKeyError ||
      error instanceof Store.SealingKeyMismatch ||
      error instanceof Store.CheckpointKeyMismatch
    ) {
      return Effect.as(say(error.message), ExitCode.usage)
    }
    const tag = (error as { _tag?: unknown } | undefined)?._tag
    if (tag === "SqlError" || tag === "MigrationError") {
      const detail = (error as { cause?: { message?: unknown }; message?: unknown }).cause?.message
      return Effect.as(
        say(
          `the database failed: ${String((error as { message?: unknown }).message)}${typeof detail === "string" ? `: ${detail}` : ""}`
        ),
        ExitCode.failed
      )
    }
  }
  if (Cause.isInterruptedOnly(cause)) return Effect.succeed(130)
  return Effect.as(say(`unexpected error:\n${Cause.pretty(cause)}`), ExitCode.internal)
}

const program = Cli.run(process.argv).pipe(
  Effect.as(ExitCode.ok as number),
  Effect.catchAllCause(onFailure),
  Effect.provide(NodeContext.layer),
  // The store's own logs (a NOTIFY retried…) are not the command's output.
  Logger.withMinimumLogLevel(LogLevel.Error)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 130
    // Exit once stdout has taken everything written (a pipe to a slow reader).
    process.stdout.write("", () => {
      onExit(code)
      // runMain exits by itself only on a non-zero code; a pool's idle timer must not keep us alive.
      process.exit(code)
    })
  }
})
