/**
 * The HTML of the hosted checkout page (issue 6): the link's page with its payment form, the
 * simulated 3DS, bank and wallet steps, and the result pages. Plain server-rendered HTML that works
 * without JavaScript; a small script only shows the chosen method's fields and guards double submits.
 * Every text that comes from a merchant or a payer is escaped.
 */
import type * as LinkPayments from "@cobro/domain/LinkPayments"
import * as ReturnUrl from "@cobro/domain/ReturnUrl"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import type * as Form from "./CheckoutPageForm.js"
import { INSTALLMENTS } from "./CheckoutPageForm.js"
import * as Text from "./CheckoutPageText.js"

/** Escapes text for HTML content and double- or single-quoted attributes. */
export const escape = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c
  )

const STYLE = `
:root{--ink:#16202f;--muted:#4a5568;--line:#cfd6e0;--bg:#f3f5f8;--card:#fff;--brand:#0b5cad;--brand-ink:#fff;--ok:#0f6b3a;--ok-bg:#e7f5ec;--bad:#a3141c;--bad-bg:#fdecec;--warn:#7a4b00;--warn-bg:#fff4d6;--focus:#f2a900}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:1rem;line-height:1.5;color:var(--ink);background:var(--bg)}
a{color:var(--brand)}
.wrap{max-width:30rem;margin:0 auto;padding:1rem}
.top{display:flex;justify-content:space-between;align-items:center;gap:.5rem;margin:.25rem 0 1rem;font-size:.9rem;color:var(--muted)}
.top a{font-weight:600}
.card{background:var(--card);border:1px solid var(--line);border-radius:.9rem;padding:1.25rem;box-shadow:0 1px 2px rgba(22,32,47,.06)}
.merchant{margin:0;font-size:.95rem;color:var(--muted);font-weight:500}
.merchant strong{display:block;font-size:1.2rem;color:var(--ink);font-weight:700}
h1{font-size:1.35rem;line-height:1.25;margin:0 0 .5rem}
.product{display:block;width:100%;max-height:14rem;object-fit:cover;border-radius:.6rem;margin:0 0 1rem;background:var(--bg)}
.description{margin:.5rem 0 0}
.amount{font-size:2rem;font-weight:700;letter-spacing:-.01em;margin:.25rem 0 0;font-variant-numeric:tabular-nums}
.meta{color:var(--muted);font-size:.875rem;margin:.25rem 0 0;overflow-wrap:anywhere}
.badge{display:inline-block;background:var(--warn-bg);color:var(--warn);border:1px solid #e9c46a;border-radius:999px;padding:.1rem .6rem;font-size:.8rem;font-weight:600}
.notice{border-radius:.6rem;padding:.75rem 1rem;margin:1rem 0;border:1px solid}
.notice.warn{background:var(--warn-bg);color:var(--warn);border-color:#e9c46a}
.notice.bad{background:var(--bad-bg);color:var(--bad);border-color:#f1b0b3}
.notice.ok{background:var(--ok-bg);color:var(--ok);border-color:#9fd3b2}
.notice ul{margin:.25rem 0 0;padding-left:1.2rem}
.notice:focus{outline:3px solid var(--focus);outline-offset:2px}
hr{border:0;border-top:1px solid var(--line);margin:1.25rem 0}
fieldset{border:0;margin:0 0 1rem;padding:0}
legend{font-weight:600;margin-bottom:.5rem;padding:0}
.choice{display:flex;align-items:center;gap:.6rem;border:1px solid var(--line);border-radius:.6rem;padding:.7rem .85rem;margin:0 0 .5rem;cursor:pointer;min-height:3rem}
.choice:has(input:checked){border-color:var(--brand);box-shadow:inset 0 0 0 1px var(--brand)}
.choice input{width:1.2rem;height:1.2rem;margin:0;accent-color:var(--brand)}
.field{margin:0 0 1rem}
label.text{display:block;font-weight:600;margin:0 0 .3rem}
input[type=text],input[type=tel],select{width:100%;font:inherit;color:var(--ink);background:#fff;border:1px solid #8a94a6;border-radius:.5rem;padding:.65rem .75rem;min-height:2.9rem}
input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad);box-shadow:inset 0 0 0 1px var(--bad)}
input:focus,select:focus,button:focus,a:focus,.choice input:focus{outline:3px solid var(--focus);outline-offset:2px}
.hint{color:var(--muted);font-size:.875rem;margin:.3rem 0 0}
.error{color:var(--bad);font-size:.9rem;font-weight:600;margin:.3rem 0 0}
.row{display:grid;grid-template-columns:1fr 1fr;gap:.75rem}
.method{border-left:3px solid var(--line);padding:.25rem 0 .1rem .85rem;margin:0 0 1rem}
.method h2{font-size:1rem;margin:0 0 .6rem}
.js .method[hidden]{display:none}
button{font:inherit;font-weight:700;border-radius:.6rem;padding:.8rem 1.2rem;min-height:3rem;cursor:pointer;border:1px solid var(--brand)}
button.primary{width:100%;background:var(--brand);color:var(--brand-ink);font-size:1.05rem}
button.secondary{background:#fff;color:var(--brand)}
button[disabled]{opacity:.7;cursor:progress}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
.actions form{flex:1 1 8rem;margin:0}
.actions button{width:100%}
details{margin-top:1rem;font-size:.9rem;color:var(--muted)}
summary{cursor:pointer;font-weight:600;color:var(--ink)}
table{border-collapse:collapse;width:100%;margin:.5rem 0 0}
td{border-top:1px solid var(--line);padding:.3rem .25rem;vertical-align:top}
td:first-child{font-variant-numeric:tabular-nums;white-space:nowrap;font-weight:600;color:var(--ink)}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem .75rem;margin:1rem 0 0;font-size:.9rem}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
footer{text-align:center;color:var(--muted);font-size:.8rem;margin:1.25rem 0 2rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
@media (min-width:48rem){.wrap{padding:2.5rem 1rem}.card{padding:1.75rem}}
`

