/**
 * The PostgreSQL suites (store-pg, webhooks, server) run in two lanes, each on a server of its own.
 * A snapshot's xmin is the whole server's: a transaction open in one test database holds back the
 * log's readers in every other, so two files on one server would wait on each other's transactions.
 * Lane 1 uses `DATABASE_URL` or the machine's server; lane 2 a cluster this run starts from the
 * installed binaries. With `DATABASE_URL` set there is one lane, on that server.
 *
 * This module is the projects' `globalSetup` (vitest's own process, shared by the three projects);
 * `PostgresLane` is their setup file, which points the second lane's workers at its cluster.
 */
import type { TestProject } from "vitest/node"
import * as Cluster from "./Cluster.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The second lane's server; absent when the run has one lane. */
    readonly secondPostgresUrl?: string
  }
}

/** How many PostgreSQL suites run at once: vitest's `forks` pool size. */
export const count = process.env["DATABASE_URL"] === undefined ? 2 : 1

interface SecondLane {
  users: number
  readonly cluster: Promise<Cluster.Started>
}

const shared = globalThis as { cobroSecondPostgresLane?: SecondLane }

const startSecond = async (): Promise<Cluster.Started> => {
  const started = await Cluster.start()
  if ("error" in started) {
    throw new Error(
      "The PostgreSQL suites run in two lanes, and the second starts a cluster of its own from the " +
        `installed PostgreSQL binaries (Debian's postgresql package): ${started.error}. ` +
        "Set DATABASE_URL to run them in one lane on that server."
    )
  }
  return started
}

/** Starts the second lane's cluster once for the projects that ask, and stops it after the last. */
export const setup = async (project: TestProject) => {
  if (count === 1) return
  const lane = (shared.cobroSecondPostgresLane ??= { users: 0, cluster: startSecond() })
  lane.users += 1
  project.provide("secondPostgresUrl", (await lane.cluster).url)
  return async () => {
    lane.users -= 1
    if (lane.users > 0) return
    delete shared.cobroSecondPostgresLane
    ;(await lane.cluster).stop()
  }
}
