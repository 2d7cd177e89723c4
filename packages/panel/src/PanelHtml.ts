/**
 * The merchant panel's HTML (issue 22): the layout every page shares (navigation, the
 * test/production switch, the language switch, sign-out), its pieces (fields with their errors,
 * notices, tables, times, amounts, confirmation pages) and its security headers. Plain
 * server-rendered HTML in the checkout page's style that works without JavaScript; a small script
 * only adds "copy" buttons. Everything a merchant, a payer or a receiver wrote is escaped.
 */
import { createHash, randomUUID } from "node:crypto"
import type * as Listings from "@cobro/domain/Listings"
import type * as PanelSessions from "@cobro/domain/PanelSessions"
import * as Locale from "@cobro/domain/Locale"
import * as Text from "./PanelText.js"

/**
 * Escapes text for HTML content and double- or single-quoted attributes: the same five entities as
 * the checkout page's (`@cobro/pages/CheckoutPageHtml`); the two hosted surfaces import nothing of
 * each other.
 */
export const escape = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c
  )

/** The panel's path. */
export const PREFIX = "/panel"

/** The sections of the navigation, by their path under {@link PREFIX}. */
export type Section = "payments" | "links" | "integrations" | "webhooks" | "terminals"

/** The sections in the order the navigation shows them. */
export const SECTIONS: ReadonlyArray<Section> = ["payments", "links", "integrations", "webhooks", "terminals"]

/** The signed-in user as the pages show them. */
export interface User {
  readonly email: string
  /** The name of the merchant account the user is in: every page says which one (issue 31, item 12). */
  readonly merchantName: string
  readonly role: PanelSessions.Role
  /** The token every form of the session carries. */
  readonly csrf: string
}

/** What every page knows: its language, its mode, its address and who is signed in. */
export interface Context {
  readonly locale: Text.Locale
  /** The language was chosen (a `lang` in the query or the form): links and forms carry it on. */
  readonly langChosen: boolean
  /** Production or test data: every list and form of the page is of this mode. */
  readonly mode: Listings.Mode
  /** The current path, without query. */
  readonly path: string
  readonly query: URLSearchParams
  readonly user?: User | undefined
}

/**
 * A panel address: `path` with `params` (empty values left out), plus the mode when it is test and
 * the language when one was chosen, unless `params` names them.
 */
export const href = (
  context: Context,
  path: string,
  params: Readonly<Record<string, string | undefined>> = {}
): string => {
  const query = new URLSearchParams()
  if (context.mode === "test" && !("mode" in params)) query.set("mode", "test")
  if (context.langChosen && !("lang" in params)) query.set("lang", context.locale)
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") query.set(name, value)
  }
  const text = query.toString()
  return text === "" ? path : `${path}?${text}`
}

/** The hidden field that makes a rendered form act once (`FormKey`). */
export const FORM_KEY = "form_key"

/**
 * The hidden fields every form carries: the session's CSRF token, a one-time key of its own (each
 * form of each render another one: `FormKey`), the mode and the language.
 */
export const hiddenFields = (context: Context): string =>
  [
    context.user ? `<input type="hidden" name="csrf" value="${escape(context.user.csrf)}">` : "",
    // Minted here, where the form is written: two forms of one page, or two renders, never share one.
    context.user ? `<input type="hidden" name="${FORM_KEY}" value="${randomUUID()}">` : "",
    `<input type="hidden" name="mode" value="${context.mode}">`,
    context.langChosen ? `<input type="hidden" name="lang" value="${context.locale}">` : ""
  ].join("")

