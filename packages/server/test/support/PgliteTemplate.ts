/**
 * Copies of the run's set-up PGlite `DATA_DIR` (made once per run by `PgliteTemplateSetup`, the
 * server project's `globalSetup`): a test that needs a fresh node but not its first start copies
 * it, and skips the seconds PGlite's first start costs. A test of the first start itself
 * (`Server.int.test.ts`) keeps an empty folder.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { inject } from "vitest"
import * as CheckpointKey from "../../src/CheckpointKey.js"
import * as SealingKey from "../../src/SealingKey.js"
import "./PgliteTemplateSetup.js"

const keyIn = (fileName: string): Buffer =>
  Buffer.from(Fs.readFileSync(Path.join(inject("pgliteTemplate"), fileName), "utf8").trim(), "hex")

/** Copies the run's set-up folder to `dataDir` (a folder that does not exist yet). */
export const copyTo = (dataDir: string): void => {
  Fs.cpSync(inject("pgliteTemplate"), dataDir, { recursive: true })
}

/** The sealing key the set-up folder's secrets are sealed with: what a node in a copy must be given. */
export const sealingKey = (): Buffer => keyIn(SealingKey.fileName)

/** The key the set-up folder's log is signed with: what a node in a copy must sign with. */
export const checkpointKey = (): Buffer => keyIn(CheckpointKey.fileName)
