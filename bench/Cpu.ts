/**
 * Where a bench's CPU goes: this process, any other process by pid, and the PostgreSQL server's
 * processes (from /proc; Linux, and only when the server runs on this machine, else 0). On a shared
 * machine CPU per operation holds up where operations per second do not. Every figure is in µs.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

interface Stat {
  readonly name: string
  readonly parent: string
  /** utime + stime. */
  readonly ownUs: number
  /** cutime + cstime: the children it has reaped. */
  readonly reapedUs: number
}

/** `/proc/<pid>/stat`; throws once the process is gone. */
const stat = (pid: number | string): Stat => {
  const text = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  // The command name may hold spaces and parentheses: the fields start after the last `)`.
  const close = text.lastIndexOf(")")
  const fields = text.slice(close + 2).split(" ")
  const us = (ticks: number) => (ticks * 1e6) / clockTicks
  return {
    name: text.slice(text.indexOf("(") + 1, close),
    parent: fields[1]!,
    ownUs: us(Number(fields[11]) + Number(fields[12])),
    reapedUs: us(Number(fields[13]) + Number(fields[14]))
  }
}

/** The CPU a process has used so far; 0 once it is gone. */
export const processUs = (pid: number | string): number => {
  try {
    return stat(pid).ownUs
  } catch {
    return 0
  }
}

/** The PostgreSQL server's processes, with their command lines (which name a backend's database). */
const postgresProcesses = function* () {
  for (const pid of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const found = stat(pid)
      if (found.name !== "postgres") continue
      yield { pid, ...found, title: Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8") }
    } catch {
      // the process ended meanwhile
    }
  }
}

/** A backend's title names its client (`host(port)` or `[local]`); background processes' do not. */
const isBackend = (title: string) => /\(\d+\)|\[local\]/.test(title)
const serves = (title: string, database: string) => title.includes(` ${database} `)

export interface Snapshot {
  readonly node: NodeJS.CpuUsage
  /** By pid, so that a process ending between two snapshots does not count negative. */
  readonly postgres: ReadonlyMap<string, number>
}

/**
 * This process's CPU and each PostgreSQL process's: every one, or with `database` its backends and
 * the server's background processes (WAL writer, checkpointer: whoever made them work), other
 * databases' sessions left out.
 */
export const snapshot = (database?: string): Snapshot => {
  const postgres = new Map<string, number>()
  for (const { pid, ownUs, title } of postgresProcesses()) {
    if (database === undefined || !isBackend(title) || serves(title, database)) postgres.set(pid, ownUs)
  }
  return { node: process.cpuUsage(), postgres }
}

export interface Used {
  readonly nodeUs: number
  readonly nodeUserUs: number
  /** By the PostgreSQL processes alive at the second snapshot (a new one: all of its CPU). */
  readonly postgresUs: number
}

export const used = (before: Snapshot, after: Snapshot): Used => {
  let postgresUs = 0
  for (const [pid, us] of after.postgres) postgresUs += us - (before.postgres.get(pid) ?? 0)
  return {
    nodeUs: after.node.user + after.node.system - (before.node.user + before.node.system),
    nodeUserUs: after.node.user - before.node.user,
    postgresUs
  }
}

/**
 * The CPU used so far by `database`'s backends and by every backend of the server that has exited.
 * A backend that ends during a phase (a pool closing an idle connection) takes its CPU out of the
 * live sum, but the postmaster, which reaps it, adds it to its children's: the difference of two
 * readings counts it exactly once, whenever it started and ended. The exited part is the whole
 * server's (autovacuum workers count, as work the writes caused): for phases during which no other
 * database is busy. Prefer {@link databaseBackends}: on a shared server the reaped part picks up
 * other databases' sessions too (and has read negative).
 */
export const backendsUs = (database: string): number => {
  let total = 0
  for (const { parent, ownUs, reapedUs, title } of postgresProcesses()) {
    try {
      if (stat(parent).name !== "postgres")
        total += reapedUs // the postmaster
      else if (serves(title, database)) total += ownUs
    } catch {
      // the process ended meanwhile
    }
  }
  return total
}

/** Nanoseconds on CPU of the backends serving one database, by pid ({@link databaseBackends}). */
export type Backends = ReadonlyMap<string, number>

/**
 * The backends serving `database` and the ns each has spent on CPU (`/proc/<pid>/schedstat`'s first
 * field, exact where `stat`'s ticks are 10 ms): that database's sessions only, not the server's
 * background processes nor other databases' sessions.
 */
export const databaseBackends = (database: string): Backends => {
  const backends = new Map<string, number>()
  for (const { pid, title } of postgresProcesses()) {
    if (!isBackend(title) || !serves(title, database)) continue
    try {
      backends.set(pid, Number(Fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]))
    } catch {
      // the process ended meanwhile
    }
  }
  return backends
}

/**
 * The µs the backends of `after` spent on CPU since `before`: a backend that started in between
 * counts from 0; one that ended in between is lost with its last phase's CPU (no live process to
 * read): measure with pools that keep their idle connections open.
 */
export const backendsUsBetween = (before: Backends, after: Backends): number => {
  let ns = 0
  for (const [pid, spent] of after) ns += spent - (before.get(pid) ?? 0)
  return ns / 1000
}
