/**
 * Text written into a response header (issue 31, item 5). Node refuses a header value outside
 * Latin-1 or with a control character when it writes the response head: after the handler has
 * answered, outside any error handling of ours, so the action has run, the client gets an empty 500
 * and nothing is logged. So a value is made writable where it is built ({@link location}), and the
 * last word on every answer (`Fallback`) checks every header once more ({@link unwritable}).
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/** What Node accepts in a header value (`http.validateHeaderValue`): tab, printable Latin-1. */
const UNWRITABLE = /[^\t\x20-\x7e\x80-\xff]/

/**
 * Whether Node can write `value` as a header's value.
 *
 * @category predicates
 */
export const isWritable = (value: string): boolean => !UNWRITABLE.test(value)

const percentEncoded = (character: string): string =>
  // `Buffer` writes an unpaired surrogate as U+FFFD, where `encodeURIComponent` would throw.
  Array.from(
    Buffer.from(character, "utf8"),
    (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  ).join("")

/**
 * A `Location` for a target URL or path: every character outside printable ASCII (a space, a control
 * character, anything beyond ASCII) percent-encoded as UTF-8, the rest as it is. What a browser
 * would request for the same text, and always a value Node writes.
 *
 * @category constructors
 */
export const location = (target: string): string => target.replace(/[^\x21-\x7e]/gu, percentEncoded)

/**
 * The names of the response's headers that Node would refuse to write; none for a sound answer.
 *
 * @category getters
 */
export const unwritable = (response: HttpServerResponse.HttpServerResponse): ReadonlyArray<string> =>
  Object.entries(response.headers)
    .filter(([, value]) => !isWritable(value))
    .map(([name]) => name)
