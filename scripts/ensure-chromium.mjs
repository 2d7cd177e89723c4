#!/usr/bin/env node
// `npm test`'s pretest: the browser tests drive Debian's `chromium` through playwright-core (no
// browser download). Installs the Debian package when /usr/bin/chromium is missing; prints what it
// does; exits non-zero with a clear message when it cannot.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"

/** Where the browser tests look for the browser (`CHROMIUM_PATH` overrides it). */
const executable = process.env.CHROMIUM_PATH || "/usr/bin/chromium"

const fail = (message) => {
  console.error(`ensure-chromium: ${message}`)
  console.error(
    "ensure-chromium: the browser tests need Chromium. Install it as root with\n" +
      "  apt-get update && apt-get install -y --no-install-recommends chromium\n" +
      "or set CHROMIUM_PATH to a Chromium or Chrome executable."
  )
  process.exit(1)
}

if (existsSync(executable)) {
  console.log(`ensure-chromium: ${executable} is present`)
  process.exit(0)
}
if (process.env.CHROMIUM_PATH) fail(`CHROMIUM_PATH=${executable} does not exist`)
if (process.platform !== "linux") fail(`${executable} is missing and this is not Linux (${process.platform})`)
if (!existsSync("/usr/bin/apt-get")) fail(`${executable} is missing and apt-get is not available`)

const asRoot = typeof process.getuid === "function" && process.getuid() === 0
const sudo = !asRoot && existsSync("/usr/bin/sudo") ? ["sudo", "-n"] : []
if (!asRoot && sudo.length === 0) fail(`${executable} is missing and installing it needs root (no sudo)`)

const run = (args) => {
  const command = [...sudo, ...args]
  console.log(`ensure-chromium: ${command.join(" ")}`)
  const result = spawnSync(command[0], command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
  if (result.error) console.error(`ensure-chromium: ${result.error.message}`)
  return result.status === 0
}

const install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
console.log(`ensure-chromium: ${executable} is missing; installing Debian's chromium package`)
if (!run(install)) {
  console.log("ensure-chromium: the install failed; refreshing the package lists and trying again")
  if (!run(["apt-get", "update"]) || !run(install)) fail("apt-get could not install chromium")
}
if (!existsSync(executable)) fail(`chromium was installed but ${executable} does not exist`)
console.log(`ensure-chromium: installed ${executable}`)
