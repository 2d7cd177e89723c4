/**
 * vitest's global setup for the server's suites: one PGlite `DATA_DIR` per run, as the server leaves
 * it after its first start (initdb and the migrations in WebAssembly, the read models' tables, the
 * key files), provided to the test files as `pgliteTemplate` and removed after the run. It runs in
 * vitest's own process, where the test runtime cannot be imported: `PgliteTemplate` makes the copies.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The set-up `DATA_DIR` of this run. */
    readonly pgliteTemplate: string
  }
}

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** Starts the server once on an empty folder, waits for its banner, and stops it with SIGTERM. */
const firstStart = (dataDir: string) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [Path.join(root, "scripts", "start.mjs")], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PORT: "0", DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    let stopping = false
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.stderr.on("data", (chunk) => (output += chunk))
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (!stopping && /Cobro is listening on/.test(output)) {
        stopping = true
        child.kill("SIGTERM")
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      if (code === 0 && /Cobro is listening on/.test(output)) resolve()
      else reject(new Error(`could not set up a PGlite folder (exit ${code}):\n${output}`))
    })
  })

/** Makes the folder, provides it, and returns the teardown that removes it. */
export const setup = async (project: TestProject) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-template-"))
  const dataDir = Path.join(dir, "data")
  await firstStart(dataDir)
  project.provide("pgliteTemplate", dataDir)
  return () => Fs.rmSync(dir, { recursive: true, force: true })
}
