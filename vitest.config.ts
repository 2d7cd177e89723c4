import { defineConfig } from "vitest/config"
import * as PostgresLanes from "./packages/store-pg/test/support/PostgresLanes.js"

// One vitest project per package: `npm test` runs them all, `npx vitest --project domain` one.
export default defineConfig({
  test: {
    projects: ["packages/*"],
    poolOptions: {
      // The in-process suites (domain, api, pages, panel, terminal-sim, http, client: `pool: "threads"`)
      // run two files at a time, beside the forks, in workers that keep their modules from file to file.
      threads: { isolate: false, maxThreads: 2, minThreads: 1 },
      // The suites on PostgreSQL (store-pg, webhooks, server) run in two lanes, each on a server of its
      // own: a snapshot's xmin is the whole server's, so on one server a file's catch-ups would wait on
      // another file's transactions (`PostgresLanes`). One lane when `DATABASE_URL` names the server.
      // A lane's process keeps its modules from file to file (`RestoreEffectIt` undoes what a file's
      // `layer` leaves on `it`).
      forks: { isolate: false, maxForks: PostgresLanes.count, minForks: 1 }
    }
  }
})