const STYLE = `
:root{--ink:#16202f;--muted:#4a5568;--line:#cfd6e0;--bg:#f3f5f8;--card:#fff;--brand:#0b5cad;--brand-ink:#fff;--ok:#0f6b3a;--ok-bg:#e7f5ec;--bad:#a3141c;--bad-bg:#fdecec;--warn:#7a4b00;--warn-bg:#fff4d6;--focus:#f2a900}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:1rem;line-height:1.5;color:var(--ink);background:var(--bg)}
a{color:var(--brand)}
.wrap{max-width:72rem;margin:0 auto;padding:.75rem}
header.bar{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem .75rem;margin:0 0 .75rem}
.brand{font-weight:800;font-size:1.15rem;color:var(--ink);text-decoration:none}
.who{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;font-size:.875rem;color:var(--muted)}
.who form{margin:0}
#merchant-name{min-width:0;overflow-wrap:anywhere;color:var(--ink)}
nav.sections{display:flex;gap:.25rem;overflow-x:auto;margin:0 0 .75rem;padding-bottom:.25rem}
nav.sections a{white-space:nowrap;padding:.5rem .8rem;border-radius:.5rem;text-decoration:none;font-weight:600;color:var(--muted)}
nav.sections a[aria-current=page]{background:var(--card);color:var(--brand);box-shadow:inset 0 0 0 1px var(--line)}
.switch{display:inline-flex;border:1px solid var(--line);border-radius:999px;overflow:hidden;font-size:.875rem}
.switch a{padding:.3rem .75rem;text-decoration:none;color:var(--muted);font-weight:600}
.switch a[aria-current=true]{background:var(--brand);color:var(--brand-ink)}
.switch a.test[aria-current=true]{background:var(--warn);color:#fff}
.card{background:var(--card);border:1px solid var(--line);border-radius:.9rem;padding:1rem;box-shadow:0 1px 2px rgba(22,32,47,.06);margin:0 0 1rem}
h1{font-size:1.35rem;line-height:1.25;margin:0 0 .75rem}
h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
h2:first-child{margin-top:0}
.meta{color:var(--muted);font-size:.875rem;margin:.25rem 0 0;overflow-wrap:anywhere}
.badge{display:inline-block;border-radius:999px;padding:.05rem .55rem;font-size:.8rem;font-weight:700;border:1px solid var(--line);background:var(--bg);white-space:nowrap}
.badge.ok{background:var(--ok-bg);color:var(--ok);border-color:#9fd3b2}
.badge.bad{background:var(--bad-bg);color:var(--bad);border-color:#f1b0b3}
.badge.warn{background:var(--warn-bg);color:var(--warn);border-color:#e9c46a}
.notice{border-radius:.6rem;padding:.75rem 1rem;margin:0 0 1rem;border:1px solid}
.notice.warn{background:var(--warn-bg);color:var(--warn);border-color:#e9c46a}
.notice.bad{background:var(--bad-bg);color:var(--bad);border-color:#f1b0b3}
.notice.ok{background:var(--ok-bg);color:var(--ok);border-color:#9fd3b2}
.notice ul{margin:.25rem 0 0;padding-left:1.2rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.925rem}
th{text-align:left;font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);border-bottom:1px solid var(--line);padding:.4rem .5rem;white-space:nowrap}
td{border-bottom:1px solid var(--line);padding:.5rem;vertical-align:top;overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.nowrap{white-space:nowrap}
.field{margin:0 0 1rem}
label.text,.label{display:block;font-weight:600;margin:0 0 .3rem}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=search],input[type=date],input[type=datetime-local],input[type=number],select,textarea{width:100%;font:inherit;color:var(--ink);background:#fff;border:1px solid #8a94a6;border-radius:.5rem;padding:.55rem .7rem;min-height:2.75rem}
input[readonly]{background:var(--bg)}
input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad);box-shadow:inset 0 0 0 1px var(--bad)}
input:focus,select:focus,button:focus,a:focus,textarea:focus{outline:3px solid var(--focus);outline-offset:2px}
.choice{display:flex;align-items:center;gap:.5rem;margin:0 0 .4rem}
.choice input{width:1.15rem;height:1.15rem;margin:0;accent-color:var(--brand)}
.hint{color:var(--muted);font-size:.875rem;margin:.3rem 0 0}
.error{color:var(--bad);font-size:.9rem;font-weight:600;margin:.3rem 0 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:0 1rem}
.grid>section{margin-bottom:.75rem}
.filters{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:flex-end}
.filters .field{margin:0 0 .75rem;flex:1 1 9rem;min-width:0}
.filters input,.filters select{height:2.75rem}
.filters>.field:last-child{flex:0 0 auto;display:flex;gap:.5rem}
button,.button{display:inline-block;font:inherit;font-weight:700;border-radius:.6rem;padding:.55rem 1rem;min-height:2.75rem;cursor:pointer;border:1px solid var(--brand);text-decoration:none;text-align:center;white-space:nowrap;overflow-wrap:normal}
button.primary,.button.primary{background:var(--brand);color:var(--brand-ink)}
button.secondary,.button.secondary{background:#fff;color:var(--brand)}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button.link{background:none;border:0;padding:0;min-height:0;color:var(--brand);font-weight:600;text-decoration:underline}
.actions{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center;margin:.75rem 0 0}
.actions form{margin:0}
.actions select{width:auto;min-width:10rem}
fieldset{border:0;padding:0;margin:0 0 1rem;min-width:0}
legend{padding:0}
.pager{display:flex;justify-content:space-between;gap:.5rem;margin:.75rem 0 0}
.copy{display:flex;gap:.5rem}
.copy input{flex:1}
dl{display:grid;grid-template-columns:8.5rem minmax(0,1fr);gap:.3rem .75rem;margin:0}
dl+dl{margin-top:.3rem}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8rem;background:var(--bg);border-radius:.5rem;padding:.5rem;margin:.25rem 0 0;max-height:24rem;overflow:auto}
details summary{cursor:pointer;color:var(--brand);font-weight:600;font-size:.875rem}
code{font-size:.875rem;overflow-wrap:anywhere}
.secret{font-size:1rem;font-weight:700;background:var(--warn-bg);padding:.2rem .4rem;border-radius:.3rem}
footer{text-align:center;color:var(--muted);font-size:.8rem;margin:1rem 0 2rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
.narrow{max-width:26rem;margin:2rem auto}
@media (min-width:48rem){.wrap{padding:1.5rem 1rem}.card{padding:1.5rem}dl{grid-template-columns:12.5rem minmax(0,1fr)}}
@media (max-width:39.99rem){
nav.sections{flex-wrap:wrap}
.scroll table,.scroll tbody{display:block}
.scroll thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}
.scroll tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem .75rem;padding:.6rem 0;border-bottom:1px solid var(--line)}
.scroll td{display:block;border:0;padding:0;max-width:100%}
.scroll td:empty{display:none}
.scroll td:has(details,pre){flex-basis:100%}
}
`

