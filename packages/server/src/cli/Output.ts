/**
 * What the command line prints: stdout written with back-pressure (an export piped to a slow reader
 * waits for it instead of buffering the log), a closed pipe (`| head`) ending quietly, and tables.
 */
import * as Effect from "effect/Effect"

let stdoutClosed = false
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") {
    // The reader went away (`cobro audit export | head`): nothing more to say.
    stdoutClosed = true
    process.exit(0)
  }
  throw error
})

/** Writes to stdout; waits for `drain` when the stream's buffer is full. */
export const write = (text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (stdoutClosed || process.stdout.write(text)) resume(Effect.void)
    else process.stdout.once("drain", () => resume(Effect.void))
  })

/** Writes one line to stdout. */
export const line = (text: string): Effect.Effect<void> => write(`${text}\n`)

/** Writes one line to stderr (messages and progress that must not mix with the output). */
export const errorLine = (text: string): Effect.Effect<void> =>
  Effect.sync(() => {
    process.stderr.write(`${text}\n`)
  })

/** A table: a header row and rows, columns padded to their widest cell; the last column is not padded. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)))
  const render = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [render(header), render(widths.map((w) => "-".repeat(w))), ...rows.map(render)].join("\n")
}

/** Shortens `text` to `max` characters with an ellipsis. */
export const truncate = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`
