/**
 * What a database error says about the connection it came on (issue 33): whether the connection can
 * be used again, and whether the database can take writes at all right now. A failover shows itself
 * as these: the old primary answers `25006` (read-only transaction) once it is a replica, `57P01`
 * (admin shutdown) when it stops, `57P03` (cannot connect now) while it starts, class `08` and the
 * socket's own errors when it is gone, and the pool's timeout when no connection can be made.
 */
import * as Predicate from "effect/Predicate"

/** SQLSTATEs after which the connection is of no more use: it is discarded, never pooled again. */
const BROKEN_STATES: ReadonlySet<string> = new Set([
  "25006", // read_only_sql_transaction: the server is (now) a replica
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03" // cannot_connect_now
])

/** SQLSTATEs that say the database cannot take the request now, though the connection may live. */
const UNAVAILABLE_STATES: ReadonlySet<string> = new Set([
  "53300", // too_many_connections
  "53400", // configuration_limit_exceeded
  "57014" // query_canceled: the statement timeout
])

/** Node's socket errors: the server is unreachable or the connection was cut. */
const SOCKET_ERRORS: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ENOTCONN"
])

/** `pg`'s own words when the connection is gone or none can be had (it gives these no code). */
const LOST_CONNECTION =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout|terminating connection/i

const codeOf = (u: object): string | undefined =>
  Predicate.hasProperty(u, "code") && typeof u.code === "string" ? u.code : undefined

/** The errors inside `u` (its `cause` chain, `AggregateError`s' members), `u` first. */
const chain = (u: unknown): Array<object> => {
  const found: Array<object> = []
  const visit = (value: unknown, depth: number) => {
    if (depth > 8 || typeof value !== "object" || value === null || found.includes(value)) return
    found.push(value)
    if (Predicate.hasProperty(value, "cause")) visit(value.cause, depth + 1)
    if (value instanceof AggregateError) for (const error of value.errors) visit(error, depth + 1)
  }
  visit(u, 0)
  return found
}

const lostConnection = (error: object): boolean => {
  const code = codeOf(error)
  if (code !== undefined && (BROKEN_STATES.has(code) || code.startsWith("08") || SOCKET_ERRORS.has(code)))
    return true
  return error instanceof Error && LOST_CONNECTION.test(error.message)
}

/**
 * Whether the connection an error came on must be discarded, and an append that failed with it may
 * be tried once more on a fresh one: the server is a replica now, shutting down or starting, or
 * the connection is gone.
 */
export const isConnectionBroken = (u: unknown): boolean => chain(u).some(lostConnection)

/**
 * Whether an error means that the database cannot take requests now (a client should retry later):
 * a broken connection ({@link isConnectionBroken}), no connection to be had, too many, or a
 * statement cut by its timeout.
 */
export const isUnavailable = (u: unknown): boolean =>
  chain(u).some((error) => {
    if (lostConnection(error)) return true
    const code = codeOf(error)
    return code !== undefined && UNAVAILABLE_STATES.has(code)
  })

/**
 * Whether PostgreSQL broke a deadlock by rolling this (sub)transaction back (`40P01`): nothing of it
 * is left, and tried again it may pass.
 */
export const isDeadlock = (u: unknown): boolean => chain(u).some((error) => codeOf(error) === "40P01")

/** Whether an error is the client's statement timeout (`pg`'s `query_timeout`). */
export const isTimeout = (u: unknown): boolean =>
  chain(u).some((error) => error instanceof Error && /Query read timeout/.test(error.message))
