import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "webhooks",
    include: ["test/**/*.test.ts"],
    // Two lanes of PostgreSQL suites, each on a server of its own (PostgresLanes).
    globalSetup: ["../store-pg/test/support/PostgresLanes.ts"],
    setupFiles: ["../domain/test/support/RestoreEffectIt.ts", "../store-pg/test/support/PostgresLane.ts"],
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room.
    testTimeout: 60_000
  }
})