// Progressive enhancement only: the URL fields are read-only text that can be selected without it.
const SCRIPT = `(function(){var d=document;d.querySelectorAll("button[data-copy]").forEach(function(b){b.hidden=false;b.addEventListener("click",function(){var i=d.getElementById(b.getAttribute("data-copy"));if(!i)return;i.select();if(navigator.clipboard){navigator.clipboard.writeText(i.value)}else{d.execCommand("copy")}b.textContent=b.getAttribute("data-done")})})})();`

const SCRIPT_HASH = createHash("sha256").update(SCRIPT).digest("base64")

/**
 * The panel's security headers, the checkout page's: nothing loads but the page's own style and
 * script; no framing; no referrer to other sites; never cached (`no-store`: a page of payments or a
 * new secret must not stay in a shared cache or the back-forward cache).
 *
 * `same-origin`, not `no-referrer`: under `no-referrer` browsers send `Origin: null` on the page's own
 * form posts (Fetch, "serializing a request origin"), which the sign-in form's origin check
 * (`LoginCsrf`) rightly refuses; Chromium then could not sign in at all.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": `default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'sha256-${SCRIPT_HASH}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

const document = (context: Context, title: string, content: string): string => `<!doctype html>
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
${content}
<footer>Cobro</footer>
</div>
<script>${SCRIPT}</script>
</body>
</html>`

/** The language switch: the same address in the other language. */
const languageLink = (context: Context): string => {
  const t = Text.messages[context.locale]
  const other: Text.Locale = context.locale === "es" ? "en" : "es"
  const query = new URLSearchParams(context.query)
  query.set("lang", other)
  return `<a id="lang-switch" href="${escape(`${context.path}?${query.toString()}`)}" lang="${other}" hreflang="${other}">${escape(t.otherLanguage)}</a>`
}

