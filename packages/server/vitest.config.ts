import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // The failover suite needs a Patroni cluster: `npm run test:ha` runs it (vitest.ha.config.ts).
    exclude: ["test/ha/**"],
    // The server compiled once per run, for the suites that spawn it; one PGlite folder per run as a
    // first start leaves it, for tests that need a node but not its first start; two lanes of
    // PostgreSQL suites, each on a server of its own (PostgresLanes).
    globalSetup: [
      "test/support/CompiledSetup.ts",
      "test/support/PgliteTemplateSetup.ts",
      "../store-pg/test/support/PostgresLanes.ts"
    ],
    setupFiles: ["../domain/test/support/RestoreEffectIt.ts", "../store-pg/test/support/PostgresLane.ts"],
    // The integration suites start real server processes (PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
