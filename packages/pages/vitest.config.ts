import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "pages",
    include: ["test/**/*.test.ts"]
  }
})
