import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "pages",
    include: ["test/**/*.test.ts"],
    // In-process suites: modules shared across files, two files at a time (the root config).
    pool: "threads"
  }
})
