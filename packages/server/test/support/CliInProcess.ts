/**
 * The `cobro` command line run in the test's process: `Cli.run` with the layers and the exit-code
 * mapping `main.ts` gives it (`CliError.exitCode`, `NodeContext`, logs at Error), over the same
 * clean environment `CliProcess.run` gives the binary (PATH, HOME and `env`, read through a
 * `ConfigProvider`), its output and exit code collected as `CliProcess.Result`. It saves the seconds
 * a process spends compiling the sources through tsx; each command still opens its database anew.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { Console as NodeConsole } from "node:console"
import { Readable } from "node:stream"
import * as Cli from "../../src/cli/Cli.js"
import * as CliError from "../../src/cli/CliError.js"
import * as User from "../../src/cli/User.js"
import type { Result } from "./CliProcess.js"
import { bin } from "./CliProcess.js"

/**
 * The command line writes to `process.stdout` and `process.stderr` (`Output`, `Progress`), reads
 * `process.stdin` and the password's variable (`User`): one command at a time may have them.
 */
const oneAtATime = Effect.unsafeMakeSemaphore(1)

type Write = typeof process.stdout.write

/** A `write` that appends to `sink` and, like a stream that is never full, calls back at once. */
const capture =
  (sink: (text: string) => void): Write =>
  (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
    const done = typeof encoding === "function" ? encoding : callback
    if (typeof done === "function") process.nextTick(done as () => void)
    return true
  }

/**
 * For the scope: stdout and stderr written to `out`, standard input `input` (a pipe that ends after
 * it, as the binary's `/dev/null` or `echo … |`), and the password's variable as `env` has it.
 */
const redirect = (out: { stdout: string; stderr: string }, input: string, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = {
        stdout: process.stdout.write,
        stderr: process.stderr.write,
        stdin: Object.getOwnPropertyDescriptor(process, "stdin")!,
        password: process.env[User.PASSWORD_VARIABLE]
      }
      process.stdout.write = capture((text) => (out.stdout += text))
      process.stderr.write = capture((text) => (out.stderr += text))
      Object.defineProperty(process, "stdin", {
        configurable: true,
        enumerable: saved.stdin.enumerable ?? true,
        value: Readable.from(input === "" ? [] : [Buffer.from(input)])
      })
      const password = env[User.PASSWORD_VARIABLE]
      if (password === undefined) delete process.env[User.PASSWORD_VARIABLE]
      else process.env[User.PASSWORD_VARIABLE] = password
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        process.stdout.write = saved.stdout
        process.stderr.write = saved.stderr
        Object.defineProperty(process, "stdin", saved.stdin)
        if (saved.password === undefined) delete process.env[User.PASSWORD_VARIABLE]
        else process.env[User.PASSWORD_VARIABLE] = saved.password
      })
  )

const consoleMethods = [
  "assert",
  "count",
  "countReset",
  "debug",
  "dir",
  "dirxml",
  "error",
  "info",
  "log",
  "table",
  "time",
  "timeEnd",
  "timeLog",
  "trace",
  "warn"
] as const

/**
 * Effect's `Console` over Node's, on `process.stdout` and `process.stderr` as the binary's global
 * console is (vitest replaces this process's global one): @effect/cli's help and usage errors, and
 * any log at Error, land in the captured output.
 */
const processConsole = (): Console.Console => {
  const node = new NodeConsole({ stdout: process.stdout, stderr: process.stderr })
  const methods = Object.fromEntries(
    consoleMethods.map((name) => [
      name,
      (...args: Array<any>) => Effect.sync(() => (node[name] as (...a: Array<any>) => void)(...args))
    ])
  )
  return {
    [Console.TypeId]: Console.TypeId,
    ...methods,
    clear: Effect.sync(() => node.clear()),
    group: (options?: { readonly label?: string | undefined; readonly collapsed?: boolean | undefined }) =>
      Effect.sync(() =>
        options?.collapsed === true ? node.groupCollapsed(options.label) : node.group(options?.label)
      ),
    groupEnd: Effect.sync(() => node.groupEnd()),
    unsafe: node
  } as unknown as Console.Console
}

/** The variables the binary would see: `CliProcess.run`'s clean environment. */
const environmentOf = (env: Record<string, string>) =>
  ConfigProvider.fromMap(
    new Map(Object.entries({ PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env })),
    // As `ConfigProvider.fromEnv`, the default provider the binary reads its variables through.
    { pathDelim: "_", seqDelim: "," }
  )

/** Runs `cobro <args>` in this process with `env` (and `stdin` on standard input) to its end. */
export const run = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly stdin?: string } = {}
): Effect.Effect<Result> =>
  oneAtATime.withPermits(1)(
    Effect.scoped(
      Effect.gen(function* () {
        const out = { stdout: "", stderr: "" }
        yield* redirect(out, options.stdin ?? "", env)
        const code = yield* Cli.run([process.execPath, bin, ...args]).pipe(
          CliError.exitCode,
          Effect.provide(NodeContext.layer),
          Logger.withMinimumLogLevel(LogLevel.Error),
          Effect.withConsole(processConsole()),
          Effect.withConfigProvider(environmentOf(env))
        )
        return { code, stdout: out.stdout, stderr: out.stderr }
      })
    )
  )