// Progressive enhancement only: the form works without it.
const SCRIPT = `(function(){var d=document;d.documentElement.className+=" js";
var form=d.getElementById("pay-form");if(!form)return;
var radios=form.querySelectorAll("input[name=method]");
function show(){var chosen=form.querySelector("input[name=method]:checked");
form.querySelectorAll(".method").forEach(function(s){var on=!chosen||s.getAttribute("data-method")===chosen.value;s.hidden=!on;
s.querySelectorAll("input,select").forEach(function(i){i.disabled=!on})});
var amount=d.getElementById("amount"),hint=d.getElementById("amount-hint");
if(chosen&&hint&&chosen.getAttribute("data-bounds"))hint.textContent=chosen.getAttribute("data-bounds");
if(chosen&&amount){amount.setAttribute("data-min",chosen.getAttribute("data-min"));amount.setAttribute("data-max",chosen.getAttribute("data-max"))}}
radios.forEach(function(r){r.addEventListener("change",show)});show();
var number=d.getElementById("card_number");if(number)number.addEventListener("input",function(){var v=number.value.replace(/[^0-9]/g,"").slice(0,19);var f=v.replace(/(.{4})/g,"$1 ").trim();if(f!==number.value)number.value=f});
var expiry=d.getElementById("card_expiry");if(expiry)expiry.addEventListener("input",function(e){var v=expiry.value.replace(/[^0-9]/g,"").slice(0,4);if(v.length>2||(v.length===2&&e.inputType!=="deleteContentBackward"))v=v.slice(0,2)+"/"+v.slice(2);expiry.value=v});
form.addEventListener("submit",function(){var b=d.getElementById("pay");if(b){setTimeout(function(){b.disabled=true;b.textContent=b.getAttribute("data-busy")},0)}});
var summary=d.getElementById("error-summary");if(summary)summary.focus()})();`

/** The page's script's hash, for the Content-Security-Policy (no inline script runs without it). */
const SCRIPT_HASH = createHash("sha256").update(SCRIPT).digest("base64")

/**
 * The page's security headers: nothing loads but the page's own style and script and https images;
 * no framing (a payment page must not be clickjacked); no caching; no referrer (the link id is the
 * page's only secret).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": `default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; base-uri 'none'; frame-ancestors 'none'`,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** What every page knows: its language and the path that switches it. */
export interface PageContext {
  readonly locale: Text.Locale
  /** The current path without query: the language switch links to it with `?lang=`. */
  readonly path: string
}

