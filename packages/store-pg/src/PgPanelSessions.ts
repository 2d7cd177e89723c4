/**
 * The merchant panel's sessions (`PanelSessions`) over PostgreSQL or PGlite, in table
 * `cobro_panel_sessions` (migration `11_panel_sessions`), shared by every node: a session opened on
 * one node is found on the others. A row holds the SHA-256 of the cookie's token, never the token.
 * Expired rows behave as absent; each new session deletes them, by the `expires_at` index, in the
 * same statement that inserts it.
 */
import * as PanelSessions from "@cobro/domain/PanelSessions"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ddl from "./internal/Ddl.js"

/** The table. */
export const table = "cobro_panel_sessions"

/**
 * The table and its indexes: by user (a user's sessions end together) and by expiry (the purge).
 *
 * @category migrations
 */
export const migration: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Ddl.run([
  `CREATE TABLE ${table} (
      token_hash text PRIMARY KEY,
      user_id text NOT NULL,
      merchant_id text NOT NULL,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('full_access', 'read_only')),
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
  `CREATE INDEX ${table}_user_id ON ${table} (user_id)`,
  `CREATE INDEX ${table}_expires_at ON ${table} (expires_at)`
])

/** A row as the driver returns it. */
interface Row {
  readonly token_hash: string
  readonly user_id: string
  readonly merchant_id: string
  readonly email: string
  readonly role: PanelSessions.Role
  readonly csrf_token: string
  readonly created_at: Date | string
  readonly expires_at: Date | string
}

const toSession = (row: Row): PanelSessions.Session => ({
  tokenHash: row.token_hash,
  userId: row.user_id,
  merchantId: row.merchant_id,
  email: row.email,
  role: row.role,
  csrfToken: row.csrf_token,
  createdAt: new Date(row.created_at),
  expiresAt: new Date(row.expires_at)
})

/**
 * Builds the sessions over the `SqlClient` in context. Time is the caller's (the server may run a
 * virtual clock), never the database's. A database that fails is a defect here: the caller can do
 * nothing about it, and a sign-in or a page answers 500.
 *
 * @category constructors
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const create = (session: PanelSessions.Session) =>
    sql`
      WITH purged AS (
        DELETE FROM ${sql(table)} WHERE expires_at <= ${session.createdAt.toISOString()}::timestamptz
      )
      INSERT INTO ${sql(table)}
        (token_hash, user_id, merchant_id, email, role, csrf_token, created_at, expires_at)
      VALUES (${session.tokenHash}, ${session.userId}, ${session.merchantId}, ${session.email}, ${session.role},
        ${session.csrfToken}, ${session.createdAt.toISOString()}::timestamptz,
        ${session.expiresAt.toISOString()}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie)

  const find = (tokenHash: string, now: Date) =>
    sql<Row>`
      SELECT token_hash, user_id, merchant_id, email, role, csrf_token, created_at, expires_at
      FROM ${sql(table)}
      WHERE token_hash = ${tokenHash} AND expires_at > ${now.toISOString()}::timestamptz`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSession)),
      Effect.orDie
    )

  const revoke = (tokenHash: string) =>
    sql`DELETE FROM ${sql(table)} WHERE token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

  const revokeUser = (userId: string) =>
    sql`DELETE FROM ${sql(table)} WHERE user_id = ${userId}`.pipe(Effect.asVoid, Effect.orDie)

  return PanelSessions.PanelSessions.of({ create, find, revoke, revokeUser })
})

/**
 * `PanelSessions` over the `SqlClient` in context. Needs the store's migrations.
 *
 * @category layers
 */
export const layer: Layer.Layer<PanelSessions.PanelSessions, never, SqlClient.SqlClient> = Layer.effect(
  PanelSessions.PanelSessions,
  make
)
