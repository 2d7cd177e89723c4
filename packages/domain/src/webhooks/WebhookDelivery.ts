/**
 * The delivery of one webhook notification (spec D, Registration and delivery, Retries): PENDING
 * until an attempt is answered HTTP 200 (DELIVERED), the 5th retry fails (EXHAUSTED) or the
 * merchant deletes the webhook (CANCELLED). The notification id stays the same on every attempt.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Aggregate, type Decision, type Initial, none, ok } from "../kernel/Aggregate.js"
import { MerchantId, NotificationId, TransactionId } from "../shared/Ids.js"
import { SigningKey } from "../merchants/SigningKey.js"
import * as Transitions from "../kernel/Transitions.js"
import { unchecked } from "../kernel/Unchecked.js"

export type { Initial } from "../kernel/Aggregate.js"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/**
 * Delivery statuses. The spec names none; these are Cobro's, in the spec's upper case.
 * @category models
 */
export const Status = Schema.Literal("PENDING", "DELIVERED", "EXHAUSTED", "CANCELLED")
export type Status = typeof Status.Type

/**
 * The notification types (spec D, Notification types).
 * @category models
 */
export const NotificationType = Schema.Literal(
  "SALE_APPROVED",
  "SALE_REJECTED",
  "VOID_APPROVED",
  "VOID_REJECTED"
)
export type NotificationType = typeof NotificationType.Type

/**
 * The retry delays of the spec's table, each measured from the initial attempt (not from the
 * previous one): retry k is due at initial attempt + `RETRY_DELAYS[k - 1]`.
 * @category models
 */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.minutes(15),
  Duration.hours(1),
  Duration.hours(4),
  Duration.hours(8),
  Duration.hours(24)
]

/**
 * The initial attempt plus at most 5 retries.
 * @category models
 */
export const MAX_ATTEMPTS = 1 + RETRY_DELAYS.length

/**
 * When the next attempt of a round is due, given when its initial attempt was made and how many
 * attempts it has made: `None` once the 5th retry has been made. With no attempt made yet the
 * initial attempt is due at once (`firstAttemptAt` is then the time the round was scheduled).
 * @category getters
 */
export const nextDueAt = (firstAttemptAt: DateTime.Utc, attemptsMade: number): Option.Option<DateTime.Utc> =>
  attemptsMade <= 0
    ? Option.some(firstAttemptAt)
    : attemptsMade >= MAX_ATTEMPTS
      ? Option.none()
      : Option.some(DateTime.addDuration(firstAttemptAt, RETRY_DELAYS[attemptsMade - 1]!))

/**
 * When the next attempt of a round is due after a failed one made at `at`, when the endpoint asked
 * for `retryAfterMs` of quiet: the schedule's slot, or later if the endpoint asked for more, but never
 * past the round's last slot (24 h after its initial attempt). The number of attempts stays the
 * spec's; only their times move within its schedule.
 * @category getters
 */
export const retryDueAt = (
  firstAttemptAt: DateTime.Utc,
  attemptsMade: number,
  at: DateTime.Utc,
  retryAfterMs: number | undefined
): Option.Option<DateTime.Utc> => {
  const slot = nextDueAt(firstAttemptAt, attemptsMade)
  if (Option.isNone(slot) || retryAfterMs === undefined) return slot
  const asked = DateTime.add(at, { millis: retryAfterMs })
  const last = DateTime.addDuration(firstAttemptAt, RETRY_DELAYS[RETRY_DELAYS.length - 1]!)
  return Option.some(DateTime.max(slot.value, DateTime.min(asked, last)))
}

/**
 * Only HTTP 200 counts as delivered: 201, 204, redirects and errors all fail (spec D, Retries).
 * @category predicates
 */
export const isDelivered = (statusCode: number): boolean => statusCode === 200

/**
 * The longest response snippet (or failure reason) kept in the log.
 * @category models
 */
