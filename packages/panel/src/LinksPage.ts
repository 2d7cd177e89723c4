/**
 * The panel's payment links (issue 22, "Links"): the merchant's links of the page's mode, newest
 * first; a form that creates one as B2 does (the payment-button key's credential of the mode, B2's
 * rules and errors), whose URL — the one B2 answers — is shown to copy; and the cancellation of an
 * ACTIVE link after a confirmation, as the admin API cancels one. Each change is recorded with the
 * panel user as actor.
 */
import * as Listings from "@cobro/domain/Listings"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import { Credential } from "@cobro/domain/MerchantDirectory"
import type * as PanelSessions from "@cobro/domain/PanelSessions"
import * as PaymentLink from "@cobro/domain/PaymentLink"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as FormKey from "./FormKey.js"
import * as LinkForm from "./LinkForm.js"
import * as Guard from "./PanelGuard.js"
import * as Html from "./PanelHtml.js"
import * as Paging from "./Paging.js"
import * as Request from "./PanelRequest.js"
import * as Text from "./PanelText.js"

/** The list's path. */
export const PATH = `${Html.PREFIX}/links`

/** The prefix of a link's stream, the first a link's creation writes. */
const LINK_STREAM = "PaymentLink-"

const cancelPath = (linkId: string) => `${PATH}/${encodeURIComponent(linkId)}/cancel`

const STATUSES = PaymentLink.Status.literals

/** The merchant's link with that id, as the checkout page sees it now (another's: none). */
const ownLink = (session: PanelSessions.Session, linkId: string) =>
  LinkPayments.checkout(linkId).pipe(
    Effect.map((view) =>
      view.state.link.merchantId === session.merchantId ? Option.some(view) : Option.none()
    ),
    Effect.catchTags({
      LinkNotFound: () => Effect.succeed(Option.none<LinkPayments.CheckoutView>()),
      MerchantNotFound: () => Effect.succeed(Option.none<LinkPayments.CheckoutView>())
    })
  )

const amountText = (context: Html.Context, row: Listings.LinkRow) =>
  row.amountType === "OPEN"
    ? Html.escape(Text.messages[context.locale].links.open)
    : Html.money(row.amount, row.currency, context.locale)

const row = (context: Html.Context, r: Listings.LinkRow, url: string): string => {
  const t = Text.messages[context.locale]
  const cancel =
    r.status === "ACTIVE" && context.user?.role !== "read_only"
      ? `<a class="button secondary" id="cancel-${Html.escape(r.linkId)}" href="${Html.escape(Html.href(context, cancelPath(r.linkId)))}">${Html.escape(t.links.cancel)}</a>`
      : ""
  return `<tr data-testid="link-row" data-link-id="${Html.escape(r.linkId)}" data-status="${Html.escape(r.status)}">
<td class="nowrap">${Html.time(r.createdAt, context.locale)}</td>
<td>${Html.escape(r.reference ?? r.linkId)}<br><span class="meta">${Html.escape(r.description ?? "")}</span></td>
<td class="num">${amountText(context, r)}</td>
<td>${Html.status(r.status)}</td>
<td class="nowrap">${r.expiresAt === null ? "—" : Html.time(r.expiresAt, context.locale)}</td>
<td><a href="${Html.escape(url)}" data-testid="link-url">${Html.escape(url)}</a></td>
<td>${cancel}</td>
</tr>`
}

