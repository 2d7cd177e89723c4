/**
 * The package's imports (brief, "Layout"; issue "rooms by purpose"): no module of `src` imports
 * itself back through others, and none imports `@cobro/http` or `@cobro/panel`, so the pages sit
 * beside the JSON API's handlers, not inside them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const SRC = Path.join(import.meta.dirname, "..", "src")

/** Every `import … from "x"` and `export … from "x"`, types included: a type import binds modules too. */
const IMPORT = /^(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"/gm

const modules = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? modules(Path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [Path.join(dir, entry.name)]
        : []
  )

const specifiers = (file: string): ReadonlyArray<string> =>
  Array.from(Fs.readFileSync(file, "utf8").matchAll(IMPORT), (match) => match[1]!)

const graph = new Map(
  modules(SRC).map((file) => [
    file,
    specifiers(file)
      .filter((s) => s.startsWith("."))
      .map((s) => Path.resolve(Path.dirname(file), s.replace(/\.js$/, ".ts")))
  ])
)

/** The first circle found, as module names, or none. */
const circle = (): ReadonlyArray<string> | undefined => {
  const done = new Set<string>()
  const path: Array<string> = []
  const visit = (file: string): ReadonlyArray<string> | undefined => {
    const at = path.indexOf(file)
    if (at >= 0) return [...path.slice(at), file].map((f) => Path.relative(SRC, f))
    if (done.has(file)) return undefined
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      const found = visit(next)
      if (found !== undefined) return found
    }
    path.pop()
    done.add(file)
    return undefined
  }
  for (const file of graph.keys()) {
    const found = visit(file)
    if (found !== undefined) return found
  }
  return undefined
}

describe("the pages' imports", () => {
  it("no module imports itself back through others", () => {
    expect(circle()).toBeUndefined()
  })

  it("the pages import the domain and the contract, never the JSON API's handlers or the panel", () => {
    const outside = [...graph.keys()].flatMap((file) =>
      specifiers(file)
        .filter((s) => /^@cobro\/(http|panel)(\/|$)/.test(s))
        .map((s) => `${Path.relative(SRC, file)}: ${s}`)
    )
    expect(outside).toEqual([])
  })
})
