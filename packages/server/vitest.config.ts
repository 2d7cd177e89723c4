import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // The failover suite needs a Patroni cluster: `npm run test:ha` runs it (vitest.ha.config.ts).
    exclude: ["test/ha/**"],
    // One PGlite folder per run as a first start leaves it, for tests that need a node but not its first start.
    globalSetup: ["test/support/PgliteTemplateSetup.ts"],
    // The integration suites start real server processes (tsx, PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
