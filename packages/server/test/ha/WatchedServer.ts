/**
 * A server process as `ServerProcess.startProcess` starts it (`node scripts/start.mjs`, clean
 * environment), that also says whether it is still running: the failover suite must tell a server
 * that crashed during a fault from one that answers errors.
 */
import { spawn } from "node:child_process"
import * as Path from "node:path"
import * as ServerProcess from "../support/ServerProcess.js"

export interface WatchedServer extends ServerProcess.RunningServer {
  /** False once the process has exited. */
  readonly alive: () => boolean
  /** How it exited, once it has. */
  readonly exit: () => { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined
}

/** Starts the server with `env` until it prints "Cobro is listening on …". */
export const start = async (env: Record<string, string>): Promise<WatchedServer> => {
  const port = env["PORT"] ?? String(await ServerProcess.freePort())
  const child = spawn(process.execPath, [ServerProcess.startScript], {
    cwd: Path.dirname(Path.dirname(ServerProcess.startScript)),
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PORT: port, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal, at: Date.now() }
      resolve({ code, signal })
    })
  )
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(
        new Error(
          `The server did not start within ${ServerProcess.startTimeoutMillis} ms. Output:\n${output}`
        )
      )
    }, ServerProcess.startTimeoutMillis)
    const onData = () => {
      const match = /Cobro is listening on (\S+)/.exec(output)
      if (match !== null) {
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        resolve(match[1]!)
      }
    }
    child.stdout!.on("data", onData)
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(
        new Error(`The server exited (code ${code}, signal ${signal}) before listening. Output:\n${output}`)
      )
    })
  })
  return {
    url,
    adminToken: env["ADMIN_TOKEN"] ?? /admin token {2}(\S+)/.exec(output)?.[1] ?? "",
    output: () => output,
    alive: () => exit === undefined,
    exit: () => exit,
    stop: async (signal = "SIGTERM") => {
      const started = Date.now()
      if (exit !== undefined) return { code: exit.code, signal: exit.signal, millis: 0 }
      child.kill(signal)
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      const result = await exited
      clearTimeout(timer)
      return { ...result, millis: Date.now() - started }
    }
  }
}
