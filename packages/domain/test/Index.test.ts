import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Domain from "@cobro/domain"

const packageDir = join(import.meta.dirname, "..")
const sourceDir = join(packageDir, "src")
// Every module below a feature folder, as `folder/Name`; fixtures are for this package's tests only.
const modules = readdirSync(sourceDir, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts") && f.includes("/") && !f.startsWith("testing/WebhookFixtures"))
  .map((f) => f.slice(0, -3))
  .sort()
const nameOf = (module: string): string => module.slice(module.lastIndexOf("/") + 1)
// Modules renamed when the domain was grouped by feature: the old names stay importable.
const renamed: Record<string, string> = {
  Notification: "webhooks/NotificationApi",
  Notifications: "webhooks/NotificationRules"
}

describe("@cobro/domain's index", () => {
  it("has modules to check", () => {
    expect(modules.length).toBeGreaterThan(40)
  })

  it("re-exports every module as a namespace, and the renamed ones under their old names too", () => {
    expect(Object.keys(Domain).sort()).toEqual([...modules.map(nameOf), ...Object.keys(renamed)].sort())
  })

  it("serves every module under its flat public path, and each old name where it is now", () => {
    const exportsMap: Record<string, string> = JSON.parse(
      readFileSync(join(packageDir, "package.json"), "utf8")
    ).exports
    for (const module of modules) {
      expect(exportsMap[`./${nameOf(module)}`]).toBe(`./src/${module}.ts`)
    }
    for (const [old, module] of Object.entries(renamed)) {
      expect(exportsMap[`./${old}`]).toBe(`./src/${module}.ts`)
    }
  })
})
