/**
 * Which logged events raise a webhook notification and what it says (spec D, Notification types,
 * Envelope fields, `data` fields, Signature's key priority, W10): the exact body, its signing key and
 * the merchant's URL, all derived from the event, so that a replay schedules nothing twice.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { streamId } from "../kernel/Aggregate.js"
import * as Bogota from "../shared/Bogota.js"
import * as CommandHandler from "../kernel/CommandHandler.js"
import { type Decider, fold } from "../kernel/Decider.js"
import * as DerivedId from "../kernel/DerivedId.js"
import * as EventStore from "../kernel/EventStore.js"
import * as ExactJson from "../shared/ExactJson.js"
import { NotificationId } from "../shared/Ids.js"
import type { MerchantId, TransactionId } from "../shared/Ids.js"
import * as Merchant from "../merchants/Merchant.js"
import * as Money from "../shared/Money.js"
import * as Nanos from "../shared/Nanos.js"
import * as Notification from "./NotificationApi.js"
import * as Outbox from "../kernel/Outbox.js"
import * as Payment from "../online/Payment.js"
import * as PaymentLink from "../links/PaymentLink.js"
import * as SigningKey from "../merchants/SigningKey.js"
import * as TerminalCheckout from "../terminal/TerminalCheckout.js"
import * as WebhookDelivery from "./WebhookDelivery.js"

// ---------------------------------------------------------------------------------------------
// Constants of the envelope
// ---------------------------------------------------------------------------------------------

/**
 * The CloudEvents specification version the envelope follows.
 *
 * @category constants
 */
export const SPEC_VERSION = "1.0"

/**
 * The body's format.
 *
 * @category constants
 */
export const DATA_CONTENT_TYPE = "application/json"

/**
 * `source`: the resource that raised the notification, per origin (the spec's sample is `/payments`).
 *
 * @category constants
 */
export const SOURCES = {
  terminal: "/payments",
  link: "/online/link/v1",
  online: "/v1/payment"
} as const

/**
 * The events that raise a notification, per aggregate (the others raise none).
 *
 * @category constants
 */
export const RAISING_EVENTS: { readonly [aggregate: string]: ReadonlyArray<string> } = {
  [TerminalCheckout.TerminalCheckout.name]: ["SaleApproved", "SaleRejected", "SaleVoided", "VoidRejected"],
  [PaymentLink.PaymentLink.name]: ["LinkPaid", "LinkPaymentFailed", "LinkRejected"],
  [Payment.Payment.name]: ["PaymentApproved", "PaymentRejected", "PaymentVoided"]
}

/**
 * The aggregate a stream belongs to: its id's prefix before the first `-` (`PaymentLink` for
 * `PaymentLink-LNK_1`), `undefined` for an id without one.
 */
export const aggregateOf = (stream: { readonly streamId: string }): string | undefined => {
  const dash = stream.streamId.indexOf("-")
  return dash < 0 ? undefined : stream.streamId.slice(0, dash)
}

/** Whether a logged event may raise a notification: a cheap test on its stream and type, before decoding. */
export const mayRaise = (event: { readonly streamId: string; readonly type: string }): boolean => {
  const aggregate = aggregateOf(event)
  return aggregate !== undefined && (RAISING_EVENTS[aggregate]?.includes(event.type) ?? false)
}

/** The notification id of the notification an event raises: derived, so a replay finds the same one. */
export const notificationIdOf = (sourceEventId: string): NotificationId =>
  NotificationId.make(DerivedId.uuid("cobro:notification", sourceEventId.toLowerCase()))

/** The event id of the `DeliveryScheduled` a source event leads to (derived like the notification id). */
export const scheduledEventIdOf = (sourceEventId: string): string =>
  DerivedId.uuid("cobro:delivery-scheduled", sourceEventId.toLowerCase())

/** The WebhookDelivery stream of a notification. */
export const deliveryStreamOf = (notificationId: string): string =>
  streamId(WebhookDelivery.WebhookDelivery, notificationId)

// ---------------------------------------------------------------------------------------------
// What a notification says (pure)
// ---------------------------------------------------------------------------------------------

/**
 * A notification before it has an id: what happened, to whom, and the `data` that describes it.
 *
 * @category models
 */
