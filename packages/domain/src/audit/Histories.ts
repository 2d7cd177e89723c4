/**
 * The auditor's catalog of aggregates (brief, "an auditor … rebuild any resource's history"): which
 * aggregate a stream belongs to, which stream a resource id names, and a stream's history replayed
 * with the aggregate's own `evolve`, each event with the state after it. Pure: the CLI reads the log
 * and hands the recorded events here.
 */
import * as Chunk from "effect/Chunk"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { Aggregate } from "../kernel/Aggregate.js"
import { streamId } from "../kernel/Aggregate.js"
import type * as EventStore from "../kernel/EventStore.js"
import { Merchant } from "../merchants/Merchant.js"
import { Payment } from "../online/Payment.js"
import { PaymentIntent } from "../online/PaymentIntent.js"
import { PaymentLink } from "../links/PaymentLink.js"
import { PanelUser } from "../panel/PanelUser.js"
import { Refund } from "../online/Refund.js"
import { TerminalCheckout } from "../terminal/TerminalCheckout.js"
import { WebhookDelivery } from "../webhooks/WebhookDelivery.js"

/** Any aggregate, as the catalog holds it. */
export type AnyAggregate = Aggregate<any, any, any, any>

/** One kind of resource: its aggregate and how a person names one. */
export interface Entry {
  readonly aggregate: AnyAggregate
  /** What the resource is called: "payment link". */
  readonly resource: string
  /** Whether a bare resource id (without the `Aggregate-` prefix) names a stream of this aggregate. */
  readonly matches: (id: string) => boolean
}

/** Builds an {@link Entry}. */
export const entry = (
  aggregate: AnyAggregate,
  resource: string,
  matches: (id: string) => boolean
): Entry => ({
  aggregate,
  resource,
  matches
})

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** The shape of the ids Cobro mints (`Ids.ts`): a prefix and 1 to 64 letters or digits. */
const prefixed = (prefix: string) => {
  const pattern = new RegExp(`^${prefix}[A-Za-z0-9]{1,64}$`)
  return (id: string) => pattern.test(id)
}

/**
 * The domain's aggregates and the ids that name them: `MER_…` a merchant, `LNK_…` a payment link,
 * `INT_…` a terminal checkout, `TRX_…` a payment, `RFD_…` a refund, a UUID a webhook notification,
 * `MER_…:test:<reference_id>` (or `:live:`) a payment intent (`PaymentIntent.streamKey`), and `USR_…` a
 * user of the merchant panel.
 */
export const domainEntries: ReadonlyArray<Entry> = [
  entry(Merchant, "merchant", prefixed("MER_")),
  entry(PaymentLink, "payment link", prefixed("LNK_")),
  entry(TerminalCheckout, "terminal checkout", prefixed("INT_")),
  entry(Payment, "payment", prefixed("TRX_")),
  entry(Refund, "refund", prefixed("RFD_")),
  entry(WebhookDelivery, "notification", (id) => uuid.test(id)),
  entry(PaymentIntent, "payment intent", (id) => /^MER_[A-Za-z0-9]+:(test|live):./.test(id)),
  entry(PanelUser, "panel user", prefixed("USR_"))
]

/** A catalog: the entries an auditor's tool knows, the domain's and any adapter's (a simulator's). */
export interface Catalog {
  readonly entries: ReadonlyArray<Entry>
}

/** A catalog of `entries` (defaults to the domain's). */
export const make = (entries: ReadonlyArray<Entry> = domainEntries): Catalog => ({ entries })

/** The entry whose streams `streamId` belongs to (`PaymentLink-LNK_1` → PaymentLink), if any. */
export const entryOfStream = (catalog: Catalog, id: string): Option.Option<Entry> =>
  Option.fromNullable(catalog.entries.find((e) => id.startsWith(streamId(e.aggregate, ""))))

/** A resource named by a person, resolved to its stream. */
export interface Resolved {
  readonly entry: Entry
  readonly streamId: string
}

/**
 * The stream an id names: a full stream id (`PaymentLink-LNK_1`) as it is, else a resource id by
 * its shape (`LNK_1`). None when no aggregate of the catalog recognises it.
 */
export const resolve = (catalog: Catalog, id: string): Option.Option<Resolved> => {
  const trimmed = id.trim()
  const byStream = entryOfStream(catalog, trimmed)
  if (Option.isSome(byStream) && trimmed.length > streamId(byStream.value.aggregate, "").length) {
    return Option.some({ entry: byStream.value, streamId: trimmed })
  }
  const byId = catalog.entries.find((e) => e.matches(trimmed))
  return byId === undefined
    ? Option.none()
    : Option.some({
        entry: byId,
        // Notification ids are stored lower-case (the store lower-cases UUIDs).
        streamId: streamId(
          byId.aggregate,
          byId.aggregate === WebhookDelivery ? trimmed.toLowerCase() : trimmed
        )
      })
}

