/**
 * The panel's webhooks (issue 22, "Webhooks"; spec D, Registration): the production and the test
 * URL, each set with the admin API's rules and errors (production https://, unless development
 * webhooks; the Standard Webhooks opt-in, W19) and deleted after a confirmation; a test notification
 * sent to where sandbox notifications go (`TestNotification`); and the mode's recent deliveries,
 * failures first. Each change is recorded with the panel user as actor.
 */
import * as Listings from "@cobro/domain/Listings"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { KeyMode } from "@cobro/domain/SigningKey"
import * as TestNotification from "@cobro/domain/TestNotification"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FormKey from "./FormKey.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Notifications from "./NotificationsPage.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The page's path. */
export const PATH = `${Html.PREFIX}/webhooks`

/** How many deliveries the page lists: failed ones first, then the others. */
export const RECENT = 20

const deletePath = (mode: KeyMode) => `${PATH}/${mode}/delete`

const isMode = Schema.is(KeyMode)

/** What a refused URL shows beside its field. */
interface Refused {
  readonly mode: KeyMode
  readonly url: string
  readonly standardWebhooks: boolean
  readonly httpAllowed: boolean
}

const webhookCard = (
  context: Html.Context,
  merchant: Merchant.Existing,
  mode: KeyMode,
  refused?: Refused
) => {
  const t = Text.messages[context.locale]
  const current = merchant.webhooks[mode]
  const mine = refused?.mode === mode ? refused : undefined
  const canChange = context.user?.role !== "read_only"
  const remove =
    Option.isSome(current) && canChange
      ? `<a class="button secondary" id="delete-webhook-${mode}" href="${Html.escape(Html.href(context, deletePath(mode)))}">${Html.escape(t.webhooks.delete)}</a>`
      : ""
  const standard = mine?.standardWebhooks ?? Option.exists(current, (w) => w.standardWebhooks)
  return `<section class="card" id="webhook-${mode}" data-testid="webhook" data-mode="${mode}" data-registered="${Option.isSome(current)}">
<h2>${Html.escape(t.webhooks.titles[mode])}</h2>
<p>${Option.match(current, {
    onNone: () => `<span class="meta" id="webhook-${mode}-none">${Html.escape(t.webhooks.none)}</span>`,
    onSome: (w) =>
      `<code id="webhook-${mode}-url">${Html.escape(w.url)}</code>${w.standardWebhooks ? ` <span class="badge ok" id="webhook-${mode}-standard">Standard Webhooks</span>` : ""}`
  })}</p>
${
  canChange
    ? `<form method="post" action="${PATH}" id="webhook-form-${mode}">${Html.hiddenFields(context)}<input type="hidden" name="webhook_mode" value="${mode}">
${Html.field({
  name: "url",
  id: `webhook-url-${mode}`,
  label: t.webhooks.url,
  type: "url",
  value: mine?.url ?? Option.match(current, { onNone: () => "", onSome: (w) => w.url }),
  hint: mode === "production" ? t.webhooks.productionHint : t.webhooks.testHint,
  error: mine === undefined ? undefined : t.webhooks.invalidUrl(mode, mine.httpAllowed)
})}
<label class="choice"><input type="checkbox" name="standard_webhooks" id="standard-webhooks-${mode}" value="on"${standard ? " checked" : ""}> ${Html.escape(t.webhooks.standardWebhooks)}</label>
<p class="hint">${Html.escape(t.webhooks.standardWebhooksHint)}</p>
<div class="actions"><button type="submit" class="primary" id="save-webhook-${mode}">${Html.escape(t.webhooks.save)}</button>${remove}</div>
</form>`
    : ""
}</section>`
}

const deliveryRow = (context: Html.Context, r: Listings.NotificationRow): string =>
  `<tr data-testid="delivery-row" data-notification-id="${Html.escape(r.notificationId)}" data-delivery="${r.delivery}">
<td class="nowrap">${Html.time(r.createdAt, context.locale)}</td>
<td><a href="${Html.escape(Html.href(context, Notifications.pathOf(r.notificationId)))}">${Html.escape(r.type)}</a></td>
<td><code>${Html.escape(r.subject)}</code></td>
<td>${Html.status(r.delivery)}</td>
<td class="num">${r.attempts}</td>
<td class="num">${r.lastStatusCode ?? "—"}</td>
</tr>`

const page = (
  context: Html.Context,
  merchant: Merchant.Existing,
  deliveries: ReadonlyArray<Listings.NotificationRow>,
  refused?: Refused
): string => {
  const t = Text.messages[context.locale]
  const test =
    context.user?.role === "read_only"
      ? ""
      : `<section class="card" id="test-notification"><h2>${Html.escape(t.webhooks.testTitle)}</h2><p class="meta">${Html.escape(t.webhooks.testText)}</p>
<div class="actions">${Html.postButton(context, { action: `${PATH}/test`, label: t.webhooks.sendTest, id: "send-test-notification", tone: "primary" })}</div></section>`
  return Html.layout(
    context,
    "webhooks",
    t.webhooks.title,
    `<h1>${Html.escape(t.webhooks.title)}</h1>
<div class="grid">${webhookCard(context, merchant, "production", refused)}${webhookCard(context, merchant, "test", refused)}</div>
${test}
<section class="card"><h2 id="deliveries-title">${Html.escape(t.webhooks.recent(t.modes[context.mode]))}</h2>
${Html.table(
  "deliveries",
  [
    t.payments.created,
    t.webhooks.type,
    t.notifications.subject,
    t.webhooks.delivery,
    t.webhooks.attempts,
    t.webhooks.lastStatus
  ],
  deliveries.map((r) => deliveryRow(context, r)),
  t.webhooks.noDeliveries
)}</section>`
  )
}

