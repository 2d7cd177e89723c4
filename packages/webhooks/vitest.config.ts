import { defineProject } from "vitest/config"
import { withoutPostgres } from "./vitest.without-postgres.config.js"

export default defineProject({
  test: {
    name: "webhooks",
    include: ["test/**/*.test.ts"],
    // Run one file at a time (the root config); those without PostgreSQL run beside them.
    exclude: withoutPostgres,
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room.
    testTimeout: 60_000
  }
})
