import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "client",
    include: ["test/**/*.test.ts"],
    // The integration suites start a Cobro server in the process (PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
