/**
 * The command line's failures a person can act on: each carries the sentence printed and the exit
 * code. Anything else that fails is unexpected and printed in full (`main.ts`).
 */
import * as Schema from "effect/Schema"

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
