import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "panel",
    include: ["test/**/*.test.ts"],
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room (as in @cobro/http).
    testTimeout: 60_000
  }
})
