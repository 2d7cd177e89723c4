#!/usr/bin/env node
// `npm test`'s pretest: the metrics test scrapes /metrics with a real Prometheus and checks the
// exposition and docs/prometheus-alerts.yml with promtool. Installs Debian's `prometheus` package
// (both executables) when either is missing, without starting its service; prints what it does;
// exits non-zero with a clear message when it cannot.
import { spawnSync } from "node:child_process"
import { existsSync, rmSync, writeFileSync } from "node:fs"

/** The executables the test runs; Debian's `prometheus` package provides both. */
const needed = ["/usr/bin/prometheus", "/usr/bin/promtool"]

/**
 * Debian's maintainer scripts ask invoke-rc.d before starting a service; a policy-rc.d that exits 101
 * forbids it. Otherwise the package's postinst starts a Prometheus of its own on :9090 (through
 * systemd or /etc/init.d), which a test machine does not want.
 */
const policy = "/usr/sbin/policy-rc.d"

const fail = (message) => {
  console.error(`ensure-prometheus: ${message}`)
  console.error(
    "ensure-prometheus: the metrics test needs Prometheus and promtool. Install them as root with\n" +
      "  apt-get update && apt-get install -y --no-install-recommends prometheus\n" +
      "after writing an /usr/sbin/policy-rc.d that exits 101, so that the package starts no service of its own."
  )
  process.exit(1)
}

const missing = () => needed.filter((file) => !existsSync(file))

const absent = missing()
if (absent.length === 0) {
  console.log(`ensure-prometheus: ${needed.join(", ")} are present`)
  process.exit(0)
}
const files = absent.join(", ")
if (process.platform !== "linux") fail(`${files} missing and this is not Linux (${process.platform})`)
if (!existsSync("/usr/bin/apt-get")) fail(`${files} missing and apt-get is not available`)

const asRoot = typeof process.getuid === "function" && process.getuid() === 0
const sudo = !asRoot && existsSync("/usr/bin/sudo") ? ["sudo", "-n"] : []
if (!asRoot && sudo.length === 0) fail(`${files} missing and installing them needs root (no sudo)`)

const run = (args) => {
  const command = [...sudo, ...args]
  console.log(`ensure-prometheus: ${command.join(" ")}`)
  const result = spawnSync(command[0], command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
  if (result.error) console.error(`ensure-prometheus: ${result.error.message}`)
  return result.status === 0
}

console.log(`ensure-prometheus: ${files} missing; installing Debian's prometheus package`)

// A policy already in place (Docker images ship one that exits 101) is left alone; otherwise one is
// written for the install and removed after it, whatever the install's outcome.
const ownPolicy = !existsSync(policy)
const policyText = "#!/bin/sh\n# ensure-prometheus: no service starts during the install.\nexit 101\n"
if (ownPolicy) {
  console.log(`ensure-prometheus: writing ${policy} (exit 101) so that the install starts no service`)
  if (asRoot) {
    try {
      writeFileSync(policy, policyText, { mode: 0o755 })
    } catch (error) {
      fail(`could not write ${policy}: ${error.message}`)
    }
  } else if (!run(["sh", "-c", `printf '%s' '${policyText}' > ${policy} && chmod 755 ${policy}`])) {
    fail(`could not write ${policy}`)
  }
} else {
  console.log(`ensure-prometheus: ${policy} exists; it decides whether the install may start services`)
}
const removePolicy = () => {
  if (!ownPolicy) return
  console.log(`ensure-prometheus: removing ${policy}`)
  if (asRoot) rmSync(policy, { force: true })
  else run(["rm", "-f", policy])
}

const install = ["apt-get", "install", "-y", "--no-install-recommends", "prometheus"]
let installed = run(install)
if (!installed) {
  console.log("ensure-prometheus: the install failed; refreshing the package lists and trying again")
  installed = run(["apt-get", "update"]) && run(install)
}
removePolicy()
if (!installed) fail("apt-get could not install prometheus")
const still = missing()
if (still.length > 0) fail(`installed prometheus but ${still.join(", ")} still missing`)
console.log(`ensure-prometheus: installed ${needed.join(", ")}`)