/** The test/production switch: the section's first page in the other mode. */
const modeSwitch = (context: Context, section: Section): string => {
  const t = Text.messages[context.locale]
  const path = `${PREFIX}/${section}`
  const link = (mode: Listings.Mode) =>
    `<a id="mode-${mode}" class="${mode}" href="${escape(href(context, path, { mode: mode === "test" ? "test" : undefined }))}"${context.mode === mode ? ` aria-current="true"` : ""}>${escape(t.modes[mode])}</a>`
  return `<span class="switch" role="group" aria-label="${escape(t.modeLabel)}" data-testid="mode-switch">${link("production")}${link("test")}</span>`
}

/**
 * A page of a signed-in user: the bar (brand, mode switch, language, user, sign-out), the
 * navigation with `section` current, a test-mode notice, and `body`.
 */
export const layout = (context: Context, section: Section, title: string, body: string): string => {
  const t = Text.messages[context.locale]
  const user = context.user
  const nav = SECTIONS.map(
    (s) =>
      `<a id="nav-${s}" href="${escape(href(context, `${PREFIX}/${s}`))}"${s === section ? ` aria-current="page"` : ""}>${escape(t.nav[s])}</a>`
  ).join("")
  const who = user
    ? `<span id="merchant-name"><span class="sr-only">${escape(t.merchantLabel)}: </span><strong>${escape(user.merchantName)}</strong></span>
<span id="user-email">${escape(user.email)}</span> <span class="badge" id="user-role" data-role="${user.role}">${escape(t.roles[user.role])}</span>
<a id="change-password" href="${escape(href(context, `${PREFIX}/password`))}">${escape(t.changePassword)}</a>
<form method="post" action="${PREFIX}/logout" id="sign-out-form">${hiddenFields(context)}<button type="submit" class="link" id="sign-out">${escape(t.signOut)}</button></form>`
    : ""
  const testBanner =
    context.mode === "test"
      ? `<p class="notice warn" id="test-mode-banner" role="status">${escape(t.testModeBanner)}</p>`
      : ""
  // The outcome of the form that led here (POST, then 303 with `notice=<key>`).
  const key = context.query.get("notice")
  const flash =
    key !== null && Text.isFlashKey(key) ? notice(Text.FLASH_TONES[key], "flash", t.flash[key]) : ""
  return document(
    context,
    title,
    `<header class="bar">
<a class="brand" href="${escape(href(context, `${PREFIX}/payments`))}">Cobro</a>
${modeSwitch(context, section)}
<div class="who">${who} ${languageLink(context)}</div>
</header>
<nav class="sections" aria-label="${escape(t.navLabel)}">${nav}</nav>
${testBanner}${flash}<main id="main">
${body}
</main>`
  )
}

/** A page without the navigation: sign-in, and the answers to someone not signed in. */
export const bare = (context: Context, title: string, body: string): string =>
  document(
    context,
    title,
    `<header class="bar"><span class="brand">Cobro</span><div class="who">${languageLink(context)}</div></header>
<main id="main" class="card narrow">
${body}
</main>`
  )

/** A notice: `tone` colours it; `alert` for what went wrong, `status` otherwise. */
export const notice = (tone: "ok" | "bad" | "warn", id: string, text: string): string =>
  `<p class="notice ${tone}" id="${id}" role="${tone === "bad" ? "alert" : "status"}">${escape(text)}</p>`

/** An instant in Bogotá's time (the merchants' time), with its ISO text for machines. */
export const time = (instant: Date, locale: Text.Locale): string =>
  `<time datetime="${instant.toISOString()}">${escape(Text.formatTime(instant, locale))}</time>`

/** An amount as its currency is written in the page's language. */
export const money = (amount: number, currency: string, locale: Text.Locale): string =>
  escape(Locale.formatMoney(amount, currency, locale))

const GOOD = new Set(["APPROVED", "PAID", "DELIVERED", "ACTIVE", "ENABLED"])
const BAD = new Set(["REJECTED", "EXHAUSTED", "CANCELLED", "EXPIRED", "UNREACHABLE", "VOIDED", "failed"])

/** A status as a coloured badge (the word itself is the state's name, as the API writes it). */
export const status = (name: string, id?: string): string => {
  const tone = GOOD.has(name) || name === "delivered" ? "ok" : BAD.has(name) ? "bad" : "warn"
  return `<span class="badge ${tone}"${id ? ` id="${id}"` : ""} data-status="${escape(name)}">${escape(name)}</span>`
}