export interface Notice {
  readonly type: Notification.NotificationType
  readonly subject: TransactionId
  readonly merchantId: MerchantId
  readonly sandbox: boolean
  /** How the payment was made, for the signing key's priority rules. */
  readonly channel: SigningKey.PaymentChannel
  readonly source: string
  /** The instant of the state change: the envelope's `time`. */
  readonly at: DateTime.Utc
  readonly data: Notification.PaymentData
  readonly seller: Option.Option<Notification.Seller>
}

const isOtherMethod = Schema.is(Notification.OtherPaymentMethod)

/**
 * `data.payment_method` of a payment without card-present data: the method itself when the
 * notification schema names it, `CREDIT_CARD` for any card method (online cards, a card sale refused
 * before a card was read), `None` for a method the schema cannot carry.
 */
export const otherMethodOf = (method: string): Option.Option<Notification.OtherPaymentMethod> => {
  const upper = method.toUpperCase()
  if (isOtherMethod(upper)) return Option.some(upper)
  return Payment.isCardMethod(upper) || upper === "POS" || upper === "" || upper === "PAY_BY_LINK"
    ? Option.some("CREDIT_CARD")
    : Option.none()
}

/**
 * `data.payment_method` of a terminal sale without card data: as {@link otherMethodOf}, but a card
 * sale refused before a card was read is the terminal's `CARD`, not the online API's `CREDIT_CARD`
 * (W14).
 */
const terminalMethodOf = (method: string): Option.Option<Notification.OtherPaymentMethod> =>
  Option.map(otherMethodOf(method), (other) => (other === "CREDIT_CARD" ? "CARD" : other))

const cardOf = (card: TerminalCheckout.Card): Notification.CardDetails => ({
  capture_mode: card.captureMode,
  brand: card.brand,
  cardholder_name: card.cardholderName,
  terminal_id: card.terminalId,
  masked_pan: card.maskedPan,
  installments: card.installments,
  card_type: card.cardType
})

/**
 * The webhook type (D) an event is notified as, or none for events merchants are not notified of.
 * A terminal checkout's events say what happened; which of them merchants hear of is decided here.
 */
export const notificationTypeOf = (
  event: TerminalCheckout.Event
): Option.Option<Notification.NotificationType> =>
  Match.value(event).pipe(
    Match.tagsExhaustive({
      SaleApproved: () => Option.some<Notification.NotificationType>("SALE_APPROVED"),
      SaleRejected: () => Option.some<Notification.NotificationType>("SALE_REJECTED"),
      SaleVoided: () => Option.some<Notification.NotificationType>("VOID_APPROVED"),
      VoidRejected: () => Option.some<Notification.NotificationType>("VOID_REJECTED"),
      CheckoutCreated: () => Option.none(),
      PushAttempted: () => Option.none(),
      CheckoutSent: () => Option.none(),
      CheckoutHeld: () => Option.none(),
      CheckoutReleased: () => Option.none(),
      DeliveryFailed: () => Option.none(),
      CheckoutCancelled: () => Option.none()
    })
  )

/**
 * The notice of a terminal checkout event (A3 → D): `state` is the checkout after the event.
 * `integration` is API_INTEGRATIONS and `metadata.reference` the checkout's `reference` (spec D,
 * Emitters); the seller is the `user_email` of A3.
 */
