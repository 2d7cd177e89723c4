import { defineProject } from "vitest/config"
import { withoutPostgres } from "./vitest.without-postgres.config.js"

export default defineProject({
  test: {
    name: "store-pg",
    include: ["test/**/*.test.ts"],
    // Run one file at a time (the root config); those without PostgreSQL run beside them.
    exclude: withoutPostgres,
    // Integration suites talk to PGlite and PostgreSQL: property runs and the torture test take seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
