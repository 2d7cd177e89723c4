import { defineProject } from "vitest/config"

/**
 * The server's suites that need no PostgreSQL (they pass with `DATABASE_URL` pointing nowhere): they
 * run in the threads pool, two files at a time, beside the suites on PostgreSQL, which run one at a
 * time (the root config says why). A suite that starts using PostgreSQL moves out of this list.
 */
export const withoutPostgres = [
  "test/CliAudit.int.test.ts",
  "test/CliUnits.test.ts",
  "test/CliUser.int.test.ts",
  "test/Ids.test.ts",
  "test/Layout.test.ts",
  "test/ListenUnits.test.ts",
  "test/Logging.test.ts",
  "test/Logs.int.test.ts",
  "test/NodeKeyVault.test.ts",
  "test/Observability.int.test.ts",
  "test/OutcomeMetrics.test.ts",
  "test/Retire.int.test.ts",
  "test/StateCache.test.ts",
  "test/Supervisor.test.ts",
  "test/Telemetry.test.ts",
  "test/TerminalPusherTrace.int.test.ts",
  "test/TracingOff.test.ts",
  "test/Trigger.int.test.ts",
  "test/VirtualClock.test.ts",
  "test/browser/*.test.ts"
]

export default defineProject({
  test: {
    name: "server-without-postgres",
    include: withoutPostgres,
    pool: "threads",
    // One PGlite folder per run as a first start leaves it, for tests that need a node but not its first start.
    globalSetup: ["test/support/PgliteTemplateSetup.ts"],
    // The integration suites start real server processes (tsx, PGlite's first start takes seconds).
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
