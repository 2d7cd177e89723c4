import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "terminal-sim",
    include: ["test/**/*.test.ts"],
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room.
    testTimeout: 60_000
  }
})
