#!/usr/bin/env node
// Screenshots of the hosted checkout page into docs/screenshots/ (desktop 1280 px, phone 390 px):
// makes sure Chromium is installed, then runs packages/server/test/browser/Screenshots.ts with tsx.
import { spawnSync } from "node:child_process"
import { fileURLToPath, pathToFileURL } from "node:url"
import { join } from "node:path"

const root = join(fileURLToPath(import.meta.url), "..", "..")
const ensured = spawnSync(process.execPath, [join(root, "scripts", "ensure-chromium.mjs")], {
  stdio: "inherit"
})
if (ensured.status !== 0) process.exit(ensured.status ?? 1)
const { register } = await import("tsx/esm/api")
register()
await import(pathToFileURL(join(root, "packages", "server", "test", "browser", "Screenshots.ts")).href)
