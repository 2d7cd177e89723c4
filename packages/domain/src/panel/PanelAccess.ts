/**
 * Who may open the merchant panel (issue 22, "Users and sign-in"): an operator creates its users (the
 * admin API and `cobro user create` call {@link createUser}), a user signs in with email and password
 * ({@link signIn}), and a user's role, password or access changes: the operator's doing, or, for the
 * password, the user's own ({@link changeOwnPassword}). Each change is an event with its actor.
 * Passwords reach the `PasswordHasher` and nothing else; the log keeps only their hashes.
 *
 * What a session may do is read from the user's current status and role at every request
 * (`PanelSessions.find`): the revocations here end sessions that can no longer be used, and keep the
 * table small, but no right depends on them having run.
 *
 * Sign-in refusals say nothing about the account: an unknown email, a wrong password and a disabled
 * user give the same {@link SignInRefused}, and an unknown email costs the same hash work. Failed
 * sign-ins in a row slow the account down (`PanelUser.retryAfterMillis`); an attempt while it must
 * wait is refused unchecked and recorded nowhere.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as CommandHandler from "../kernel/CommandHandler.js"
import type * as EventStore from "../kernel/EventStore.js"
import * as Merchant from "../merchants/Merchant.js"
import { MerchantId } from "../shared/Ids.js"
import { PanelSessions } from "./PanelSessions.js"
import * as PanelUser from "./PanelUser.js"
import { PasswordHasher } from "./PasswordHasher.js"

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

/** The shortest password accepted, in characters (Unicode code points). */
export const MIN_PASSWORD_LENGTH = 12

/** The longest password accepted, in characters: a bound on the hash work one request can ask for. */
export const MAX_PASSWORD_LENGTH = 256

/** The address recorded when the HTTP edge saw none. */
export const UNKNOWN_ADDRESS = "unknown"

/**
 * The actor a panel user's events carry: `panel:<email>`.
 *
 * @category constructors
 */
export const actor = (email: string): string => `panel:${email}`

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * The email is not an address: `name@example.com`.
 * @category errors
 */
export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {
  email: Schema.String
}) {}

/**
 * The password is shorter than {@link MIN_PASSWORD_LENGTH} or longer than {@link MAX_PASSWORD_LENGTH}
 * characters. (It is never carried, not even in an error.)
 * @category errors
 */
export class WeakPassword extends Schema.TaggedError<WeakPassword>()("WeakPassword", {
  minLength: Schema.Int,
  maxLength: Schema.Int
}) {}

/**
 * A sign-in is refused. The same for an unknown email, a wrong password and a disabled user;
 * `retryAfterSeconds` is set when the attempt came while the account (or, at the HTTP edge, the
 * address) must wait, and was not checked.
 * @category errors
 */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  retryAfterSeconds: Schema.OptionFromSelf(Schema.Int)
}) {
  /** The refusal of an attempt that was checked and failed, or could not be. */
  static wrong(): SignInRefused {
    return new SignInRefused({ retryAfterSeconds: Option.none() })
  }
  /** The refusal of an attempt that must wait `millis` more. */
  static waitMillis(millis: number): SignInRefused {
    return new SignInRefused({ retryAfterSeconds: Option.some(Math.max(1, Math.ceil(millis / 1000))) })
  }
}

export { UserAlreadyExists, UserNotFound } from "./PanelUser.js"

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/**
 * A panel user as the admin API shows it (never its password or hash).
 * @category models
 */
export interface UserView {
  readonly userId: PanelUser.UserId
  readonly merchantId: MerchantId
  readonly email: PanelUser.Email
  readonly role: PanelUser.Role
  readonly createdAt: DateTime.Utc
}

/**
 * Who signed in: what a session is made of.
 * @category models
 */
