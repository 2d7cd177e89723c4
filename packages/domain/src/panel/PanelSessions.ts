/**
 * The panel's sessions port: a signed-in user's session, kept by the store (a table, not the log:
 * a session is a credential, not a fact; its sign-in is an event of the user's stream). The
 * cookie carries a random token; the store keeps only its SHA-256, so a read of the table signs
 * nobody in.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Role } from "./PanelUser.js"

/** What a panel user may do: `full_access` everything, `read_only` see everything and change nothing. */
export { Role }

/** @category models */
export interface Session {
  /** Hex SHA-256 of the cookie's token. */
  readonly tokenHash: string
  readonly userId: string
  readonly merchantId: string
  readonly email: string
  readonly role: Role
  /** The token every form of this session carries (CSRF). */
  readonly csrfToken: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

/**
 * The sessions port.
 *
 * @category services
 */
export class PanelSessions extends Context.Tag("@cobro/domain/PanelSessions")<
  PanelSessions,
  {
    readonly create: (session: Session) => Effect.Effect<void>
    /** The session of a token hash, if it exists and has not expired at `now`. */
    readonly find: (tokenHash: string, now: Date) => Effect.Effect<Option.Option<Session>>
    readonly revoke: (tokenHash: string) => Effect.Effect<void>
    /** Ends every session of a user (role change, disable). */
    readonly revokeUser: (userId: string) => Effect.Effect<void>
  }
>() {}

/**
 * Sessions in this process's memory, for tests and embedders: what the store's table does, with the
 * sessions expired at a new session's creation deleted then, as the table's are.
 *
 * @category layers
 */
export const layerMemory: Layer.Layer<PanelSessions> = Layer.sync(PanelSessions, () => {
  const sessions = new Map<string, Session>()
  return PanelSessions.of({
    create: (session) =>
      Effect.sync(() => {
        for (const [hash, kept] of sessions) {
          if (kept.expiresAt.getTime() <= session.createdAt.getTime()) sessions.delete(hash)
        }
        sessions.set(session.tokenHash, session)
      }),
    find: (tokenHash, now) =>
      Effect.sync(() =>
        Option.filter(
          Option.fromNullable(sessions.get(tokenHash)),
          (session) => session.expiresAt.getTime() > now.getTime()
        )
      ),
    revoke: (tokenHash) =>
      Effect.sync(() => {
        sessions.delete(tokenHash)
      }),
    revokeUser: (userId) =>
      Effect.sync(() => {
        for (const [hash, session] of sessions) if (session.userId === userId) sessions.delete(hash)
      })
  })
})
