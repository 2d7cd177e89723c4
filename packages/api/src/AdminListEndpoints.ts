/**
 * The operator's lists (issue 22, "The operator's API"): merchants; a merchant's payments, links,
 * notifications and refunds; the log itself; one resource's history. Newest first, paged in
 * Stripe's convention (`limit` 1–100, default 10; `starting_after` or `ending_before`, a row's
 * `id`), answered as `{"object": "list", "data", "has_more", "url"}`. A query parameter that breaks
 * its rule is a 400 `ValidationError` naming it; parameters not listed here are ignored.
 * `Authorization: Bearer <ADMIN_TOKEN>`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Pagination from "@cobro/domain/Pagination"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Security from "./Security.js"
import * as Errors from "./Errors.js"

// ---------------------------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------------------------

/**
 * A query parameter given once, else a 400 with `message` (a repeated parameter arrives as an
 * array, which no parameter here accepts).
 */
const once = (message: string) => Schema.String.annotations({ message: () => message })

/** A text filter: any text, given once. */
const text = (name: string, description: string) =>
  once(`${name} must be given once`).annotations({ description })

/** A closed set of values, named in the 400. */
const oneOf = <const L extends ReadonlyArray<string>>(name: string, ...values: L) =>
  // `override`: one message for the parameter, not one per value it is not.
  Schema.Literal(...values).annotations({
    message: () => ({ message: `${name} must be one of ${values.join(", ")}`, override: true })
  })

const LIMIT = /^(100|[1-9][0-9]?)$/
const limitMessage = `limit must be an integer from 1 to ${Pagination.MAX_LIMIT} (no sign, no leading zeros)`

/**
 * `limit`: 1 to 100 rows, default 10.
 *
 * @category schemas
 */
export const Limit = once(limitMessage).pipe(
  Schema.pattern(LIMIT, { message: () => limitMessage }),
  Schema.compose(Schema.NumberFromString),
  Schema.annotations({
    description: `How many rows: 1 to ${Pagination.MAX_LIMIT}; default ${Pagination.DEFAULT_LIMIT}.`
  })
)

const cursor = (name: string, description: string) =>
  once(`${name} must be a row's id, given once`).pipe(
    Schema.minLength(1, { message: () => `${name} must be a row's id, not empty` }),
    Schema.annotations({ title: name, description })
  )

const INSTANT =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-][0-9]{2}:[0-9]{2})$/

/**
 * The instant an ISO 8601 date-time with a zone (`Z` or `±hh:mm`) names, if it is one: every field
 * in range (JavaScript's `Date` would read 2026-02-30 as March 2nd).
 *
 * @category parsing
 */
export const parseInstant = (value: string): Date | undefined => {
  const m = INSTANT.exec(value)
  if (m === null) return undefined
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number
  ]
  const second = m[6] === undefined ? 0 : Number(m[6])
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3))
  const daysInMonth = month >= 1 && month <= 12 ? new Date(Date.UTC(year, month, 0)).getUTCDate() : 0
  if (day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined
  let offsetMinutes = 0
  if (m[8] !== "Z") {
    const [oh, om] = m[8]!.slice(1).split(":").map(Number) as [number, number]
    if (oh > 23 || om > 59) return undefined
    offsetMinutes = (m[8]!.startsWith("-") ? -1 : 1) * (oh * 60 + om)
  }
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute, second, millis)
  return new Date(at.getTime() - offsetMinutes * 60_000)
}

const instant = (name: string, description: string) => {
  const message = () =>
    `${name} must be an ISO 8601 date-time with a zone, such as 2026-11-21T00:00:00-05:00 or 2026-11-21T05:00:00Z`
  const text = once(message()).annotations({ jsonSchema: { format: "date-time" } })
  return Schema.transformOrFail(text, Schema.DateFromSelf, {
    strict: true,
    decode: (value, _, ast) => {
      const at = parseInstant(value)
      return at === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, value, message()))
        : ParseResult.succeed(at)
    },
    encode: (date) => ParseResult.succeed(date.toISOString())
  }).annotations({ description, message })
}

const Mode = oneOf("mode", "test", "production").annotations({
  description: "`test` (sandbox data) or `production`; both when absent."
})