/** One step of a history: the recorded event, decoded, and the aggregate's state after it. */
export interface Step {
  readonly recorded: EventStore.RecordedEvent
  readonly event: { readonly _tag: string }
  readonly state: { readonly _tag: string }
}

/**
 * A stored event that this build cannot decode with its aggregate's schema.
 *
 * @category errors
 */
export class UndecodableEvent extends Schema.TaggedError<UndecodableEvent>()("UndecodableEvent", {
  streamId: Schema.String,
  streamVersion: Schema.Number,
  type: Schema.String,
  message: Schema.String
}) {}

/**
 * Replays a stream's events (in version order) through the aggregate's own `evolve`, from its
 * initial state: each event with the state after it. Fails on the first event it cannot decode.
 */
export const replay = (
  aggregate: AnyAggregate,
  recorded: ReadonlyArray<EventStore.RecordedEvent>
): Either.Either<ReadonlyArray<Step>, UndecodableEvent> => {
  const decode = Schema.decodeUnknownEither(aggregate.Event)
  const steps: Array<Step> = []
  let state = aggregate.initialState as { readonly _tag: string }
  for (const r of recorded) {
    const decoded = decode(r.data)
    if (Either.isLeft(decoded)) {
      return Either.left(
        new UndecodableEvent({
          streamId: r.streamId,
          streamVersion: r.streamVersion,
          type: r.type,
          message: ParseResult.TreeFormatter.formatErrorSync(decoded.left)
        })
      )
    }
    state = aggregate.evolve(state, decoded.right)
    steps.push({ recorded: r, event: decoded.right, state })
  }
  return Either.right(steps)
}

/** The aggregate's state after the given events (none: its initial state). */
export const stateAfter = (
  aggregate: AnyAggregate,
  recorded: ReadonlyArray<EventStore.RecordedEvent>
): Either.Either<{ readonly _tag: string }, UndecodableEvent> =>
  Either.map(replay(aggregate, recorded), (steps) =>
    steps.length === 0
      ? (aggregate.initialState as { readonly _tag: string })
      : steps[steps.length - 1]!.state
  )

/** What a reader is shown in place of a secret. */
export const REDACTED = "<redacted>"

/**
 * The members of event data and states that hold sealed secrets: a panel user's password hash
 * (`PanelUserCreated`, `PasswordChanged`) and a key pair's sealed secret key (`Merchant` key events).
 * Sealed, but not for reading: a copy of a hash can be attacked offline, and neither helps an audit.
 */
export const SECRET_MEMBERS: ReadonlySet<string> = new Set(["passwordHash", "secretKey"])

/**
 * Event data or a state as a person or a tool is shown it (the admin API's events and histories,
 * `cobro audit`): every {@link SECRET_MEMBERS} member, at any depth, as {@link REDACTED}; the rest as
 * it is. The log itself, which the hash chain covers, is never changed: only what is shown.
 */
export const redact = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(redact)
  if (typeof value !== "object" || value === null) return value
  // `fromEntries` defines each member as its own, `__proto__` included (JSON may hold that name).
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      SECRET_MEMBERS.has(key) && member !== null && member !== undefined ? REDACTED : redact(member)
    ])
  )
}

/**
 * A state or event as plain JSON, for people and tools: `Option` as its value or `null`,
 * `DateTime` and `Date` as ISO-8601 text, bigints as decimal text, `Chunk`/`HashSet` as arrays,
 * `HashMap` as an object, class instances as their fields, a `Redacted` as {@link REDACTED}. Secrets
 * are not taken out here: {@link redact} does that, for data and states alike.
 */
export const toJson = (value: unknown): unknown => {
  switch (typeof value) {
    case "undefined":
      return null
    case "string":
    case "boolean":
      return value
    case "number":
      return Number.isFinite(value) ? value : String(value)
    case "bigint":
      return value.toString()
    case "object": {
      if (value === null) return null
      if (DateTime.isDateTime(value)) return DateTime.formatIso(DateTime.toUtc(value))
      if (value instanceof Date) return value.toISOString()
      if (Redacted.isRedacted(value)) return REDACTED
      if (Option.isOption(value)) return Option.isSome(value) ? toJson(value.value) : null
      if (Either.isEither(value)) {
        return Either.isRight(value) ? { right: toJson(value.right) } : { left: toJson(value.left) }
      }
      if (Chunk.isChunk(value)) return Chunk.toReadonlyArray(value).map(toJson)
      if (HashSet.isHashSet(value)) return Array.from(value, toJson)
      if (HashMap.isHashMap(value)) {
        return Object.fromEntries(Array.from(value, ([k, v]) => [String(k), toJson(v)]))
      }
      if (Array.isArray(value)) return value.map(toJson)
      // Own members only, `__proto__` included, as `redact` keeps them.
      return Object.fromEntries(
        Object.entries(value)
          .filter(([, member]) => typeof member !== "function" && typeof member !== "symbol")
          .map(([key, member]) => [key, toJson(member)])
      )
    }
    default:
      return null
  }
}
