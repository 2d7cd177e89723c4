#!/usr/bin/env node
// `npm test`'s pretest: the metrics test scrapes /metrics with a real Prometheus and checks the
// exposition and docs/prometheus-alerts.yml with promtool. Installs Debian's `prometheus` package
// (both executables) when either is missing, without starting its service.
import { ensureDebianPackages } from "./debian-packages.mjs"

ensureDebianPackages({
  name: "ensure-prometheus",
  purpose: "the metrics test needs Prometheus and promtool",
  needed: [
    { file: "/usr/bin/prometheus", pkg: "prometheus" },
    { file: "/usr/bin/promtool", pkg: "prometheus" }
  ]
})
