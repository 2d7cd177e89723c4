/**
 * A fresh PGlite `DATA_DIR` for a command line test without a fresh PGlite's first start (its
 * initdb and migrations in WebAssembly take most of a command's time): one folder per test file is
 * set up by the command line itself, and each test gets a copy of it.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as InProcess from "./CliInProcess.js"
import * as ServerProcess from "./ServerProcess.js"

/**
 * A folder set up as the first admin command sets it up (the database made and migrated, the
 * sealing and checkpoint keys written), with no event in its log: a refused command leaves it so.
 */
const setUp = Effect.gen(function* () {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-cli-template-"))
  process.once("exit", () => Fs.rmSync(dir, { recursive: true, force: true }))
  const dataDir = Path.join(dir, "data")
  const refused = yield* InProcess.run(
    ["terminal", "enable", "--merchant", "MER_nobody", "--serial", "SP-0"],
    { DATA_DIR: dataDir }
  )
  if (refused.code !== 2 || !/no merchant 'MER_nobody'/.test(refused.stderr)) {
    return yield* Effect.dieMessage(`could not set up a PGlite folder: ${refused.code}\n${refused.stderr}`)
  }
  return dataDir
})

const template = Effect.runSync(Effect.cached(setUp))

/** Copies the file's set-up folder to `env.DATA_DIR` (a folder that does not exist yet). */
export const setUpIn = (env: { readonly DATA_DIR: string }) =>
  Effect.map(template, (source) => {
    Fs.cpSync(source, env.DATA_DIR, { recursive: true })
    return env
  })

/** `ServerProcess.pgliteEnv` with its `DATA_DIR` a copy of the set-up folder (removed with the scope). */
export const pgliteEnv = Effect.flatMap(ServerProcess.pgliteEnv, setUpIn)
