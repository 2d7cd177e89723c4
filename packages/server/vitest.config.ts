import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // The integration suites start real server processes (tsx, PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