/** The document around a page's body. */
export const layout = (context: PageContext, title: string, body: string): string => {
  const t = Text.messages[context.locale]
  const other: Text.Locale = context.locale === "es" ? "en" : "es"
  return `<!doctype html>
<html lang="${context.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)} · Cobro</title>
<style>${STYLE}</style>
</head>
<body>
<div class="wrap">
<div class="top"><span>${escape(t.securedBy)}</span><a href="${escape(context.path)}?lang=${other}" lang="${other}" hreflang="${other}">${escape(t.language)}</a></div>
<main class="card" id="main">
${body}
</main>
<footer>Cobro</footer>
</div>
<script>${SCRIPT}</script>
</body>
</html>`
}

const money = (amount: number, currency: string, locale: Text.Locale) =>
  escape(Text.formatMoney(amount, currency, locale))

/** The link's currency: a CLOSE link's own, COP for an OPEN link (the payer pays pesos). */
export const currencyOf = (view: LinkPayments.CheckoutView): string =>
  Option.match(view.state.link.amount, { onNone: () => "COP", onSome: (a) => a.currency })

/** The header of every page about a link: merchant, sandbox badge, image, description, amount. */
const summary = (view: LinkPayments.CheckoutView, locale: Text.Locale, shownAmount: number | undefined) => {
  const t = Text.messages[locale]
  const link = view.state.link
  const image = Option.match(link.imageUrl, {
    onNone: () => "",
    onSome: (url) =>
      `<img class="product" id="product-image" src="${escape(url)}" alt="" width="480" height="224">`
  })
  const description = Option.match(link.description, {
    onNone: () => "",
    onSome: (d) => `<p class="description" id="description">${escape(d)}</p>`
  })
  const amount =
    shownAmount === undefined
      ? ""
      : `<p class="amount" id="amount-total"><span class="sr-only">${escape(t.amount)}: </span>${money(shownAmount, currencyOf(view), locale)}</p>`
  const sandbox = link.sandbox
    ? `<p class="notice warn" id="sandbox-notice"><span class="badge">Sandbox</span> ${escape(t.sandbox)}</p>`
    : ""
  return `${image}<p class="merchant">${escape(t.payTo)} <strong id="merchant-name">${escape(view.merchantName)}</strong></p>
${description}${amount}
<p class="meta">${escape(t.reference)}: <span id="reference">${escape(link.reference)}</span></p>
${sandbox}`
}

/** What the payer sent, shown again with its errors (never the card number nor the CVC). */
export interface FormState {
  readonly fields: Form.Fields
  readonly errors: ReadonlyArray<Form.FieldError>
}

const errorText = (error: Form.FieldError, view: LinkPayments.CheckoutView, locale: Text.Locale): string => {
  const t = Text.messages[locale]
  if (error.key === "amountBounds") {
    const bounds = error.bounds ?? { min: 0, max: 0 }
    return t.errors.amountBounds(
      Text.formatMoney(bounds.min, currencyOf(view), locale),
      Text.formatMoney(bounds.max, currencyOf(view), locale)
    )
  }
  return t.errors[error.key]
}

/** The page's elements' ids, by field: errors link to them. */
const inputId: Record<Form.FieldName, string> = {
  method: "method-0",
  amount: "amount",
  card_number: "card_number",
  card_name: "card_name",
  card_expiry: "card_expiry",
  card_cvc: "card_cvc",
  installments: "installments",
  bank: "bank",
  phone: "phone"
}

const input = (
  options: {
    readonly name: Form.FieldName
    readonly label: string
    readonly value?: string
    readonly type?: string
    readonly autocomplete: string
    readonly inputmode?: string
    readonly hint?: string
    readonly maxlength?: number
  },
  form: FormState | undefined,
  view: LinkPayments.CheckoutView,
  locale: Text.Locale
) => {
  const error = form?.errors.find((e) => e.field === options.name)
  const described = [options.hint ? `${options.name}-hint` : "", error ? `${options.name}-error` : ""]
    .filter((s) => s !== "")
    .join(" ")
  return `<div class="field">
<label class="text" for="${inputId[options.name]}">${escape(options.label)}</label>
<input type="${options.type ?? "text"}" id="${inputId[options.name]}" name="${options.name}" autocomplete="${options.autocomplete}"${options.inputmode ? ` inputmode="${options.inputmode}"` : ""}${options.maxlength ? ` maxlength="${options.maxlength}"` : ""} value="${escape(options.value ?? "")}"${described ? ` aria-describedby="${described}"` : ""}${error ? ` aria-invalid="true"` : ""}>
${options.hint ? `<p class="hint" id="${options.name}-hint">${escape(options.hint)}</p>` : ""}${error ? `<p class="error" id="${options.name}-error">${escape(errorText(error, view, locale))}</p>` : ""}
</div>`
}

