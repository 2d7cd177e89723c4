import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "store-pg",
    include: ["test/**/*.test.ts"],
    // Integration suites talk to PGlite and PostgreSQL: property runs and the torture test take seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
