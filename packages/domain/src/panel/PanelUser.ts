/**
 * A user of the merchant panel (issue 22, "Users and sign-in"): an email, the merchant whose panel
 * it opens, a role and a password hash; its sign-ins and failed sign-ins are events of its stream,
 * and the failures in a row slow the next attempt down (per-account throttling, {@link retryAfterMillis}).
 *
 * The user id is derived from the lower-cased email ({@link userIdOf}), so one email is one user
 * across the service: a second creation is refused by the stream's existence, whichever merchant asks.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { sha256 } from "../kernel/DerivedId.js"
import * as Transitions from "../kernel/Transitions.js"
import { MerchantId } from "../shared/Ids.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * What a panel user may do: `full_access` everything (the spec's "full-access account"),
 * `read_only` see everything and change nothing.
 * @category models
 */
export const Role = Schema.Literal("full_access", "read_only")
export type Role = typeof Role.Type

/**
 * A panel user's status: ACTIVE signs in; DISABLED does not, until an operator enables it again.
 * @category models
 */
export const Status = Schema.Literal("ACTIVE", "DISABLED")
export type Status = typeof Status.Type

/**
 * A panel user: `USR_` and 32 hex digits, derived from the email ({@link userIdOf}).
 * @category schemas
 */
export const UserId = Schema.String.pipe(Schema.pattern(/^USR_[A-Za-z0-9]{1,64}$/), Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** The shape of an email address Cobro accepts: one `@`, a dot in the domain, no spaces. */
const EMAIL = /^[^\s@]{1,64}@[^\s@.]+(?:\.[^\s@.]+)+$/

/**
 * An email address as the panel keeps it: trimmed and lower-cased ({@link normalizeEmail}), at most
 * 254 characters, `local@domain.tld`.
 * @category schemas
 */
export const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.filter((s) => s === normalizeEmail(s) && EMAIL.test(s), {
    message: () => "an email address, lower-cased: name@example.com"
  }),
  Schema.brand("PanelUserEmail")
)
export type Email = typeof Email.Type

/**
 * The email as the panel compares and stores it: without surrounding blanks, lower-cased (people
 * type their address with capitals; nobody has two mailboxes that differ only by case).
 * @category constructors
 */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/**
 * The user id of an email: `USR_` and the first 128 bits of SHA-256(`PanelUser:<lower-cased email>`)
 * in hex. The same address, however capitalised, is the same user.
 * @category constructors
 */
export const userIdOf = (email: string): UserId =>
  UserId.make(`USR_${hex(sha256(`PanelUser:${normalizeEmail(email)}`).slice(0, 16))}`)

/**
 * A stored password hash, in the hasher's own format (`PasswordHasher`); redacted in memory, so that
 * no log line or trace prints it.
 * @category schemas
 */
export const PasswordHash = Schema.Redacted(Schema.NonEmptyString)
export type PasswordHash = typeof PasswordHash.Type

/**
 * Where a sign-in came from: the client's address as the HTTP edge saw it (`unknown` when it had none).
 * @category schemas
 */
export const Address = Schema.NonEmptyString.pipe(Schema.maxLength(100))

// ---------------------------------------------------------------------------------------------
// Throttling
// ---------------------------------------------------------------------------------------------

/** Failed sign-ins in a row that cost nothing: the next attempt after them need not wait. */
export const FREE_FAILURES = 4

/** The wait after the first failure past {@link FREE_FAILURES}: one second, doubled by each further one. */
export const FIRST_DELAY_MILLIS = 1_000

/** The longest wait: 15 minutes, however many failures. */
export const MAX_DELAY_MILLIS = 15 * 60_000

/**
 * How long the next attempt must wait after the last of `failures` failed sign-ins in a row: nothing
 * for the first {@link FREE_FAILURES}, then 1 s, 2 s, 4 s, … up to {@link MAX_DELAY_MILLIS}.
 * @category throttling
 */
export const delayAfterMillis = (failures: number): number =>
  failures <= FREE_FAILURES
    ? 0
    : Math.min(MAX_DELAY_MILLIS, FIRST_DELAY_MILLIS * 2 ** Math.min(failures - FREE_FAILURES - 1, 30))

/**
 * What throttling reads of a user: the failed sign-ins since the last success, and when the last failed.
 * @category throttling
 */
export interface Throttle {
  readonly failures: number
  readonly lastFailureAt: Option.Option<DateTime.Utc>
}

/**
 * How many milliseconds an attempt at `now` must still wait (0: it may go ahead).
 * @category throttling
 */
export const retryAfterMillis = (throttle: Throttle, now: DateTime.Utc): number =>
  Option.match(throttle.lastFailureAt, {
    onNone: () => 0,
    onSome: (last) =>
      Math.max(
        0,
        DateTime.toEpochMillis(last) + delayAfterMillis(throttle.failures) - DateTime.toEpochMillis(now)
      )
  })

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** What a creation carries, and its {@link PanelUserCreated} records. */
const userFields = {
  userId: UserId,
  merchantId: MerchantId,
  email: Email,
  role: Role,
  passwordHash: PasswordHash
}

