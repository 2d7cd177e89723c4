/**
 * The merchant panel's sessions (`PanelSessions`) over PostgreSQL or PGlite, in table
 * `cobro_panel_sessions` (migration `11_panel_sessions`), shared by every node: a session opened on
 * one node is found on the others. A row holds the SHA-256 of the cookie's token, never the token.
 * Expired rows behave as absent; each new session deletes them, by the `expires_at` index, in the
 * same statement that inserts it.
 *
 * A row holds no role (migration `13_panel_users_current` dropped the column): the lookup joins the
 * panel users' read model (`cobro_rm_panel_users`, written in the transaction of each user event)
 * and answers a session only while its user is ACTIVE, with the user's current role, in the same
 * statement. A disable or a role change committed before a request holds for it, whether or not the
 * sessions were revoked, and a session opened after a disable never works.
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

/**
 * Migration 13's part: the role leaves the session row (it is read from the user at each lookup).
 *
 * @category migrations
 */
export const dropRole: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Ddl.run([
  `ALTER TABLE ${table} DROP COLUMN role`
])

/** A row as the lookup returns it, the role the user's. */
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

  const create = (session: PanelSessions.NewSession) =>
    sql`
      WITH purged AS (
        DELETE FROM ${sql(table)} WHERE expires_at <= ${session.createdAt.toISOString()}::timestamptz
      )
      INSERT INTO ${sql(table)}
        (token_hash, user_id, merchant_id, email, csrf_token, created_at, expires_at)
      VALUES (${session.tokenHash}, ${session.userId}, ${session.merchantId}, ${session.email},
        ${session.csrfToken}, ${session.createdAt.toISOString()}::timestamptz,
        ${session.expiresAt.toISOString()}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie)

  // Two primary-key lookups in one statement: the session, then its user as it is now.
  const find = (tokenHash: string, now: Date) =>
    sql<Row>`
      SELECT s.token_hash, s.user_id, s.merchant_id, s.email, u.role, s.csrf_token, s.created_at, s.expires_at
      FROM ${sql(table)} s JOIN cobro_rm_panel_users u ON u.user_id = s.user_id
      WHERE s.token_hash = ${tokenHash} AND s.expires_at > ${now.toISOString()}::timestamptz
        AND u.status = 'ACTIVE'`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSession)),
      Effect.orDie
    )

  const revoke = (tokenHash: string) =>
    sql`DELETE FROM ${sql(table)} WHERE token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

  const revokeUser = (userId: string, except?: string) =>
    (except === undefined
      ? sql`DELETE FROM ${sql(table)} WHERE user_id = ${userId}`
      : sql`DELETE FROM ${sql(table)} WHERE user_id = ${userId} AND token_hash <> ${except}`
    ).pipe(Effect.asVoid, Effect.orDie)

  return PanelSessions.PanelSessions.of({ create, find, revoke, revokeUser })
})

/**
 * `PanelSessions` over the `SqlClient` in context. Needs the store's migrations (the sessions' table
 * and the panel users' read model).
 *
 * @category layers
 */
export const layer: Layer.Layer<PanelSessions.PanelSessions, never, SqlClient.SqlClient> = Layer.effect(
  PanelSessions.PanelSessions,
  make
)