export interface SignedInUser {
  readonly userId: PanelUser.UserId
  readonly merchantId: MerchantId
  readonly email: PanelUser.Email
  readonly role: PanelUser.Role
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

const decodeEmail = Schema.decodeUnknownEither(PanelUser.Email)
const decodeMerchantId = Schema.decodeUnknownEither(MerchantId)

/**
 * The email as the panel keeps it (trimmed, lower-cased), or {@link InvalidEmail}.
 *
 * @category validation
 */
export const validateEmail = (email: string): Either.Either<PanelUser.Email, InvalidEmail> =>
  Either.mapLeft(decodeEmail(PanelUser.normalizeEmail(email)), () => new InvalidEmail({ email }))

const lengthOf = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

/**
 * Whether a password's length is within the rule, in Unicode code points.
 *
 * @category validation
 */
export const passwordFits = (password: string): boolean => {
  // Cheap bound first: a huge text is refused without walking it.
  if (password.length > MAX_PASSWORD_LENGTH * 2) return false
  const n = lengthOf(password)
  return n >= MIN_PASSWORD_LENGTH && n <= MAX_PASSWORD_LENGTH
}

/**
 * `Right` when the password's length is within the rule, else {@link WeakPassword}.
 *
 * @category validation
 */
export const validatePassword = (password: string): Either.Either<void, WeakPassword> =>
  passwordFits(password)
    ? Either.void
    : Either.left(new WeakPassword({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }))

const addressOf = (address: string): string => {
  const trimmed = address.trim()
  return trimmed === "" ? UNKNOWN_ADDRESS : trimmed.slice(0, 100)
}

// ---------------------------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------------------------

const handle = CommandHandler.make(PanelUser.PanelUser)
const load = CommandHandler.load(PanelUser.PanelUser)
const loadMerchant = CommandHandler.load(Merchant.Merchant)

/** A refusal that the use case's own checks rule out: a bug if it happens, a defect. */
const unexpected = <E>(error: E): Effect.Effect<never> => Effect.die(error)

/**
 * An operator's command on a user, refused only for the user's absence or state: only sign-ins are
 * throttled, it creates nothing, and a conflict left after the handler's retries is a defect.
 */
const handleOperator = (userId: string, command: PanelUser.Command, metadata: EventStore.EventMetadata) =>
  handle(userId, command, metadata).pipe(
    Effect.catchTags({
      SignInThrottled: unexpected,
      UserAlreadyExists: unexpected,
      ConcurrencyConflict: unexpected
    })
  )

const activeUser = (userId: string) =>
  Effect.flatMap(load(userId), ({ state }) =>
    state._tag === "Initial" ? Effect.fail(new PanelUser.UserNotFound()) : Effect.succeed(state)
  )

// ---------------------------------------------------------------------------------------------
// Use cases
// ---------------------------------------------------------------------------------------------

/**
 * Creates a panel user of an existing merchant: the email checked and lower-cased, the password's
 * length checked and hashed; the user's stream is created with "no stream" expected, so that of two
 * creations of one email (for any merchants) one is refused with `UserAlreadyExists`.
 *
 * @category commands
 */
export const createUser = Effect.fn("PanelAccess.createUser")(function* (
  input: {
    readonly merchantId: string
    readonly email: string
    readonly password: string
    readonly role: PanelUser.Role
  },
  metadata: EventStore.EventMetadata = {}
) {
  const email = yield* validateEmail(input.email)
  yield* validatePassword(input.password)
  const merchantId = yield* Either.mapLeft(
    decodeMerchantId(input.merchantId),
    () => new Merchant.MerchantNotFound()
  )
  const merchant = yield* loadMerchant(merchantId)
  if (merchant.state._tag === "Initial") return yield* new Merchant.MerchantNotFound()
  const userId = PanelUser.userIdOf(email)
  const known = yield* load(userId)
  // Refused before the hash work; a creation racing this one is refused by the append instead.
  if (known.state._tag !== "Initial") return yield* new PanelUser.UserAlreadyExists({ userId })
  const hasher = yield* PasswordHasher
  const passwordHash = Redacted.make(yield* hasher.hash(input.password))
  const now = yield* DateTime.now
  yield* handle(
    userId,
    new PanelUser.CreatePanelUser({ userId, merchantId, email, role: input.role, passwordHash, now }),
    metadata,
    known
  ).pipe(
    Effect.catchTags({
      UserNotFound: unexpected,
      UserNotInState: unexpected,
      SignInThrottled: unexpected,
      ConcurrencyConflict: unexpected
    })
  )
  return { userId, merchantId, email, role: input.role, createdAt: now } satisfies UserView
})

/**
 * Signs a user in: the password verified against the stored hash and the outcome recorded
 * (`SignedIn` or `SignInFailed`, from `address`, with actor `panel:<email>`). Refused alike
 * (`SignInRefused`, no wait) for an unknown email, which is verified against the hasher's dummy hash
 * so that it costs the same, a disabled user, a wrong password and a malformed email or a password
 * longer than any stored one. An attempt while the account must wait is refused with the wait, before
 * any hash work, and records nothing; so is an attempt whose outcome, decided again after a
 * concurrent attempt, finds the account waiting.
 *
 * @category commands
 */
export const signIn = Effect.fn("PanelAccess.signIn")(function* (attempt: {
  readonly email: string
  readonly password: string
  readonly address: string
  readonly now: DateTime.Utc
}) {
  const hasher = yield* PasswordHasher
  const email = Either.getRight(validateEmail(attempt.email))
  // No stored password is longer, and no user has a malformed email: refused without a lookup.
  const tooLong =
    attempt.password.length > MAX_PASSWORD_LENGTH * 2 || lengthOf(attempt.password) > MAX_PASSWORD_LENGTH
  if (Option.isNone(email) || tooLong) {
    return yield* SignInRefused.wrong()
  }
  const { state, version } = yield* load(PanelUser.userIdOf(email.value))
  if (state._tag !== "ACTIVE") {
    yield* hasher.verify(attempt.password, hasher.dummy)
    return yield* SignInRefused.wrong()
  }
  const wait = PanelUser.retryAfterMillis(state, attempt.now)
  if (wait > 0) return yield* SignInRefused.waitMillis(wait)
  const right = yield* hasher.verify(attempt.password, Redacted.value(state.passwordHash))
  const address = addressOf(attempt.address)
  const command = right
    ? new PanelUser.RecordSignIn({ address, now: attempt.now })
    : new PanelUser.RecordFailedSignIn({ address, now: attempt.now })
  yield* handle(state.userId, command, { actor: actor(state.email) }, { state, version }).pipe(
    Effect.catchTags({
      SignInThrottled: (throttled) => Effect.fail(SignInRefused.waitMillis(throttled.retryAfterMillis)),
      // Disabled meanwhile: refused as any disabled user is.
      UserNotInState: () => Effect.fail(SignInRefused.wrong()),
      // Attempts on this account outran the retries: let the client try again shortly.
      ConcurrencyConflict: () => Effect.fail(SignInRefused.waitMillis(1000)),
      UserNotFound: unexpected,
      UserAlreadyExists: unexpected
    })
  )
  if (!right) return yield* SignInRefused.wrong()
  return {
    userId: state.userId,
    merchantId: state.merchantId,
    email: state.email,
    role: state.role
  } satisfies SignedInUser
})

/**
 * Changes a user's role; its sessions have the new role from their next request, and end (the user
 * signs in again to a panel that shows what it may now do). The same role again changes nothing
 * and keeps the sessions.
 *
 * @category commands
 */
export const changeRole = Effect.fn("PanelAccess.changeRole")(function* (
  userId: string,
  role: PanelUser.Role,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  const { events } = yield* handleOperator(userId, new PanelUser.ChangeRole({ role, now }), metadata)
  if (events.length > 0) yield* Effect.flatMap(PanelSessions, (sessions) => sessions.revokeUser(userId))
})

/**
 * An operator sets a new password (the same length rule as at creation): the failures in a row are
 * forgiven and the user's sessions end. A disabled user is refused (`UserNotInState`): enable it first.
 *
 * @category commands
 */
export const changePassword = Effect.fn("PanelAccess.changePassword")(function* (
  userId: string,
  password: string,
  metadata: EventStore.EventMetadata = {}
) {
  yield* validatePassword(password)
  yield* activeUser(userId)
  const hasher = yield* PasswordHasher
  const passwordHash = Redacted.make(yield* hasher.hash(password))
  const now = yield* DateTime.now
  yield* handleOperator(userId, new PanelUser.ChangePassword({ passwordHash, now }), metadata)
  yield* Effect.flatMap(PanelSessions, (sessions) => sessions.revokeUser(userId))
})

/**
 * Disables a user: it signs in no more, its sessions stop working at once (the lookup reads the
 * status) and are deleted. Disabling a disabled user changes nothing but deletes its sessions again.
 *
 * @category commands
 */
export const disableUser = Effect.fn("PanelAccess.disableUser")(function* (
  userId: string,
  metadata: EventStore.EventMetadata = {}
) {
  const now = yield* DateTime.now
  // Both states accept it: a no-op in the state it leads to.
  yield* handleOperator(userId, new PanelUser.DisablePanelUser({ now }), metadata).pipe(
    Effect.catchTag("UserNotInState", unexpected)
  )
  yield* Effect.flatMap(PanelSessions, (sessions) => sessions.revokeUser(userId))
})

/**
 * Enables a disabled user again, with the role and password it had; enabling an active user changes
 * nothing. The user's sessions are deleted first: a session left by a disable whose revocation
 * failed must not come back to life with the user.
 *
 * @category commands
 */
export const enableUser = Effect.fn("PanelAccess.enableUser")(function* (
  userId: string,
  metadata: EventStore.EventMetadata = {}
) {
  yield* activeUser(userId)
  yield* Effect.flatMap(PanelSessions, (sessions) => sessions.revokeUser(userId))
  const now = yield* DateTime.now
  // Both states accept it: a no-op in the state it leads to.
  yield* handleOperator(userId, new PanelUser.EnablePanelUser({ now }), metadata).pipe(
    Effect.catchTag("UserNotInState", unexpected)
  )
})

/**
 * A signed-in user changes its own password: the current one is checked as a sign-in checks it
 * (refused alike with `SignInRefused`, counted as a failed sign-in, and refused unchecked while the
 * account must wait, so that a stolen session cannot guess it faster than the sign-in form), the new
 * one follows the length rule. The change is recorded with the user as actor; every other session
 * of the user ends, the one of `keepTokenHash` stays.
 *
 * @category commands
 */
export const changeOwnPassword = Effect.fn("PanelAccess.changeOwnPassword")(function* (input: {
  readonly userId: string
  readonly keepTokenHash: string
  readonly currentPassword: string
  readonly newPassword: string
  readonly address: string
  readonly now: DateTime.Utc
}) {
  yield* validatePassword(input.newPassword)
  const hasher = yield* PasswordHasher
  const { state, version } = yield* load(input.userId)
  if (state._tag !== "ACTIVE") return yield* SignInRefused.wrong()
  const wait = PanelUser.retryAfterMillis(state, input.now)
  if (wait > 0) return yield* SignInRefused.waitMillis(wait)
  const metadata = { actor: actor(state.email) }
  const refusals = {
    SignInThrottled: (throttled: PanelUser.SignInThrottled) =>
      Effect.fail(SignInRefused.waitMillis(throttled.retryAfterMillis)),
    UserNotInState: () => Effect.fail(SignInRefused.wrong()),
    ConcurrencyConflict: () => Effect.fail(SignInRefused.waitMillis(1000)),
    UserNotFound: unexpected,
    UserAlreadyExists: unexpected
  }
  if (
    !passwordFits(input.currentPassword) ||
    !(yield* hasher.verify(input.currentPassword, Redacted.value(state.passwordHash)))
  ) {
    const failed = new PanelUser.RecordFailedSignIn({ address: addressOf(input.address), now: input.now })
    yield* handle(state.userId, failed, metadata, { state, version }).pipe(Effect.catchTags(refusals))
    return yield* SignInRefused.wrong()
  }
  const passwordHash = Redacted.make(yield* hasher.hash(input.newPassword))
  const command = new PanelUser.ChangePassword({ passwordHash, now: input.now })
  yield* handle(state.userId, command, metadata, { state, version }).pipe(Effect.catchTags(refusals))
  yield* Effect.flatMap(PanelSessions, (sessions) => sessions.revokeUser(state.userId, input.keepTokenHash))
})
