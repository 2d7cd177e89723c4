import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as ReadmeExamples from "./support/ReadmeExamples.js"

// The README's "Embedding the domain" example is what an embedder copies first: it must compile
// against the public entry points under the repository's compiler options, and do what it says.
const example = ReadmeExamples.firstTsBlock("## Embedding the domain")
// Written inside the package (ignored by git) so that `@cobro/domain` resolves as an embedder's would.
const dir = join(import.meta.dirname, "..", "build", "readme-example")
const file = join(dir, "Example.ts")

describe("the README's embedding example", () => {
  mkdirSync(dir, { recursive: true })
  // Exported so that the test can run it; the example itself runs it with `Effect.runPromise`.
  writeFileSync(
    file,
    `${example.replace(/^Effect\.runPromise\(/m, "export const run = () => Effect.runPromise(")}\nexport { program }\n`
  )

  it("is found in the README", () => {
    expect(example).toContain("@cobro/domain/PaymentLink")
  })

  it("type-checks with the repository's compiler options", () => {
    expect(ReadmeExamples.typeErrors(file)).toEqual([])
  }, 60_000)

  it.effect("creates an ACTIVE link, as its comment says", () =>
    Effect.gen(function* () {
      const module = yield* Effect.promise(() => import(file))
      expect(yield* Effect.promise(() => module.run())).toBe("ACTIVE")
    })
  )
})
