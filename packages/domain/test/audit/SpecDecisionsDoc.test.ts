import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

// docs/spec-decisions.md names, for each decision, the tests that pin it. A renamed or deleted test
// would leave a decision unpinned without anyone noticing: this keeps the citations true.
const root = join(import.meta.dirname, "..", "..", "..", "..")
const testSources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules"
      ? []
      : entry.isDirectory()
        ? testSources(join(dir, entry.name))
        : entry.name.endsWith(".ts")
          ? [readFileSync(join(dir, entry.name), "utf8")]
          : []
  )
const sources = readdirSync(join(root, "packages")).flatMap((pkg) => {
  try {
    return testSources(join(root, "packages", pkg, "test"))
  } catch {
    return []
  }
})
const corpus = sources.join("\n")
// Test names built from template literals (`taxes that fit no form are AP002: ${name}`) match any filling.
// Only templates with enough literal text count: `${a}${b}` would match anything.
const templates = [...corpus.matchAll(/`([^`\n]*\$\{[^`\n]*)`/g)]
  .filter((m) => m[1]!.replace(/\$\{[^}]*\}/g, "").trim().length >= 12)
  .map(
    (m) =>
      new RegExp(
        "^" +
          m[1]!
            .split(/\$\{[^}]*\}/)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
            .join(".*") +
          "$"
      )
  )

/** The quoted test names in the "Tests" / "Pinned by" paragraphs of the document. */
export const citedTests = (doc: string): Array<string> =>
  [
    ...doc.matchAll(/- \*\*(?:Tests?|Pinned by)[.:]?\*\*[.:]?([\s\S]*?)(?=\n- \*\*|\n#|$(?![\s\S]))/g)
  ].flatMap((m) => [...m[1]!.replace(/\n\s*/g, " ").matchAll(/"([^"\n]{6,}?)"/g)].map((q) => q[1]!))

const exists = (name: string): boolean => {
  const prefix = name.endsWith("…") ? name.slice(0, -1).trimEnd() : undefined
  if (prefix !== undefined) return corpus.includes(prefix)
  return corpus.includes(name) || templates.some((t) => t.test(name))
}

describe("docs/conformance.md", () => {
  const doc = readFileSync(join(root, "docs", "conformance.md"), "utf8")
  // In the tables, a test name is a quoted string after a `›`.
  const cited = [...doc.matchAll(/›([^|]*)/g)].flatMap((m) =>
    [...m[1]!.matchAll(/"([^"]{6,}?)"/g)].map((q) => q[1]!)
  )

  it("names tests for the spec's rules", () => {
    expect(cited.length).toBeGreaterThan(80)
  })

  it("names only tests that exist", () => {
    expect(cited.filter((name) => !exists(name))).toEqual([])
  })
})

describe("docs/spec-decisions.md", () => {
  const doc = readFileSync(join(root, "docs", "spec-decisions.md"), "utf8")
  const cited = citedTests(doc)

  it("cites tests for its decisions", () => {
    expect(cited.length).toBeGreaterThan(200)
  })

  it("cites only tests that exist", () => {
    expect(cited.filter((name) => !exists(name))).toEqual([])
  })

  it("the citation check rejects a name no test has", () => {
    // Built at run time so that this file's own text does not contain it.
    expect(exists(["a test that nobody", "ever wrote"].join(" ").toUpperCase())).toBe(false)
    expect(exists(cited[0]!)).toBe(true)
  })
})
