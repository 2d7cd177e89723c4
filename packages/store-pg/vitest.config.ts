import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "store-pg",
    include: ["test/**/*.test.ts"],
    // Two lanes of PostgreSQL suites, each on a server of its own (PostgresLanes).
    globalSetup: ["test/support/PostgresLanes.ts"],
    setupFiles: ["../domain/test/support/RestoreEffectIt.ts", "test/support/PostgresLane.ts"],
    // Integration suites talk to PGlite and PostgreSQL: property runs and the torture test take seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