/** An optional parameter: absent or given (never `undefined`, so a bad value has one error, its own). */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The paging parameters of every newest-first list: `limit` and one of `starting_after` or
 * `ending_before` (a row's `id`).
 *
 * @category schemas
 */
export const pageParams = {
  limit: optional(Limit),
  starting_after: optional(
    cursor("starting_after", "The `id` of a row: the page of the rows after it (older).")
  ),
  ending_before: optional(
    cursor("ending_before", "The `id` of a row: the page of the rows before it (newer), still newest first.")
  )
}

/**
 * `GET /admin/v1/merchants`.
 *
 * @category schemas
 */
export const MerchantsParams = Schema.Struct({
  ...pageParams,
  name: optional(text("name", "Merchants whose name contains this text, in any case.")),
  status: optional(oneOf("status", "ENABLED", "DISABLED"))
})

/**
 * `GET /admin/v1/merchants/{merchant_id}/payments`.
 *
 * @category schemas
 */
export const PaymentsParams = Schema.Struct({
  ...pageParams,
  mode: optional(Mode),
  kind: optional(
    oneOf("kind", "terminal", "link", "online").annotations({
      description: "`terminal` (a checkout on a terminal, A), `link` (a payment link, B), `online` (C)."
    })
  ),
  status: optional(
    text("status", "The resource's status as docs/state-machines.md names it (APPROVED, PAID, …).")
  ),
  "created[gte]": optional(instant("created[gte]", "Created at or after this instant (ISO 8601).")),
  "created[lt]": optional(instant("created[lt]", "Created before this instant (ISO 8601).")),
  reference: optional(text("reference", "The merchant's references that start with this text."))
})

/**
 * `GET /admin/v1/merchants/{merchant_id}/links`.
 *
 * @category schemas
 */
export const LinksParams = Schema.Struct({
  ...pageParams,
  mode: optional(Mode),
  status: optional(text("status", "The link's status: ACTIVE, PROCESSING, PAID, …"))
})

/**
 * `GET /admin/v1/merchants/{merchant_id}/notifications`.
 *
 * @category schemas
 */
export const NotificationsParams = Schema.Struct({
  ...pageParams,
  mode: optional(Mode),
  delivery: optional(
    oneOf("delivery", "failed", "pending", "delivered").annotations({
      description: "`failed`: its retries are exhausted; `pending`: not delivered yet; `delivered`."
    })
  ),
  subject: optional(text("subject", "Notifications about this resource (a transaction id, …)."))
})

/**
 * `GET /admin/v1/merchants/{merchant_id}/refunds`.
 *
 * @category schemas
 */
export const RefundsParams = Schema.Struct({
  ...pageParams,
  mode: optional(Mode),
  status: optional(text("status", "The refund's status: PROCESSING, APPROVED, REJECTED, …"))
})

/** `<transaction id>-<global position>`, each a decimal integer. */
const AFTER = /^(0|[1-9][0-9]{0,18})-(0|[1-9][0-9]{0,18})$/
const MAX_BIGINT = 9_223_372_036_854_775_807n
const afterMessage =
  "after must be a position as the events list writes it (next_after, or an event's position)"

/**
 * `GET /admin/v1/events`.
 *
 * @category schemas
 */
export const EventsParams = Schema.Struct({
  stream: optional(
    text("stream", "One stream's events: a stream id (PaymentLink-LNK_…) or a resource id (LNK_…).")
  ),
  type: optional(text("type", "Events of this type (LinkCreated, …).")),
  after: optional(
    once(afterMessage).pipe(
      Schema.pattern(AFTER, { message: () => afterMessage }),
      // PostgreSQL's bigint is the bound of both numbers.
      Schema.filter((after) => after.split("-").every((n) => BigInt(n) <= MAX_BIGINT), {
        message: () => afterMessage
      }),
      Schema.annotations({
        description:
          "Resume after this position: a previous page's `next_after`, or an event's `position`. Default: the start of the log."
      })
    )
  ),
  limit: optional(Limit)
})

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

const Iso = Schema.String.annotations({ description: "ISO 8601, UTC" })
const IsoOrNull = Schema.NullOr(Iso)
const HistoryUrl = Schema.String.annotations({
  description: "The path of the resource's history: /admin/v1/streams/{stream_id}/history"
})
const ModeBody = Schema.Literal("test", "production")

/**
 * A list in Stripe's shape: `url` is the list's path, without the query.
 *
 * @category schemas
 */
export const listOf = <A, I>(row: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({
    object: Schema.Literal("list"),
    data: Schema.Array(row),
    has_more: Schema.Boolean.annotations({
      description: "More rows lie beyond this page in the direction of travel."
    }),
    url: Schema.String
  }).annotations({ identifier })

/**
 * A merchant account.
 *
 * @category schemas
 */
export const MerchantRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The merchant id (MER_…): the row's cursor" }),
  name: Schema.String,
  status: Schema.Literal("ENABLED", "DISABLED"),
  created_at: Iso,
  history_url: HistoryUrl
}).annotations({ identifier: "AdminMerchantRow" })

/**
 * A transaction of any kind.
 *
 * @category schemas
 */
