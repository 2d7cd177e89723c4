/**
 * A transaction's page in the panel (issue 22, "a detail page per transaction"): its state, amounts
 * and card summary, folded from its stream with the aggregate's own `evolve`; its notifications with
 * every delivery attempt and the re-send button; and its history — every event of its stream(s) with
 * time, actor and the state after it (`Histories.replay`, what `cobro audit history` shows).
 *
 * The address names the transaction, its kind and (for terminal and link payments, whose streams are
 * the checkout's and the link's) its resource: `/panel/payments/TRX_1?kind=link&resource=LNK_1`.
 * A resource of another merchant, or one that does not hold the transaction, is not found.
 */
import { streamId } from "@cobro/domain/Aggregate"
import * as EventStore from "@cobro/domain/EventStore"
import * as Histories from "@cobro/domain/Histories"
import * as Listings from "@cobro/domain/Listings"
import * as ListingsFromLog from "@cobro/domain/ListingsFromLog"
import * as Payment from "@cobro/domain/Payment"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as Refund from "@cobro/domain/Refund"
import * as TerminalCheckout from "@cobro/domain/TerminalCheckout"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Notifications from "./NotificationsPage.js"
import * as PaymentsPage from "./PaymentsPage.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** What the page says of a transaction, whatever its kind. */
interface Summary {
  readonly status: string
  readonly mode: Listings.Mode
  readonly amount: {
    readonly currency: string
    readonly total: number
    readonly tip: number
    readonly taxes: ReadonlyArray<{ readonly type: string; readonly value: number }>
  }
  readonly reference: string
  readonly method: string
  readonly createdAt: Date
  /** More facts of the kind: label key and text. */
  readonly facts: ReadonlyArray<readonly [Text.FactKey, string]>
  /** The card summary (masked number, brand, …), when a card was recorded. */
  readonly card: ReadonlyArray<readonly [Text.FactKey, string]>
}

/** A transaction found: its summary and the streams its history is read from. */
interface Found {
  readonly summary: Summary
  readonly steps: ReadonlyArray<Histories.Step>
}

const modeOf = (sandbox: boolean): Listings.Mode => (sandbox ? "test" : "production")
const date = (instant: DateTime.Utc): Date => DateTime.toDate(instant)
const some = <A>(option: Option.Option<A>, label: Text.FactKey, show: (a: A) => string) =>
  Option.match(option, { onNone: () => [], onSome: (a) => [[label, show(a)] as const] })

// A stored event this build cannot decode is a corrupted log: a defect, shown as the error page.
const replay = (aggregate: Histories.AnyAggregate, events: ReadonlyArray<EventStore.RecordedEvent>) =>
  Either.match(Histories.replay(aggregate, events), { onLeft: Effect.die, onRight: Effect.succeed })

const readSteps = (aggregate: Histories.AnyAggregate, id: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.flatMap(store.readStream(streamId(aggregate, id)), (events) => replay(aggregate, events))
  )

const lastState = <S>(steps: ReadonlyArray<Histories.Step>): S | undefined =>
  steps[steps.length - 1]?.state as S | undefined

const terminal = (merchantId: string, transactionId: string, resource: string) =>
  Effect.gen(function* () {
    const steps = yield* readSteps(TerminalCheckout.TerminalCheckout, resource)
    const state = lastState<TerminalCheckout.State>(steps)
    if (state === undefined || state._tag === "Initial") return Option.none<Found>()
    const checkout = state.checkout
    if (checkout.merchantId !== merchantId || checkout.transactionId !== transactionId)
      return Option.none<Found>()
    const sale = Option.map(state.approval, (a) => a.sale)
    const card = Option.flatMap(sale, (s) => s.card)
    return Option.some<Found>({
      steps,
      summary: {
        status: state._tag,
        mode: modeOf(checkout.sandbox),
        amount: checkout.amount,
        reference: checkout.reference,
        method: Option.match(sale, { onNone: () => checkout.paymentMethod, onSome: (s) => s.paymentMethod }),
        createdAt: date(checkout.createdAt),
        facts: [
          ["checkout", checkout.integrationId],
          ["terminal", `${checkout.terminalSerial} (${checkout.terminalModel})`],
          ...some(
            Option.flatMap(sale, (s) => s.approvalNumber),
            "approvalNumber",
            String
          ),
          ...some(state.rejectionReason, "rejectionReason", String)
        ],
        card: Option.match(card, {
          onNone: () => [],
          onSome: (c) => [
            ["maskedPan", c.maskedPan],
            ["brand", `${c.brand} · ${c.cardType}`],
            ["cardholder", c.cardholderName],
            ["installments", String(c.installments)],
            ["captureMode", c.captureMode]
          ]
        })
      }
    })
  })

