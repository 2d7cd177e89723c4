import { describe, expect, it } from "@effect/vitest"
import * as HttpTransport from "@cobro/webhooks/HttpTransport"
import * as UrlSafety from "@cobro/webhooks/UrlSafety"
import * as Effect from "effect/Effect"
import * as R from "./support/Receiver.js"

const production: UrlSafety.Policy = { dev: false }
const dev: UrlSafety.Policy = { dev: true }

const lookup = (policy: UrlSafety.Policy, host: string) =>
  new Promise<string>((resolve) =>
    UrlSafety.safeLookup(policy)(host, { all: true }, (error, addresses) =>
      resolve(error ? `refused: ${error.message}` : `ok: ${JSON.stringify(addresses)}`)
    )
  )

describe("UrlSafety", () => {
  it("production webhook URLs must be https", () => {
    expect(UrlSafety.urlProblem("http://merchant.example/hook", production)).toMatch(/https/)
    expect(UrlSafety.urlProblem("https://merchant.example/hook", production)).toBeUndefined()
    expect(UrlSafety.urlProblem("ftp://merchant.example/hook", dev)).toMatch(/https/)
  })

  it("loopback, private and link-local targets are refused in production", () => {
    for (const url of [
      "https://127.0.0.1/hook",
      "https://[::1]/hook",
      "https://10.1.2.3/hook",
      "https://172.16.0.1/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[fe80::1]/hook",
      "https://[fd00::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://100.64.0.1/hook",
      "https://0.0.0.0/hook",
      "https://localhost/hook"
    ]) {
      expect([url, UrlSafety.urlProblem(url, production)]).not.toEqual([url, undefined])
    }
    expect(UrlSafety.urlProblem("https://93.184.216.34/hook", production)).toBeUndefined()
  })

  it("COBRO_DEV_WEBHOOKS=1 allows http and loopback, and nothing else private", () => {
    expect(UrlSafety.devFromEnv({ COBRO_DEV_WEBHOOKS: "1" })).toBe(true)
    expect(UrlSafety.devFromEnv({})).toBe(false)
    expect(UrlSafety.urlProblem("http://127.0.0.1:8080/hook", dev)).toBeUndefined()
    expect(UrlSafety.urlProblem("http://localhost:8080/hook", dev)).toBeUndefined()
    expect(UrlSafety.urlProblem("http://10.0.0.1/hook", dev)).toMatch(/non-public/)
    expect(UrlSafety.urlProblem("http://169.254.169.254/", dev)).toMatch(/non-public/)
  })

  it("a host name is checked on the addresses DNS returns", async () => {
    expect(await lookup(production, "localhost")).toMatch(/^refused: .*loopback/)
    expect(await lookup(dev, "localhost")).toMatch(/^ok: /)
  })

  it.scoped("the transport sends nothing to a loopback target outside development", () =>
    Effect.gen(function* () {
      const rx = yield* R.receiver({ tls: true })
      const transport = HttpTransport.make({ dev: false, ca: [R.certificate().cert] })
      yield* Effect.addFinalizer(() => Effect.sync(transport.close))
      const response = yield* transport.post({
        url: rx.url,
        body: new TextEncoder().encode("{}"),
        headers: { "content-type": "application/json" },
        timeoutMs: 2000
      })
      expect(response._tag).toBe("Failed")
      expect(response._tag === "Failed" && response.reason).toMatch(/refused target: loopback/)
      expect(rx.received).toHaveLength(0)
    })
  )

  it.scoped("redirects are not followed: a 302 is an answer that fails the attempt", () =>
    Effect.gen(function* () {
      const rx = yield* R.receiver({ tls: false })
      rx.answer = (request) =>
        request.path === "/hook" ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }
      const transport = HttpTransport.make({ dev: true })
      yield* Effect.addFinalizer(() => Effect.sync(transport.close))
      const response = yield* transport.post({
        url: rx.url,
        body: new TextEncoder().encode("{}"),
        headers: { "content-type": "application/json" },
        timeoutMs: 2000
      })
      expect(response).toMatchObject({ _tag: "Answered", status: 302 })
      expect(rx.received.map((r) => r.path)).toEqual(["/hook"])
    })
  )
})
