/**
 * A webhook notification as the panel shows it (issue 22, "its notifications with every delivery
 * attempt … and a re-send button"): where it went, each attempt with its status, latency and the
 * answer's snippet, and the re-send (W4) of a DELIVERED or EXHAUSTED one to the webhook registered
 * now, recorded with the panel user as actor. Another merchant's notification is not found.
 */
import * as DeliveryAdmin from "@cobro/domain/DeliveryAdmin"
import { NotificationId } from "@cobro/domain/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FormKey from "./FormKey.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** A notification's page. */
export const pathOf = (notificationId: string): string =>
  `${Html.PREFIX}/notifications/${encodeURIComponent(notificationId)}`

const decodeId = Schema.decodeUnknownOption(NotificationId)

/** The merchant's notification with that id (any other, or no such id: none). */
export const find = (merchantId: string, id: string) =>
  Option.match(decodeId(id.toLowerCase()), {
    onNone: () => Effect.succeed(Option.none<DeliveryAdmin.DeliveryView>()),
    onSome: (notificationId) =>
      DeliveryAdmin.listAttempts(notificationId).pipe(
        Effect.map((view) => (view.merchantId === merchantId ? Option.some(view) : Option.none())),
        Effect.catchTag("DeliveryNotFound", () => Effect.succeed(Option.none<DeliveryAdmin.DeliveryView>()))
      )
  })

const attemptRow = (context: Html.Context, a: DeliveryAdmin.AttemptView): string => {
  const t = Text.messages[context.locale]
  const code = Option.match(a.statusCode, { onNone: () => "—", onSome: String })
  return `<tr data-testid="attempt" data-attempt="${a.attempt}" data-delivered="${a.delivered}">
<td class="num">${a.attempt}</td>
<td class="nowrap">${Html.time(DateTime.toDate(a.at), context.locale)}</td>
<td>${a.delivered ? Html.status("delivered") : Html.status("failed")} <span data-testid="status-code">${Html.escape(code)}</span></td>
<td class="num" data-testid="latency">${Html.escape(t.milliseconds(a.latencyMs))}</td>
<td><code data-testid="snippet">${Html.escape(a.snippet)}</code></td>
</tr>`
}

/**
 * One notification: its type, status, URL and attempts, and the re-send button when it can be
 * re-sent (the server decides again when it is pressed). `returnTo`: where the re-send comes back.
 */
export const deliveryCard = (
  context: Html.Context,
  view: DeliveryAdmin.DeliveryView,
  returnTo: string
): string => {
  const t = Text.messages[context.locale]
  const resendable = view.status === "DELIVERED" || view.status === "EXHAUSTED"
  const resend =
    resendable && context.user?.role !== "read_only"
      ? `<div class="actions">${Html.postButton(context, {
          action: `${pathOf(view.notificationId)}/resend`,
          label: t.notifications.resend,
          id: `resend-${view.notificationId}`,
          tone: "primary",
          fields: { return_to: returnTo }
        })}</div>`
      : ""
  const next = Option.match(view.nextDueAt, {
    onNone: () => "",
    onSome: (at) =>
      `<dt>${Html.escape(t.notifications.nextAttempt)}</dt><dd>${Html.time(DateTime.toDate(at), context.locale)}</dd>`
  })
  return `<section class="card" data-testid="delivery" data-notification-id="${view.notificationId}" data-status="${view.status}">
<h2><a href="${Html.escape(Html.href(context, pathOf(view.notificationId)))}">${Html.escape(view.type)}</a> ${Html.status(view.status)}${view.sandbox ? ` <span class="badge warn">${Html.escape(t.modes.test)}</span>` : ""}</h2>
<dl>
<dt>${Html.escape(t.notifications.id)}</dt><dd><code>${view.notificationId}</code></dd>
<dt>${Html.escape(t.notifications.url)}</dt><dd><code data-testid="delivery-url">${Html.escape(view.url === "" ? "—" : view.url)}</code></dd>
<dt>${Html.escape(t.notifications.subject)}</dt><dd><code>${Html.escape(view.subject)}</code></dd>
${next}</dl>
${Html.table(
  `attempts-${view.notificationId}`,
  ["#", t.notifications.time, t.notifications.result, t.notifications.latency, t.notifications.snippet],
  view.attempts.map((a) => attemptRow(context, a)),
  t.notifications.noAttempts
)}
<details><summary>${Html.escape(t.notifications.body)}</summary><pre data-testid="delivery-body">${Html.escape(view.body)}</pre></details>
${resend}</section>`
}

/** GET: one notification. */
export const show = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const id = yield* Request.param("notification_id")
    const found = yield* find(session.merchantId, id)
    if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    return Request.respond(
      Html.layout(
        context,
        "webhooks",
        t.notifications.title,
        `<h1>${Html.escape(t.notifications.title)}</h1>${deliveryCard(context, found.value, context.path)}`
      )
    )
  })
)

/** Where a re-send goes back to: the page it was pressed on, else the notification's. */
const backOf = (context: Html.Context, form: URLSearchParams, notificationId: string) =>
  Request.returnPath(form.get("return_to"), Html.href(context, pathOf(notificationId)))

/**
 * POST: re-sends one notification (W4), then back to the page it was pressed on with the outcome;
 * once per rendered form (`FormKey`).
 */
export const resend = FormKey.action(
  { changes: true },
  (_session, context, form) =>
    Effect.map(Request.param("notification_id"), (id) =>
      Request.redirect(Html.withNotice(backOf(context, form, id.toLowerCase()), "resent"))
    ),
  (session, context, form) =>
    Effect.gen(function* () {
      const id = yield* Request.param("notification_id")
      const found = yield* find(session.merchantId, id)
      if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
      const back = backOf(context, form, found.value.notificationId)
      const outcome: Text.FlashKey = yield* DeliveryAdmin.resend(
        found.value.notificationId,
        Guard.metadataOf(session)
      ).pipe(
        Effect.as("resent" as const),
        Effect.catchAll((error) =>
          Effect.succeed(
            error._tag === "DeliveryNotInState"
              ? ("notResendable" as const)
              : error._tag === "NoWebhookRegistered"
                ? ("noWebhook" as const)
                : // Changed meanwhile (a concurrent attempt or re-send): pressing again decides again.
                  ("changedMeanwhile" as const)
          )
        )
      )
      return Request.redirect(Html.withNotice(back, outcome))
    })
)