/** The mode's latest deliveries, failed ones first (each group newest first). */
const recentDeliveries = (merchantId: string, mode: Listings.Mode) =>
  Effect.gen(function* () {
    const listings = yield* Listings.Listings
    const failed = yield* listings.notifications(merchantId, { mode, delivery: "failed" }, { limit: RECENT })
    const latest = yield* listings.notifications(merchantId, { mode }, { limit: RECENT })
    const others = latest.data.filter((r) => r.delivery !== "failed")
    return [...failed.data, ...others].slice(0, RECENT)
  }).pipe(Effect.orDie)

const merchantOf = (merchantId: string) => MerchantAdmin.getMerchant(merchantId).pipe(Effect.orDie)

/** GET: both webhooks, the test notification and the recent deliveries. */
export const show = Guard.page((session, context) =>
  Effect.gen(function* () {
    const merchant = yield* merchantOf(session.merchantId)
    const deliveries = yield* recentDeliveries(session.merchantId, context.mode)
    return Request.respond(page(context, merchant, deliveries))
  })
)

/** POST: registers one mode's webhook (the admin API's rules), or the page again with the error (400). */
export const save = FormKey.action(
  { changes: true },
  (_session, context) =>
    Effect.succeed(Request.redirect(Html.withNotice(Html.href(context, PATH), "webhookSaved"))),
  (session, context, form) =>
    Effect.gen(function* () {
      const mode = form.get("webhook_mode") ?? ""
      if (!isMode(mode)) return Request.respond(Html.messagePage(context, "badRequest"), 400)
      const url = Request.text(form, "url", 2048)
      const standardWebhooks = form.get("standard_webhooks") === "on"
      return yield* MerchantAdmin.setWebhook(session.merchantId, mode, url, {
        metadata: Guard.metadataOf(session),
        standardWebhooks
      }).pipe(
        Effect.as(Request.redirect(Html.withNotice(Html.href(context, PATH), "webhookSaved"))),
        Effect.catchTag("InvalidWebhookUrl", (error) =>
          Effect.gen(function* () {
            const merchant = yield* merchantOf(session.merchantId)
            const deliveries = yield* recentDeliveries(session.merchantId, context.mode)
            const refused = { mode, url, standardWebhooks, httpAllowed: Merchant.acceptsHttp(error) }
            return Request.respond(page(context, merchant, deliveries, refused), 400)
          })
        ),
        Effect.catchAll((e) => Effect.die(e))
      )
    })
)

/** GET: asks before deleting one mode's webhook. */
export const confirmDelete = Guard.page((_session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const mode = yield* Request.param("webhook_mode")
    if (!isMode(mode)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    return Request.respond(
      Html.confirmPage(context, "webhooks", {
        title: t.webhooks.deleteTitle,
        text: t.webhooks.deleteText(t.modes[mode]),
        action: deletePath(mode),
        confirm: t.webhooks.delete,
        back: Html.href(context, PATH)
      })
    )
  })
)

/** POST: deletes one mode's webhook: delivery to it stops. */
export const remove = FormKey.action(
  { changes: true },
  (_session, context) =>
    Effect.succeed(Request.redirect(Html.withNotice(Html.href(context, PATH), "webhookDeleted"))),
  (session, context) =>
    Effect.gen(function* () {
      const mode = yield* Request.param("webhook_mode")
      if (!isMode(mode)) return Request.respond(Html.messagePage(context, "notFound"), 404)
      yield* MerchantAdmin.deleteWebhook(session.merchantId, mode, Guard.metadataOf(session)).pipe(
        Effect.orDie
      )
      return Request.redirect(Html.withNotice(Html.href(context, PATH), "webhookDeleted"))
    })
)

/** The prefix of a notification's stream, the first a test notification writes. */
const DELIVERY_STREAM = "WebhookDelivery-"

/** The test notification's page, with the notice that it was scheduled. */
const testSent = (context: Html.Context, notificationId: string) =>
  Request.redirect(
    Html.withNotice(Html.href({ ...context, mode: "test" }, Notifications.pathOf(notificationId)), "testSent")
  )

/** POST: sends a test notification, then shows its delivery. */
export const sendTest = FormKey.action(
  { changes: true },
  // The notification the form scheduled: its first stream.
  (_session, context, _form, resource) =>
    Effect.succeed(
      resource.startsWith(DELIVERY_STREAM)
        ? testSent(context, resource.slice(DELIVERY_STREAM.length))
        : Request.redirect(Html.withNotice(Html.href(context, PATH), "testSent"))
    ),
  (session, context) =>
    TestNotification.send(session.merchantId, Guard.metadataOf(session)).pipe(
      Effect.map((sent) => testSent(context, sent.notificationId)),
      Effect.catchTags({
        NoTestWebhook: () =>
          Effect.succeed(Request.redirect(Html.withNotice(Html.href(context, PATH), "noTestWebhook"))),
        MerchantNotFound: (e) => Effect.die(e)
      })
    )
)
