/**
 * The packages' imports (brief, "Layout" and the dependency rule): inside each package no module
 * imports itself back through others; a module imports only the `@cobro/*` packages its package
 * lists as dependencies; and the rooms keep to their purpose: the hosted pages and the panel never
 * import the JSON API's handlers or each other, the client nothing of the server's side.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const PACKAGES = Path.join(import.meta.dirname, "..", "..")

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

interface Package {
  readonly name: string
  readonly src: string
  readonly dependencies: ReadonlySet<string>
  /** Each module of `src` and the modules of `src` it imports. */
  readonly graph: ReadonlyMap<string, ReadonlyArray<string>>
}

const packages: ReadonlyArray<Package> = Fs.readdirSync(PACKAGES)
  .filter((dir) => Fs.existsSync(Path.join(PACKAGES, dir, "src")))
  .map((dir) => {
    const src = Path.join(PACKAGES, dir, "src")
    const manifest = JSON.parse(Fs.readFileSync(Path.join(PACKAGES, dir, "package.json"), "utf8"))
    return {
      name: manifest.name as string,
      src,
      dependencies: new Set(Object.keys(manifest.dependencies ?? {})),
      graph: new Map(
        modules(src).map((file) => [
          file,
          specifiers(file)
            .filter((s) => s.startsWith("."))
            .map((s) => Path.resolve(Path.dirname(file), s.replace(/\.js$/, ".ts")))
        ])
      )
    }
  })

/** The first circle of a package's modules, as names relative to its `src`, or none. */
const circleOf = ({ graph, src }: Package): ReadonlyArray<string> | undefined => {
  const done = new Set<string>()
  const path: Array<string> = []
  const visit = (file: string): ReadonlyArray<string> | undefined => {
    const at = path.indexOf(file)
    if (at >= 0) return [...path.slice(at), file].map((f) => Path.relative(src, f))
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

/** `@cobro/<name>` of a specifier, if it names a package of the repository. */
const cobroPackage = (specifier: string): string | undefined => /^(@cobro\/[^/]+)/.exec(specifier)?.[1]

/** Each module's imports of `@cobro/*` packages, as `module: package`. */
const cobroImports = (pkg: Package): ReadonlyArray<{ readonly module: string; readonly imported: string }> =>
  [...pkg.graph.keys()].flatMap((file) =>
    specifiers(file).flatMap((s) => {
      const imported = cobroPackage(s)
      return imported === undefined || imported === pkg.name
        ? []
        : [{ module: `${pkg.name}/${Path.relative(pkg.src, file)}`, imported }]
    })
  )

const byName = (name: string): Package => packages.find((p) => p.name === name)!

describe("the packages' imports", () => {
  it("finds every package of the repository", () => {
    expect(packages.map((p) => p.name).sort()).toEqual(
      expect.arrayContaining([
        "@cobro/api",
        "@cobro/client",
        "@cobro/domain",
        "@cobro/http",
        "@cobro/pages",
        "@cobro/panel"
      ])
    )
  })

  it("no module of any package imports itself back through others", () => {
    expect(packages.map((p) => [p.name, circleOf(p)]).filter(([, circle]) => circle !== undefined)).toEqual(
      []
    )
  })

  it("a module imports only the @cobro packages its package depends on", () => {
    const undeclared = packages.flatMap((pkg) =>
      cobroImports(pkg)
        .filter(({ imported }) => !pkg.dependencies.has(imported))
        .map(({ module, imported }) => `${module}: ${imported}`)
    )
    expect(undeclared).toEqual([])
  })

  it("the hosted pages and the panel never import the JSON API's handlers or each other; the client nothing of the server", () => {
    const forbidden: ReadonlyArray<readonly [string, RegExp]> = [
      ["@cobro/pages", /^@cobro\/(http|panel|server|store-pg|webhooks)$/],
      ["@cobro/panel", /^@cobro\/(http|pages|server|store-pg|webhooks)$/],
      ["@cobro/api", /^@cobro\/(?!domain$)/],
      ["@cobro/client", /^@cobro\/(?!(api|domain)$)/]
    ]
    const found = forbidden.flatMap(([name, rule]) =>
      cobroImports(byName(name))
        .filter(({ imported }) => rule.test(imported))
        .map(({ module, imported }) => `${module}: ${imported}`)
    )
    expect(found).toEqual([])
  })
})