/**
 * An operator creates a panel user; the handler derived the id from the email and hashed the password.
 * @category commands
 */
export class CreatePanelUser extends Schema.TaggedClass<CreatePanelUser>()("CreatePanelUser", {
  ...userFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * The password was right: the user signs in (refused while throttled).
 * @category commands
 */
export class RecordSignIn extends Schema.TaggedClass<RecordSignIn>()("RecordSignIn", {
  address: Address,
  now: Schema.DateTimeUtc
}) {}

/**
 * The password was wrong: one more failure in a row (refused while throttled: such an attempt was
 * never checked, and records nothing).
 * @category commands
 */
export class RecordFailedSignIn extends Schema.TaggedClass<RecordFailedSignIn>()("RecordFailedSignIn", {
  address: Address,
  now: Schema.DateTimeUtc
}) {}

/**
 * The user's role changes; the same role again changes nothing.
 * @category commands
 */
export class ChangeRole extends Schema.TaggedClass<ChangeRole>()("ChangeRole", {
  role: Role,
  now: Schema.DateTimeUtc
}) {}

/**
 * A new password, hashed by the handler. The failures in a row are forgiven.
 * @category commands
 */
export class ChangePassword extends Schema.TaggedClass<ChangePassword>()("ChangePassword", {
  passwordHash: PasswordHash,
  now: Schema.DateTimeUtc
}) {}

/**
 * The user is disabled: it signs in no more, and its sessions stop working (its email stays taken).
 * @category commands
 */
export class DisablePanelUser extends Schema.TaggedClass<DisablePanelUser>()("DisablePanelUser", {
  now: Schema.DateTimeUtc
}) {}

/**
 * A disabled user is enabled again, with the role and password it had; an active user is unchanged.
 * @category commands
 */
export class EnablePanelUser extends Schema.TaggedClass<EnablePanelUser>()("EnablePanelUser", {
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of a panel user.
 * @category commands
 */
export const Command = Schema.Union(
  CreatePanelUser,
  RecordSignIn,
  RecordFailedSignIn,
  ChangeRole,
  ChangePassword,
  DisablePanelUser,
  EnablePanelUser
)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * A panel user was created: ACTIVE.
 * @category events
 */
export class PanelUserCreated extends Schema.TaggedClass<PanelUserCreated>()("PanelUserCreated", {
  ...userFields,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * The user signed in from `address`: the failures in a row start again from none.
 * @category events
 */
export class SignedIn extends Schema.TaggedClass<SignedIn>()("SignedIn", {
  at: Schema.DateTimeUtc,
  address: Address
}) {}

/**
 * A sign-in with a wrong password, from `address`.
 * @category events
 */
export class SignInFailed extends Schema.TaggedClass<SignInFailed>()("SignInFailed", {
  at: Schema.DateTimeUtc,
  address: Address
}) {}

/**
 * The user's role changed.
 * @category events
 */
export class RoleChanged extends Schema.TaggedClass<RoleChanged>()("RoleChanged", {
  role: Role,
  at: Schema.DateTimeUtc
}) {}

/**
 * The user's password changed; the failures in a row are forgiven.
 * @category events
 */
export class PasswordChanged extends Schema.TaggedClass<PasswordChanged>()("PasswordChanged", {
  passwordHash: PasswordHash,
  at: Schema.DateTimeUtc
}) {}

/**
 * The user was disabled: DISABLED.
 * @category events
 */
export class PanelUserDisabled extends Schema.TaggedClass<PanelUserDisabled>()("PanelUserDisabled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * A disabled user was enabled again: ACTIVE, with the role and password it had.
 * @category events
 */
export class PanelUserEnabled extends Schema.TaggedClass<PanelUserEnabled>()("PanelUserEnabled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of a panel user, as stored.
 * @category events
 */
export const Event = Schema.Union(
  PanelUserCreated,
  SignedIn,
  SignInFailed,
  RoleChanged,
  PasswordChanged,
  PanelUserDisabled,
  PanelUserEnabled
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ userId: UserId }, { status: Status })

/**
 * No panel user with that id (that email).
 * @category errors
 */
export class UserNotFound extends Refusal.NotFound<UserNotFound>()("UserNotFound") {}

/**
 * A panel user with that email exists already (of this merchant or another).
 * @category errors
 */
export class UserAlreadyExists extends Refusal.AlreadyExists<UserAlreadyExists>()("UserAlreadyExists") {}

/**
 * The user's status does not allow the command (a disabled user does not sign in).
 * @category errors
 */
export class UserNotInState extends Refusal.NotInState<UserNotInState>()("UserNotInState") {}

/**
 * An attempt while the failures in a row make the account wait: refused unchecked, recorded nowhere.
 * @category errors
 */
export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  userId: UserId,
  retryAfterMillis: Schema.Int.pipe(Schema.positive())
}) {}

/**
 * Every refusal of a panel user.
 * @category errors
 */
export type Error = UserNotFound | UserAlreadyExists | UserNotInState | SignInThrottled

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * A panel user in one of its statuses.
 * @category models
 */
export interface Existing extends Throttle {
  readonly _tag: Status
  readonly userId: UserId
  readonly merchantId: MerchantId
  readonly email: Email
  readonly role: Role
  readonly passwordHash: PasswordHash
  readonly createdAt: DateTime.Utc
  readonly lastSignInAt: Option.Option<DateTime.Utc>
}

/**
 * No user yet (`Initial`), or a user.
 * @category models
 */
export type State = Initial | Existing

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. A sign-in, right or
 * wrong, records an event and stays ACTIVE (refused while throttled); the same role again is a no-op;
 * DISABLED takes nothing but a repeated disable (a no-op) and the enabling, which leads back to
 * ACTIVE; enabling an active user is a no-op.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  Initial: { CreatePanelUser: "ACTIVE" },
  ACTIVE: {
    RecordSignIn: "ACTIVE",
    RecordFailedSignIn: "ACTIVE",
    ChangeRole: ["ACTIVE", "noop"],
    ChangePassword: "ACTIVE",
    DisablePanelUser: "DISABLED",
    EnablePanelUser: "noop"
  },
  DISABLED: { DisablePanelUser: "noop", EnablePanelUser: "ACTIVE" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

const create = (c: CreatePanelUser): Decision<Event, Error> =>
  ok(
    new PanelUserCreated({
      userId: c.userId,
      merchantId: c.merchantId,
      email: c.email,
      role: c.role,
      passwordHash: c.passwordHash,
      createdAt: c.now
    })
  )

/** A sign-in attempt is decided only once the account's wait is over. */
const unlessThrottled = (state: Existing, now: DateTime.Utc, event: () => Event): Decision<Event, Error> => {
  const wait = retryAfterMillis(state, now)
  return wait > 0
    ? Either.left(new SignInThrottled({ userId: state.userId, retryAfterMillis: Math.ceil(wait) }))
    : ok(event())
}

const decideExisting = (
  command: Exclude<Command, CreatePanelUser>,
  state: Existing
): Decision<Event, Error> =>
  Match.valueTags(command, {
    RecordSignIn: (c) => unlessThrottled(state, c.now, () => new SignedIn({ at: c.now, address: c.address })),
    RecordFailedSignIn: (c) =>
      unlessThrottled(state, c.now, () => new SignInFailed({ at: c.now, address: c.address })),
    ChangeRole: (c) => (c.role === state.role ? none : ok(new RoleChanged({ role: c.role, at: c.now }))),
    ChangePassword: (c) => ok(new PasswordChanged({ passwordHash: c.passwordHash, at: c.now })),
    DisablePanelUser: (c) => (state._tag === "DISABLED" ? none : ok(new PanelUserDisabled({ at: c.now }))),
    EnablePanelUser: (c) => (state._tag === "ACTIVE" ? none : ok(new PanelUserEnabled({ at: c.now })))
  })

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const created = (e: PanelUserCreated): Existing => ({
  _tag: "ACTIVE",
  userId: e.userId,
  merchantId: e.merchantId,
  email: e.email,
  role: e.role,
  passwordHash: e.passwordHash,
  createdAt: e.createdAt,
  lastSignInAt: Option.none(),
  failures: 0,
  lastFailureAt: Option.none()
})

const evolveExisting = (state: Existing, event: Exclude<Event, PanelUserCreated>): Existing =>
  Match.valueTags(event, {
    SignedIn: (e): Existing => ({
      ...state,
      lastSignInAt: Option.some(e.at),
      failures: 0,
      lastFailureAt: Option.none()
    }),
    SignInFailed: (e): Existing => ({
      ...state,
      failures: state.failures + 1,
      lastFailureAt: Option.some(e.at)
    }),
    RoleChanged: (e): Existing => ({ ...state, role: e.role }),
    PasswordChanged: (e): Existing => ({
      ...state,
      passwordHash: e.passwordHash,
      failures: 0,
      lastFailureAt: Option.none()
    }),
    PanelUserDisabled: (): Existing => ({ ...state, _tag: "DISABLED" }),
    PanelUserEnabled: (): Existing => ({ ...state, _tag: "ACTIVE" })
  })

/**
 * The PanelUser aggregate; its stream is `PanelUser-<userId>`.
 * @category aggregates
 */
export const PanelUser: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "PanelUser",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: UserNotFound, AlreadyExists: UserAlreadyExists, NotInState: UserNotInState },
    (state: Existing) => ({ userId: state.userId })
  ),
  create: { CreatePanelUser: create },
  decide: decideExisting,
  created: { PanelUserCreated: created },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = PanelUser
