/**
 * Where webhooks may go (issue 5, Safety): production URLs are `https://` and never reach loopback,
 * private, link-local or other non-public addresses, checked on the addresses DNS actually returns
 * (the connection uses the checked answer, so a rebinding DNS cannot slip past). An IPv6 address
 * that carries an IPv4 address (mapped, compatible, 6to4, Teredo, NAT64) is judged by it too. In
 * development (`COBRO_DEV_WEBHOOKS=1`, passed in by the server) `http://` and loopback targets are
 * allowed.
 */
import * as Dns from "node:dns"
import * as Net from "node:net"

/** The environment variable that allows http and loopback webhook targets (local development, tests). */
export const DEV_ENV = "COBRO_DEV_WEBHOOKS"

/** Whether the environment allows development targets: `COBRO_DEV_WEBHOOKS=1`. */
export const devFromEnv = (env: Record<string, string | undefined>): boolean => env[DEV_ENV] === "1"

/** What the safety rules allow. */
export interface Policy {
  /** Allow `http://` and loopback addresses (development). */
  readonly dev: boolean
}

const loopback = new Net.BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")

const nonPublic = new Net.BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["169.254.0.0", 16], // link-local (cloud metadata)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv4")
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed inside some networks)
  ["ff00::", 8], // multicast
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation
  ["2001:2::", 48], // benchmarking
  ["100::", 64] // discard
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv6")
}

/** The eight 16-bit groups of a valid IPv6 address (a zone, `%eth0`, is ignored). */
const groupsOf = (address: string): ReadonlyArray<number> => {
  let text = address.toLowerCase().replace(/%.*$/, "")
  // A trailing dotted quad is two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split("::") as [string, string | undefined]
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : [])
  const left = parse(head)
  const right = parse(tail)
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
}

/** The IPv4 address of two 16-bit groups. */
const ipv4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

/**
 * The IPv4 addresses an IPv6 address carries, which a packet to it may reach: IPv4-mapped
 * (`::ffff:0:0/96`), IPv4-translated (`::ffff:0:0:0/96`), IPv4-compatible (`::/96` but `::` and
 * `::1`), 6to4 (`2002::/16`, bits 16–47), Teredo (`2001::/32`: the server in bits 32–63, the client
 * inverted in the last 32 bits), NAT64 (`64:ff9b::/96` and the local-use `64:ff9b:1::/48`, the
 * last 32 bits, as DNS64 synthesizes them).
 */
const embeddedIpv4s = (address: string): ReadonlyArray<string> => {
  const g = groupsOf(address)
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  const last = ipv4Of(g[6]!, g[7]!)
  if (zeros(0, 5) && g[5] === 0xffff) return [last]
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [last]
  if (zeros(0, 6)) return g[6] === 0 && g[7]! <= 1 ? [] : [last]
  if (g[0] === 0x2002) return [ipv4Of(g[1]!, g[2]!)]
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2]!, g[3]!), ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)]
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return [last]
  return []
}

/** How an address is judged, from the most to the least restricted. */
const verdicts = ["non-public", "loopback", "public"] as const
type Verdict = (typeof verdicts)[number]

const verdictOf = (ip: string, type: "ipv4" | "ipv6"): Verdict =>
  loopback.check(ip, type) ? "loopback" : nonPublic.check(ip, type) ? "non-public" : "public"

/** Why an address may not be a webhook target, or `undefined` when it may. */
export const addressProblem = (address: string, policy: Policy): string | undefined => {
  const family = Net.isIP(address)
  if (family === 0) return `not an IP address: ${address}`
  // An address is as restricted as the most restricted address it reaches.
  const judged: ReadonlyArray<readonly [Verdict, string | undefined]> =
    family === 4
      ? [[verdictOf(address, "ipv4"), undefined]]
      : [
          [verdictOf(address, "ipv6"), undefined],
          ...embeddedIpv4s(address).map((v4) => [verdictOf(v4, "ipv4"), v4] as const)
        ]
  const [verdict, via] = judged.reduce((worst, next) =>
    verdicts.indexOf(next[0]) < verdicts.indexOf(worst[0]) ? next : worst
  )
  const what = via === undefined ? address : `${address} (which carries ${via})`
  if (verdict === "loopback") return policy.dev ? undefined : `loopback address ${what}`
  if (verdict === "non-public") return `non-public address ${what}`
  return undefined
}

/** Why a URL may not be a webhook target before any DNS lookup (scheme, literal address), if it may not. */
export const urlProblem = (url: string, policy: Policy): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `not a URL: ${url}`
  }
  if (parsed.protocol !== "https:" && !(policy.dev && parsed.protocol === "http:")) {
    return `webhook URLs must be https:// (got ${parsed.protocol})`
  }
  if (parsed.username !== "" || parsed.password !== "") return "webhook URLs carry no credentials"
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1")
  if (Net.isIP(host) !== 0) return addressProblem(host, policy)
  if (!policy.dev && (host === "localhost" || host.endsWith(".localhost"))) return `loopback host ${host}`
  return undefined
}

/** A URL refused by the safety rules (the attempt fails with this reason; nothing is sent). */
export class UnsafeTarget extends Error {
  readonly code = "UNSAFE_WEBHOOK_TARGET"
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | Array<Dns.LookupAddress>,
  family?: number
) => void

/**
 * A `lookup` for `http.request` that resolves the host and refuses the connection when any address
 * it resolves to is not allowed: the socket connects to the very address that was checked.
 */
export const safeLookup =
  (policy: Policy) =>
  (hostname: string, options: Dns.LookupOptions, callback: LookupCallback): void => {
    Dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const list = addresses as unknown as Array<Dns.LookupAddress>
      const problem = list.map((a) => addressProblem(a.address, policy)).find((p) => p !== undefined)
      if (problem !== undefined || list.length === 0) {
        return callback(new UnsafeTarget(`${hostname} resolves to a ${problem ?? "nothing"}`), [])
      }
      if (options.all) return callback(null, list)
      return callback(null, list[0]!.address, list[0]!.family)
    })
  }