/** A badge with its own words and tone (a switch's "on", an integration's "inactive"). */
export const badge = (text: string, tone: "ok" | "bad" | "warn" | "plain", id?: string): string =>
  `<span class="badge${tone === "plain" ? "" : ` ${tone}`}"${id ? ` id="${id}"` : ""}>${escape(text)}</span>`

/**
 * A table in a scrolling box. On a phone (under 40rem) each row is a card of its cells wrapped in
 * reading order, the headers kept for screen readers only: five columns do not fit 390 px.
 */
export const table = (
  id: string,
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<string>,
  empty: string
): string =>
  rows.length === 0
    ? `<p class="meta" id="${id}-empty">${escape(empty)}</p>`
    : `<div class="scroll"><table id="${id}"><thead><tr>${headers.map((h) => `<th scope="col">${escape(h)}</th>`).join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></div>`

/** The sections whose texts introduce their page: a title and an introduction. */
type IntroducedSection = {
  [S in Section]: Text.Messages[S] extends { readonly title: string; readonly intro: string } ? S : never
}[Section]

/**
 * A section's page that is one card: the section's title and introduction, the {@link table} of its
 * rows (its id the section's), and an optional hint below it.
 */
export const tablePage = (
  context: Context,
  section: IntroducedSection,
  page: {
    readonly headers: ReadonlyArray<string>
    readonly rows: ReadonlyArray<string>
    readonly empty: string
    readonly hint?: string
  }
): string => {
  const { title, intro } = Text.messages[context.locale][section]
  const hint = page.hint === undefined ? "" : `\n<p class="hint">${escape(page.hint)}</p>`
  return layout(
    context,
    section,
    title,
    `<div class="card"><h1>${escape(title)}</h1>
<p class="meta">${escape(intro)}</p>
${table(section, page.headers, page.rows, page.empty)}${hint}</div>`
  )
}

/** A text field's options. */
export interface FieldOptions {
  readonly name: string
  /** The input's id, when two forms of a page have a field of that name (default: the name). */
  readonly id?: string
  readonly label: string
  readonly value?: string | undefined
  readonly type?: string
  readonly error?: string | undefined
  /** The wire message of the API behind the error, kept beside it for whoever debugs. */
  readonly apiMessage?: string | undefined
  readonly hint?: string | undefined
  readonly required?: boolean
  readonly autocomplete?: string
  readonly inputmode?: string
  readonly maxlength?: number
  readonly placeholder?: string
}

/** A labelled input with its hint and its error (`id` is the field's name). */
export const field = (options: FieldOptions): string => {
  const id = options.id ?? options.name
  const described = [options.hint ? `${id}-hint` : "", options.error ? `${id}-error` : ""]
    .filter((s) => s !== "")
    .join(" ")
  const attributes = [
    `type="${options.type ?? "text"}"`,
    `id="${id}"`,
    `name="${options.name}"`,
    `value="${escape(options.value ?? "")}"`,
    options.required ? "required" : "",
    options.autocomplete ? `autocomplete="${options.autocomplete}"` : "",
    options.inputmode ? `inputmode="${options.inputmode}"` : "",
    options.maxlength ? `maxlength="${options.maxlength}"` : "",
    options.placeholder ? `placeholder="${escape(options.placeholder)}"` : "",
    described ? `aria-describedby="${described}"` : "",
    options.error ? `aria-invalid="true"` : ""
  ]
    .filter((s) => s !== "")
    .join(" ")
  return `<div class="field">
<label class="text" for="${id}">${escape(options.label)}</label>
<input ${attributes}>
${options.hint ? `<p class="hint" id="${id}-hint">${escape(options.hint)}</p>` : ""}${fieldError(id, options.error, options.apiMessage)}
</div>`
}

/** A field's error, under it (`<id>-error`), with the API's own message when there is one. */
export const fieldError = (id: string, error: string | undefined, apiMessage?: string): string =>
  error === undefined
    ? ""
    : `<p class="error" id="${id}-error" data-testid="field-error" data-field="${escape(id)}"${apiMessage ? ` data-api-message="${escape(apiMessage)}"` : ""}>${escape(error)}</p>`

