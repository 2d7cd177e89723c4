#!/usr/bin/env node
// `npm run bench -- <suite>`: dispatches to each package's benchmark entry, run with tsx; with no
// suite, runs every suite in turn.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Path from "node:path"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const suites = {
  store: "packages/store-pg/bench/StoreBench.ts",
  http: "packages/server/bench/HttpBench.ts",
  webhooks: "packages/webhooks/bench/WebhookBench.ts",
  audit: "packages/server/bench/AuditBench.ts",
  json: "packages/webhooks/bench/ExactJsonBench.ts",
  "listing-plans": "packages/store-pg/bench/ListingPlans.ts"
}

const suite = process.argv[2]
const chosen = suite === undefined ? Object.keys(suites) : [suite]
if (chosen.some((name) => suites[name] === undefined)) {
  console.error(`usage: npm run bench [-- <${Object.keys(suites).join("|")}>]`)
  process.exit(2)
}
let status = 0
for (const name of chosen) {
  if (chosen.length > 1) console.log(`\n== bench: ${name}`)
  const result = spawnSync("npx", ["tsx", suites[name], ...process.argv.slice(3)], {
    cwd: root,
    stdio: "inherit"
  })
  if ((result.status ?? 1) !== 0) status = result.status ?? 1
}
process.exit(status)
