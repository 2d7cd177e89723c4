import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { CobroApi } from "@cobro/api/Api"

const published = readFileSync(fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url)), "utf8")

describe("the contract", () => {
  it("derives exactly the published OpenAPI document (docs/openapi.json)", () => {
    expect(JSON.stringify(OpenApi.fromApi(CobroApi))).toBe(JSON.stringify(JSON.parse(published)))
  })

  it("names the groups a client is derived from", () => {
    const groups: Array<string> = []
    HttpApi.reflect(CobroApi, { onGroup: ({ group }) => groups.push(group.identifier), onEndpoint: () => {} })
    expect(groups).toEqual([
      "admin",
      "adminLists",
      "health",
      "links",
      "online",
      "onlineAdmin",
      "challenge",
      "terminal",
      "sandbox",
      "audit",
      "auditAdmin",
      "panelUsers"
    ])
  })
})
