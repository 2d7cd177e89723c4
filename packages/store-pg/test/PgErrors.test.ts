/**
 * What a database error says about its connection (issue 33): the SQLSTATEs and socket errors of a
 * failover break the connection and make the database unavailable; a client's mistake does neither.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import * as PgErrors from "../src/PgErrors.js"

/** An error as `pg` gives a server's ErrorResponse: a message and its SQLSTATE. */
const serverError = (code: string, message = "server error") => Object.assign(new Error(message), { code })

/** As the store's statements fail: `@effect/sql`'s error around the driver's. */
const wrapped = (cause: unknown) => new SqlError({ cause, message: "PgPool: statement failed" })

describe("PgErrors", () => {
  it.each([
    ["25006", "a replica's read-only transaction"],
    ["57P01", "an admin shutdown"],
    ["57P02", "a crash shutdown"],
    ["57P03", "a server that cannot accept connections yet"],
    ["08006", "a connection failure"],
    ["08001", "a connection that could not be made"],
    ["ECONNREFUSED", "a refused connection"],
    ["ECONNRESET", "a reset connection"]
  ])("%s (%s) breaks the connection and makes the database unavailable", (code) => {
    expect(PgErrors.isConnectionBroken(wrapped(serverError(code)))).toBe(true)
    expect(PgErrors.isUnavailable(wrapped(serverError(code)))).toBe(true)
  })

  it.each([
    ["Connection terminated unexpectedly"],
    ["timeout exceeded when trying to connect"],
    ["Client has encountered a connection error and is not queryable"]
  ])("pg's own %j (no code) breaks the connection", (message) => {
    expect(PgErrors.isConnectionBroken(wrapped(new Error(message)))).toBe(true)
    expect(PgErrors.isUnavailable(new Error(message))).toBe(true)
  })

  it("a deadlock (40P01) is one, tried again; it neither breaks the connection nor says the database is down", () => {
    expect(PgErrors.isDeadlock(wrapped(serverError("40P01", "deadlock detected")))).toBe(true)
    expect(PgErrors.isDeadlock(wrapped(serverError("40001")))).toBe(false)
    expect(PgErrors.isDeadlock(wrapped(new Error("deadlock detected")))).toBe(false)
    expect(PgErrors.isConnectionBroken(wrapped(serverError("40P01")))).toBe(false)
    expect(PgErrors.isUnavailable(wrapped(serverError("40P01")))).toBe(false)
  })

  it.each([["53300"], ["57014"]])(
    "%s makes the database unavailable but leaves the connection usable",
    (code) => {
      expect(PgErrors.isUnavailable(wrapped(serverError(code)))).toBe(true)
      expect(PgErrors.isConnectionBroken(wrapped(serverError(code)))).toBe(false)
    }
  )

  it.each([["23505"], ["40001"], ["22P02"], ["42P01"], ["CB409"]])(
    "%s is neither: a conflict or a bug, not a failover",
    (code) => {
      expect(PgErrors.isUnavailable(wrapped(serverError(code)))).toBe(false)
      expect(PgErrors.isConnectionBroken(wrapped(serverError(code)))).toBe(false)
    }
  )

  it("finds the driver's error several causes deep, and inside an AggregateError (a refused dual-stack connect)", () => {
    const refused = new AggregateError([serverError("ECONNREFUSED"), serverError("ECONNREFUSED")], "")
    expect(PgErrors.isUnavailable(wrapped(wrapped(refused)))).toBe(true)
    expect(PgErrors.isUnavailable("a string")).toBe(false)
    expect(PgErrors.isUnavailable(undefined)).toBe(false)
  })

  it("a cause chain that loops ends the walk", () => {
    const a: { cause?: unknown } = {}
    const b = { cause: a }
    a.cause = b
    expect(PgErrors.isUnavailable(a)).toBe(false)
  })
})
