/**
 * The README's examples as the tests that keep them true read them (`ReadmeExample.test.ts` here,
 * the client's `Quickstart.int.test.ts`): the first ```ts block of a section, and what TypeScript
 * reports on it under the repository's compiler options.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"

const root = join(import.meta.dirname, "..", "..", "..", "..")

/** The first ```ts block of the README's section `heading` ("" when there is none). */
export const firstTsBlock = (heading: string): string => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  return /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(heading)))?.[1] ?? ""
}

/** TypeScript's diagnostics of `file` under `tsconfig.base.json`'s options, nothing written. */
export const typeErrors = (file: string): Array<string> => {
  const base = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile).config
  const { options } = ts.convertCompilerOptionsFromJson(base.compilerOptions, root)
  const program = ts.createProgram([file], {
    ...options,
    noEmit: true,
    composite: false,
    declaration: false,
    emitDeclarationOnly: false,
    declarationMap: false
  })
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}
