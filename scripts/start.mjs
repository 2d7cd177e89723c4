#!/usr/bin/env node
// `npm start`: runs Cobro's server (packages/server/src/main.ts) from its TypeScript sources, in this
// process (tsx's loader registered here: no build step, and SIGTERM/SIGINT reach the server itself).
import { existsSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import { join } from "node:path"

const root = join(fileURLToPath(import.meta.url), "..", "..")
const main = join(root, "packages", "server", "src", "main.ts")
if (!existsSync(main)) {
  console.error("Cobro's server is missing: packages/server/src/main.ts does not exist in this checkout.")
  process.exit(1)
}
let register
try {
  ;({ register } = await import("tsx/esm/api"))
} catch {
  console.error("tsx is not installed: run `npm ci` at the repository root first.")
  process.exit(1)
}
register()
await import(pathToFileURL(main).href)
