/**
 * The command line's failures a person can act on: each carries the sentence printed and the exit
 * code. Anything else that fails is unexpected and printed in full ({@link exitCodeOf}).
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CheckpointKey from "../CheckpointKey.js"
import * as SealingKey from "../SealingKey.js"
import * as Store from "../Store.js"
import * as Output from "./Output.js"

/** Exit codes of `cobro`. */
export const ExitCode = {
  ok: 0,
  /** The log does not hold (`audit verify`), or the database could not be used. */
  failed: 1,
  /** A mistake in the command: an unknown id, a malformed instant, an option the command refuses. */
  usage: 2,
  /** A bug: printed with its cause. */
  internal: 70
} as const

/** A user's mistake, explained in one sentence: printed as `cobro: <message>`, exit code 2. */
export class UserError extends Schema.TaggedError<UserError>()("UserError", {
  message: Schema.String
}) {}

/** The command ran and found something wrong (a broken log): its report is printed already; exit code 1. */
export class Failed extends Schema.TaggedError<Failed>()("Failed", {
  message: Schema.String
}) {}

const say = (text: string) => Output.errorLine(`cobro: ${text}`)

/** The exit code of a failure, after printing (stderr) what a person needs to read. */
export const exitCodeOf = (cause: Cause.Cause<unknown>): Effect.Effect<number> => {
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

/**
 * A command's run turned into its exit code: 0 when it succeeds, else {@link exitCodeOf} its
 * failure. `main.ts` exits with it; the tests that run commands in process read it.
 */
export const exitCode = <E, R>(run: Effect.Effect<unknown, E, R>): Effect.Effect<number, never, R> =>
  run.pipe(Effect.as(ExitCode.ok as number), Effect.catchAllCause(exitCodeOf))