const selectField = (
  name: Form.FieldName,
  label: string,
  options: ReadonlyArray<{ readonly value: string; readonly label: string }>,
  value: string,
  form: FormState | undefined,
  view: LinkPayments.CheckoutView,
  locale: Text.Locale
) => {
  const error = form?.errors.find((e) => e.field === name)
  return `<div class="field">
<label class="text" for="${inputId[name]}">${escape(label)}</label>
<select id="${inputId[name]}" name="${name}"${error ? ` aria-invalid="true" aria-describedby="${name}-error"` : ""}>
${options.map((o) => `<option value="${escape(o.value)}"${o.value === value ? " selected" : ""}>${escape(o.label)}</option>`).join("\n")}
</select>
${error ? `<p class="error" id="${name}-error">${escape(errorText(error, view, locale))}</p>` : ""}
</div>`
}

const sandboxHelp = (locale: Text.Locale, currency: string) => {
  const t = Text.messages[locale]
  const rows = ["555001", "555002", "555020", "555040", "555042"]
    .map(
      (a) =>
        `<tr><td>${money(Number(a), currency, locale)}</td><td>${escape(t.sandboxOutcomes[a] ?? "")}</td></tr>`
    )
    .join("")
  return `<details id="sandbox-help"><summary>${escape(t.sandboxHelp)}</summary>
<p>${escape(t.sandboxCards)}</p><p>${escape(t.sandboxAmounts)}</p>
<table>${rows}<tr><td>…</td><td>${escape(t.sandboxOutcomes["other"] ?? "")}</td></tr></table></details>`
}

/** Extra things the link's page may say above its form. */
export interface LinkPageOptions {
  readonly form?: FormState | undefined
  /** The last payment was declined (shown after a declined card, bank or wallet). */
  readonly declined?: boolean
  /** The payment under way waits for the payer at this address (shown to a second tab). */
  readonly continueUrl?: string | undefined
  readonly banks: ReadonlyArray<{ readonly code: string; readonly name: string }>
  /** Where the form posts: the link's page. */
  readonly action: string
  readonly isCard: (method: string) => boolean
}

/**
 * The link's page: its summary, then the payment form when the link can be paid now, or its status
 * when it cannot (PROCESSING, PAID, EXPIRED, CANCELLED, REJECTED, or no method available).
 */