export const terminalNotice = (
  state: TerminalCheckout.State,
  event: TerminalCheckout.Event
): Option.Option<Notice> => {
  if (state._tag === "Initial") return Option.none()
  return Option.flatMap(notificationTypeOf(event), (type) => {
    const checkout = state.checkout
    const approval = Option.getOrUndefined(state.approval)
    const sale = approval?.sale
    const at = "at" in event ? event.at : checkout.createdAt
    const payerEmail =
      sale !== undefined && Option.isSome(sale.payerEmail)
        ? sale.payerEmail.value
        : Option.getOrElse(
            Option.flatMap(checkout.payer, (p) => p.email),
            () => ""
          )
    const common = {
      payment_id: checkout.transactionId,
      merchant_id: checkout.merchantId,
      created_at: Bogota.formatIso(checkout.createdAt),
      amount: {
        currency: checkout.amount.currency,
        total: checkout.amount.total,
        taxes: checkout.amount.taxes,
        tip: checkout.amount.tip
      },
      user_id: checkout.userEmail,
      metadata: { reference: checkout.reference },
      service_code: sale?.serviceCode ?? "",
      payer_email: payerEmail,
      integration: "API_INTEGRATIONS" as const
    }
    let data: Option.Option<Notification.PaymentData>
    if (event._tag === "SaleRejected") {
      data = Option.match(event.card, {
        onSome: (card) =>
          Option.some<Notification.PaymentData>({
            ...common,
            payment_method: "CARD",
            card: cardOf(card),
            approval_number: ""
          }),
        onNone: () =>
          Option.map(
            terminalMethodOf(checkout.paymentMethod),
            (payment_method): Notification.PaymentData => ({
              ...common,
              payment_method
            })
          )
      })
    } else if (sale === undefined) {
      data = Option.none()
    } else if (Option.isSome(sale.card) && Schema.is(Notification.CardPaymentMethod)(sale.paymentMethod)) {
      data = Option.some({
        ...common,
        payment_method: sale.paymentMethod,
        card: cardOf(sale.card.value),
        approval_number: Option.getOrElse(sale.approvalNumber, () => "")
      })
    } else {
      data = Option.map(terminalMethodOf(sale.paymentMethod), (payment_method): Notification.PaymentData => ({
        ...common,
        payment_method,
        ...(Option.isSome(sale.approvalNumber) ? { approval_number: sale.approvalNumber.value } : {})
      }))
    }
    return Option.map(data, (data): Notice => ({
      type,
      subject: checkout.transactionId,
      merchantId: checkout.merchantId,
      sandbox: checkout.sandbox,
      channel: "terminal_api",
      source: SOURCES.terminal,
      at,
      data,
      seller: Option.some({ name: "", last_name: "", email: checkout.userEmail })
    }))
  })
}

/**
 * The notice of a payment link event (B, "The status of link transactions is also notified"):
 * LinkPaid is SALE_APPROVED; a failed payment (back to ACTIVE, or REJECTED) is SALE_REJECTED.
 * `state` is the link after the event: it still holds the payment the event decides (its method,
 * amount and start, which dates it).
 */
export const linkNotice = (state: PaymentLink.State, event: PaymentLink.Event): Option.Option<Notice> => {
  if (state._tag === "Initial") return Option.none()
  const type: Notification.NotificationType | undefined =
    event._tag === "LinkPaid"
      ? "SALE_APPROVED"
      : event._tag === "LinkPaymentFailed" || event._tag === "LinkRejected"
        ? "SALE_REJECTED"
        : undefined
  if (type === undefined || !("transactionId" in event)) return Option.none()
  const link = state.link
  if (Option.getOrUndefined(state.transactionId) !== event.transactionId) return Option.none()
  const paymentMethod = Option.getOrUndefined(state.paymentMethod)
  const paidAmount = Option.getOrUndefined(state.paidAmount)
  const startedAt = Option.getOrUndefined(state.paymentStartedAt)
  if (paymentMethod === undefined || paidAmount === undefined || startedAt === undefined) return Option.none()
  const started = { paymentMethod, amount: paidAmount, at: startedAt }
  return Option.map(otherMethodOf(started.paymentMethod), (payment_method) => {
    const amount = Option.match(link.amount, {
      onSome: (a) => ({ currency: a.currency, total: a.total, taxes: a.taxes, tip: a.tip }),
      // An OPEN link: the payer's amount, processed in COP (B2), no tip nor taxes known.
      onNone: () => ({ currency: "COP", total: started.amount, taxes: [], tip: Money.amount(0) })
    })
    return {
      type,
      subject: event.transactionId,
      merchantId: link.merchantId,
      sandbox: link.sandbox,
      channel: "payment_link",
      source: SOURCES.link,
      at: event.at,
      data: {
        payment_id: event.transactionId,
        merchant_id: link.merchantId,
        created_at: Bogota.formatIso(started.at),
        amount,
        user_id: "",
        metadata: { reference: link.reference },
        service_code: link.linkId,
        payer_email: Option.getOrElse(link.payerEmail, () => ""),
        integration: "API_INTEGRATIONS",
        payment_method
      },
      seller: Option.none()
    }
  })
}

/**
 * The notice of an online payment event (C): PaymentApproved is SALE_APPROVED, PaymentRejected
 * SALE_REJECTED, PaymentVoided VOID_APPROVED (a refused void is a synchronous 409, never an event).
 */