export const PaymentRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The transaction id: the row's cursor" }),
  kind: Schema.Literal("terminal", "link", "online"),
  resource_id: Schema.String.annotations({
    description: "The resource that holds it: the checkout's INT_…, the link's LNK_…, the payment's TRX_…"
  }),
  merchant_id: Schema.String,
  mode: ModeBody,
  status: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  reference: Schema.NullOr(Schema.String),
  created_at: Iso,
  updated_at: Iso,
  history_url: HistoryUrl
}).annotations({ identifier: "AdminPaymentRow" })

/**
 * A payment link.
 *
 * @category schemas
 */
export const LinkRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The link id (LNK_…): the row's cursor" }),
  merchant_id: Schema.String,
  mode: ModeBody,
  status: Schema.String,
  amount_type: Schema.Literal("OPEN", "CLOSE").annotations({
    description: "CLOSE: a fixed amount; OPEN: the payer chooses it (`amount` is then 0)"
  }),
  amount: Schema.Number,
  currency: Schema.String,
  description: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String),
  created_at: Iso,
  expires_at: IsoOrNull,
  updated_at: Iso,
  history_url: HistoryUrl
}).annotations({ identifier: "AdminLinkRow" })

/**
 * A webhook notification and where its delivery stands.
 *
 * @category schemas
 */
export const NotificationRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The notification id (a UUID): the row's cursor" }),
  merchant_id: Schema.String,
  mode: ModeBody,
  subject: Schema.String,
  type: Schema.String,
  delivery: Schema.Literal("pending", "delivered", "failed"),
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  created_at: Iso,
  updated_at: Iso,
  history_url: HistoryUrl,
  attempts_url: Schema.String.annotations({
    description: "The path of its attempts: /admin/v1/notifications/{id}/attempts"
  })
}).annotations({ identifier: "AdminNotificationRow" })

/**
 * A refund.
 *
 * @category schemas
 */
export const RefundRow = Schema.Struct({
  id: Schema.String.annotations({ description: "The refund id: the row's cursor" }),
  transaction_id: Schema.String,
  merchant_id: Schema.String,
  mode: ModeBody,
  status: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  created_at: Iso,
  updated_at: Iso,
  history_url: HistoryUrl
}).annotations({ identifier: "AdminRefundRow" })

/** @category schemas */
export const MerchantList = listOf(MerchantRow, "AdminMerchantList")
/** @category schemas */
export const PaymentList = listOf(PaymentRow, "AdminPaymentList")
/** @category schemas */
export const LinkList = listOf(LinkRow, "AdminLinkList")
/** @category schemas */
export const NotificationList = listOf(NotificationRow, "AdminNotificationList")
/** @category schemas */
export const RefundList = listOf(RefundRow, "AdminRefundList")

/**
 * Who wrote an event and why, as its metadata records it (`null` when not recorded).
 *
 * @category schemas
 */
export const MetadataBody = Schema.Struct({
  actor: Schema.NullOr(Schema.String),
  causation_id: Schema.NullOr(Schema.String),
  correlation_id: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AdminEventMetadata" })

/**
 * An event of the log.
 *
 * @category schemas
 */
export const EventRow = Schema.Struct({
  position: Schema.String.annotations({
    description: "Its place in commit order: give it as `after` to resume after this event"
  }),
  event_id: Schema.String,
  stream_id: Schema.String,
  version: Schema.Int.annotations({ description: "Its version in its stream, from 1" }),
  type: Schema.String,
  schema_version: Schema.Int,
  recorded_at: Iso,
  metadata: MetadataBody,
  data: Schema.Unknown.annotations({
    description:
      "The event as stored (JSON), its sealed secrets (`passwordHash`, `secretKey`) shown as `<redacted>`"
  })
}).annotations({ identifier: "AdminEvent" })

/**
 * A page of the log, in commit order.
 *
 * @category schemas
 */
export const EventList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(EventRow),
  has_more: Schema.Boolean,
  url: Schema.String,
  next_after: Schema.String.annotations({
    description: "Give it as `after` for the next page (the same as `after` when the page is empty)"
  })
}).annotations({ identifier: "AdminEventList" })

/**
 * One step of a history: the event and the resource's state after it.
 *
 * @category schemas
 */
export const HistoryStep = Schema.Struct({
  event_id: Schema.String,
  version: Schema.Int,
  type: Schema.String,
  recorded_at: Iso,
  actor: Schema.NullOr(Schema.String),
  metadata: MetadataBody,
  data: Schema.Unknown.annotations({
    description:
      "The event as stored (JSON), its sealed secrets (`passwordHash`, `secretKey`) shown as `<redacted>`"
  }),
  state: Schema.Unknown.annotations({
    description:
      "The resource's state after the event, folded with its aggregate's own evolve (`_tag` names it)"
  })
}).annotations({ identifier: "AdminHistoryStep" })

