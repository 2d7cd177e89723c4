/**
 * `cobro` (bin/cobro.mjs runs this): parses the command line, runs the command, and turns its end
 * into an exit code: 0 done, 1 the log does not verify or the database failed, 2 a mistake in the
 * command (a message, never a stack), 70 a bug (its cause printed in full).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Cli from "./Cli.js"
import * as CliError from "./CliError.js"

const program = Cli.run(process.argv).pipe(
  CliError.exitCode,
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
