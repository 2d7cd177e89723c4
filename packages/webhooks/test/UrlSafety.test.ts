import { describe, expect, it } from "@effect/vitest"
import * as HttpTransport from "@cobro/webhooks/HttpTransport"
import * as UrlSafety from "@cobro/webhooks/UrlSafety"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as R from "./support/Receiver.js"

const production: UrlSafety.Policy = { dev: false }
const dev: UrlSafety.Policy = { dev: true }

/** An IPv4 address as its two 16-bit groups, in hex. */
const hexPair = (v4: string) => {
  const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number]
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)] as const
}

/** An IPv4 address with every bit flipped (how Teredo carries the client's address). */
const inverted = (v4: string) =>
  v4
    .split(".")
    .map((n) => 255 - Number(n))
    .join(".")

/**
 * Every IPv6 form that embeds `v4`, beside a public IPv4 `other` where the form carries two
 * addresses (Teredo) and random bits `r` where it has free bits.
 */
const embeddings = (v4: string, other: string, r: number): ReadonlyArray<string> => {
  const [hi, lo] = hexPair(v4)
  const [ohi, olo] = hexPair(other)
  const [ihi, ilo] = hexPair(inverted(v4))
  const free = (r & 0xffff).toString(16)
  return [
    `::ffff:${v4}`, // IPv4-mapped
    `::ffff:${hi}:${lo}`,
    `::ffff:0:${hi}:${lo}`, // IPv4-translated (SIIT)
    // IPv4-compatible, except 0.0.0.0 and 0.0.0.1: those are :: and ::1 themselves.
    ...(hi === "0" && (lo === "0" || lo === "1") ? [] : [`::${v4}`, `::${hi}:${lo}`]),
    `2002:${hi}:${lo}::`, // 6to4
    `2002:${hi}:${lo}:${free}::${free}`,
    `2001:0:${hi}:${lo}:${free}:${free}:${ohi}:${olo}`, // Teredo: the server
    `2001:0:${ohi}:${olo}:${free}:${free}:${ihi}:${ilo}`, // Teredo: the client
    `64:ff9b::${v4}`, // NAT64, well-known prefix
    `64:ff9b::${hi}:${lo}`,
    `64:ff9b:1::${hi}:${lo}` // NAT64, local-use prefix
  ]
}

const lookup = (policy: UrlSafety.Policy, host: string) =>
  new Promise<string>((resolve) =>
    UrlSafety.safeLookup(policy)(host, { all: true }, (error, addresses) =>
      resolve(error ? `refused: ${error.message}` : `ok: ${JSON.stringify(addresses)}`)
    )
  )