export const SNIPPET_MAX_LENGTH = 512

/**
 * Cuts `text` to `SNIPPET_MAX_LENGTH` UTF-16 units, never splitting a surrogate pair.
 * @category getters
 */
export const boundSnippet = (text: string): string => {
  if (text.length <= SNIPPET_MAX_LENGTH) return text
  const cut = text.slice(0, SNIPPET_MAX_LENGTH)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

const Snippet = Schema.String.pipe(Schema.maxLength(SNIPPET_MAX_LENGTH))

/**
 * An HTTP status code as answered: three digits.
 * @category models
 */
export const StatusCode = Schema.Int.pipe(Schema.between(100, 999))

/** A latency in milliseconds. */
const Latency = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/**
 * The 1-based number of an attempt within the delivery (it keeps counting across re-sends).
 * @category models
 */
export const AttemptNumber = Schema.Int.pipe(Schema.positive())

/**
 * What the transport reports, unbounded: the decider bounds the texts before recording them.
 * @category models
 */
export const AttemptResult = Schema.Union(
  Schema.TaggedStruct("Answered", { statusCode: StatusCode, snippet: Schema.String }),
  Schema.TaggedStruct("Failed", { reason: Schema.String })
)
export type AttemptResult = typeof AttemptResult.Type

/**
 * A result as recorded: texts at most `SNIPPET_MAX_LENGTH` long.
 * @category models
 */
export const AttemptOutcome = Schema.Union(
  Schema.TaggedStruct("Answered", { statusCode: StatusCode, snippet: Snippet }),
  Schema.TaggedStruct("Failed", { reason: Snippet })
)
export type AttemptOutcome = typeof AttemptOutcome.Type

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** The notification to deliver: what {@link ScheduleDelivery} gives and {@link DeliveryScheduled} records. */
const notificationFields = {
  notificationId: NotificationId,
  merchantId: MerchantId,
  /**
   * Absent when no webhook was registered (W15): a `DeliveryCancelled` follows the
   * `DeliveryScheduled` in the same append.
   */
  url: Schema.optional(Schema.NonEmptyString),
  type: NotificationType,
  /** The notified transaction (the envelope's `subject`). */
  subject: TransactionId,
  /** The exact JSON text sent: the signature is computed over its bytes. */
  body: Schema.NonEmptyString,
  signingKey: SigningKey,
  sandbox: Schema.Boolean
}

/**
 * A sale or void outcome is to be notified: the handler minted the notification id and built the
 * body. Without `url` (the merchant had no webhook for the mode when the outcome was recorded, W15)
 * the notification is recorded, so that A4 finds it, and born CANCELLED: nothing is sent.
 * @category commands
 */
export class ScheduleDelivery extends Schema.TaggedClass<ScheduleDelivery>()("ScheduleDelivery", {
  ...notificationFields,
  now: Schema.DateTimeUtc
}) {}

/**
 * The dispatcher reports one attempt; `now` is when the POST was sent. `retryAfterMs`: the endpoint
 * asked to be left alone that long (a 429 or 503 with `Retry-After`), see {@link retryDueAt}.
 * @category commands
 */
export class RecordAttempt extends Schema.TaggedClass<RecordAttempt>()("RecordAttempt", {
  attempt: AttemptNumber,
  result: AttemptResult,
  latencyMs: Latency,
  now: Schema.DateTimeUtc,
  retryAfterMs: Schema.optional(Latency)
}) {}

/**
 * An administrator sends a DELIVERED or EXHAUSTED notification again, to the endpoint registered now.
 * @category commands
 */
export class ResendDelivery extends Schema.TaggedClass<ResendDelivery>()("ResendDelivery", {
  url: Schema.NonEmptyString,
  now: Schema.DateTimeUtc
}) {}

/**
 * The merchant deleted the webhook: delivery stops.
 * @category commands
 */
export class CancelDelivery extends Schema.TaggedClass<CancelDelivery>()("CancelDelivery", {
  now: Schema.DateTimeUtc
}) {}

/**
 * Every command of the webhook delivery.
 * @category commands
 */
export const Command = Schema.Union(ScheduleDelivery, RecordAttempt, ResendDelivery, CancelDelivery)
export type Command = typeof Command.Type

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * A notification was scheduled for delivery (spec D): PENDING, its initial attempt due at once.
 * @category events
 */
export class DeliveryScheduled extends Schema.TaggedClass<DeliveryScheduled>()("DeliveryScheduled", {
  ...notificationFields,
  /** The initial attempt is due at once. */
  dueAt: Schema.DateTimeUtc,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * An attempt answered HTTP 200.
 * @category events
 */
export class AttemptSucceeded extends Schema.TaggedClass<AttemptSucceeded>()("AttemptSucceeded", {
  attempt: AttemptNumber,
  at: Schema.DateTimeUtc,
  statusCode: Schema.Literal(200),
  snippet: Snippet,
  latencyMs: Latency
}) {}

/**
 * An attempt failed; `nextDueAt` is the next retry, absent after the last one (or once cancelled).
 * @category events
 */
export class AttemptFailed extends Schema.TaggedClass<AttemptFailed>()("AttemptFailed", {
  attempt: AttemptNumber,
  at: Schema.DateTimeUtc,
  outcome: AttemptOutcome,
  latencyMs: Latency,
  nextDueAt: Schema.OptionFromUndefinedOr(Schema.DateTimeUtc)
}) {}

/**
 * The 5th retry failed: no more automatic attempts.
 * @category events
 */
export class DeliveryExhausted extends Schema.TaggedClass<DeliveryExhausted>()("DeliveryExhausted", {
  at: Schema.DateTimeUtc
}) {}

/**
 * A re-send starts a new round of attempts, due at once, with the same notification id.
 * @category events
 */
export class ResendRequested extends Schema.TaggedClass<ResendRequested>()("ResendRequested", {
  url: Schema.NonEmptyString,
  at: Schema.DateTimeUtc
}) {}

/**
 * Delivery stopped: the merchant deleted the webhook, or had none when the notification arose (W15): CANCELLED.
 * @category events
 */
export class DeliveryCancelled extends Schema.TaggedClass<DeliveryCancelled>()("DeliveryCancelled", {
  at: Schema.DateTimeUtc
}) {}

/**
 * Every event of the webhook delivery, as stored.
 * @category events
 */
export const Event = Schema.Union(
  DeliveryScheduled,
  AttemptSucceeded,
  AttemptFailed,
  DeliveryExhausted,
  ResendRequested,
  DeliveryCancelled
)
export type Event = typeof Event.Type

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

const Refusal = Aggregate.refusalErrors({ notificationId: NotificationId }, { status: Status })

/**
 * No delivery with that notification id.
 * @category errors
 */
export class DeliveryNotFound extends Refusal.NotFound<DeliveryNotFound>()("DeliveryNotFound") {}

/**
 * A delivery with that notification id exists already.
 * @category errors
 */
export class DeliveryAlreadyExists extends Refusal.AlreadyExists<DeliveryAlreadyExists>()(
  "DeliveryAlreadyExists"
) {}

/**
 * The delivery is not in a state that accepts the command (re-sending a PENDING one, a new attempt after DELIVERED).
 * @category errors
 */
export class DeliveryNotInState extends Refusal.NotInState<DeliveryNotInState>()("DeliveryNotInState") {}

/**
 * The attempt reported is neither the next one nor a recorded one.
 * @category errors
 */
export class UnexpectedAttempt extends Schema.TaggedError<UnexpectedAttempt>()("UnexpectedAttempt", {
  notificationId: NotificationId,
  attempt: AttemptNumber,
  expected: AttemptNumber
}) {}

/**
 * An attempt already recorded is reported again with a different result.
 * @category errors
 */
export class ConflictingAttempt extends Schema.TaggedError<ConflictingAttempt>()("ConflictingAttempt", {
  notificationId: NotificationId,
  attempt: AttemptNumber
}) {}

/**
 * Every refusal of the webhook delivery.
 * @category errors
 */
export type Error =
  DeliveryNotFound | DeliveryAlreadyExists | DeliveryNotInState | UnexpectedAttempt | ConflictingAttempt

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * What a notification is, fixed when it is scheduled.
 * @category models
 */
export interface Notification {
  readonly notificationId: NotificationId
  readonly merchantId: MerchantId
  readonly type: NotificationType
  readonly subject: TransactionId
  readonly body: string
  readonly signingKey: SigningKey
  readonly sandbox: boolean
  readonly createdAt: DateTime.Utc
}

/**
 * A delivery, with every attempt made and the current round of the retry schedule.
 * @category models
 */
export interface Existing {
  readonly _tag: Status
  readonly notification: Notification
  /**
   * Where the next attempt goes: the registered URL, or the one given by the last re-send; empty
   * when no webhook was registered when the notification arose (it was born CANCELLED, W15).
   */
  readonly url: string
  /** Every attempt, in order: `attempts[n - 1]` is attempt `n`. */
  readonly attempts: ReadonlyArray<AttemptSucceeded | AttemptFailed>
  /** The initial attempt of the current round (the schedule counts from it). */
  readonly roundStartedAt: Option.Option<DateTime.Utc>
  /** Attempts made in the current round (at most `MAX_ATTEMPTS`). */
  readonly roundAttempts: number
  /** When the next attempt is due; `None` unless PENDING. */
  readonly dueAt: Option.Option<DateTime.Utc>
  readonly cancelledAt: Option.Option<DateTime.Utc>
  readonly updatedAt: DateTime.Utc
}

/**
 * No delivery yet (`Initial`), or a delivery.
 * @category models
 */
export type State = Initial | Existing

/**
 * Whether an attempt should be made at `now`.
 * @category predicates
 */
export const isDue = (state: State, now: DateTime.DateTime): boolean =>
  state._tag === "PENDING" && Option.exists(state.dueAt, (due) => DateTime.lessThanOrEqualTo(due, now))

// ---------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------

/**
 * State × command → where it leads, or `"noop"`: accepted, nothing recorded. A failed attempt is
 * recorded and keeps the delivery PENDING until the last retry; a report already recorded, re-delivered,
 * records nothing. DELIVERED and EXHAUSTED are final for the dispatcher (a report there is only a
 * duplicate) but an administrator's re-send opens a new round. CANCELLED records an attempt that was
 * in flight when the webhook was deleted, and stays CANCELLED.
 * @category models
 */
export const transitions = Transitions.make<State["_tag"], Command["_tag"]>({
  // CANCELLED at once when the merchant had no webhook for the mode (W15): recorded, never sent.
  Initial: { ScheduleDelivery: ["PENDING", "CANCELLED"] },
  PENDING: { RecordAttempt: ["PENDING", "DELIVERED", "EXHAUSTED", "noop"], CancelDelivery: "CANCELLED" },
  DELIVERED: { RecordAttempt: "noop", ResendDelivery: "PENDING", CancelDelivery: "noop" },
  EXHAUSTED: { RecordAttempt: "noop", ResendDelivery: "PENDING", CancelDelivery: "noop" },
  CANCELLED: { RecordAttempt: ["CANCELLED", "noop"], CancelDelivery: "noop" }
})

// ---------------------------------------------------------------------------------------------
// Decide
// ---------------------------------------------------------------------------------------------

/** Decides a command the table lets act on an existing delivery. */
const decideExisting = (
  command: Exclude<Command, ScheduleDelivery>,
  state: Existing
): Decision<Event, Error> =>
  Match.valueTags(command, {
    RecordAttempt: (c) => recordAttempt(c, state),
    ResendDelivery: (c) => ok(new ResendRequested({ url: c.url, at: c.now }, unchecked)),
    CancelDelivery: (c) =>
      // Nothing is pending on a DELIVERED or EXHAUSTED delivery: its outcome stays as it is.
      state._tag === "PENDING" ? ok(new DeliveryCancelled({ at: c.now }, unchecked)) : none
  })

// A decision's events hold the command's values, checked when it was built; the append checks them again.
const schedule = (c: ScheduleDelivery): Decision<Event, Error> => {
  const scheduled = new DeliveryScheduled(
    {
      notificationId: c.notificationId,
      merchantId: c.merchantId,
      ...(c.url === undefined ? {} : { url: c.url }),
      type: c.type,
      subject: c.subject,
      body: c.body,
      signingKey: c.signingKey,
      sandbox: c.sandbox,
      dueAt: c.now,
      createdAt: c.now
    },
    unchecked
  )
  // No webhook to send to: the notification is kept (A4 serves it) and nothing is ever attempted.
  return c.url === undefined ? ok(scheduled, new DeliveryCancelled({ at: c.now }, unchecked)) : ok(scheduled)
}

const bound = (result: AttemptResult): AttemptOutcome =>
  result._tag === "Answered"
    ? { _tag: "Answered", statusCode: result.statusCode, snippet: boundSnippet(result.snippet) }
    : { _tag: "Failed", reason: boundSnippet(result.reason) }

const sameAttempt = (recorded: AttemptSucceeded | AttemptFailed, c: RecordAttempt): boolean => {
  const outcome = bound(c.result)
  const recordedOutcome: AttemptOutcome =
    recorded._tag === "AttemptSucceeded"
      ? { _tag: "Answered", statusCode: 200, snippet: recorded.snippet }
      : recorded.outcome
  const sameOutcome =
    outcome._tag === "Answered" && recordedOutcome._tag === "Answered"
      ? outcome.statusCode === recordedOutcome.statusCode && outcome.snippet === recordedOutcome.snippet
      : outcome._tag === "Failed" &&
        recordedOutcome._tag === "Failed" &&
        outcome.reason === recordedOutcome.reason
  return sameOutcome && DateTime.Equivalence(recorded.at, c.now) && recorded.latencyMs === c.latencyMs
}

// An attempt's events are built from the command's checked values (the texts bounded here):
// `unchecked`, about 50 µs an event saved (`npm run bench -- webhooks`).

const recordAttempt = (c: RecordAttempt, state: Existing): Decision<Event, Error> => {
  const notificationId = state.notification.notificationId
  const expected = state.attempts.length + 1
  // A report already recorded is a re-delivered report: nothing to do if it says the same thing.
  if (c.attempt < expected) {
    return sameAttempt(state.attempts[c.attempt - 1]!, c)
      ? none
      : Either.left(new ConflictingAttempt({ notificationId, attempt: c.attempt }))
  }
  if (c.attempt > expected) {
    return Either.left(new UnexpectedAttempt({ notificationId, attempt: c.attempt, expected }))
  }
  // A new attempt: only a PENDING delivery makes one, or a cancelled one whose POST was in flight.
  const inFlightWhenCancelled = Option.exists(state.cancelledAt, (cancelled) =>
    DateTime.lessThanOrEqualTo(c.now, cancelled)
  )
  if (state._tag !== "PENDING" && !(state._tag === "CANCELLED" && inFlightWhenCancelled)) {
    return Either.left(new DeliveryNotInState({ notificationId, status: state._tag, command: c._tag }))
  }
  const outcome = bound(c.result)
  if (outcome._tag === "Answered" && isDelivered(outcome.statusCode)) {
    return ok(
      new AttemptSucceeded(
        {
          attempt: c.attempt,
          at: c.now,
          statusCode: 200,
          snippet: outcome.snippet,
          latencyMs: c.latencyMs
        },
        unchecked
      )
    )
  }
  if (state._tag === "CANCELLED") {
    return ok(
      new AttemptFailed(
        {
          attempt: c.attempt,
          at: c.now,
          outcome,
          latencyMs: c.latencyMs,
          nextDueAt: Option.none()
        },
        unchecked
      )
    )
  }
  const made = state.roundAttempts + 1
  const firstAttemptAt = Option.getOrElse(state.roundStartedAt, () => c.now)
  const next = retryDueAt(firstAttemptAt, made, c.now, c.retryAfterMs)
  const failed = new AttemptFailed(
    {
      attempt: c.attempt,
      at: c.now,
      outcome,
      latencyMs: c.latencyMs,
      nextDueAt: next
    },
    unchecked
  )
  return Option.isSome(next) ? ok(failed) : ok(failed, new DeliveryExhausted({ at: c.now }, unchecked))
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const scheduled = (event: DeliveryScheduled): Existing => ({
  _tag: "PENDING",
  notification: {
    notificationId: event.notificationId,
    merchantId: event.merchantId,
    type: event.type,
    subject: event.subject,
    body: event.body,
    signingKey: event.signingKey,
    sandbox: event.sandbox,
    createdAt: event.createdAt
  },
  url: event.url ?? "",
  attempts: [],
  roundStartedAt: Option.none(),
  roundAttempts: 0,
  dueAt: Option.some(event.dueAt),
  cancelledAt: Option.none(),
  updatedAt: event.createdAt
})

const evolveExisting = (state: Existing, event: Exclude<Event, DeliveryScheduled>): Existing =>
  Match.valueTags(event, {
    AttemptSucceeded: (e): Existing => ({
      ...attempted(state, e),
      // An attempt that was in flight when the webhook was deleted is recorded; it does not reopen.
      _tag: state._tag === "CANCELLED" ? "CANCELLED" : "DELIVERED",
      dueAt: Option.none()
    }),
    AttemptFailed: (e): Existing => ({ ...attempted(state, e), dueAt: e.nextDueAt }),
    DeliveryExhausted: (e): Existing => ({
      ...state,
      _tag: "EXHAUSTED",
      dueAt: Option.none(),
      updatedAt: e.at
    }),
    ResendRequested: (e): Existing => ({
      ...state,
      _tag: "PENDING",
      url: e.url,
      roundStartedAt: Option.none(),
      roundAttempts: 0,
      dueAt: Option.some(e.at),
      updatedAt: e.at
    }),
    DeliveryCancelled: (e): Existing => ({
      ...state,
      _tag: "CANCELLED",
      dueAt: Option.none(),
      cancelledAt: Option.some(e.at),
      updatedAt: e.at
    })
  })

const attempted = (state: Existing, e: AttemptSucceeded | AttemptFailed): Existing => ({
  ...state,
  attempts: [...state.attempts, e],
  roundStartedAt: Option.orElse(state.roundStartedAt, () => Option.some(e.at)),
  roundAttempts: state.roundAttempts + 1,
  updatedAt: e.at
})

/**
 * The WebhookDelivery aggregate: one stream per notification id.
 * @category aggregates
 */
export const WebhookDelivery: Aggregate<Command, Event, State, Error> = Aggregate.make({
  name: "WebhookDelivery",
  Event,
  transitions,
  refuse: Aggregate.refusals(
    { NotFound: DeliveryNotFound, AlreadyExists: DeliveryAlreadyExists, NotInState: DeliveryNotInState },
    (state) => ({ notificationId: state.notification.notificationId })
  ),
  create: { ScheduleDelivery: schedule },
  decide: decideExisting,
  created: { DeliveryScheduled: scheduled },
  evolve: evolveExisting
})

/**
 * The aggregate's decider, as the module's own functions: `decide`, `evolve` and the state before creation.
 * @category aggregates
 */
export const { decide, evolve, initialState } = WebhookDelivery
