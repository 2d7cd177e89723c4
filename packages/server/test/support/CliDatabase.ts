/**
 * A fresh PGlite `DATA_DIR` for a command line test without a fresh PGlite's first start (its
 * initdb and migrations in WebAssembly take most of a command's time): each test gets a copy of the
 * run's set-up folder (`PgliteTemplate`), the database made and migrated and the sealing and
 * checkpoint keys written, with no event in its log.
 */
import * as Effect from "effect/Effect"
import * as PgliteTemplate from "./PgliteTemplate.js"
import * as ServerProcess from "./ServerProcess.js"

/** Copies the run's set-up folder to `env.DATA_DIR` (a folder that does not exist yet). */
export const setUpIn = (env: { readonly DATA_DIR: string }) =>
  Effect.sync(() => {
    PgliteTemplate.copyTo(env.DATA_DIR)
    return env
  })

/** `ServerProcess.pgliteEnv` with its `DATA_DIR` a copy of the set-up folder (removed with the scope). */
export const pgliteEnv = ServerProcess.pgliteEnvSetUp
