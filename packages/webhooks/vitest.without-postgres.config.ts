import { defineProject } from "vitest/config"

/**
 * The webhooks' suites that need no PostgreSQL (they pass with `DATABASE_URL` pointing nowhere):
 * they run in the threads pool beside the suites on PostgreSQL (the root config says why).
 */
export const withoutPostgres = [
  "test/Crash.int.test.ts",
  "test/DeliveryMetrics.test.ts",
  "test/Dispatcher.test.ts",
  "test/Notifier.test.ts",
  "test/StreamReplays.test.ts",
  "test/TwoDispatchers.int.test.ts",
  "test/UrlSafety.test.ts"
]

export default defineProject({
  test: {
    name: "webhooks-without-postgres",
    include: withoutPostgres,
    pool: "threads",
    // Property tests run hundreds of cases; a shared 2-core CI machine needs room.
    testTimeout: 60_000
  }
})
