// What the project's install scripts share (`ensure-chromium.mjs`, `ensure-prometheus.mjs`,
// `ha/ensure-ha.mjs`): installs the Debian packages whose files are missing, as root or through
// `sudo -n`, retrying once after `apt-get update`; prints what it does; exits non-zero with the
// command a person would run when it cannot.
import { spawnSync } from "node:child_process"
import { existsSync, rmSync, writeFileSync } from "node:fs"

/**
 * Debian's maintainer scripts ask invoke-rc.d before starting a service; a policy-rc.d that exits 101
 * forbids it. Without one, a package's postinst starts its service (Prometheus on :9090, HAProxy…),
 * which a test machine does not want.
 */
const policy = "/usr/sbin/policy-rc.d"

/**
 * Makes sure every `needed` file exists, installing the packages that provide the missing ones.
 * `name` prefixes every line; `purpose` says what needs them, in the message of a failure.
 */
export const ensureDebianPackages = ({ name, purpose, needed }) => {
  const say = (message) => console.log(`${name}: ${message}`)
  const missing = () => needed.filter(({ file }) => !existsSync(file))
  const absent = missing()
  if (absent.length === 0) {
    say(`${needed.map(({ file }) => file).join(", ")} present`)
    return
  }
  const packages = [...new Set(absent.map(({ pkg }) => pkg))]
  const files = absent.map(({ file }) => file).join(", ")
  const fail = (message) => {
    console.error(`${name}: ${message}`)
    console.error(
      `${name}: ${purpose}. Install them as root with\n` +
        `  apt-get update && apt-get install -y --no-install-recommends ${packages.join(" ")}\n` +
        `after writing an ${policy} that exits 101, so that no package starts a service of its own.`
    )
    process.exit(1)
  }
  if (process.platform !== "linux") fail(`${files} missing and this is not Linux (${process.platform})`)
  if (!existsSync("/usr/bin/apt-get")) fail(`${files} missing and apt-get is not available`)

  const asRoot = typeof process.getuid === "function" && process.getuid() === 0
  const sudo = !asRoot && existsSync("/usr/bin/sudo") ? ["sudo", "-n"] : []
  if (!asRoot && sudo.length === 0) fail(`${files} missing and installing them needs root (no sudo)`)

  const run = (args) => {
    const command = [...sudo, ...args]
    say(command.join(" "))
    const result = spawnSync(command[0], command.slice(1), {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    })
    if (result.error) console.error(`${name}: ${result.error.message}`)
    return result.status === 0
  }

  say(`${files} missing; installing Debian's ${packages.join(", ")}`)
  // A policy already in place (Docker images ship one that exits 101) is left alone; otherwise one is
  // written for the install and removed after it, whatever the install's outcome.
  const ownPolicy = !existsSync(policy)
  const policyText = `#!/bin/sh\n# ${name}: no service starts during the install.\nexit 101\n`
  if (ownPolicy) {
    say(`writing ${policy} (exit 101) so that the install starts no service`)
    if (asRoot) {
      try {
        writeFileSync(policy, policyText, { mode: 0o755 })
      } catch (error) {
        fail(`could not write ${policy}: ${error.message}`)
      }
    } else if (!run(["sh", "-c", `printf '%s' '${policyText}' > ${policy} && chmod 755 ${policy}`])) {
      fail(`could not write ${policy}`)
    }
  }
  const install = ["apt-get", "install", "-y", "--no-install-recommends", ...packages]
  let installed = run(install)
  if (!installed) {
    say("the install failed; refreshing the package lists and trying again")
    installed = run(["apt-get", "update"]) && run(install)
  }
  if (ownPolicy) {
    say(`removing ${policy}`)
    if (asRoot) rmSync(policy, { force: true })
    else run(["rm", "-f", policy])
  }
  if (!installed) fail(`apt-get could not install ${packages.join(" ")}`)
  const still = missing()
  if (still.length > 0) {
    fail(`installed ${packages.join(", ")} but ${still.map(({ file }) => file).join(", ")} still missing`)
  }
  say(`installed ${packages.join(", ")}`)
}
