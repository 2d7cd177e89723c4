import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "store-pg",
    include: ["test/**/*.test.ts"]
  }
})
