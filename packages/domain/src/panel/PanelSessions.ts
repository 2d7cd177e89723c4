/**
 * The panel's sessions port: a signed-in user's session, kept by the store (a table, not the log:
 * a session is a credential, not a fact; its sign-in is an event of the user's stream). The
 * cookie carries a random token; the store keeps only its SHA-256, so a read of the table signs
 * nobody in.
 *
 * A session grants nothing by itself: {@link PanelSessions.find} answers it only while its user is
 * ACTIVE, with the user's role as it is now, read in the same lookup (issue 31). A disable or a role
 * change therefore holds from the next request, whether or not the sessions were revoked, and a
 * session opened by a sign-in that raced a disable never works.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as CommandHandler from "../kernel/CommandHandler.js"
import { EventStore } from "../kernel/EventStore.js"
import { PanelUser, Role } from "./PanelUser.js"

/** What a panel user may do: `full_access` everything, `read_only` see everything and change nothing. */
export { Role }

/**
 * A session as a sign-in opens it: no role, which is the user's and may change while it lasts.
 *
 * @category models
 */
export interface NewSession {
  /** Hex SHA-256 of the cookie's token. */
  readonly tokenHash: string
  readonly userId: string
  readonly merchantId: string
  readonly email: string
  /** The token every form of this session carries (CSRF). */
  readonly csrfToken: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

/**
 * A session as a request finds it: with its user's current role.
 *
 * @category models
 */
export interface Session extends NewSession {
  readonly role: Role
}

/**
 * The sessions port.
 *
 * @category services
 */
export class PanelSessions extends Context.Tag("@cobro/domain/PanelSessions")<
  PanelSessions,
  {
    readonly create: (session: NewSession) => Effect.Effect<void>
    /**
     * The session of a token hash, if it exists, has not expired at `now`, and its user is ACTIVE;
     * with the user's current role.
     */
    readonly find: (tokenHash: string, now: Date) => Effect.Effect<Option.Option<Session>>
    readonly revoke: (tokenHash: string) => Effect.Effect<void>
    /** Ends every session of a user (disable, new password), but the one of `except` when given. */
    readonly revokeUser: (userId: string, except?: string) => Effect.Effect<void>
  }
>() {}

const load = CommandHandler.load(PanelUser)

/**
 * Sessions in this process's memory, for tests and embedders: what the store's table does, with the
 * sessions expired at a new session's creation deleted then, as the table's are, and the user's
 * status and role read from its stream at each lookup.
 *
 * @category layers
 */
export const layerMemory: Layer.Layer<PanelSessions, never, EventStore> = Layer.effect(
  PanelSessions,
  Effect.map(EventStore, (store) => {
    const sessions = new Map<string, NewSession>()
    const current = (session: NewSession) =>
      Effect.map(Effect.provideService(load(session.userId), EventStore, store), ({ state }) =>
        state._tag === "ACTIVE" ? Option.some<Session>({ ...session, role: state.role }) : Option.none()
      )
    return PanelSessions.of({
      create: (session) =>
        Effect.sync(() => {
          for (const [hash, kept] of sessions) {
            if (kept.expiresAt.getTime() <= session.createdAt.getTime()) sessions.delete(hash)
          }
          sessions.set(session.tokenHash, session)
        }),
      find: (tokenHash, now) =>
        Effect.suspend(() => {
          const session = sessions.get(tokenHash)
          return session === undefined || session.expiresAt.getTime() <= now.getTime()
            ? Effect.succeedNone
            : current(session)
        }).pipe(Effect.orDie),
      revoke: (tokenHash) =>
        Effect.sync(() => {
          sessions.delete(tokenHash)
        }),
      revokeUser: (userId, except) =>
        Effect.sync(() => {
          for (const [hash, session] of sessions) {
            if (session.userId === userId && hash !== except) sessions.delete(hash)
          }
        })
    })
  })
)
