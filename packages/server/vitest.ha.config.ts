import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// `npm run test:ha`: the failover suite on a real Patroni cluster (scripts/ha/cluster.mjs), which
// `npm test` leaves out. One file, run alone: it owns the cluster and drives it through faults.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL(".", import.meta.url)),
    name: "server-ha",
    include: ["test/ha/**/*.ha.test.ts"],
    testTimeout: 420_000,
    hookTimeout: 300_000,
    fileParallelism: false
  }
})
