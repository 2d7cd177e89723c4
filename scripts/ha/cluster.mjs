#!/usr/bin/env node
// A highly-available PostgreSQL 15 cluster on loopback from Debian's packages: one etcd, two Patroni
// members in synchronous mode, HAProxy in front of whichever member is the primary, pgbouncer
// (transaction pooling) in front of HAProxy. Every daemon runs as the `postgres` OS user in one
// folder, detached, its PID kept in `state.json`; `down` kills them by PID and removes the folder.
//
//   node scripts/ha/cluster.mjs up [DIR]          start (DIR or a new temp folder); prints the state
//   node scripts/ha/cluster.mjs down DIR          stop everything, remove DIR
//   node scripts/ha/cluster.mjs status DIR        Patroni's view of the cluster
//   node scripts/ha/cluster.mjs switchover|kill-postmaster|stop-patroni|wait-healthy DIR
//
// Imported by the failover test: up, down, primary, switchover, killPostmaster, stopPatroni, waitHealthy.
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Configs from "./configs.mjs"

const binDir = "/usr/lib/postgresql/15/bin"
const psql = Path.join(binDir, "psql")
const scope = "cobro-ha"

const log = (options, message) => {
  if (!options?.quiet) console.error(`cluster: ${message}`)
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const postgresUser = () => {
  const read = (flag) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" })
  const uid = read("-u")
  const gid = read("-g")
  if (uid.status !== 0 || gid.status !== 0) throw new Error("cluster: there is no `postgres` OS user")
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

/** A port nothing listens on right now (the kernel's pick). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const freePorts = async (n) => {
  const ports = new Set()
  while (ports.size < n) ports.add(await freePort())
  return [...ports]
}

const chownTree = (path, { uid, gid }) => {
  Fs.chownSync(path, uid, gid)
  if (Fs.statSync(path).isDirectory())
    for (const entry of Fs.readdirSync(path)) chownTree(Path.join(path, entry), { uid, gid })
}

const alive = (pid) => {
  if (!pid) return false
  try {
    // A zombie (exited, not reaped yet: a detached daemon whose parent is gone) is not alive.
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
  } catch {
    // no /proc entry: ask the kernel below
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === "EPERM"
  }
}

/** Starts `command` detached as the postgres user, its output appended to `logs/<name>.log`; its PID. */
const daemon = (cluster, name, command, args) => {
  const logFile = Path.join(cluster.dir, "logs", `${name}.log`)
  const fd = Fs.openSync(logFile, "a")
  const user = postgresUser()
  const child = spawn(command, args, {
    cwd: cluster.dir,
    detached: true,
    uid: user.uid,
    gid: user.gid,
    stdio: ["ignore", fd, fd],
    env: {
      PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
      HOME: cluster.dir,
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      PYTHONUNBUFFERED: "1"
    }
  })
  Fs.closeSync(fd)
  child.on("error", (error) => console.error(`cluster: ${name}: ${error.message}`))
  child.unref()
  if (!child.pid) throw new Error(`cluster: could not start ${name} (${command})`)
  return child.pid
}

const tail = (cluster, name, lines = 30) => {
  try {
    return Fs.readFileSync(Path.join(cluster.dir, "logs", `${name}.log`), "utf8")
      .split("\n")
      .slice(-lines)
      .join("\n")
  } catch {
    return "(no log)"
  }
}

/** Polls `attempt` until it returns a truthy value; throws `what()` after `ms`. */
const until = async (ms, what, attempt, every = 200) => {
  const deadline = Date.now() + ms
  let last
  for (;;) {
    try {
      last = await attempt()
      if (last) return last
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`cluster: after ${ms} ms: ${what(last)}`)
    await sleep(every)
  }
}

const getJson = async (url, timeout = 1000) => {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeout) })
  return { status: response.status, json: await response.json().catch(() => undefined) }
}

/** Runs one statement with psql at `port`; its trimmed output, or throws with psql's error. */
export const sql = (port, statement, database = "postgres") => {
  const result = spawnSync(
    psql,
    [
      "-X",
      "-A",
      "-t",
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      "postgres",
      "-d",
      database,
      "-c",
      statement
    ],
    { encoding: "utf8", timeout: 10_000, env: { PATH: process.env.PATH, PGCONNECT_TIMEOUT: "3" } }
  )
  if (result.status !== 0) throw new Error(`psql -p ${port}: ${result.stderr || result.error?.message}`)
  return result.stdout.trim()
}

