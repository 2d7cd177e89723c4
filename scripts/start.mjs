#!/usr/bin/env node
// `npm start`: runs the server once @cobro/server has one; until then it says so and fails, never pretends.
import { existsSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { join } from "node:path"

const root = join(fileURLToPath(import.meta.url), "..", "..")
const main = join(root, "packages", "server", "src", "main.ts")
if (!existsSync(main)) {
  console.error(
    [
      "Cobro's HTTP server is not built yet (issue 4: the HTTP service and @cobro/server).",
      "What exists today: the pure domain (@cobro/domain) and the event store (@cobro/store-pg).",
      "Run `npm test` to exercise them."
    ].join("\n")
  )
  process.exit(1)
}
const result = spawnSync(process.execPath, [join(root, "node_modules", "tsx", "dist", "cli.mjs"), main], {
  stdio: "inherit"
})
process.exit(result.status ?? 1)
