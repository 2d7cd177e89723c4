import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "pages",
    include: ["test/**/*.test.ts"],
    // In-process suites: two files at a time, beside the suites on PostgreSQL (the root config).
    pool: "threads",
    // A worker keeps its modules from file to file: each file gets `it` as @effect/vitest made it.
    setupFiles: ["../domain/test/support/RestoreEffectIt.ts"]
  }
})
