#!/usr/bin/env node
// `npm test`'s pretest: the browser tests drive Debian's `chromium` through playwright-core (no
// browser download). Installs the Debian package when /usr/bin/chromium is missing; a CHROMIUM_PATH
// given must exist.
import { existsSync } from "node:fs"
import { ensureDebianPackages } from "./debian-packages.mjs"

/** Where the browser tests look for the browser (`CHROMIUM_PATH` overrides it). */
const executable = process.env.CHROMIUM_PATH || "/usr/bin/chromium"

if (process.env.CHROMIUM_PATH && !existsSync(executable)) {
  console.error(`ensure-chromium: CHROMIUM_PATH=${executable} does not exist`)
  process.exit(1)
}
ensureDebianPackages({
  name: "ensure-chromium",
  purpose: "the browser tests need Chromium (or set CHROMIUM_PATH to a Chromium or Chrome executable)",
  needed: [{ file: executable, pkg: "chromium" }]
})