/** GET: the list; after a creation, the new link's URL to copy. */
export const list = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const listings = yield* Listings.Listings
    const status = (context.query.get("status") ?? "").trim()
    const filter: Listings.LinkFilter = {
      mode: context.mode,
      ...((STATUSES as ReadonlyArray<string>).includes(status) ? { status } : {})
    }
    const request = Paging.requestOf(context.query)
    const page = yield* Effect.either(listings.links(session.merchantId, filter, request))
    if (Either.isLeft(page)) return Request.respond(Html.messagePage(context, "badRequest"), 400)
    const urls = yield* Effect.forEach(page.right.data, (r) => PublicUrls.linkUrl(r.linkId))
    const createdId = (context.query.get("created") ?? "").trim()
    const created =
      createdId === "" ? Option.none<LinkPayments.CheckoutView>() : yield* ownLink(session, createdId)
    const createdBox = Option.isSome(created)
      ? `<div class="notice ok" id="created-link" role="status" data-link-id="${Html.escape(createdId)}"><p>${Html.escape(t.links.created)}</p>
${Html.copyable("created-link-url", t.links.url, yield* PublicUrls.linkUrl(createdId), context.locale)}</div>`
      : ""
    const create =
      context.user?.role === "read_only"
        ? ""
        : `<a class="button primary" id="new-link" href="${Html.escape(Html.href(context, `${PATH}/new`))}">${Html.escape(t.links.new)}</a>`
    return Request.respond(
      Html.layout(
        context,
        "links",
        t.links.title,
        `${createdBox}<div class="card"><h1>${Html.escape(t.links.title)}</h1>
<div class="actions">${create}
<form method="get" action="${PATH}" id="link-filters" class="actions"><input type="hidden" name="mode" value="${context.mode}">${context.langChosen ? `<input type="hidden" name="lang" value="${context.locale}">` : ""}
<label class="sr-only" for="status">${Html.escape(t.payments.status)}</label><select id="status" name="status">${[
          ["", t.payments.status] as const,
          ...STATUSES.map((s) => [s, s] as const)
        ]
          .map(
            ([v, l]) => `<option value="${v}"${v === status ? " selected" : ""}>${Html.escape(l)}</option>`
          )
          .join("")}</select>
<button type="submit" class="secondary" id="apply-filters">${Html.escape(t.payments.apply)}</button></form></div>
${Html.table(
  "links",
  [
    t.payments.created,
    t.payments.reference,
    t.payments.amount,
    t.payments.status,
    t.links.expires,
    t.links.url,
    ""
  ],
  page.right.data.map((r, i) => row(context, r, urls[i]!)),
  t.links.empty
)}
${Paging.pager(context, PATH, { status }, request, page.right, (r) => r.linkId)}</div>`
      )
    )
  })
)

