/**
 * Schema statements as plain SQL text (no parameters), run in order: the migrations' and the
 * projections' tables, indexes and functions.
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** Runs the statements one after the other, in the transaction in context if there is one. */
export const run = (statements: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })
  )
