/**
 * vitest's global setup for the server's suites: the server (`src/main.ts`) compiled once per run
 * into one ES module, provided to the test files as `compiledServer` and removed after the run.
 * `ServerProcess` spawns it instead of `scripts/start.mjs`: a start then skips the seconds tsx spends
 * compiling the sources and Node spends loading a few thousand modules (importing the server took
 * 3.2 s of CPU through tsx, 1.3 s with the packages left as imports, 0.5 s bundled). PGlite stays an
 * import (it finds its WebAssembly beside its own module), so the bundle sits under
 * `node_modules/.cache`, where Node finds it. `scripts/start.mjs`, what `npm start` runs, keeps its
 * own tests (`Logs.int`, the PGlite template's first start).
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

/** What stays an import: PGlite (its WebAssembly sits beside its module) and pg's optional native binding. */
const external = ["@electric-sql/pglite", "pg-native"]

/** Leaves {@link external} (and its subpaths) to Node; bundles everything else. */
const leaveExternal: esbuild.Plugin = {
  name: "leave-external",
  setup: (build) => {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      external.some((name) => args.path === name || args.path.startsWith(`${name}/`))
        ? { path: args.path, external: true }
        : undefined
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
    plugins: [leaveExternal],
    // The CommonJS packages bundled into an ES module call `require` for Node's own modules.
    banner: {
      js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);'
    },
    logLevel: "warning"
  })
  project.provide("compiledServer", outfile)
  return () => Fs.rmSync(dir, { recursive: true, force: true })
}
