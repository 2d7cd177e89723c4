#!/usr/bin/env node
// `npm run test:ha`'s first step: the failover test builds a PostgreSQL cluster from Debian's
// packages (Patroni, etcd, HAProxy, pgbouncer, PostgreSQL 15). Installs the Debian packages whose
// executables are missing; prints what it does; exits non-zero with a clear message when it cannot.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"

/** The executables the cluster runs, and the Debian package of each. */
const needed = [
  { file: "/usr/bin/patroni", pkg: "patroni" },
  { file: "/usr/bin/patronictl", pkg: "patroni" },
  { file: "/usr/bin/etcd", pkg: "etcd-server" },
  { file: "/usr/sbin/haproxy", pkg: "haproxy" },
  { file: "/usr/sbin/pgbouncer", pkg: "pgbouncer" },
  { file: "/usr/lib/postgresql/15/bin/postgres", pkg: "postgresql-15" }
]

const fail = (message) => {
  console.error(`ensure-ha: ${message}`)
  console.error(
    "ensure-ha: the failover test needs Patroni, etcd, HAProxy, pgbouncer and PostgreSQL 15. Install them as root with\n" +
      "  apt-get update && apt-get install -y --no-install-recommends patroni etcd-server haproxy pgbouncer postgresql-15"
  )
  process.exit(1)
}

const missing = () => needed.filter(({ file }) => !existsSync(file))

const absent = missing()
if (absent.length === 0) {
  console.log(`ensure-ha: ${needed.map(({ file }) => file).join(", ")} are present`)
  process.exit(0)
}
const packages = [...new Set(absent.map(({ pkg }) => pkg))]
const files = absent.map(({ file }) => file).join(", ")
if (process.platform !== "linux") fail(`${files} missing and this is not Linux (${process.platform})`)
if (!existsSync("/usr/bin/apt-get")) fail(`${files} missing and apt-get is not available`)

const asRoot = typeof process.getuid === "function" && process.getuid() === 0
const sudo = !asRoot && existsSync("/usr/bin/sudo") ? ["sudo", "-n"] : []
if (!asRoot && sudo.length === 0) fail(`${files} missing and installing them needs root (no sudo)`)

const run = (args) => {
  const command = [...sudo, ...args]
  console.log(`ensure-ha: ${command.join(" ")}`)
  const result = spawnSync(command[0], command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
  if (result.error) console.error(`ensure-ha: ${result.error.message}`)
  return result.status === 0
}

const install = ["apt-get", "install", "-y", "--no-install-recommends", ...packages]
console.log(`ensure-ha: ${files} missing; installing Debian's ${packages.join(", ")}`)
if (!run(install)) {
  console.log("ensure-ha: the install failed; refreshing the package lists and trying again")
  if (!run(["apt-get", "update"]) || !run(install)) fail(`apt-get could not install ${packages.join(" ")}`)
}
const still = missing()
if (still.length > 0)
  fail(`installed ${packages.join(", ")} but ${still.map(({ file }) => file).join(", ")} still missing`)
console.log(`ensure-ha: installed ${packages.join(", ")}`)
