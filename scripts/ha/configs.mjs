// The configuration files of the loopback HA cluster (`cluster.mjs`): etcd's flags, one Patroni YAML
// per member, HAProxy's and pgbouncer's. Pure functions of the ports and folders; nothing is started.
import * as Path from "node:path"

/** The DCS timings: a crashed primary is demoted and replaced within about `ttl` seconds at worst. */
export const dcs = {
  ttl: 10,
  loop_wait: 1,
  retry_timeout: 4,
  // Failover at once when the primary's postmaster dies (a synchronous replica has every commit).
  primary_start_timeout: 0
}

/** etcd's command line: one member, v3 API, data in `dir/etcd`. */
export const etcdArgs = ({ dir, clientPort, peerPort }) => [
  "--name",
  "cobro-ha-etcd",
  "--data-dir",
  Path.join(dir, "etcd"),
  "--listen-client-urls",
  `http://127.0.0.1:${clientPort}`,
  "--advertise-client-urls",
  `http://127.0.0.1:${clientPort}`,
  "--listen-peer-urls",
  `http://127.0.0.1:${peerPort}`,
  "--initial-advertise-peer-urls",
  `http://127.0.0.1:${peerPort}`,
  "--initial-cluster",
  `cobro-ha-etcd=http://127.0.0.1:${peerPort}`,
  "--initial-cluster-state",
  "new",
  "--initial-cluster-token",
  `cobro-ha-${clientPort}`,
  // Loopback: short heartbeats, and no fsync stalls counted as leader loss.
  "--heartbeat-interval",
  "100",
  "--election-timeout",
  "1000",
  "--logger",
  "zap",
  "--log-outputs",
  "stderr"
]

const yamlString = (value) => JSON.stringify(String(value))

/**
 * A Patroni member's YAML (`synchronous_mode`, pg_rewind, trust for 127.0.0.1). `member` is
 * `{ name, restPort, pgPort }`; `etcdPort` the etcd client port; `dir` the cluster's folder.
 */
export const patroniYaml = ({ scope, dir, etcdPort, member, binDir }) => {
  const dataDir = Path.join(dir, member.name, "data")
  return `scope: ${yamlString(scope)}
name: ${yamlString(member.name)}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${member.restPort}
  connect_address: 127.0.0.1:${member.restPort}
etcd3:
  hosts: 127.0.0.1:${etcdPort}
bootstrap:
  dcs:
    ttl: ${dcs.ttl}
    loop_wait: ${dcs.loop_wait}
    retry_timeout: ${dcs.retry_timeout}
    primary_start_timeout: ${dcs.primary_start_timeout}
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      use_slots: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: trust
postgresql:
  listen: 127.0.0.1:${member.pgPort}
  connect_address: 127.0.0.1:${member.pgPort}
  data_dir: ${yamlString(dataDir)}
  bin_dir: ${yamlString(binDir)}
  pgpass: ${yamlString(Path.join(dir, member.name, "pgpass"))}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: ${yamlString(Path.join(dir, member.name))}
    max_connections: 200
    shared_buffers: 64MB
    fsync: "on"
    logging_collector: "off"
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
  basebackup:
    - checkpoint: fast
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
`
}

/** HAProxy: one frontend to whichever member Patroni's REST API calls the primary. */
export const haproxyCfg = ({ dir, port, members, statsPort }) => `global
  maxconn 2000
  pidfile ${Path.join(dir, "haproxy.pid")}

defaults
  mode tcp
  log global
  retries 2
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s

listen stats
  mode http
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /

listen primary
  bind 127.0.0.1:${port}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} maxconn 500 check port ${m.restPort}`).join("\n")}
`

/** pgbouncer in transaction mode in front of HAProxy; trust, with an auth file. */
export const pgbouncerIni = ({ dir, port, haproxyPort }) => `[databases]
* = host=127.0.0.1 port=${haproxyPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${Path.join(dir, "userlist.txt")}
admin_users = postgres
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
max_db_connections = 150
ignore_startup_parameters = extra_float_digits
server_connect_timeout = 3
server_login_retry = 1
query_wait_timeout = 30
pidfile = ${Path.join(dir, "pgbouncer.pid")}
`

export const userlist = `"postgres" ""
"replicator" ""
`
