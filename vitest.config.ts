import { defineConfig } from "vitest/config"

// One vitest project per package: `npm test` runs them all, `npx vitest --project domain` one.
export default defineConfig({
  test: {
    projects: ["packages/*"]
  }
})