export const paymentNotice = (state: Payment.State, event: Payment.Event): Option.Option<Notice> => {
  if (state._tag === "Initial") return Option.none()
  const type: Notification.NotificationType | undefined =
    event._tag === "PaymentApproved"
      ? "SALE_APPROVED"
      : event._tag === "PaymentRejected"
        ? "SALE_REJECTED"
        : event._tag === "PaymentVoided"
          ? "VOID_APPROVED"
          : undefined
  if (type === undefined || !("at" in event)) return Option.none()
  const payment = state.payment
  const approvalNumber = Option.map(state.approval, (a) => a.approvalNumber)
  return Option.map(otherMethodOf(payment.paymentMethod), (payment_method) => ({
    type,
    subject: payment.transactionId,
    merchantId: payment.merchantId,
    sandbox: payment.sandbox,
    channel: "other",
    source: SOURCES.online,
    at: event.at,
    data: {
      payment_id: payment.transactionId,
      merchant_id: payment.merchantId,
      created_at: Bogota.formatIso(payment.attemptedAt),
      amount: {
        currency: payment.amount.currency,
        total: payment.amount.total,
        taxes: payment.amount.taxes,
        tip: payment.amount.tip
      },
      user_id: "",
      metadata: { reference: payment.referenceId },
      service_code: payment.transactionId,
      payer_email: Option.getOrElse(
        Option.flatMap(payment.payer, (p) => Option.fromNullable(p.email)),
        () => ""
      ),
      integration: "API_INTEGRATIONS",
      payment_method,
      ...(Option.isSome(approvalNumber) ? { approval_number: approvalNumber.value } : {})
    },
    seller: Option.none()
  }))
}

const encodeNotification = Schema.encodeEither(Notification.Notification)

/**
 * The exact JSON text of a notification: the envelope in the spec's order, `time` in nanoseconds as
 * an exact integer literal (it exceeds 2^53). The signature is computed over these bytes.
 */
export const body = (
  notificationId: NotificationId,
  notice: Notice
): Either.Either<string, ParseResult.ParseError> =>
  Either.map(
    encodeNotification({
      id: notificationId,
      type: notice.type,
      subject: notice.subject,
      source: notice.source,
      spec_version: SPEC_VERSION,
      time: Nanos.fromDateTime(notice.at),
      datacontenttype: DATA_CONTENT_TYPE,
      ...(Option.isSome(notice.seller) ? { seller: notice.seller.value } : {}),
      data: notice.data
    }),
    ExactJson.stringify
  )

/**
 * Why an event that raises a notification schedules no delivery.
 *
 * @category errors
 */
export type Unscheduled = { readonly _tag: "InvalidBody"; readonly message: string }

/**
 * The delivery of a notice: its id derived from the source event, its body, the key that signs it
 * (sandbox → the empty secret, else the spec's priority), and the URL: the production webhook, or
 * for sandbox the test webhook, else the one registered in the panel (W10). `merchant` is the
 * merchant as it was when the event was recorded. With no webhook registered then, the delivery has
 * no URL: the notification is recorded (A4 finds it) and born CANCELLED, never sent (W15).
 */
export const deliveryOf = (
  sourceEventId: string,
  notice: Notice,
  merchant: Merchant.State
): Either.Either<WebhookDelivery.ScheduleDelivery, Unscheduled> => {
  const url = Merchant.webhookUrl(merchant, notice.sandbox ? "test" : "production")
  const notificationId = notificationIdOf(sourceEventId)
  return Either.match(body(notificationId, notice), {
    onLeft: (error) => Either.left<Unscheduled>({ _tag: "InvalidBody", message: error.message }),
    onRight: (text) =>
      Either.right(
        new WebhookDelivery.ScheduleDelivery(
          {
            notificationId,
            merchantId: notice.merchantId,
            ...(Option.isSome(url) ? { url: url.value } : {}),
            type: notice.type,
            subject: notice.subject,
            body: text,
            signingKey: SigningKey.signingKeyFor({
              channel: notice.channel,
              sandbox: notice.sandbox,
              paymentButtonEnabled: Merchant.isIntegrationActive(merchant, "payment_button")
            }),
            sandbox: notice.sandbox,
            now: notice.at
          },
          // Every field is typed by the schemas it was decoded or made with, but for two plain strings:
          // the body (JSON text, never empty) and the URL (a stored `WebhookSet` may hold ""). Only a
          // command with an empty one is validated, so that it fails as it always has.
          { disableValidation: text.length > 0 && Option.getOrElse(url, () => "-").length > 0 }
        )
      )
  })
}

