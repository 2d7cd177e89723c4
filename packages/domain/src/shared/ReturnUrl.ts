/**
 * Where a payer's browser is sent back to the merchant (`callback_url` of C1/C3 intents; B2 links
 * add `https://` only): the rule that keeps it a navigation and never a script, a document or a
 * broken `Location` header, for the wire schemas and for the redirect sites.
 */
import * as Option from "effect/Option"
import { hasControl, isSafe } from "./SafeText.js"

/** The longest return URL accepted: browsers and proxies handle 2048 characters everywhere. */
export const MAX_LENGTH = 2048

/**
 * Schemes a browser runs as script or as a document of its own, or that name local data: never a
 * return address, whatever their host.
 */
const REFUSED_SCHEMES = new Set([
  "javascript:",
  "vbscript:",
  "data:",
  "blob:",
  "file:",
  "filesystem:",
  "about:",
  "view-source:",
  "jar:"
])

const parse = (s: string): URL | undefined => {
  try {
    return new URL(s)
  } catch {
    return undefined
  }
}

/**
 * Why a URL cannot be a return address, or none when it can: at most {@link MAX_LENGTH} characters,
 * no control character, space or unpaired surrogate (the URL parser drops tabs and line breaks
 * silently, so the text stored would not be the address used), an absolute URL with a host, and a
 * scheme that is not a script, data or local-file scheme. `https:`, `http:` and a mobile app's own
 * scheme (`myapp://return`) are accepted.
 */
export const problem = (s: string): Option.Option<string> => {
  if (s.length > MAX_LENGTH) return Option.some(`expected at most ${MAX_LENGTH} characters`)
  if (!isSafe(s) || hasControl(s) || /\s/.test(s))
    return Option.some("expected a URL without spaces or control characters")
  const url = parse(s)
  if (url === undefined) return Option.some("expected an absolute URL")
  if (REFUSED_SCHEMES.has(url.protocol)) return Option.some(`the ${url.protocol} scheme is not allowed`)
  if (url.host === "") return Option.some("expected a URL with a host (scheme://host/…)")
  return Option.none()
}

/** Whether a URL can be a return address (see {@link problem}). */
export const isReturnUrl = (s: string): boolean => Option.isNone(problem(s))

/**
 * The `Location` (or link) a stored return URL may be sent as: the URL re-checked and serialized
 * by the URL parser, printable ASCII only; none for a URL stored before the rule, which the caller
 * then leaves out (a result page instead of a redirect).
 */
export const toLocation = (s: string): Option.Option<string> => {
  if (!isReturnUrl(s)) return Option.none()
  const href = parse(s)?.href
  return href !== undefined && /^[\x21-\x7e]+$/.test(href) ? Option.some(href) : Option.none()
}
