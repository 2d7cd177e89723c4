/**
 * The failed panel sign-ins of every email (`SignInFailures`) over PostgreSQL or PGlite, in table
 * `cobro_panel_sign_in_failures` (migration `13_panel_users_current`), shared by every node: a known
 * and an unknown email are counted alike whichever node an attempt reaches. A row is keyed by the
 * hash of the email (`SignInFailures.keyOf`), never the email, and deleted by the email's success.
 * Each failure is one upsert; the count is never read and then written, so two nodes' failures at
 * once both count.
 */
import * as SignInFailures from "@cobro/domain/SignInFailures"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ddl from "./internal/Ddl.js"

/** The table. */
export const table = "cobro_panel_sign_in_failures"

/**
 * Migration 13's part: the table.
 *
 * @category migrations
 */
export const migration: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Ddl.run([
  `CREATE TABLE ${table} (
      email_key text PRIMARY KEY,
      failures integer NOT NULL,
      last_failure_at timestamptz NOT NULL
    )`
])

interface Row {
  readonly failures: number
  readonly last_failure_at: Date | string
}

/**
 * Builds the counts over the `SqlClient` in context. Time is the caller's, never the database's. A
 * database that fails is a defect here, as for the sessions: a sign-in answers 500.
 *
 * @category constructors
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const throttle = (email: string) =>
    sql<Row>`SELECT failures, last_failure_at FROM ${sql(table)}
      WHERE email_key = ${SignInFailures.keyOf(email)}`.pipe(
      Effect.map((rows) =>
        rows[0] === undefined
          ? SignInFailures.none
          : {
              failures: rows[0].failures,
              lastFailureAt: Option.some(DateTime.unsafeMake(new Date(rows[0].last_failure_at)))
            }
      ),
      Effect.orDie
    )

  const failed = (email: string, now: DateTime.Utc) => {
    const at = DateTime.formatIso(now)
    return sql`
      INSERT INTO ${sql(table)} AS f (email_key, failures, last_failure_at)
      VALUES (${SignInFailures.keyOf(email)}, 1, ${at}::timestamptz)
      ON CONFLICT (email_key) DO UPDATE
      SET failures = f.failures + 1, last_failure_at = greatest(f.last_failure_at, excluded.last_failure_at)`.pipe(
      Effect.asVoid,
      Effect.orDie
    )
  }

  const succeeded = (email: string) =>
    sql`DELETE FROM ${sql(table)} WHERE email_key = ${SignInFailures.keyOf(email)}`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  return SignInFailures.SignInFailures.of({ throttle, failed, succeeded })
})

/**
 * `SignInFailures` over the `SqlClient` in context. Needs the store's migrations.
 *
 * @category layers
 */
export const layer: Layer.Layer<SignInFailures.SignInFailures, never, SqlClient.SqlClient> = Layer.effect(
  SignInFailures.SignInFailures,
  make
)