// ---------------------------------------------------------------------------------------------
// From the log (over the EventStore port)
// ---------------------------------------------------------------------------------------------

const loadMerchant = CommandHandler.load(Merchant.Merchant)

/**
 * How the notifications read the streams of one aggregate: its decider (initial state, `evolve`) and
 * the decoder of its logged events' data. A record that no longer decodes throws: a corrupted log, a
 * defect.
 *
 * @category models
 */
export interface StreamReader<S, E> {
  readonly decider: Decider<any, E, S, any>
  readonly decode: (data: unknown) => E
}

/**
 * An aggregate whose events raise notifications: how its streams are read, and the notice of one of
 * its events given the stream's state after it ({@link terminalNotice}, {@link linkNotice},
 * {@link paymentNotice}).
 *
 * @category models
 */
export interface Raiser<S, E> extends StreamReader<S, E> {
  readonly notice: (state: S, event: E) => Option.Option<Notice>
}

const readerOf = <S, E extends { readonly _tag: string }>(
  aggregate: Decider<any, E, S, any> & { readonly Event: Schema.Schema<E, any> }
): StreamReader<S, E> => ({ decider: aggregate, decode: Schema.decodeUnknownSync(aggregate.Event) })

/** The merchants' streams as the notifications read them (a delivery's webhook URL and keys). */
export const merchantReader: StreamReader<Merchant.State, Merchant.Event> = readerOf(Merchant.Merchant)

const raisers: ReadonlyMap<string, Raiser<any, any>> = new Map<string, Raiser<any, any>>([
  [
    TerminalCheckout.TerminalCheckout.name,
    { ...readerOf(TerminalCheckout.TerminalCheckout), notice: terminalNotice }
  ],
  [PaymentLink.PaymentLink.name, { ...readerOf(PaymentLink.PaymentLink), notice: linkNotice }],
  [Payment.Payment.name, { ...readerOf(Payment.Payment), notice: paymentNotice }]
])

/** The aggregate named `aggregate` ({@link aggregateOf}) if its events raise notifications. */
export const raiserOf = (aggregate: string | undefined): Raiser<unknown, unknown> | undefined =>
  aggregate === undefined ? undefined : raisers.get(aggregate)

/** The stream (in the log) of the merchant of a notice. */
export const merchantStreamOf = (merchantId: string): string => streamId(Merchant.Merchant, merchantId)

/**
 * The notice an event raises, from its stream's recorded events from version 1 up to and including
 * the event (a stored event that no longer decodes is a corrupted log: a defect).
 */
export const noticeFromHistory = (
  event: EventStore.RecordedEvent,
  history: ReadonlyArray<EventStore.RecordedEvent>
): Option.Option<Notice> => {
  if (!mayRaise(event)) return Option.none()
  const raiser = raiserOf(aggregateOf(event))
  if (raiser === undefined) return Option.none()
  const events = history.map((r) => raiser.decode(r.data))
  const last = events[events.length - 1]
  return last === undefined ? Option.none() : raiser.notice(fold(raiser.decider, events), last)
}

/** The notice an event raises, from its stream as it was up to the event. */
export const noticeOf = Effect.fn("Notifications.noticeOf")(function* (event: EventStore.RecordedEvent) {
  if (!mayRaise(event)) return Option.none<Notice>()
  const store = yield* EventStore.EventStore
  return noticeFromHistory(event, yield* store.readStream(event.streamId, { toVersion: event.streamVersion }))
})

/**
 * The delivery an event leads to, from what a caller already holds: the event's stream up to it and
 * the merchant's stream (any suffix recorded after the event is ignored: the merchant is taken as it
 * was when the event was recorded). `None` when it raises no notification.
 */
