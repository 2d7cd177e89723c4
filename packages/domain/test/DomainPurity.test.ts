import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import * as Histories from "../src/audit/Histories.js"

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

  // The layout's arrows: the kernel and the shared values stand alone; an aggregate knows its
  // values, the kernel and its own family's aggregates, never a wire schema or a use case.
  const folderOf = (file: string): string => file.slice(sourceDir.length + 1).split("/")[0]!
  const localImports = (file: string): Array<string> =>
    importsOf(readFileSync(file, "utf8"))
      .filter((spec) => spec.startsWith("."))
      .map((spec) => join(dirname(file), spec).slice(sourceDir.length + 1))
  const isAggregate = (file: string): boolean =>
    /export const \w+: Aggregate</.test(readFileSync(file, "utf8"))

  it.each(
    files
      .filter((f) => ["kernel", "shared"].includes(folderOf(f)))
      .map((f) => [f.slice(sourceDir.length + 1), f])
  )("%s imports only its own folder", (_, file) => {
    expect(localImports(file).filter((target) => !target.startsWith(folderOf(file) + "/"))).toEqual([])
  })

  it("finds as many aggregates as the auditors' catalogue names", () => {
    expect(files.filter(isAggregate).length).toBe(Histories.domainEntries.length)
  })

  it.each(files.filter(isAggregate).map((f) => [f.slice(sourceDir.length + 1), f]))(
    "the aggregate %s imports no wire schema and no use case",
    (_, file) => {
      const allowed = (target: string) =>
        target.startsWith("kernel/") ||
        target.startsWith("shared/") ||
        (target.startsWith(folderOf(file) + "/") &&
          files.filter(isAggregate).some((a) => a.endsWith(target.replace(/\.js$/, ".ts")))) ||
        target === "merchants/SigningKey.js"
      expect(localImports(file).filter((target) => !allowed(target))).toEqual([])
    }
  )

  it("the import scanner sees what it must reject", () => {
    expect(
      importsOf(`import * as fs from "node:fs"\nexport { x } from "pg"\nconst m = import("undici")`)
    ).toEqual(["node:fs", "pg", "undici"])
  })
})
