#!/usr/bin/env node
// `npm run bench -- <suite>`: dispatches to each package's benchmark entry, run with tsx.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Path from "node:path"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const suites = {
  store: "packages/store-pg/bench/StoreBench.ts"
}

const suite = process.argv[2]
const entry = suite === undefined ? undefined : suites[suite]
if (entry === undefined) {
  console.error(`usage: npm run bench -- <${Object.keys(suites).join("|")}>`)
  process.exit(2)
}
const result = spawnSync("npx", ["tsx", entry, ...process.argv.slice(3)], { cwd: root, stdio: "inherit" })
process.exit(result.status ?? 1)
