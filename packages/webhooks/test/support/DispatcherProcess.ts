/**
 * Dispatcher processes for the crash and multi-node suites (issue 5, Tests): `node --import tsx
 * DispatcherMain.ts` on a PostgreSQL database, started, told to go, and killed by a signal.
 */
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const root = Path.resolve(here, "..", "..", "..", "..")

/** The script each process runs. */
export const mainScript = Path.join(here, "DispatcherMain.ts")

/** How a dispatcher process is configured. */
export interface Options {
  readonly databaseUrl: string
  readonly owner: string
  /** PEM of the receiver's certificate. */
  readonly ca: string
  readonly leaseMs?: number
  readonly batchSize?: number
  readonly concurrency?: number
  readonly pollMs?: number
}

/** A running dispatcher process. */
export interface Running {
  readonly owner: string
  readonly pid: number
  /** Everything it printed so far. */
  readonly output: () => string
  /** Starts its dispatcher (the notifier and read models run from the start). */
  readonly go: () => void
  /** Sends `signal` and waits for the exit. */
  readonly kill: (signal: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
    } else child.once("exit", (code, signal) => resolve({ code, signal }))
  })

/** Starts a process and waits until it prints that its workers run (fails with its output if it exits). */
export const startProcess = async (options: Options): Promise<Running> => {
  const child = spawn(process.execPath, ["--import", "tsx", mainScript], {
    cwd: root,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "",
      DATABASE_URL: options.databaseUrl,
      COBRO_DEV_WEBHOOKS: "1",
      COBRO_TEST_WEBHOOK_CA: options.ca,
      DISPATCHER_OWNER: options.owner,
      DISPATCHER_LEASE_MS: String(options.leaseMs ?? 30_000),
      DISPATCHER_BATCH_SIZE: String(options.batchSize ?? 100),
      DISPATCHER_CONCURRENCY: String(options.concurrency ?? 32),
      DISPATCHER_POLL_MS: String(options.pollMs ?? 200)
    },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`dispatcher ${options.owner} did not start within 30 s. Output:\n${output}`))
    }, 30_000)
    const onData = () => {
      if (output.includes(`{"ready":"${options.owner}"`)) {
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        child.off("exit", onExit)
        resolve()
      }
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer)
      reject(new Error(`dispatcher ${options.owner} exited (${code}, ${signal}) before ready:\n${output}`))
    }
    child.stdout!.on("data", onData)
    child.once("exit", onExit)
  })
  return {
    owner: options.owner,
    pid: child.pid!,
    output: () => output,
    go: () => child.stdin!.write("go\n"),
    kill: (signal) => {
      const done = exited(child)
      child.kill(signal)
      return done
    }
  }
}

/** A dispatcher process for the scope of a test, killed (SIGKILL) when the scope closes. */
export const start = (options: Options) =>
  Effect.acquireRelease(
    Effect.promise(() => startProcess(options)),
    (running) => Effect.promise(() => running.kill("SIGKILL"))
  )

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs` with `describe()`. */
export const waitUntil = <E, R>(
  condition: Effect.Effect<boolean, E, R>,
  timeoutMs: number,
  describe: () => string
): Effect.Effect<void, E, R> =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (!(yield* condition)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out: ${describe()}`))
      yield* Effect.sleep("20 millis")
    }
  })
