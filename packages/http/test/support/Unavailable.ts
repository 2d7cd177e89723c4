/**
 * A database that cannot take requests, as the tests see it (issue 33): the errors a failover makes
 * (`pg`'s error with its SQLSTATE, inside the `SqlError` the PostgreSQL stores die with), a
 * classifier of them for `Unavailability`, and a check that a classifier recognises them.
 */
import { expect } from "@effect/vitest"
import { SqlError } from "@effect/sql/SqlError"
import * as Predicate from "effect/Predicate"

/** An error as `pg` makes it from a server's `ErrorResponse`: a `DatabaseError` with its SQLSTATE. */
export const pgError = (code: string, message: string): Error =>
  Object.assign(new Error(message), {
    name: "error",
    severity: code.startsWith("57P") ? "FATAL" : "ERROR",
    code,
    routine: "ProcessInterrupts"
  })

/** What a PostgreSQL store dies with when the server shuts down under it: `57P01`, in a `SqlError`. */
export const adminShutdown = (): SqlError =>
  new SqlError({
    cause: pgError("57P01", "terminating connection due to administrator command"),
    message: "Failed to execute statement"
  })

/** The SQLSTATEs the tests' classifier recognises. */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set(["57P01", "57P02", "57P03", "25006", "53300"])

/**
 * The tests' classifier: an error whose `cause` chain holds one of {@link UNAVAILABLE_CODES}, or a
 * class `08` SQLSTATE. The server's is store-pg's (`PgErrors.isUnavailable`).
 */
export const isUnavailable = (u: unknown): boolean => {
  for (let value = u, depth = 0; depth < 8 && typeof value === "object" && value !== null; depth++) {
    if (Predicate.hasProperty(value, "code") && typeof value.code === "string") {
      if (UNAVAILABLE_CODES.has(value.code) || value.code.startsWith("08")) return true
    }
    value = Predicate.hasProperty(value, "cause") ? value.cause : undefined
  }
  return false
}

/**
 * Checks the shape a classifier must have: it recognises a failover's errors as the PostgreSQL
 * stores die with them (the old primary turned replica, `25006`; an admin shutdown, `57P01`), and
 * not a bug.
 */
export const expectRecognisesFailover = (classify: (defect: unknown) => boolean): void => {
  const readOnly = new SqlError({
    cause: pgError("25006", "cannot execute INSERT in a read-only transaction"),
    message: "Failed to execute statement"
  })
  expect(classify(readOnly), "25006 in a SqlError").toBe(true)
  expect(classify(adminShutdown()), "57P01 in a SqlError").toBe(true)
  expect(classify(new Error("Cannot read properties of undefined")), "a bug").toBe(false)
  expect(classify(new SqlError({ cause: pgError("23505", "duplicate key") })), "23505").toBe(false)
}