const link = (merchantId: string, transactionId: string, resource: string) =>
  Effect.gen(function* () {
    const steps = yield* readSteps(PaymentLink.PaymentLink, resource)
    const state = lastState<PaymentLink.State>(steps)
    if (state === undefined || state._tag === "Initial" || state.link.merchantId !== merchantId) {
      return Option.none<Found>()
    }
    // The payment's row as the lists fold it: its status is its own, not the link's.
    let row: Listings.TransactionRow | undefined = undefined
    let method = ""
    for (const step of steps) {
      const event = step.event as PaymentLink.Event
      if (!("transactionId" in event) || event.transactionId !== transactionId) continue
      if (event._tag === "LinkPaymentStarted") method = event.paymentMethod
      row = ListingsFromLog.linkTransaction(row, step.state as PaymentLink.Existing, event) ?? row
    }
    if (row === undefined) return Option.none<Found>()
    return Option.some<Found>({
      steps,
      summary: {
        status: row.status,
        mode: row.mode,
        amount: Option.match(state.link.amount, {
          onNone: () => ({ currency: row.currency, total: row.amount, tip: 0, taxes: [] }),
          onSome: (a) => a
        }),
        reference: state.link.reference,
        method,
        createdAt: row.createdAt,
        facts: [
          ["link", state.link.linkId],
          ["linkStatus", state._tag],
          ...some(state.link.description, "description", String)
        ],
        card: []
      }
    })
  })

const online = (merchantId: string, transactionId: string) =>
  Effect.gen(function* () {
    const steps = yield* readSteps(Payment.Payment, transactionId)
    const state = lastState<Payment.State>(steps)
    if (state === undefined || state._tag === "Initial" || state.payment.merchantId !== merchantId) {
      return Option.none<Found>()
    }
    const attempt = state.payment
    // Its refunds' histories beside its own (C8): the refunds list holds them with their payment's id.
    const listings = yield* Listings.Listings
    const refunds = yield* listings
      .refunds(merchantId, { mode: modeOf(attempt.sandbox) }, { limit: 100 })
      .pipe(Effect.orDie)
    const refundSteps = yield* Effect.forEach(
      refunds.data.filter((r) => r.transactionId === transactionId),
      (r) => readSteps(Refund.Refund, r.refundId)
    )
    return Option.some<Found>({
      steps: [...steps, ...refundSteps.flat()].sort((a, b) =>
        a.recorded.globalPosition < b.recorded.globalPosition ? -1 : 1
      ),
      summary: {
        status: state._tag,
        mode: modeOf(attempt.sandbox),
        amount: attempt.amount,
        reference: attempt.referenceId,
        method: attempt.paymentMethod,
        createdAt: date(attempt.attemptedAt),
        facts: [
          ...some(state.approval, "approvalNumber", (a) => a.approvalNumber),
          ...some(state.approval, "threeDs", (a) => (a.threeDs ? "3DS" : "—")),
          ...some(state.rejectionReason, "rejectionReason", String),
          ...some(state.refund, "refund", (r) => `${r.refundId} · ${r.status}`)
        ],
        card: Option.match(attempt.card, {
          onNone: () => [],
          onSome: (c) => [
            ["maskedPan", c.maskedPan],
            ...(c.cardholderName !== undefined ? [["cardholder", c.cardholderName] as const] : []),
            ...(c.installments !== undefined ? [["installments", String(c.installments)] as const] : [])
          ]
        })
      }
    })
  })

const none = Effect.succeed(Option.none<Found>())

/** The merchant's transaction named by the address, if it is one. */
const find = (merchantId: string, transactionId: string, kind: string | null, resource: string) => {
  switch (kind) {
    case "terminal":
      return /^INT_[A-Za-z0-9]{1,64}$/.test(resource) ? terminal(merchantId, transactionId, resource) : none
    case "link":
      return /^LNK_[A-Za-z0-9]{1,64}$/.test(resource) ? link(merchantId, transactionId, resource) : none
    case "online":
      return /^TRX_[A-Za-z0-9]{1,64}$/.test(transactionId) ? online(merchantId, transactionId) : none
    default:
      return none
  }
}

const dl = (context: Html.Context, facts: ReadonlyArray<readonly [Text.FactKey, string]>, id: string) => {
  const t = Text.messages[context.locale]
  return `<dl id="${id}">${facts
    .map(
      ([key, value]) =>
        `<dt>${Html.escape(t.facts[key])}</dt><dd data-fact="${key}">${Html.escape(value)}</dd>`
    )
    .join("")}</dl>`
}

