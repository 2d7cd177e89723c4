import { defineConfig } from "vitest/config"

// One vitest project per package: `npm test` runs them all, `npx vitest --project domain` one.
export default defineConfig({
  test: {
    projects: ["packages/*"],
    poolOptions: {
      // The in-process suites (domain, api, pages, panel, terminal-sim, http, client: `pool: "threads"`)
      // run two files at a time, beside the forks. Each file keeps its own modules: shared ones left
      // Effect's test clock unreachable in a later file (`testClock.adjust is not a function`), in an
      // order that depends on the sequencer's cache.
      threads: { isolate: true, maxThreads: 2, minThreads: 1 },
      // The suites on PostgreSQL run one file at a time: a transaction open in one database holds back
      // the log's readers in every other (a snapshot's xmin is the whole server's), so a file's
      // catch-ups would wait on another file's transactions.
      forks: { isolate: true, maxForks: 1, minForks: 1 }
    }
  }
})
