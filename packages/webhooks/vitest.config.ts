import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "webhooks",
    include: ["test/**/*.test.ts"],
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room.
    testTimeout: 60_000
  }
})
