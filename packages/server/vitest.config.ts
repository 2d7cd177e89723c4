import { defineProject } from "vitest/config"
import { withoutPostgres } from "./vitest.without-postgres.config.js"

export default defineProject({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // The failover suite needs a Patroni cluster: `npm run test:ha` runs it (vitest.ha.config.ts); the
    // suites without PostgreSQL run beside this one (vitest.without-postgres.config.ts).
    exclude: ["test/ha/**", ...withoutPostgres],
    // One PGlite folder per run as a first start leaves it, for tests that need a node but not its first start.
    globalSetup: ["test/support/PgliteTemplateSetup.ts"],
    // The integration suites start real server processes (tsx, PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
