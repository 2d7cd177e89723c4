/**
 * Where webhooks may go (issue 5, Safety): production URLs are `https://` and never reach loopback,
 * private, link-local or other non-public addresses, checked on the addresses DNS actually returns
 * (the connection uses the checked answer, so a rebinding DNS cannot slip past). In development
 * (`COBRO_DEV_WEBHOOKS=1`, passed in by the server) `http://` and loopback targets are allowed.
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
  ["ff00::", 8], // multicast
  ["2001:db8::", 32], // documentation
  ["100::", 64] // discard
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv6")
}

/** The IPv4 address embedded in an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::`) IPv6 address. */
const embeddedIpv4 = (address: string): string | undefined => {
  const lower = address.toLowerCase()
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (dotted) return dotted[1]
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (!hex) return undefined
  const hi = parseInt(hex[1]!, 16)
  const lo = parseInt(hex[2]!, 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/** Why an address may not be a webhook target, or `undefined` when it may. */
export const addressProblem = (address: string, policy: Policy): string | undefined => {
  const family = Net.isIP(address)
  if (family === 0) return `not an IP address: ${address}`
  const v4 = family === 6 ? embeddedIpv4(address) : address
  const [ip, type] = v4 !== undefined ? ([v4, "ipv4"] as const) : ([address, "ipv6"] as const)
  if (loopback.check(ip, type)) return policy.dev ? undefined : `loopback address ${address}`
  if (nonPublic.check(ip, type)) return `non-public address ${address}`
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