/** A panel path with a one-time notice (`notice=<key>`) for the page it leads to. */
export const withNotice = (path: string, notice: Text.FlashKey): string =>
  `${path}${path.includes("?") ? "&" : "?"}notice=${notice}`

/** The current page's address without its one-time notice: where a form on it comes back to. */
export const currentHref = (context: Context): string => {
  const query = new URLSearchParams(context.query)
  query.delete("notice")
  const text = query.toString()
  return text === "" ? context.path : `${context.path}?${text}`
}

/** A labelled select; `options` as value and label. */
export const select = (
  name: string,
  label: string,
  options: ReadonlyArray<readonly [value: string, label: string]>,
  value: string,
  error?: string
): string => `<div class="field">
<label class="text" for="${name}">${escape(label)}</label>
<select id="${name}" name="${name}"${error ? ` aria-invalid="true" aria-describedby="${name}-error"` : ""}>
${options.map(([v, l]) => `<option value="${escape(v)}"${v === value ? " selected" : ""}>${escape(l)}</option>`).join("\n")}
</select>${fieldError(name, error)}
</div>`

/** A read-only URL with a "copy" button that shows only with JavaScript. */
export const copyable = (id: string, label: string, url: string, locale: Text.Locale): string => {
  const t = Text.messages[locale]
  return `<div class="field"><label class="text" for="${id}">${escape(label)}</label>
<div class="copy"><input type="text" id="${id}" value="${escape(url)}" readonly data-testid="copy-url">
<button type="button" class="secondary" data-copy="${id}" data-done="${escape(t.copied)}" hidden>${escape(t.copy)}</button></div></div>`
}

/** A one-button form that posts to `action` (with the session's hidden fields and `fields`). */
export const postButton = (
  context: Context,
  options: {
    readonly action: string
    readonly label: string
    readonly id: string
    readonly tone?: "primary" | "secondary" | "danger"
    readonly fields?: Readonly<Record<string, string>>
  }
): string =>
  `<form method="post" action="${escape(options.action)}">${hiddenFields(context)}${Object.entries(
    options.fields ?? {}
  )
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join(
      ""
    )}<button type="submit" class="${options.tone ?? "secondary"}" id="${options.id}">${escape(options.label)}</button></form>`

/**
 * A confirmation page: what is about to happen, a button that posts it and a way back. Destructive
 * actions (revoke a key, cancel a link, delete a webhook) ask here first: a stray click on a list
 * does nothing.
 */
export const confirmPage = (
  context: Context,
  section: Section,
  options: {
    readonly title: string
    readonly text: string
    readonly action: string
    readonly confirm: string
    readonly back: string
    readonly fields?: Readonly<Record<string, string>>
  }
): string => {
  const t = Text.messages[context.locale]
  return layout(
    context,
    section,
    options.title,
    `<div class="card" id="confirm"><h1>${escape(options.title)}</h1>
<p id="confirm-text">${escape(options.text)}</p>
<div class="actions">${postButton(context, {
      action: options.action,
      label: options.confirm,
      id: "confirm-button",
      tone: "danger",
      ...(options.fields ? { fields: options.fields } : {})
    })}
<a class="button secondary" id="confirm-cancel" href="${escape(options.back)}">${escape(t.goBack)}</a></div></div>`
  )
}

/**
 * The answers that are not a section's page: refused (403), not found (404), a method the page does
 * not take (405), a failure (500), bad input (400), a form still running or sent before with other
 * values (409, `FormKey`).
 */
export type Message = Text.MessageKey

/** A page that says why the request was not done. */
export const messagePage = (context: Context, kind: Message): string => {
  const t = Text.messages[context.locale]
  const { text, title } = t.messagesPages[kind]
  const body = `<h1>${escape(title)}</h1>${notice("bad", "message", text)}<p><a id="back-to-panel" href="${escape(
    href(context, `${PREFIX}/payments`)
  )}">${escape(t.backToPanel)}</a></p>`
  return context.user
    ? layout(context, "payments", title, `<div class="card">${body}</div>`)
    : bare(context, title, body)
}