const formPage = (
  context: Html.Context,
  merchant: Merchant.Existing,
  values: LinkForm.Values,
  errors: ReadonlyArray<LinkForm.FieldError>
): string => {
  const t = Text.messages[context.locale]
  const error = (field: LinkForm.Field) => errors.find((e) => e.field === field)
  const text = (field: LinkForm.Field) => {
    const e = error(field)
    return e === undefined ? {} : { error: t.links.errors[e.key], apiMessage: e.apiMessage }
  }
  const offered = Merchant.LinkMethod.literals.filter((m) => merchant.linkMethods[m] !== undefined)
  const summary =
    errors.length > 0
      ? `<div class="notice bad" id="error-summary" role="alert"><strong>${Html.escape(t.errorSummary)}</strong><ul>${errors
          .map(
            (e) =>
              `<li><a href="#${e.field === "payment_methods" ? `payment_methods-${offered[0] ?? ""}` : e.field}">${Html.escape(t.links.errors[e.key])}</a></li>`
          )
          .join("")}</ul></div>`
      : ""
  const methodsError = error("payment_methods")
  const typeRadio = (value: "CLOSE" | "OPEN") =>
    `<label class="choice"><input type="radio" name="amount_type" id="amount_type-${value}" value="${value}"${values.amount_type === value ? " checked" : ""}> ${Html.escape(t.links.amountTypes[value])}</label>`
  return Html.layout(
    context,
    "links",
    t.links.new,
    `<div class="card"><h1>${Html.escape(t.links.new)}</h1>
${summary}<form method="post" action="${PATH}" id="link-form" novalidate>${Html.hiddenFields(context)}
<fieldset class="field"><legend class="label">${Html.escape(t.links.amountType)}</legend>${typeRadio("CLOSE")}${typeRadio("OPEN")}${Html.fieldError("amount_type", error("amount_type") ? t.links.errors[error("amount_type")!.key] : undefined)}</fieldset>
<div class="grid">
${Html.field({ name: "total_amount", label: t.links.total, value: values.total_amount, inputmode: "decimal", hint: t.links.totalHint, maxlength: 40, ...text("total_amount") })}
${Html.select(
  "currency",
  t.links.currency,
  [
    ["COP", "COP"],
    ["USD", "USD"]
  ],
  values.currency || "COP",
  error("currency") ? t.links.errors[error("currency")!.key] : undefined
)}
${Html.field({ name: "tip_amount", label: t.links.tip, value: values.tip_amount, inputmode: "decimal", maxlength: 40, ...text("tip_amount") })}
</div>
${Html.field({ name: "description", label: t.links.description, value: values.description, maxlength: 400, hint: t.links.descriptionHint, ...text("description") })}
<div class="grid">
${Html.field({ name: "reference", label: t.payments.reference, value: values.reference, maxlength: 200, hint: t.links.referenceHint, ...text("reference") })}
${Html.field({ name: "expiration_date", label: t.links.expiration, type: "datetime-local", value: values.expiration_date, hint: t.links.expirationHint, ...text("expiration_date") })}
</div>
<fieldset class="field"${methodsError ? ` aria-describedby="payment_methods-error"` : ""}><legend class="label">${Html.escape(t.links.methods)}</legend>
${
  offered.length === 0
    ? `<p class="meta" id="no-methods">${Html.escape(t.links.noMethodsOffered)}</p>`
    : offered
        .map(
          (m) =>
            `<label class="choice"><input type="checkbox" name="payment_methods" id="payment_methods-${m}" value="${m}"${values.payment_methods.includes(m) ? " checked" : ""}> ${Html.escape(t.methods[m] ?? m)}</label>`
        )
        .join("\n")
}
<p class="hint">${Html.escape(t.links.methodsHint)}</p>${Html.fieldError("payment_methods", methodsError ? t.links.errors[methodsError.key] : undefined, methodsError?.apiMessage)}</fieldset>
${Html.field({ name: "callback_url", label: t.links.callbackUrl, type: "url", value: values.callback_url, hint: t.links.callbackUrlHint, ...text("callback_url") })}
<div class="grid">
${Html.field({ name: "payer_email", label: t.links.payerEmail, type: "email", value: values.payer_email, maxlength: 254, ...text("payer_email") })}
${Html.field({ name: "image_url", label: t.links.imageUrl, type: "url", value: values.image_url, hint: t.links.imageUrlHint, ...text("image_url") })}
</div>
${Html.fieldError("form", error("form") ? t.links.errors[error("form")!.key] : undefined, error("form")?.apiMessage)}
<div class="actions"><button type="submit" class="primary" id="create-link">${Html.escape(t.links.create)}</button>
<a class="button secondary" id="back-to-links" href="${Html.escape(Html.href(context, PATH))}">${Html.escape(t.goBack)}</a></div>
</form></div>`
  )
}

const merchantOf = (session: PanelSessions.Session) =>
  MerchantAdmin.getMerchant(session.merchantId).pipe(Effect.orDie)

/** GET: the form. */
export const newForm = Guard.page((session, context) =>
  Effect.map(merchantOf(session), (merchant) =>
    Request.respond(formPage(context, merchant, LinkForm.EMPTY, []))
  )
)

/** The credential B2 would see for the merchant's payment-button key of the mode, if that integration is active. */
const credentialOf = (merchant: Merchant.Existing, mode: Listings.Mode) =>
  Option.map(
    Merchant.keyPairFor(merchant, "payment_button", mode),
    (pair) =>
      new Credential({
        merchantId: merchant.merchantId,
        integration: "payment_button",
        mode,
        identityKeyHash: pair.identityKeyHash
      })
  )

