import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

// The brief's dependency rule: @cobro/domain depends on effect alone, with no node:* and no I/O.
const sourceDir = join(import.meta.dirname, "..", "src")
const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : []
  )
const importsOf = (text: string): Array<string> =>
  [
    ...text.matchAll(/(?:import|export)\s[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)
  ].map((m) => m[1] ?? m[2]!)

describe("the domain's dependency rule", () => {
  const files = sources(sourceDir)

  it("has sources to check", () => {
    expect(files.length).toBeGreaterThan(5)
  })

  it.each(files.map((f) => [f.slice(sourceDir.length + 1), f]))(
    "%s imports only effect and the domain",
    (_, file) => {
      const text = readFileSync(file, "utf8")
      const foreign = importsOf(text).filter(
        (spec) =>
          !(
            spec === "effect" ||
            spec.startsWith("effect/") ||
            spec.startsWith("./") ||
            spec.startsWith("../")
          )
      )
      expect(foreign).toEqual([])
      expect(text).not.toMatch(/\bDate\.now\(|Math\.random\(|\bprocess\.|\brequire\(/)
    }
  )

  it("the package declares effect as its only dependency", () => {
    const manifest = JSON.parse(readFileSync(join(sourceDir, "..", "package.json"), "utf8"))
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["effect"])
  })

  it("the import scanner sees what it must reject", () => {
    expect(
      importsOf(`import * as fs from "node:fs"\nexport { x } from "pg"\nconst m = import("undici")`)
    ).toEqual(["node:fs", "pg", "undici"])
  })
})
