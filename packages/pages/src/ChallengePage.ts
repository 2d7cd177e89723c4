/**
 * Cobro's simulated 3DS challenge (and bank redirect) page (spec C4, 3DS rules 2–3): the cardholder
 * arrives from `next_actions.redirect_url`, approves or declines, and is sent back to the intent's
 * `callback_url`. Plain server-rendered HTML; the one-time token in the path is the authorization.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as Payment from "@cobro/domain/Payment"
import * as ReturnUrl from "@cobro/domain/ReturnUrl"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HeaderText from "@cobro/api/HeaderText"
import * as PublicUrls from "@cobro/api/PublicUrls"

/** The page's path: `/challenge/3ds/{transaction_id}/{token}`, under the public base URL. */
export const PATH_PREFIX = "/challenge/3ds"

/** The address of a transaction's challenge page with its one-time token, under `PublicUrls.publicUrl`. */
export const challengeUrl: Effect.Effect<
  (transactionId: string, token: string) => string,
  never,
  HttpServerRequest.HttpServerRequest
> = Effect.map(
  PublicUrls.publicUrl,
  (base) => (transactionId: string, token: string) =>
    `${base}${PATH_PREFIX}/${encodeURIComponent(transactionId)}/${encodeURIComponent(token)}`
)

/** A 404 page: no challenge for this transaction and token. */
export const notFoundPage = () =>
  page(
    "Not found",
    `<h1>Challenge not found</h1><p>This link is not valid. Return to the store and try again.</p>`,
    404
  )
/** A 409 page: the other decision was recorded already. */
export const conflictPage = () =>
  page(
    "Already decided",
    `<h1>Already decided</h1><p id="result">This payment was already decided with the other choice; it cannot change.</p>`,
    409
  )

/**
 * A 409 page: the decision came after the payment expired (the timeout sweeper rejected it once the
 * cardholder had been away for `Payment.ABANDONED_PAYMENT_TIMEOUT`). Nothing was charged.
 */
export const expiredPage = () =>
  page(
    "Payment expired",
    `<h1>Payment expired</h1><p id="result" data-status="EXPIRED">${EXPIRED_TEXT}</p>`,
    409
  )

const EXPIRED_TEXT =
  "This payment expired: it was not completed in time, and nothing was charged. Return to the store to pay again."

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

const escape = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c
  )

const page = (title: string, body: string, status = 200) =>
  HttpServerResponse.html(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Cobro</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d2433}
.card{border:1px solid #d8dde6;border-radius:.75rem;padding:1.5rem}
.amount{font-size:1.75rem;font-weight:600;margin:.25rem 0 1rem}
.muted{color:#5b6475;font-size:.9rem}
form{display:inline}
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:.5rem;border:1px solid #1d2433;cursor:pointer;margin-right:.5rem}
button.approve{background:#1d2433;color:#fff}
button.decline{background:#fff;color:#1d2433}
</style>
</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>`
  ).pipe(HttpServerResponse.setStatus(status))

const money = (payment: Payment.Existing): string => {
  const { currency, total } = payment.payment.amount
  return `${currency} ${total.toLocaleString("en-US", { maximumFractionDigits: 2 })}`
}

const RESULT: Record<Payment.Status, string> = {
  RUNNING: "The payment is still waiting for your decision.",
  APPROVED: "The payment was approved.",
  REJECTED: "The payment was declined.",
  VOIDED: "The payment was voided.",
  REFUNDED: "The payment was refunded."
}

/**
 * The return address as it may be written in a link or a `Location`: an intent stored before the
 * return-URL rule may hold a script URL or line breaks, so it is re-checked here and left out when
 * it fails (the page shows the result instead of sending the cardholder there).
 */
const returnAddress = (callbackUrl: Option.Option<string>): Option.Option<string> =>
  Option.flatMap(callbackUrl, ReturnUrl.toLocation)

const returnLink = (completed: { readonly callbackUrl: Option.Option<string> }) =>
  Option.match(returnAddress(completed.callbackUrl), {
    onNone: () => `<p class="muted">You can close this page and return to the store.</p>`,
    onSome: (url) => `<p><a href="${escape(url)}" id="return">Return to the store</a></p>`
  })

/** The page of a pending challenge, or the result of one already completed. */
export const showPage = (challenge: OnlinePayments.Challenge) => {
  const { payment, intent } = challenge
  const isCard = Payment.isCardMethod(payment.payment.paymentMethod)
  const title = isCard ? "3-D Secure verification" : `${payment.payment.paymentMethod} payment`
  const description = Option.match(intent.details.description, {
    onNone: () => "",
    onSome: (d) => `<p>${escape(d)}</p>`
  })
  const card = Option.match(payment.payment.card, {
    onNone: () => "",
    onSome: (c) => `<p class="muted">Card <span id="masked-pan">${escape(c.maskedPan)}</span></p>`
  })
  const header = `<h1>${escape(title)}</h1>
<p class="muted">Reference <span id="reference">${escape(intent.intent.referenceId)}</span>${intent.intent.sandbox ? " · sandbox" : ""}</p>
<div class="amount" id="amount">${escape(money(payment))}</div>
${description}${card}`
  if (payment._tag === "EXPIRED") {
    return page(
      title,
      `${header}<p id="result" data-status="EXPIRED">${EXPIRED_TEXT}</p>${returnLink({ callbackUrl: intent.details.callbackUrl })}`
    )
  }
  if (payment._tag !== "CHALLENGE") {
    return page(
      title,
      `${header}<p id="result" data-status="${Payment.status(payment)}">${RESULT[Payment.status(payment)]}</p>${returnLink({ callbackUrl: intent.details.callbackUrl })}`
    )
  }
  return page(
    title,
    `${header}<p>${isCard ? "Your bank asks you to confirm this purchase." : "Confirm this payment at your bank."}</p>
<form method="post"><input type="hidden" name="decision" value="approve"><button class="approve" id="approve" type="submit">Approve</button></form>
<form method="post"><input type="hidden" name="decision" value="decline"><button class="decline" id="decline" type="submit">Decline</button></form>`
  )
}

/**
 * Where the cardholder goes after deciding: the intent's `callback_url` with the announced method
 * (GET: 303 See Other; POST: a form that submits itself), or a result page when there is none.
 */
export const afterDecision = (completed: OnlinePayments.ChallengeCompleted) =>
  Option.match(returnAddress(completed.callbackUrl), {
    onNone: () =>
      page(
        "Payment",
        `<h1>Done</h1><p id="result" data-status="${Payment.status(completed.payment)}">${RESULT[Payment.status(completed.payment)]}</p>${returnLink(completed)}`
      ),
    onSome: (url) =>
      completed.redirectMethod === "GET"
        ? HttpServerResponse.redirect(HeaderText.location(url), { status: 303 })
        : page(
            "Returning to the store",
            `<form method="post" action="${escape(url)}" id="return-form"><button type="submit">Return to the store</button></form>
<script>document.getElementById("return-form").submit()</script>`
          )
  })
