/**
 * The `cobro` command line as its users run it: `node packages/server/bin/cobro.mjs …` in a
 * subprocess over a clean environment (PATH and HOME kept), its output and exit code collected.
 */
import * as PostgresClient from "@cobro/store-pg/PostgresClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** The bin registered as `cobro`. */
export const bin = Path.join(root, "packages", "server", "bin", "cobro.mjs")

/** How long one command may take on a slow machine (PGlite opens its folder in WebAssembly). */
export const timeoutMillis = 120_000

/** How a command ended. */
export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `cobro <args>` with `env` to its exit. */
export const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(
    () =>
      new Promise<Result>((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], {
          cwd: root,
          env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (chunk) => (stdout += chunk))
        child.stderr.on("data", (chunk) => (stderr += chunk))
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMillis)
        child.once("close", (code) => {
          clearTimeout(timer)
          resolve({ code, stdout, stderr })
        })
      })
  )

/** The JSON lines of an output. */
export const jsonLines = (text: string): Array<any> =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))

/** Runs one SQL statement on the database at `url` (to tamper with a log, as an attacker would). */
export const sqlOn = (url: string, statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(
      PostgresClient.layer({ url: Redacted.make(url), maxConnections: 1 }) as Layer.Layer<
        SqlClient.SqlClient,
        unknown
      >
    ),
    Effect.scoped,
    Effect.orDie
  )

/** A stack trace's frame, which a user's mistake must never print. */
export const stackFrame = /^\s+at .+\(.+:\d+:\d+\)|^\s+at .+:\d+:\d+$/m