const historyRow = (context: Html.Context, step: Histories.Step, streams: number): string => {
  const r = step.recorded
  const state = JSON.stringify(Histories.redact(Histories.toJson(step.state)), null, 2)
  return `<tr data-testid="history-event" data-type="${Html.escape(r.type)}" data-actor="${Html.escape(r.metadata.actor ?? "")}">
<td class="nowrap">${Html.time(r.recordedAt, context.locale)}</td>
${streams > 1 ? `<td><code>${Html.escape(r.streamId)}</code></td>` : ""}<td><code>${Html.escape(r.type)}</code></td>
<td>${Html.escape(r.metadata.actor ?? "—")}</td>
<td><details><summary>${Html.escape(step.state._tag)}</summary><pre>${Html.escape(state)}</pre></details></td>
</tr>`
}

/** GET: the transaction's page. */
export const show = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const transactionId = yield* Request.param("transaction_id")
    const found = yield* find(
      session.merchantId,
      transactionId,
      context.query.get("kind"),
      (context.query.get("resource") ?? "").trim()
    )
    if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    const { steps, summary } = found.value
    // The page's mode is the transaction's: the navigation and its forms stay in it.
    const here: Html.Context = { ...context, mode: summary.mode }
    const listings = yield* Listings.Listings
    const rows = yield* listings
      .notifications(session.merchantId, { subject: transactionId }, { limit: 100 })
      .pipe(Effect.orDie)
    const views = yield* Effect.forEach(rows.data, (row) =>
      Notifications.find(session.merchantId, row.notificationId)
    )
    const back = Html.currentHref(context)
    const deliveries = views.flatMap((v) =>
      Option.isSome(v) ? [Notifications.deliveryCard(here, v.value, back)] : []
    )
    const streams = new Set(steps.map((s) => s.recorded.streamId)).size
    const amount = summary.amount
    const taxes = amount.taxes.reduce((sum, tax) => sum + tax.value, 0)
    const body = `<div class="card" id="payment" data-transaction-id="${Html.escape(transactionId)}" data-status="${Html.escape(summary.status)}">
<p class="meta"><a id="back-to-payments" href="${Html.escape(Html.href(here, PaymentsPage.PATH))}">← ${Html.escape(t.payments.title)}</a></p>
<h1>${Html.escape(t.payment.title)} <code id="transaction-id">${Html.escape(transactionId)}</code> ${Html.status(summary.status, "payment-status")}</h1>
<div class="grid">
<section><h2>${Html.escape(t.payment.summary)}</h2>
<dl id="payment-summary">
<dt>${Html.escape(t.payments.amount)}</dt><dd id="payment-amount">${Html.money(amount.total, amount.currency, context.locale)}</dd>
${amount.tip > 0 ? `<dt>${Html.escape(t.payment.tip)}</dt><dd>${Html.money(amount.tip, amount.currency, context.locale)}</dd>` : ""}
${taxes > 0 ? `<dt>${Html.escape(t.payment.taxes)}</dt><dd>${Html.money(taxes, amount.currency, context.locale)}</dd>` : ""}
<dt>${Html.escape(t.payments.reference)}</dt><dd id="payment-reference">${Html.escape(summary.reference)}</dd>
<dt>${Html.escape(t.payment.method)}</dt><dd id="payment-method">${Html.escape(summary.method === "" ? "—" : summary.method)}</dd>
<dt>${Html.escape(t.payments.created)}</dt><dd>${Html.time(summary.createdAt, context.locale)}</dd>
<dt>${Html.escape(t.modeLabel)}</dt><dd id="payment-mode">${Html.escape(t.modes[summary.mode])}</dd>
</dl>
${dl(context, summary.facts, "payment-facts")}</section>
<section><h2>${Html.escape(t.payment.card)}</h2>
${summary.card.length > 0 ? dl(context, summary.card, "card-summary") : `<p class="meta" id="card-summary-empty">${Html.escape(t.payment.noCard)}</p>`}</section>
</div></div>
<h2 id="notifications-title">${Html.escape(t.payment.notifications)}</h2>
${deliveries.length > 0 ? deliveries.join("\n") : `<p class="meta" id="notifications-empty">${Html.escape(t.payment.noNotifications)}</p>`}
<div class="card"><h2 id="history-title">${Html.escape(t.payment.history)}</h2>
${Html.table(
  "history",
  [
    t.payment.time,
    ...(streams > 1 ? [t.payment.stream] : []),
    t.payment.event,
    t.payment.actor,
    t.payment.stateAfter
  ],
  steps.map((s) => historyRow(context, s, streams)),
  t.payment.noHistory
)}</div>`
    return Request.respond(Html.layout(here, "payments", `${t.payment.title} ${transactionId}`, body))
  })
)
