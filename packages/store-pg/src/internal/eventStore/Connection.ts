/**
 * How the event store reaches the database: `@effect/sql` for transactions and the rare paths, the
 * `pg` pool directly for the single statements of the hot ones (`PgPool`).
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Pg from "pg"
import * as PgPool from "../../PgPool.js"

/** The store's ways to the database, chosen once when the store is built. */
export interface Connection {
  readonly sql: SqlClient.SqlClient
  /** One statement: through the pool directly outside a caller's transaction (`PgPool.statement`). */
  readonly statement: PgPool.Statement
  /** The same, for the callers that already know no transaction is open (no second look). */
  readonly autocommit: PgPool.Statement
  /** The pool, when the database is a PostgreSQL server (PGlite's single session has none). */
  readonly pool: Option.Option<Pg.Pool>
}

/** The connection over the `SqlClient` in context, and the `PgPool` when there is one. */
export const make: Effect.Effect<Connection, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const statement = yield* PgPool.statement
  const pool = yield* Effect.serviceOption(PgPool.PgPool)
  const autocommit = Option.match(pool, {
    onNone: () => statement,
    onSome:
      (pool): PgPool.Statement =>
      (text, params) =>
        PgPool.query(pool, text, params)
  })
  return { sql, statement, autocommit, pool }
})