/**
 * `GET /admin/v1/streams/{stream_id}/history`: what `cobro audit history --json` prints.
 *
 * @category schemas
 */
export const HistoryBody = Schema.Struct({
  object: Schema.Literal("history"),
  stream_id: Schema.String,
  resource: Schema.String.annotations({ description: "What the resource is: payment link, payment, …" }),
  aggregate: Schema.String.annotations({ description: "Its aggregate: PaymentLink, Payment, …" }),
  events: Schema.Array(HistoryStep)
}).annotations({ identifier: "AdminHistory" })

/**
 * The codes of the lists' own errors.
 *
 * @category constants
 */
export const Codes = {
  /** 404 (history): the id names no resource, or its stream has no event. */
  StreamNotFound: "StreamNotFound"
} as const

const MerchantPath = Schema.Struct({ merchant_id: Schema.String })
const StreamPath = Schema.Struct({ stream_id: Schema.String })

const PAGING =
  "Newest first, in the order the rows were created (the log position of the event that created each; a row is listed once every transaction that began writing before it has ended, so a walk misses no row between its first and last and a reader polling with `ending_before` receives every row). `limit` 1–100 (default 10); `starting_after` (older rows) or `ending_before` (newer rows), a row's `id`, not both; an id that is no row of the list is a 400."

/**
 * The operator's lists.
 *
 * @category groups
 */
export class AdminListGroup extends HttpApiGroup.make("adminLists")
  .add(
    HttpApiEndpoint.get("listMerchants", "/admin/v1/merchants")
      .setUrlParams(MerchantsParams)
      .addSuccess(MerchantList)
      .annotate(OpenApi.Description, `Merchant accounts, by name or status. ${PAGING}`)
  )
  .add(
    HttpApiEndpoint.get("listPayments", "/admin/v1/merchants/:merchant_id/payments")
      .setPath(MerchantPath)
      .setUrlParams(PaymentsParams)
      .addSuccess(PaymentList)
      .annotate(
        OpenApi.Description,
        `Every transaction of the merchant: terminal checkouts, link payments, online payments; each row names its kind and its resource. ${PAGING} 404 \`MerchantNotFound\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("listLinks", "/admin/v1/merchants/:merchant_id/links")
      .setPath(MerchantPath)
      .setUrlParams(LinksParams)
      .addSuccess(LinkList)
      .annotate(OpenApi.Description, `The merchant's payment links. ${PAGING} 404 \`MerchantNotFound\`.`)
  )
  .add(
    HttpApiEndpoint.get("listNotifications", "/admin/v1/merchants/:merchant_id/notifications")
      .setPath(MerchantPath)
      .setUrlParams(NotificationsParams)
      .addSuccess(NotificationList)
      .annotate(
        OpenApi.Description,
        `The merchant's webhook notifications and where each delivery stands. ${PAGING} 404 \`MerchantNotFound\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("listRefunds", "/admin/v1/merchants/:merchant_id/refunds")
      .setPath(MerchantPath)
      .setUrlParams(RefundsParams)
      .addSuccess(RefundList)
      .annotate(OpenApi.Description, `The merchant's refunds. ${PAGING} 404 \`MerchantNotFound\`.`)
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/admin/v1/events")
      .setUrlParams(EventsParams)
      .addSuccess(EventList)
      .annotate(
        OpenApi.Description,
        "The event log itself in commit order (oldest first), for tools that follow it: resume with `after` = the previous page's `next_after`; a reader that does so sees every committed event once. `limit` 1–100 (default 10)."
      )
  )
  .add(
    HttpApiEndpoint.get("streamHistory", "/admin/v1/streams/:stream_id/history")
      .setPath(StreamPath)
      .addSuccess(HistoryBody)
      .annotate(
        OpenApi.Description,
        "A resource's history, as `cobro audit history` shows it: every event with its time, actor and the state after it. `stream_id` is a stream id (PaymentLink-LNK_…) or a resource id (MER_…, LNK_…, INT_…, TRX_…, RFD_…, a notification's UUID, MER_…:test:<reference_id> for an intent). 404 `StreamNotFound`."
      )
  )
  .addError(Errors.BadRequest)
  .addError(Errors.NotFound)
  .middleware(Security.Admin)
  .annotate(OpenApi.Title, "admin: lists")
  .annotate(
    OpenApi.Description,
    "The operator's lists: merchants, a merchant's payments, links, notifications and refunds, the log, a resource's history. `Authorization: Bearer <ADMIN_TOKEN>`."
  ) {}