export const planFromHistory = (
  event: EventStore.RecordedEvent,
  history: ReadonlyArray<EventStore.RecordedEvent>,
  merchantHistory: ReadonlyArray<EventStore.RecordedEvent>
): Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Unscheduled>> =>
  Option.map(noticeFromHistory(event, history), (notice) =>
    deliveryOf(event.eventId, notice, merchantFromHistory(merchantHistory, event.recordedAt.getTime()))
  )

/**
 * The merchant as it was at `asOf` (epoch milliseconds): the records of its stream recorded then or
 * before, in the order given, decoded and folded. The merchant a delivery is planned with.
 */
export const merchantFromHistory = (
  merchantHistory: ReadonlyArray<EventStore.RecordedEvent>,
  asOf: number
): Merchant.State =>
  fold(
    Merchant.Merchant,
    merchantHistory.filter((r) => r.recordedAt.getTime() <= asOf).map((r) => merchantReader.decode(r.data))
  )

/**
 * The delivery an event leads to: `None` when it raises no notification; `Left` when it raises one
 * that cannot be scheduled (a body the schema refuses). The merchant is read as it was when the
 * event was recorded, so replaying the event gives the same delivery.
 */
export const planFor = Effect.fn("Notifications.planFor")(function* (event: EventStore.RecordedEvent) {
  const notice = yield* noticeOf(event)
  if (Option.isNone(notice))
    return Option.none<Either.Either<WebhookDelivery.ScheduleDelivery, Unscheduled>>()
  const { state: merchant } = yield* loadMerchant(notice.value.merchantId, { asOf: event.recordedAt })
  return Option.some(deliveryOf(event.eventId, notice.value, merchant))
})

// ---------------------------------------------------------------------------------------------
// Scheduling a planned delivery
// ---------------------------------------------------------------------------------------------

const encodeDeliveryEvent = Schema.encodeSync(WebhookDelivery.Event)

/**
 * The delivery to append for a planned notification, if any: logs why an event that raises a
 * notification schedules nothing (a body the schema refuses), and that a notification without a
 * webhook is recorded for A4 but not sent (W15). `None` when there is nothing to append.
 */
export const toSchedule = (
  event: Pick<EventStore.RecordedEvent, "eventId">,
  plan: Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Unscheduled>>
): Effect.Effect<Option.Option<WebhookDelivery.ScheduleDelivery>> =>
  Effect.gen(function* () {
    if (Option.isNone(plan)) return Option.none()
    if (Either.isLeft(plan.value)) {
      yield* Effect.logError("notification body does not match the spec's schema: not scheduled").pipe(
        Effect.annotateLogs({ eventId: event.eventId, message: plan.value.left.message })
      )
      return Option.none()
    }
    const command = plan.value.right
    if (command.url === undefined) {
      // DEBUG, not INFO: under load a line per sale is a write per sale to stdout.
      yield* Effect.logDebug("no webhook registered: notification recorded for A4, not sent").pipe(
        Effect.annotateLogs({
          merchantId: command.merchantId,
          sandbox: command.sandbox,
          eventId: event.eventId
        })
      )
    }
    return Option.some(command)
  })

/**
 * The append that schedules a delivery: its stream and events derived from the source event (the
 * first event's id from the source's, {@link scheduledEventIdOf}), on a stream that must not exist.
 * A replay builds the same append, which the store accepts as a no-op (or meets the stream).
 */
export const scheduleAppend = (
  event: Pick<EventStore.RecordedEvent, "eventId" | "metadata">,
  command: WebhookDelivery.ScheduleDelivery
): EventStore.BatchAppend => {
  // A command built here always schedules on an empty stream.
  const events = Either.getOrThrow(WebhookDelivery.decide(command, WebhookDelivery.initialState))
  return {
    streamId: deliveryStreamOf(command.notificationId),
    events: events.map((e, i) => ({
      eventId:
        i === 0 ? scheduledEventIdOf(event.eventId) : DerivedId.uuid(`cobro:delivery:${i}`, event.eventId),
      type: e._tag,
      schemaVersion: WebhookDelivery.WebhookDelivery.schemaVersion,
      data: encodeDeliveryEvent(e),
      metadata: {
        causationId: event.eventId,
        ...(event.metadata.correlationId ? { correlationId: event.metadata.correlationId } : {})
      }
    })),
    expected: EventStore.ExpectedVersion.NoStream()
  }
}

// ---------------------------------------------------------------------------------------------
// With the outcome that raises them (the outbox)
// ---------------------------------------------------------------------------------------------

