/**
 * The setup file of the PostgreSQL suites: a worker of the second lane (an even `VITEST_POOL_ID`)
 * uses the cluster `PostgresLanes` started for it, before any test module reads `DATABASE_URL`.
 */
import { inject } from "vitest"
import "./PostgresLanes.js"

const second = inject("secondPostgresUrl")
if (second !== undefined && Number(process.env["VITEST_POOL_ID"] ?? "1") % 2 === 0) {
  process.env["DATABASE_URL"] = second
}
