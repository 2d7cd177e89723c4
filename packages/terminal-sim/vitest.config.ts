import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "terminal-sim",
    include: ["test/**/*.test.ts"]
  }
})