/** POST: creates the link (303 to the list, which shows its URL), or the form again with its errors (400). */
export const create = FormKey.action(
  { changes: true },
  // The link the form created: its first stream.
  (_session, context, _form, resource) =>
    Effect.succeed(
      Request.redirect(
        resource.startsWith(LINK_STREAM)
          ? Html.withNotice(
              Html.href(context, PATH, { created: resource.slice(LINK_STREAM.length) }),
              "linkCreated"
            )
          : Html.href(context, PATH)
      )
    ),
  (session, context, form) =>
    Effect.gen(function* () {
      const merchant = yield* merchantOf(session)
      const values = LinkForm.read(form)
      const again = (errors: ReadonlyArray<LinkForm.FieldError>, status = 400) =>
        Request.respond(formPage(context, merchant, values, errors), status)
      const request = LinkForm.toRequest(values)
      if (Either.isLeft(request)) return again(request.left)
      const credential = credentialOf(merchant, context.mode)
      if (Option.isNone(credential)) return again([{ field: "form", key: "buttonInactive" }], 409)
      return yield* LinkPayments.create(credential.value, request.right, Guard.metadataOf(session)).pipe(
        Effect.map(({ linkId }) =>
          Request.redirect(Html.withNotice(Html.href(context, PATH, { created: linkId }), "linkCreated"))
        ),
        Effect.catchTags({
          InvalidLinkRequest: (e) => Effect.succeed(again(LinkForm.fromInvalidLinkRequest(e))),
          MerchantNotInState: () => Effect.succeed(again([{ field: "form", key: "merchantDisabled" }], 403))
        }),
        // A merchant that vanished, a clash of fresh ids, contention beyond the retries: a defect (500 page).
        Effect.catchAll((e) => Effect.die(e))
      )
    })
)

/** GET: asks before cancelling an ACTIVE link; any other is answered on the list. */
export const confirmCancel = Guard.page((session, context) =>
  Effect.gen(function* () {
    const t = Text.messages[context.locale]
    const linkId = yield* Request.param("link_id")
    const found = yield* ownLink(session, linkId)
    if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
    const view = found.value
    const here: Html.Context = { ...context, mode: view.state.link.sandbox ? "test" : "production" }
    if (view.status !== "ACTIVE")
      return Request.redirect(Html.withNotice(Html.href(here, PATH), "notCancellable"))
    return Request.respond(
      Html.confirmPage(here, "links", {
        title: t.links.cancelTitle,
        text: t.links.cancelText(view.state.link.reference, view.state.link.linkId),
        action: cancelPath(linkId),
        confirm: t.links.cancelConfirm,
        back: Html.href(here, PATH)
      })
    )
  })
)

/**
 * POST: cancels the link, as the admin API does: only an ACTIVE link (as a reader sees it now), and
 * a payment that starts meanwhile wins. Back to the list with the outcome.
 */
export const cancel = FormKey.action(
  { changes: true },
  // The confirmation's form carries the link's mode.
  (_session, context) =>
    Effect.succeed(Request.redirect(Html.withNotice(Html.href(context, PATH), "linkCancelled"))),
  (session, context) =>
    Effect.gen(function* () {
      const linkId = yield* Request.param("link_id")
      const found = yield* ownLink(session, linkId)
      if (Option.isNone(found)) return Request.respond(Html.messagePage(context, "notFound"), 404)
      const here: Html.Context = { ...context, mode: found.value.state.link.sandbox ? "test" : "production" }
      const back = (notice: Text.FlashKey) => Request.redirect(Html.withNotice(Html.href(here, PATH), notice))
      if (found.value.status !== "ACTIVE" && found.value.status !== "CANCELLED") return back("notCancellable")
      return yield* LinkPayments.cancel(linkId, Guard.metadataOf(session)).pipe(
        Effect.as(back("linkCancelled")),
        Effect.catchAll((e) =>
          e._tag === "LinkNotInState" ? Effect.succeed(back("notCancellable")) : Effect.die(e)
        )
      )
    })
)
