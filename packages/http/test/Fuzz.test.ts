import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import { CobroApi } from "../src/Api.js"
import * as Authentication from "../src/Authentication.js"
import * as TestApp from "./support/TestApp.js"

interface Target {
  readonly method: "POST" | "PUT" | "PATCH"
  readonly path: string
  readonly auth: "terminal" | "button" | "admin" | "none"
}

const targets = (): ReadonlyArray<Target> => {
  const out: Array<Target> = []
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (endpoint.method !== "POST" && endpoint.method !== "PUT" && endpoint.method !== "PATCH") return
      const auth = middleware.has(Authentication.TerminalApi as any)
        ? "terminal"
        : middleware.has(Authentication.PaymentButton as any)
          ? "button"
          : middleware.has(Authentication.Admin as any)
            ? "admin"
            : "none"
      out.push({ method: endpoint.method, path: endpoint.path, auth })
    }
  })
  return out
}

const fieldsOf = (spec: any, target: Target): ReadonlyArray<string> => {
  const path = target.path.replace(/:(\w+)/g, "{$1}")
  let schema =
    spec.paths[path]?.[target.method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema
  for (let i = 0; schema?.$ref !== undefined && i < 5; i++) {
    schema = spec.components.schemas[schema.$ref.slice("#/components/schemas/".length)]
  }
  return Object.keys(schema?.properties ?? {})
}

const body = (fields: ReadonlyArray<string>) =>
  FastCheck.oneof(
    FastCheck.json(),
    FastCheck.string(),
    FastCheck.jsonValue().map((v) => JSON.stringify(v)),
    fields.length === 0
      ? FastCheck.constant("{}")
      : FastCheck.dictionary(FastCheck.constantFrom(...fields), FastCheck.jsonValue(), {
          maxKeys: fields.length
        }).map((v) => JSON.stringify(v))
  )

describe("fuzz", () => {
  it.live(
    "generated bodies to every POST/PUT/PATCH endpoint of CobroApi: never a 5xx, and nothing stored on a rejection",
    () =>
      Effect.gen(function* () {
        const merchant = yield* TestApp.createMerchantWithTerminal()
        const spec = (yield* TestApp.send("GET", "/openapi.json")).json
        const runtime = yield* Effect.runtime<never>()
        const all = targets()
        expect(all.length).toBeGreaterThanOrEqual(8)
        for (const target of all) {
          const path = target.path
            .replace(":merchant_id", merchant.merchantId)
            .replace(":terminal_serial", merchant.serial)
            .replace(/:(\w+)/g, "X1")
          const key =
            target.auth === "terminal"
              ? merchant.terminal.test
              : target.auth === "button"
                ? merchant.button.test
                : undefined
          yield* Effect.promise(() =>
            FastCheck.assert(
              FastCheck.asyncProperty(body(fieldsOf(spec, target)), (text) =>
                Runtime.runPromise(runtime as Runtime.Runtime<any>)(
                  Effect.gen(function* () {
                    const before = yield* TestApp.logSize
                    const reply = yield* TestApp.send(target.method, path, {
                      body: text,
                      ...(key === undefined ? {} : { key }),
                      ...(target.auth === "admin" ? { admin: true } : {})
                    })
                    expect(reply.status, `${target.method} ${path} ${text} → ${reply.text}`).toBeLessThan(500)
                    if (reply.status >= 400) {
                      expect(
                        reply.json?.errors?.length,
                        `${target.method} ${path} → ${reply.text}`
                      ).toBeGreaterThan(0)
                      expect(yield* TestApp.logSize, `${target.method} ${path} ${text}`).toBe(before)
                    }
                  })
                )
              ),
              { numRuns: 25 }
            )
          )
        }
      }).pipe(Effect.provide(TestApp.layer())),
    120_000
  )
})