const loadKnownMerchant = CommandHandler.loadKnown(Merchant.Merchant)

/**
 * The notifications' outbox policy: every event a command writes that raises a notification
 * schedules its delivery in the same commit — the same stream, id, body, key and URL that the log's
 * notifier plans ({@link schedule}), from the stream's state after the event (the state the command
 * decided on, with its events folded) and the merchant as it is when the commit is written. The
 * merchant is the state this process knows (`KnownStates`: the request read it), else read (and then
 * known); either way the commit guards the merchant's stream at that version (`Outbox.guard`), so a
 * merchant changed meanwhile (on another node) makes the commit conflict, and the command handler
 * decides the delivery again on the merchant as read then: never a delivery to a webhook the merchant
 * had replaced. A sale's outcome and its notification are then recorded together or not at all, and
 * no consumer re-reads the log to find them.
 */
export const outbox: Outbox.Policy = {
  follow: (written) => {
    if (!written.some((w) => w.events.some((e) => mayRaise({ streamId: w.streamId, type: e._tag })))) {
      return Effect.succeed([])
    }
    return Effect.gen(function* () {
      const appends: Array<EventStore.BatchAppend> = []
      // Each merchant decided on, at the version decided on: one guard per merchant.
      const decidedOn = new Map<string, number>()
      for (const w of written) {
        const raiser = raiserOf(aggregateOf(w))
        if (raiser === undefined) continue
        let state = w.before
        for (const [i, event] of w.events.entries()) {
          state = raiser.decider.evolve(state, event)
          if (!mayRaise({ streamId: w.streamId, type: event._tag })) continue
          const notice = raiser.notice(state, event)
          if (Option.isNone(notice)) continue
          const source = w.appended[i]!
          const merchant = yield* loadKnownMerchant(notice.value.merchantId)
          decidedOn.set(merchantStreamOf(notice.value.merchantId), merchant.version)
          const command = yield* toSchedule(
            source,
            Option.some(deliveryOf(source.eventId, notice.value, merchant.state))
          )
          if (Option.isSome(command)) appends.push(scheduleAppend(source, command.value))
        }
      }
      // A merchant the commit writes itself is checked by its own expected version (and a stream
      // appears once in a batch).
      for (const [stream, version] of decidedOn) {
        if (!written.some((w) => w.streamId === stream)) appends.push(Outbox.guard(stream, version))
      }
      return appends
    })
  }
}

/**
 * Appends one delivery's schedule ({@link scheduleAppend}), once: a stream scheduled already (a
 * replay, another notifier) is taken as scheduled. Returns the notification id. Untraced: the
 * caller's span (`Notifications.schedule`, the notifier's batch) encloses it.
 */
export const appendSchedule = Effect.fnUntraced(function* (
  event: EventStore.RecordedEvent,
  command: WebhookDelivery.ScheduleDelivery
) {
  const store = yield* EventStore.EventStore
  const { events, expected, streamId: stream } = scheduleAppend(event, command)
  // No read first: the append says whether it is scheduled already (a replay re-appends the same
  // derived event id and content, which the store accepts as a no-op, or meets the stream).
  yield* store.append(stream, events, expected).pipe(
    Effect.catchTags({
      ConcurrencyConflict: () => Effect.void,
      EventIdReused: () => Effect.void
    })
  )
  return command.notificationId
})

/**
 * Schedules the delivery of the notification an event raises, once: the delivery stream and its
 * first event's id are derived from the event's id, so a replay (a crash before the consumer's
 * checkpoint was saved, a second notifier) appends nothing. Returns the notification id scheduled
 * (or found scheduled; with no webhook registered, recorded and CANCELLED, W15), `None` when the
 * event raises nothing.
 */
export const schedule = Effect.fn("Notifications.schedule")(function* (
  event: EventStore.RecordedEvent,
  /** The delivery already planned from streams the caller holds ({@link planFromHistory}); else read. */
  planned?: Option.Option<Either.Either<WebhookDelivery.ScheduleDelivery, Unscheduled>>
) {
  const command = yield* toSchedule(event, planned ?? (yield* planFor(event)))
  if (Option.isNone(command)) return Option.none<NotificationId>()
  return Option.some(yield* appendSchedule(event, command.value))
})
