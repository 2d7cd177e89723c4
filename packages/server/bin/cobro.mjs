#!/usr/bin/env node
// `cobro`: Cobro's command line (packages/server/src/cli/main.ts), run from its TypeScript sources
// with tsx's loader registered in this process, as `npm start` runs the server.
import { existsSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import { join } from "node:path"

const main = join(fileURLToPath(import.meta.url), "..", "..", "src", "cli", "main.ts")
if (!existsSync(main)) {
  console.error("Cobro's command line is missing: packages/server/src/cli/main.ts does not exist.")
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