/** POSTs `{}` to `url` through a transport made with `options`, closed with the test's scope. */
const postEmptyJson = (options: HttpTransport.Options, url: string) =>
  Effect.gen(function* () {
    const transport = HttpTransport.make(options)
    yield* Effect.addFinalizer(() => Effect.sync(transport.close))
    return yield* transport.post({
      url,
      body: new TextEncoder().encode("{}"),
      headers: { "content-type": "application/json" },
      timeoutMs: 2000
    })
  })

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

  it("an IPv6 address that embeds an IPv4 address is judged by it: compatible, mapped, 6to4, Teredo, NAT64", () => {
    for (const url of [
      "https://[::7f00:1]/hook", // IPv4-compatible 127.0.0.1
      "https://[::127.0.0.1]/hook",
      "https://[::a9fe:a9fe]/latest/meta-data", // IPv4-compatible 169.254.169.254
      "https://[::ffff:7f00:1]/hook", // IPv4-mapped, hex
      "https://[::ffff:0:a00:1]/hook", // IPv4-translated 10.0.0.1
      "https://[2002:a9fe:a9fe::1]/hook", // 6to4 of 169.254.169.254
      "https://[2002:7f00:1::]/hook", // 6to4 of 127.0.0.1
      "https://[2001:0:a00:1::5db8:d822]/hook", // Teredo, server 10.0.0.1
      "https://[2001:0:5db8:d822::80ff:fffe]/hook", // Teredo, client 127.0.0.1
      "https://[64:ff9b::7f00:1]/hook", // NAT64 127.0.0.1
      "https://[64:ff9b::c0a8:101]/hook", // NAT64 192.168.1.1
      "https://[64:ff9b:1::a9fe:a9fe]/hook" // local-use NAT64 169.254.169.254
    ]) {
      expect([url, UrlSafety.urlProblem(url, production)]).not.toEqual([url, undefined])
    }
    // The same forms around a public IPv4 address are public.
    for (const url of [
      "https://[2002:5db8:d822::1]/hook",
      "https://[2001:0:5db8:d822::a247:27dd]/hook", // Teredo, client 93.184.216.34, server alike
      "https://[64:ff9b::5db8:d822]/hook",
      "https://[64:ff9b:1::5db8:d822]/hook",
      "https://[::ffff:5db8:d822]/hook"
    ]) {
      expect([url, UrlSafety.urlProblem(url, production)]).toEqual([url, undefined])
    }
    // Development allows the loopback forms, and still no other private one.
    expect(UrlSafety.urlProblem("http://[::7f00:1]:8080/hook", dev)).toBeUndefined()
    expect(UrlSafety.urlProblem("http://[::a9fe:a9fe]/hook", dev)).toMatch(/non-public/)
    expect(UrlSafety.urlProblem("http://[2002:a00:1::]/hook", dev)).toMatch(/non-public/)
  })

  it.prop(
    "every IPv6 embedding of an IPv4 address is judged as the IPv4 address is, in production and development",
    [
      FastCheck.oneof(
        FastCheck.ipV4(),
        // The refused ranges, often: loopback, private, link-local, CGNAT, "this" network.
        FastCheck.tuple(
          FastCheck.constantFrom(127, 10, 0, 169, 172, 192, 100),
          FastCheck.nat(255),
          FastCheck.nat(255),
          FastCheck.nat(255)
        ).map(([a, b, c, d]) =>
          a === 169
            ? `169.254.${c}.${d}`
            : a === 192
              ? `192.168.${c}.${d}`
              : a === 100
                ? `100.64.${c}.${d}`
                : a === 172
                  ? `172.${16 + (b & 15)}.${c}.${d}`
                  : `${a}.${b}.${c}.${d}`
        )
      ),
      FastCheck.nat(0xffff)
    ],
    ([v4, r]) => {
      const other = "93.184.216.34"
      for (const policy of [production, dev]) {
        const expected = UrlSafety.addressProblem(v4, policy) === undefined
        for (const v6 of embeddings(v4, other, r)) {
          expect([v4, v6, UrlSafety.addressProblem(v6, policy) === undefined]).toEqual([v4, v6, expected])
        }
      }
    }
  )

  it("an address DNS returns is judged by the IPv4 address it embeds", async () => {
    for (const host of ["::7f00:1", "2002:a9fe:a9fe::", "2001:0:5db8:d822::80ff:fffe", "64:ff9b::a00:1"]) {
      expect([host, await lookup(production, host)]).toEqual([host, expect.stringMatching(/^refused: /)])
    }
    expect(await lookup(production, "2002:5db8:d822::1")).toMatch(/^ok: /)
  })

  it("a host name is checked on the addresses DNS returns", async () => {
    expect(await lookup(production, "localhost")).toMatch(/^refused: .*loopback/)
    expect(await lookup(dev, "localhost")).toMatch(/^ok: /)
  })

  it.scoped("the transport sends nothing to a loopback target outside development", () =>
    Effect.gen(function* () {
      const rx = yield* R.receiver({ tls: true })
      const response = yield* postEmptyJson({ dev: false, ca: [R.certificate().cert] }, rx.url)
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
      const response = yield* postEmptyJson({ dev: true }, rx.url)
      expect(response).toMatchObject({ _tag: "Answered", status: 302 })
      expect(rx.received.map((r) => r.path)).toEqual(["/hook"])
    })
  )
})
