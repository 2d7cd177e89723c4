import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "client",
    include: ["test/**/*.test.ts"],
    // In-process suites: modules shared across files, two files at a time (the root config).
    pool: "threads",
    // The integration suites start a Cobro server in the process (PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
