/**
 * The embedded database's folder belongs to one process at a time: PGlite does not guard it, and two
 * processes on one folder would corrupt it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as PgliteClient from "../src/PgliteClient.js"

const folder = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "cobro-pglite-lock-"))
const lockOf = (dataDir: string) => Path.join(dataDir, PgliteClient.LOCK_FILE)

/** Opens the folder, runs one statement, closes it. */
const open = (dataDir: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 AS one`).pipe(
    Effect.provide(Layer.fresh(PgliteClient.layer({ dataDir })))
  )

describe("PgliteClient's folder lock", () => {
  it.live("a folder that another running process has open is refused, naming that process", () =>
    Effect.gen(function* () {
      const dataDir = folder()
      const holder = spawn("sleep", ["60"], { stdio: "ignore" })
      try {
        Fs.writeFileSync(lockOf(dataDir), String(holder.pid))
        const exit = yield* Effect.exit(open(dataDir))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain(`is in use by process ${holder.pid}`)
        // Nothing of the holder's was touched, and no database was made beside it.
        expect(Fs.readFileSync(lockOf(dataDir), "utf8")).toBe(String(holder.pid))
        expect(Fs.existsSync(Path.join(dataDir, "PG_VERSION"))).toBe(false)
      } finally {
        holder.kill()
      }
    })
  )

  it.live("a lock left by a process that is gone is taken over, held while open, released at close", () =>
    Effect.gen(function* () {
      const dataDir = folder()
      const gone = spawnSync("true").pid
      Fs.writeFileSync(lockOf(dataDir), String(gone))
      const held = yield* Effect.flatMap(SqlClient.SqlClient, () =>
        Effect.sync(() => Fs.readFileSync(lockOf(dataDir), "utf8"))
      ).pipe(Effect.provide(Layer.fresh(PgliteClient.layer({ dataDir }))))
      expect(held).toBe(String(process.pid))
      expect(Fs.existsSync(lockOf(dataDir))).toBe(false)
      // Closed, the folder opens again.
      expect(yield* open(dataDir)).toEqual([{ one: 1 }])
    })
  )
})
