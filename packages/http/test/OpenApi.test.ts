import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { expect } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as Effect from "effect/Effect"
import { CobroApi } from "@cobro/api/Api"
import * as TestApp from "./support/TestApp.js"

/** The published document (docs/openapi.json): the served bytes are its compact form. */
const published = JSON.stringify(
  JSON.parse(readFileSync(fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url)), "utf8"))
)

const endpointsOf = () => {
  const endpoints: Array<{ method: string; path: string }> = []
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      endpoints.push({
        method: endpoint.method.toLowerCase(),
        path: endpoint.path.replace(/:(\w+)/g, "{$1}")
      })
  })
  return endpoints
}

// The tests only read the document: one app serves them all.
TestApp.shared()("the OpenAPI document", (it) => {
  it.effect(
    "/openapi.json is byte for byte the published docs/openapi.json (a change to the contract changes both)",
    Effect.fnUntraced(function* () {
      const reply = yield* TestApp.send("GET", "/openapi.json")
      expect(reply.status).toBe(200)
      expect(reply.text).toBe(published)
    })
  )

  it.effect(
    "every endpoint of CobroApi appears in /openapi.json (the document is in step with the code)",
    Effect.fnUntraced(function* () {
      const reply = yield* TestApp.send("GET", "/openapi.json")
      expect(reply.status).toBe(200)
      const spec = reply.json
      expect(spec.openapi).toBe("3.1.0")
      const endpoints = endpointsOf()
      expect(endpoints.length).toBeGreaterThanOrEqual(10)
      for (const { method, path } of endpoints) {
        expect(spec.paths[path]?.[method], `${method} ${path}`).toBeDefined()
      }
      const documented = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(
        ([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`)
      )
      expect(documented.sort()).toEqual(endpoints.map((e) => `${e.method} ${e.path}`).sort())
    })
  )

  it.effect(
    "every error response of the document is the error envelope, never HttpApi's decode error",
    Effect.fnUntraced(function* () {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      expect(spec.components.schemas.HttpApiDecodeError).toBeUndefined()
      expect(spec.components.schemas.ErrorEnvelope.required).toEqual(["payload", "errors"])
      for (const [path, ops] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(ops)) {
          for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
            if (Number(status) < 400) continue
            expect(response.content["application/json"].schema, `${method} ${path} ${status}`).toEqual({
              $ref: "#/components/schemas/ErrorEnvelope"
            })
          }
        }
      }
    })
  )

  it.effect(
    "the creates document the 201 they answer (A3, B2, C1, C4), not a 200",
    Effect.fnUntraced(function* () {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      for (const path of ["/payments/app-checkout", "/online/link/v1", "/v1/payment-intent", "/v1/payment"]) {
        const statuses = Object.keys(spec.paths[path].post.responses).filter((status) => Number(status) < 400)
        expect(statuses, path).toEqual(["201"])
      }
    })
  )

  it.effect(
    "every POST, PUT, PATCH and DELETE documents Idempotency-Key and its 409",
    Effect.fnUntraced(function* () {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      const methods = ["post", "put", "patch", "delete"]
      const posts = Object.values(spec.paths as Record<string, Record<string, any>>).flatMap((ops) =>
        methods.flatMap((method) => (ops[method] === undefined ? [] : [ops[method]]))
      )
      for (const method of methods) {
        expect(
          Object.values(spec.paths as Record<string, Record<string, any>>).some((ops) => ops[method])
        ).toBe(true)
      }
      for (const post of posts) {
        expect(post.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key")
        expect(post.responses["409"]).toBeDefined()
      }
    })
  )

  it.effect(
    "the admin endpoints document Bearer and the key endpoints x-api-key",
    Effect.fnUntraced(function* () {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
      expect(spec.paths["/admin/v1/merchants"].post.security).toEqual([{ bearer: [] }])
      expect(spec.paths["/health"].get.security).toEqual([])
    })
  )

  it.effect(
    "/docs answers with the interactive documentation",
    Effect.fnUntraced(function* () {
      const reply = yield* TestApp.send("GET", "/docs")
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toContain("text/html")
      expect(reply.text).toContain("openapi")
    })
  )
})
