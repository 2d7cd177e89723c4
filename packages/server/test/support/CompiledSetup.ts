/**
 * vitest's global setup for the server's suites: the server (`src/main.ts`) compiled once per run
 * into one ES module, provided to the test files as `compiledServer` and removed after the run.
 * `ServerProcess` spawns it instead of `scripts/start.mjs`: a start then skips the seconds tsx spends
 * compiling the sources (about 2 s of CPU each). The packages under `node_modules` stay imports, so
 * the module sits under `node_modules/.cache`, where Node finds them. `scripts/start.mjs`, what
 * `npm start` runs, keeps its own tests (`Logs.int`, the PGlite template's first start).
 */
import * as esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The server compiled for this run: `node <it>` starts it as `npm start` does. */
    readonly compiledServer: string
  }
}

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** Bundles the workspace's sources; every other bare import is left to Node. */
const workspaceOnly: esbuild.Plugin = {
  name: "workspace-only",
  setup: (build) => {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@cobro/") ? undefined : { path: args.path, external: true }
    )
  }
}

/** Compiles the server into a folder of this run, provides it, and returns the teardown that removes it. */
export const setup = async (project: TestProject) => {
  const cache = Path.join(root, "node_modules", ".cache")
  Fs.mkdirSync(cache, { recursive: true })
  const dir = Fs.mkdtempSync(Path.join(cache, "cobro-server-"))
  const outfile = Path.join(dir, "main.mjs")
  await esbuild.build({
    entryPoints: [Path.join(root, "packages", "server", "src", "main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    plugins: [workspaceOnly],
    logLevel: "warning"
  })
  project.provide("compiledServer", outfile)
  return () => Fs.rmSync(dir, { recursive: true, force: true })
}
