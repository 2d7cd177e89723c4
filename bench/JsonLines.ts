/**
 * A bench's results as JSON lines: each printed on stdout as it is measured, and all of them written
 * to `bench/results/<name>.json` at the end, where the docs' figures are taken from.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

export interface JsonLines<A extends object> {
  readonly lines: ReadonlyArray<A>
  emit(line: A): void
  /** Writes every line emitted so far; returns the file's path. */
  write(): string
}

export const make = <A extends object>(name: string): JsonLines<A> => {
  const lines: Array<A> = []
  return {
    lines,
    emit: (line) => {
      lines.push(line)
      console.log(JSON.stringify(line))
    },
    write: () => {
      const path = Path.join(import.meta.dirname, "results", `${name}.json`)
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      Fs.writeFileSync(path, lines.map((line) => JSON.stringify(line)).join("\n") + "\n")
      return path
    }
  }
}
