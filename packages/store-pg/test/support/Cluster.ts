/**
 * Throwaway PostgreSQL clusters from the installed binaries (Debian's `postgresql-<version>`): the
 * store's fallback when no server answers, and the second lane of a test run (`PostgresLanes`).
 * Only Node's own modules here: vitest's global setup imports it in its own process.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

/** A port nothing listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/** A running cluster: its URL (database `postgres`, trust auth) and how to stop it and remove its files. */
export interface Started {
  readonly url: string
  readonly stop: () => void
}

/** Starts a cluster in a new temp folder on a free port; an `error` says why it could not. */
export const start = async (): Promise<Started | { readonly error: string }> => {
  const root = "/usr/lib/postgresql"
  const versions = Fs.existsSync(root) ? Fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  const bin = versions
    .map((v) => Path.join(root, v, "bin"))
    .find((dir) => Fs.existsSync(Path.join(dir, "initdb")))
  if (bin === undefined) return { error: `no initdb under ${root}/*/bin` }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-pg-"))
  // initdb refuses to run as root: run the cluster as the `postgres` user then.
  const asRoot = process.getuid?.() === 0
  const run = (command: string, args: ReadonlyArray<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { stdio: "pipe" })
      : execFileSync(command, args, { stdio: "pipe" })
  try {
    if (asRoot) execFileSync("chown", ["postgres", dir])
    const data = Path.join(dir, "data")
    const port = await freePort()
    run(Path.join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync"])
    run(Path.join(bin, "pg_ctl"), [
      "-D",
      data,
      "-l",
      Path.join(dir, "log"),
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "-w",
      "start"
    ])
    const stop = () => {
      try {
        run(Path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"])
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }
    console.warn(`Started a throwaway PostgreSQL cluster on port ${port} (${dir}).`)
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop }
  } catch (cause) {
    Fs.rmSync(dir, { recursive: true, force: true })
    return { error: `starting a cluster with ${bin} failed: ${String(cause)}` }
  }
}