export const linkPage = (
  context: PageContext,
  view: LinkPayments.CheckoutView,
  options: LinkPageOptions
): string => {
  const t = Text.messages[context.locale]
  const locale = context.locale
  const link = view.state.link
  const open = Option.isNone(link.amount)
  const closeTotal = Option.map(link.amount, (a) => a.total)
  const shown =
    Option.getOrUndefined(closeTotal) ??
    (view.status === "ACTIVE" ? undefined : view.record.total || undefined)
  const currency = currencyOf(view)
  const head = summary(view, locale, shown)
  const title = view.status === "ACTIVE" ? t.title : (t.statusTitle[view.status] ?? t.title)

  if (view.status !== "ACTIVE" || view.methods.length === 0) {
    const message = view.status === "ACTIVE" ? t.status["NO_METHOD"] : t.status[view.status]
    const tone = view.status === "PAID" ? "ok" : view.status === "PROCESSING" ? "warn" : "bad"
    const more =
      view.status === "PROCESSING" && options.continueUrl !== undefined
        ? `<p><a id="continue" href="${escape(options.continueUrl)}">${escape(t.continuePayment)}</a></p>`
        : ""
    const back = returnLink(view, locale)
    return layout(
      context,
      title,
      `${head}<hr><h1 id="status-title">${escape(title)}</h1>
<p class="notice ${tone}" id="status" data-status="${view.status}" role="status">${escape(message ?? "")}</p>${more}${back}`
    )
  }

  const form = options.form
  const errors = form?.errors ?? []
  // The first method is chosen until the payer picks another (with JavaScript, only its fields show).
  const chosen = form?.fields.method || view.methods[0]!.method
  const errorSummary =
    errors.length > 0
      ? `<div class="notice bad" id="error-summary" role="alert" tabindex="-1"><strong>${escape(t.errorSummary)}</strong><ul>${errors
          .map((e) => `<li><a href="#${inputId[e.field]}">${escape(errorText(e, view, locale))}</a></li>`)
          .join("")}</ul></div>`
      : ""
  const declined = options.declined
    ? `<p class="notice bad" id="declined" role="alert">${escape(t.declined)}</p>`
    : ""

  const boundsText = (m: LinkPayments.PayableMethod) =>
    t.amountBounds(
      Text.formatMoney(m.bounds.min, currency, locale),
      Text.formatMoney(m.bounds.max, currency, locale)
    )
  const selectedBounds = view.methods.find((m) => m.method === chosen) ?? view.methods[0]!
  const amountField = open
    ? input(
        {
          name: "amount",
          label: t.amountOpen,
          value: form?.fields.amount ?? "",
          autocomplete: "transaction-amount",
          inputmode: "numeric",
          hint: boundsText(selectedBounds),
          maxlength: 20
        },
        form,
        view,
        locale
      )
    : ""

  const methodError = errors.find((e) => e.field === "method")
  const radios = view.methods
    .map(
      (m, i) =>
        `<label class="choice"><input type="radio" name="method" id="method-${i}" value="${m.method}" data-bounds="${escape(boundsText(m))}" data-min="${m.bounds.min}" data-max="${m.bounds.max}"${m.method === chosen ? " checked" : ""}${methodError ? ` aria-describedby="method-error"` : ""}> <span>${escape(t.methods[m.method] ?? m.method)}</span></label>`
    )
    .join("\n")

  const sections = view.methods
    .map((m) => {
      const heading = `<h2>${escape(t.methods[m.method] ?? m.method)}</h2>`
      if (options.isCard(m.method)) {
        return `<div class="method" data-method="${m.method}">${heading}
${input({ name: "card_number", label: t.cardNumber, autocomplete: "cc-number", inputmode: "numeric", maxlength: 23 }, form, view, locale)}
${input({ name: "card_name", label: t.cardName, value: form?.fields.card_name ?? "", autocomplete: "cc-name", maxlength: 100 }, form, view, locale)}
<div class="row">
${input({ name: "card_expiry", label: t.cardExpiry, value: form?.fields.card_expiry ?? "", autocomplete: "cc-exp", inputmode: "numeric", maxlength: 7 }, form, view, locale)}
${input({ name: "card_cvc", label: t.cardCvc, autocomplete: "cc-csc", inputmode: "numeric", maxlength: 4 }, form, view, locale)}
</div>
${selectField(
  "installments",
  t.installments,
  INSTALLMENTS.map((n) => ({ value: String(n), label: String(n) })),
  form?.fields.installments || "1",
  form,
  view,
  locale
)}
</div>`
      }
      if (m.method === "PSE") {
        return `<div class="method" data-method="PSE">${heading}
${selectField("bank", t.bank, [{ value: "", label: t.chooseBank }, ...options.banks.map((b) => ({ value: b.code, label: b.name }))], form?.fields.bank ?? "", form, view, locale)}
</div>`
      }
      if (m.method === "WALLET_A") {
        return `<div class="method" data-method="WALLET_A">${heading}
${input({ name: "phone", label: t.phone, value: form?.fields.phone ?? "", type: "tel", autocomplete: "tel-national", inputmode: "tel", maxlength: 16 }, form, view, locale)}
</div>`
      }
      return `<div class="method" data-method="${escape(m.method)}">${heading}<p class="hint">${escape(t.bankButtonNote)}</p></div>`
    })
    .join("\n")

  const payLabel = Option.match(closeTotal, {
    onNone: () => t.payOpen,
    onSome: (total) => t.pay(Text.formatMoney(total, currency, locale))
  })
  return layout(
    context,
    title,
    `${head}${declined}${errorSummary}
<form method="post" action="${escape(options.action)}" id="pay-form" novalidate>
<input type="hidden" name="lang" value="${locale}">
${amountField}
<fieldset${methodError ? ` aria-describedby="method-error"` : ""}><legend>${escape(t.methodLegend)}</legend>
${radios}
${methodError ? `<p class="error" id="method-error">${escape(errorText(methodError, view, locale))}</p>` : ""}
</fieldset>
${sections}
<button type="submit" class="primary" id="pay" data-busy="${escape(t.processingButton)}">${escape(payLabel)}</button>
</form>
${link.sandbox ? sandboxHelp(locale, currency) : ""}${returnLink(view, locale)}`
  )
}