/** {@link sql} without blocking the event loop (the failover test polls health while its load runs). */
export const sqlAsync = (port, statement, database = "postgres") =>
  new Promise((resolve, reject) => {
    const child = spawn(
      psql,
      [
        "-X",
        "-A",
        "-t",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        database,
        "-c",
        statement
      ],
      { env: { PATH: process.env.PATH, PGCONNECT_TIMEOUT: "3" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(stdout.trim())
      else reject(new Error(`psql -p ${port}: ${stderr || `exit ${code}`}`))
    })
  })

const saveState = (cluster) => {
  const { members, ...rest } = cluster
  Fs.writeFileSync(
    Path.join(cluster.dir, "state.json"),
    JSON.stringify({ ...rest, members: members.map(({ ...m }) => m) }, null, 2) + "\n"
  )
}

/** Reads the state `up` wrote in `dir`. */
export const load = (dir) => JSON.parse(Fs.readFileSync(Path.join(dir, "state.json"), "utf8"))

const startPatroni = (cluster, member) => {
  member.pid = daemon(cluster, member.name, "/usr/bin/patroni", [member.config])
  saveState(cluster)
}

/** Patroni's view of the cluster (`GET /cluster`) from the first member that answers. */
export const clusterView = async (cluster) => {
  for (const member of cluster.members) {
    try {
      const { status, json } = await getJson(`${member.restUrl}/cluster`)
      if (status === 200 && json) return json
    } catch {
      // next member
    }
  }
  return undefined
}

/** The primary: `{ name, restUrl, pgPort }`, or undefined while there is none. */
export const primary = async (cluster) => {
  const view = await clusterView(cluster)
  const leader = view?.members?.find((m) => m.role === "leader" && m.state === "running")
  return leader === undefined ? undefined : cluster.members.find((m) => m.name === leader.name)
}

/**
 * Healthy: a running leader that answers `/primary` with 200, and the other member a synchronous
 * standby streaming from it (as the primary's `pg_stat_replication` says).
 */
export const healthy = async (cluster) => {
  const view = await clusterView(cluster)
  const leader = view?.members?.find((m) => m.role === "leader" && m.state === "running")
  if (leader === undefined) return false
  const standby = view.members.find(
    (m) => m.name !== leader.name && m.role === "sync_standby" && ["running", "streaming"].includes(m.state)
  )
  if (standby === undefined) return false
  const member = cluster.members.find((m) => m.name === leader.name)
  const { status } = await getJson(`${member.restUrl}/primary`)
  if (status !== 200) return false
  const streaming = await sqlAsync(
    member.pgPort,
    `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync' AND application_name = '${standby.name}'`
  )
  return streaming === "1" ? { primary: leader.name, standby: standby.name } : false
}

/**
 * Waits until there is a primary and a streaming synchronous replica again; a member whose Patroni
 * is not running is started again first.
 */
export const waitHealthy = async (cluster, { timeoutMillis = 90_000 } = {}) => {
  const started = Date.now()
  const result = await until(
    timeoutMillis,
    (last) =>
      `no primary with a streaming synchronous replica (${last instanceof Error ? last.message : JSON.stringify(last)}).\n` +
      cluster.members.map((m) => `--- ${m.name}\n${tail(cluster, m.name)}`).join("\n"),
    () => {
      // A member whose Patroni has exited (stopped by a fault) is started again.
      for (const member of cluster.members) if (!alive(member.pid)) startPatroni(cluster, member)
      return healthy(cluster)
    },
    250
  )
  return { ...result, millis: Date.now() - started }
}

const throughHaproxy = async (cluster) => (await sqlAsync(cluster.ports.haproxy, "SELECT 1")) === "1"
const throughBouncer = async (cluster) => (await sqlAsync(cluster.ports.pgbouncer, "SELECT 1")) === "1"

/**
 * Starts the cluster in `options.dir` (created) or a new temp folder: configs, etcd, both Patroni
 * members, a primary with a streaming synchronous replica, HAProxy, pgbouncer; `SELECT 1` through
 * both. Returns the state (also in `<dir>/state.json`). On failure everything started is stopped.
 */
export const up = async (options = {}) => {
  for (const file of [
    "/usr/bin/patroni",
    "/usr/bin/etcd",
    "/usr/sbin/haproxy",
    "/usr/sbin/pgbouncer",
    `${binDir}/postgres`
  ])
    if (!Fs.existsSync(file))
      throw new Error(`cluster: ${file} is missing (run node scripts/ha/ensure-ha.mjs)`)
  const user = postgresUser()
  const dir = options.dir ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-ha-"))
  Fs.mkdirSync(Path.join(dir, "logs"), { recursive: true })
  const [etcdClient, etcdPeer, rest1, rest2, pg1, pg2, haproxy, stats, pgbouncer] = await freePorts(9)
  const cluster = {
    dir,
    startedAt: new Date().toISOString(),
    ports: { etcdClient, etcdPeer, haproxy, haproxyStats: stats, pgbouncer },
    members: [
      { name: "pg1", restPort: rest1, pgPort: pg1 },
      { name: "pg2", restPort: rest2, pgPort: pg2 }
    ].map((m) => ({
      ...m,
      restUrl: `http://127.0.0.1:${m.restPort}`,
      dataDir: Path.join(dir, m.name, "data"),
      config: Path.join(dir, `${m.name}.yml`),
      pid: 0
    })),
    pids: { etcd: 0, haproxy: 0, pgbouncer: 0 },
    directUrl: `postgres://postgres@127.0.0.1:${haproxy}/postgres`,
    bouncerUrl: `postgres://postgres@127.0.0.1:${pgbouncer}/postgres`,
    etcdUrl: `http://127.0.0.1:${etcdClient}`
  }
  try {
    for (const member of cluster.members) {
      Fs.mkdirSync(Path.join(dir, member.name), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(
        member.config,
        Configs.patroniYaml({ scope, dir, etcdPort: etcdClient, member, binDir })
      )
    }
    Fs.writeFileSync(
      Path.join(dir, "haproxy.cfg"),
      Configs.haproxyCfg({ dir, port: haproxy, statsPort: stats, members: cluster.members })
    )
    Fs.writeFileSync(
      Path.join(dir, "pgbouncer.ini"),
      Configs.pgbouncerIni({ dir, port: pgbouncer, haproxyPort: haproxy })
    )
    Fs.writeFileSync(Path.join(dir, "userlist.txt"), Configs.userlist)
    chownTree(dir, user)
    Fs.chmodSync(dir, 0o755)
    saveState(cluster)
    const t0 = Date.now()

    cluster.pids.etcd = daemon(
      cluster,
      "etcd",
      "/usr/bin/etcd",
      Configs.etcdArgs({ dir, clientPort: etcdClient, peerPort: etcdPeer })
    )
    saveState(cluster)
    await until(
      20_000,
      () => `etcd did not get healthy:\n${tail(cluster, "etcd")}`,
      async () => {
        const { status, json } = await getJson(`${cluster.etcdUrl}/health`)
        return status === 200 && json?.health === "true"
      }
    )
    log(options, `etcd is up (${Date.now() - t0} ms)`)

    // The first member bootstraps (initdb); the second clones it once there is a leader.
    startPatroni(cluster, cluster.members[0])
    await until(
      60_000,
      () => `no primary:\n${tail(cluster, "pg1")}`,
      () => primary(cluster)
    )
    log(options, `pg1 is the primary (${Date.now() - t0} ms)`)
    startPatroni(cluster, cluster.members[1])
    await waitHealthy(cluster, { timeoutMillis: 90_000 })
    log(options, `pg2 streams synchronously (${Date.now() - t0} ms)`)

    cluster.pids.haproxy = daemon(cluster, "haproxy", "/usr/sbin/haproxy", [
      "-db",
      "-f",
      Path.join(dir, "haproxy.cfg")
    ])
    cluster.pids.pgbouncer = daemon(cluster, "pgbouncer", "/usr/sbin/pgbouncer", [
      Path.join(dir, "pgbouncer.ini")
    ])
    saveState(cluster)
    await until(
      20_000,
      (last) => `SELECT 1 through HAProxy failed: ${last?.message ?? last}\n${tail(cluster, "haproxy")}`,
      () => throughHaproxy(cluster)
    )
    await until(
      20_000,
      (last) => `SELECT 1 through pgbouncer failed: ${last?.message ?? last}\n${tail(cluster, "pgbouncer")}`,
      () => throughBouncer(cluster)
    )
    log(options, `HAProxy and pgbouncer answer (${Date.now() - t0} ms)`)
    saveState(cluster)
    return cluster
  } catch (error) {
    if (!options.keepOnFailure) await down(cluster, { keepDir: options.dir !== undefined })
    throw error
  }
}

const postmasterPid = (member) => {
  try {
    const pid = Number(Fs.readFileSync(Path.join(member.dataDir, "postmaster.pid"), "utf8").split("\n")[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const signal = (pid, name) => {
  try {
    process.kill(pid, name)
    return true
  } catch {
    return false
  }
}

/** SIGTERM, then SIGKILL after `graceMillis`, for every PID; resolves once all are gone. */
const stopAll = async (pids, graceMillis = 5000) => {
  const live = pids.filter((pid) => alive(pid))
  for (const pid of live) signal(pid, "SIGTERM")
  const deadline = Date.now() + graceMillis
  while (live.some(alive) && Date.now() < deadline) await sleep(100)
  for (const pid of live.filter(alive)) signal(pid, "SIGKILL")
  while (live.some(alive) && Date.now() < deadline + 3000) await sleep(50)
}

/** Stops every daemon of the cluster by PID (SIGTERM, then SIGKILL) and removes its folder. */
export const down = async (cluster, { keepDir = false } = {}) => {
  // The front first, then Patroni (which stops its postmaster), then whatever postmaster is left, etcd last.
  await stopAll([cluster.pids.pgbouncer, cluster.pids.haproxy].filter(Boolean))
  await stopAll(cluster.members.map((m) => m.pid).filter(Boolean), 8000)
  await stopAll(cluster.members.map(postmasterPid).filter(Boolean), 3000)
  await stopAll([cluster.pids.etcd].filter(Boolean))
  if (!keepDir) Fs.rmSync(cluster.dir, { recursive: true, force: true })
}

/**
 * SIGKILLs every daemon of the cluster at once, synchronously (for a process's `exit` handler, when
 * `down` cannot run); the folder stays.
 */
export const killNow = (cluster) => {
  const pids = [
    cluster.pids.pgbouncer,
    cluster.pids.haproxy,
    ...cluster.members.map((m) => m.pid),
    ...cluster.members.map(postmasterPid),
    cluster.pids.etcd
  ]
  for (const pid of pids) if (pid && alive(pid)) signal(pid, "SIGKILL")
}

const requirePrimary = async (cluster) => {
  const leader = await primary(cluster)
  if (leader === undefined) throw new Error("cluster: there is no primary")
  return leader
}

/** A planned switchover to the replica (Patroni's `POST /switchover`); the old primary's name. */
export const switchover = async (cluster) => {
  const leader = await requirePrimary(cluster)
  const candidate = cluster.members.find((m) => m.name !== leader.name)
  // Patroni answers once the candidate leads: the fault starts when it is asked for.
  const at = Date.now()
  const response = await fetch(`${leader.restUrl}/switchover`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ leader: leader.name, candidate: candidate.name }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`cluster: switchover ${response.status}: ${text}`)
  return { fault: "switchover", primary: leader.name, candidate: candidate.name, at, answeredAt: Date.now() }
}

/** `kill -9` of the primary's postmaster (its PID from `postmaster.pid`). */
export const killPostmaster = async (cluster) => {
  const leader = await requirePrimary(cluster)
  const pid = postmasterPid(leader)
  const at = Date.now()
  if (pid === undefined || !signal(pid, "SIGKILL"))
    throw new Error(`cluster: no postmaster to kill in ${leader.dataDir}`)
  return { fault: "kill-postmaster", primary: leader.name, pid, at }
}

/** SIGTERM to the primary's Patroni (it stops its PostgreSQL and lets go of the leader key). */
export const stopPatroni = async (cluster) => {
  const leader = await requirePrimary(cluster)
  const at = Date.now()
  if (!signal(leader.pid, "SIGTERM"))
    throw new Error(`cluster: ${leader.name}'s Patroni (${leader.pid}) is not running`)
  return { fault: "stop-patroni", primary: leader.name, pid: leader.pid, at }
}

const main = async () => {
  const [command, dirArgument] = process.argv.slice(2)
  const dir = dirArgument === undefined ? undefined : Path.resolve(dirArgument)
  const need = () => {
    if (dir === undefined) throw new Error(`cluster: ${command} needs the cluster's folder`)
    return load(dir)
  }
  switch (command) {
    case "up": {
      if (dir !== undefined && Fs.existsSync(Path.join(dir, "state.json")))
        throw new Error(`cluster: ${dir} holds a cluster already (state.json); run down first`)
      const cluster = await up({ dir })
      console.log(JSON.stringify(cluster, null, 2))
      return
    }
    case "down":
      await down(need())
      return
    case "status":
      console.log(
        JSON.stringify({ view: await clusterView(need()), healthy: await healthy(need()) }, null, 2)
      )
      return
    case "switchover":
      console.log(JSON.stringify(await switchover(need())))
      return
    case "kill-postmaster":
      console.log(JSON.stringify(await killPostmaster(need())))
      return
    case "stop-patroni":
      console.log(JSON.stringify(await stopPatroni(need())))
      return
    case "wait-healthy":
      console.log(JSON.stringify(await waitHealthy(need())))
      return
    default:
      console.error(
        "usage: node scripts/ha/cluster.mjs up [DIR] | down DIR | status DIR | switchover DIR | kill-postmaster DIR | stop-patroni DIR | wait-healthy DIR"
      )
      process.exit(2)
  }
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  })
}
