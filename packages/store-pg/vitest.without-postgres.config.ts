import { defineProject } from "vitest/config"

/**
 * The store's suites that need no PostgreSQL (they pass with `DATABASE_URL` pointing nowhere): they
 * run in the threads pool beside the suites on PostgreSQL (the root config says why).
 */
export const withoutPostgres = [
  "test/AuditTools.int.test.ts",
  "test/Checkpoint.test.ts",
  "test/HashChain.test.ts",
  "test/MerkleTree.test.ts",
  "test/OfflineVerify.test.ts",
  "test/PgErrors.test.ts",
  "test/Pglite.int.test.ts",
  "test/PgliteLock.int.test.ts"
]

export default defineProject({
  test: {
    name: "store-pg-without-postgres",
    include: withoutPostgres,
    pool: "threads",
    // PGlite's suites: property runs take seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