const returnLink = (view: LinkPayments.CheckoutView, locale: Text.Locale) =>
  Option.match(Option.flatMap(view.state.link.callbackUrl, ReturnUrl.toLocation), {
    onNone: () => "",
    onSome: (url) =>
      `<p class="meta"><a id="return" href="${escape(url)}">${escape(Text.messages[locale].returnToStore)}</a></p>`
  })

/**
 * A transaction's page: the simulated 3DS challenge, bank or wallet with approve and decline while it
 * waits for the payer; a page that refreshes itself while a card is being authorized; the
 * confirmation once approved.
 */
export const transactionPage = (context: PageContext, current: LinkPayments.TransactionView): string => {
  const t = Text.messages[context.locale]
  const locale = context.locale
  const view = current.view
  const head = summary(view, locale, current.amount)
  const details = `<dl><dt>${escape(t.method)}</dt><dd id="payment-method">${escape(t.methods[current.paymentMethod] ?? current.paymentMethod)}</dd><dt>${escape(t.transaction)}</dt><dd id="transaction-id">${escape(current.transactionId)}</dd></dl>`
  const outcome = current.outcome
  if (outcome._tag === "Approved") {
    return layout(
      context,
      t.paidTitle,
      `${head}<hr><h1 id="result-title">${escape(t.paidTitle)}</h1>
<p class="notice ok" id="result" data-status="PAID" role="status">${escape(t.paidText)}</p>${details}${returnLink(view, locale)}`
    )
  }
  if (outcome._tag === "Pending" && Option.isSome(outcome.step)) {
    const step = t.step[outcome.step.value] ?? { title: t.title, text: "" }
    const hidden = `<input type="hidden" name="lang" value="${locale}">`
    return layout(
      context,
      step.title,
      `${head}<hr><h1>${escape(step.title)}</h1>
<p>${escape(step.text)}</p>${details}
<div class="actions">
<form method="post" action="${escape(context.path)}">${hidden}<input type="hidden" name="decision" value="approve"><button type="submit" class="primary" id="approve">${escape(t.approve)}</button></form>
<form method="post" action="${escape(context.path)}">${hidden}<input type="hidden" name="decision" value="decline"><button type="submit" class="secondary" id="decline">${escape(t.decline)}</button></form>
</div>
<p class="meta">${escape(t.simulated)}</p>`
    )
  }
  if (outcome._tag === "Expired") {
    // The payer came back after the timeout sweeper failed the payment: the link's page, if payable again.
    const linkPath = context.path.replace(/\/payments\/[^/]*$/, "")
    const again =
      view.status === "ACTIVE" && view.methods.length > 0
        ? `<p><a id="pay-again" href="${escape(`${linkPath}?lang=${locale}`)}">${escape(t.payAgain)}</a></p>`
        : ""
    return layout(
      context,
      t.expiredTitle,
      `${head}<hr><h1 id="result-title">${escape(t.expiredTitle)}</h1>
<p class="notice bad" id="result" data-status="EXPIRED" role="alert">${escape(t.expiredText)}</p>${details}${again}${returnLink(view, locale)}`
    )
  }
  // A card being authorized (milliseconds), or a declined payment shown on its own address.
  return layout(
    context,
    t.title,
    `${head}<hr><p class="notice warn" id="result" data-status="PROCESSING" role="status">${escape(t.awaitingCard)}</p>${details}`
  ).replace("<head>", `<head>\n<meta http-equiv="refresh" content="2">`)
}

/** A page that says something went wrong: a link that does not exist, or a failure of ours. */
export const messagePage = (context: PageContext, kind: "notFound" | "error" | "alreadyDecided"): string => {
  const t = Text.messages[context.locale]
  const [title, text] =
    kind === "notFound"
      ? [t.notFoundTitle, t.notFoundText]
      : kind === "error"
        ? [t.errorTitle, t.errorText]
        : [t.title, t.alreadyDecided]
  return layout(
    context,
    title,
    `<h1>${escape(title)}</h1><p class="notice bad" id="message" role="alert">${escape(text)}</p>`
  )
}
