#!/usr/bin/env node
// `npm run test:ha`'s first step: the failover test builds a PostgreSQL cluster from Debian's
// packages (Patroni, etcd, HAProxy, pgbouncer, PostgreSQL 15). Installs the Debian packages whose
// executables are missing, starting none of their services.
import { ensureDebianPackages } from "../debian-packages.mjs"

ensureDebianPackages({
  name: "ensure-ha",
  purpose: "the failover test needs Patroni, etcd, HAProxy, pgbouncer and PostgreSQL 15",
  needed: [
    { file: "/usr/bin/patroni", pkg: "patroni" },
    { file: "/usr/bin/patronictl", pkg: "patroni" },
    { file: "/usr/bin/etcd", pkg: "etcd-server" },
    { file: "/usr/sbin/haproxy", pkg: "haproxy" },
    { file: "/usr/sbin/pgbouncer", pkg: "pgbouncer" },
    { file: "/usr/lib/postgresql/15/bin/postgres", pkg: "postgresql-15" }
  ]
})
