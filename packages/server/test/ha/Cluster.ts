/**
 * The loopback HA cluster of `scripts/ha/cluster.mjs` (etcd, two Patroni members in synchronous
 * mode, HAProxy, pgbouncer), typed for the failover suite.
 */
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** A member of the cluster as `up` wrote it in its state. */
export interface Member {
  readonly name: string
  readonly restPort: number
  readonly pgPort: number
  readonly restUrl: string
  readonly dataDir: string
  readonly config: string
  pid: number
}

/** A running cluster (`state.json`). */
export interface Cluster {
  readonly dir: string
  readonly ports: {
    readonly etcdClient: number
    readonly etcdPeer: number
    readonly haproxy: number
    readonly haproxyStats: number
    readonly pgbouncer: number
  }
  readonly members: ReadonlyArray<Member>
  readonly pids: { readonly etcd: number; readonly haproxy: number; readonly pgbouncer: number }
  /** Through HAProxy to the primary, database `postgres`. */
  readonly directUrl: string
  /** Through pgbouncer (transaction pooling) to HAProxy, database `postgres`. */
  readonly bouncerUrl: string
}

/** What a fault did. */
export interface Fault {
  readonly fault: "switchover" | "kill-postmaster" | "stop-patroni"
  /** The primary it hit. */
  readonly primary: string
  /** When it was injected (epoch millis). */
  readonly at: number
}

interface ClusterModule {
  readonly up: (options?: { dir?: string; quiet?: boolean }) => Promise<Cluster>
  readonly down: (cluster: Cluster) => Promise<void>
  readonly primary: (cluster: Cluster) => Promise<Member | undefined>
  readonly switchover: (cluster: Cluster) => Promise<Fault>
  readonly killPostmaster: (cluster: Cluster) => Promise<Fault>
  readonly stopPatroni: (cluster: Cluster) => Promise<Fault>
  readonly waitHealthy: (
    cluster: Cluster,
    options?: { timeoutMillis?: number }
  ) => Promise<{ primary: string; standby: string; millis: number }>
  readonly killNow: (cluster: Cluster) => void
  readonly sql: (port: number, statement: string, database?: string) => string
}

/** The script's module (plain ESM, loaded at run time). */
export const load = (): Promise<ClusterModule> =>
  import(pathToFileURL(Path.join(root, "scripts", "ha", "cluster.mjs")).href) as Promise<ClusterModule>

/** `url` with another database. */
export const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}
