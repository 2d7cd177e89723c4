/**
 * The hosted checkout page of a payment link (issue 6; spec B2 `url` = `{checkout_url}/<payment_link>`),
 * served on the API's port under the path of `{checkout_url}`: the link's page and its payment form
 * (POST, then a redirect), and each transaction's page (the simulated 3DS challenge, bank or wallet,
 * and the confirmation). It answers HTML whatever it is sent: bad input shows the page again with a
 * message, never a 500.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Acquirer from "@cobro/domain/Acquirer"
import type * as EventStore from "@cobro/domain/EventStore"
import type * as IdGenerator from "@cobro/domain/IdGenerator"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as OnlinePayments from "@cobro/domain/OnlinePayments"
import * as ReturnUrl from "@cobro/domain/ReturnUrl"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Form from "./CheckoutPageForm.js"
import * as HeaderText from "@cobro/api/HeaderText"
import * as Html from "./CheckoutPageHtml.js"
import * as Text from "./CheckoutPageText.js"
import * as PublicUrls from "@cobro/api/PublicUrls"

/**
 * The path the page is served under: the path of `CHECKOUT_URL` when configured (so that the link
 * `url` B2 answers is served here, on the same port), else `/checkout`. No trailing slash; `""` when
 * `CHECKOUT_URL` is a bare origin.
 */
export const routePrefix = (checkoutUrl: Option.Option<string>): string =>
  Option.match(checkoutUrl, {
    onNone: () => PublicUrls.CHECKOUT_PATH,
    onSome: (url) => {
      try {
        return new URL(url).pathname.replace(/\/+$/, "")
      } catch {
        return PublicUrls.CHECKOUT_PATH
      }
    }
  })

/** The page's routes under a prefix (for the 405 answers of the fallback). */
export const routes = (prefix: string) => [
  { method: "GET", path: `${prefix}/:link_id` },
  { method: "POST", path: `${prefix}/:link_id` },
  { method: "GET", path: `${prefix}/:link_id/payments/:transaction_id` },
  { method: "POST", path: `${prefix}/:link_id/payments/:transaction_id` }
]

type Services = EventStore.EventStore | IdGenerator.IdGenerator | Acquirer.Acquirer

const respond = (body: string, status: number) =>
  HttpServerResponse.html(body).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(Html.SECURITY_HEADERS)
  )

const redirect = (location: string) =>
  HttpServerResponse.redirect(HeaderText.location(location), { status: 303, headers: Html.SECURITY_HEADERS })

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const queryOf = (url: string): URLSearchParams => {
  const query = url.indexOf("?")
  try {
    return new URLSearchParams(query === -1 ? "" : url.slice(query + 1))
  } catch {
    return new URLSearchParams()
  }
}

/** The request's language and path: `lang` from the form or the query, else `Accept-Language`. */
const pageContext = (
  request: HttpServerRequest.HttpServerRequest,
  lang?: string | null
): Html.PageContext => ({
  locale: Text.negotiate(
    request.headers["accept-language"],
    lang ?? queryOf(request.url).get("lang") ?? undefined
  ),
  path: pathOf(request.url)
})

/**
 * The form body as text, at most `Form.MAX_BODY_BYTES` (the page's form is about a kilobyte); a body
 * that cannot be read, or a longer one, is an empty form: the page shows it again with its errors.
 */
const formBody = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > Form.MAX_BODY_BYTES) return Effect.succeed("")
  return request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(Form.MAX_BODY_BYTES)),
    Effect.orElseSucceed(() => "")
  )
}

const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/** Every failure we did not expect is logged and shown as an error page (never a stack, never JSON). */
const safely = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.catchAllCause(handler, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* Effect.logError("checkout page failure", cause).pipe(
            Effect.annotateLogs({ method: request.method, url: request.url })
          )
          return respond(Html.messagePage(pageContext(request), "error"), 500)
        })
  )

const notFound = (context: Html.PageContext) =>
  Effect.succeed(respond(Html.messagePage(context, "notFound"), 404))

const linkOptions = (
  prefix: string,
  linkId: string,
  view: LinkPayments.CheckoutView,
  extra: Partial<Html.LinkPageOptions> = {}
): Html.LinkPageOptions => ({
  banks: OnlinePayments.PSE_BANKS,
  isCard: LinkPayments.isCardMethod,
  action: `${prefix}/${encodeURIComponent(linkId)}`,
  continueUrl:
    view.state._tag === "PROCESSING" && Option.isSome(LinkPayments.payerStep(view.state))
      ? Option.match(view.state.transactionId, {
          onNone: () => undefined,
          onSome: (trx) => transactionPath(prefix, linkId, trx)
        })
      : undefined,
  ...extra
})

const transactionPath = (prefix: string, linkId: string, transactionId: string) =>
  `${prefix}/${encodeURIComponent(linkId)}/payments/${encodeURIComponent(transactionId)}`

/** GET: the link's page. `?declined=<transaction>` says that this (last) payment was declined. */
const showLink = (prefix: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const context = pageContext(request)
    const linkId = yield* param("link_id")
    const found = yield* Effect.option(LinkPayments.checkout(linkId))
    if (Option.isNone(found)) return yield* notFound(context)
    const view = found.value
    const declinedId = queryOf(request.url).get("declined")
    const declined =
      declinedId !== null && view.status === "ACTIVE" && Option.contains(view.state.transactionId, declinedId)
    return respond(Html.linkPage(context, view, linkOptions(prefix, linkId, view, { declined })), 200)
  })

/** After a payment's outcome: to `callback_url` when approved and one is set, else to the page that shows it. */
const afterOutcome = (
  prefix: string,
  linkId: string,
  state: { readonly link: { readonly callbackUrl: Option.Option<string> } },
  transactionId: string,
  outcome: LinkPayments.PaymentOutcome["_tag"],
  locale: Text.Locale
) => {
  // A callback stored before the return-URL rule may not be a valid `Location`: the page instead.
  const callback = Option.flatMap(state.link.callbackUrl, ReturnUrl.toLocation)
  if (outcome === "Approved" && Option.isSome(callback)) return redirect(callback.value)
  if (outcome === "Declined") {
    return redirect(
      `${prefix}/${encodeURIComponent(linkId)}?declined=${encodeURIComponent(transactionId)}&lang=${locale}`
    )
  }
  return redirect(`${transactionPath(prefix, linkId, transactionId)}?lang=${locale}`)
}

/** Who the page's events name: the payer, who has no account (the acquirer's answer is theirs too). */
const PAYER = { actor: "payer" }

/** POST: the payment form. Bad input: the page again with the errors (400); a link that cannot be paid: its state (409). */
const payLink = (prefix: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const linkId = yield* param("link_id")
    const { fields, params } = Form.read(yield* formBody(request))
    const context = pageContext(request, params.get("lang"))
    const found = yield* Effect.option(LinkPayments.checkout(linkId))
    if (Option.isNone(found)) return yield* notFound(context)
    const view = found.value
    const page = (
      status: number,
      current: LinkPayments.CheckoutView,
      form?: Html.FormState
    ): HttpServerResponse.HttpServerResponse =>
      respond(Html.linkPage(context, current, linkOptions(prefix, linkId, current, { form })), status)
    /** The link as it is now, after a refusal: its state is the answer (409). */
    const stateNow = Effect.map(LinkPayments.checkout(linkId), (current) => page(409, current))
    if (view.status !== "ACTIVE" || view.methods.length === 0) return page(409, view)

    const now = DateTime.toDateUtc(yield* DateTime.now)
    const checked = Form.check(params, fields, {
      methods: view.methods,
      open: Option.isNone(view.state.link.amount),
      isCard: LinkPayments.isCardMethod,
      banks: OnlinePayments.PSE_BANKS,
      year: now.getUTCFullYear(),
      month: now.getUTCMonth() + 1
    })
    if (Either.isLeft(checked)) return page(400, view, { fields, errors: checked.left })
    const payment = checked.right
    const formError = (error: Form.FieldError) => Effect.succeed(page(400, view, { fields, errors: [error] }))

    return yield* LinkPayments.pay(
      linkId,
      { paymentMethod: payment.method, amount: payment.amount, cardNumber: payment.cardNumber },
      PAYER
    ).pipe(
      Effect.map((started) =>
        afterOutcome(
          prefix,
          linkId,
          started.state,
          started.transactionId,
          started.outcome._tag,
          context.locale
        )
      ),
      Effect.catchTags({
        InvalidPaymentAmount: (e) =>
          formError({ field: "amount", key: "amountBounds", bounds: { min: e.min, max: e.max } }),
        PaymentAmountRequired: () => formError({ field: "amount", key: "amountMissing" }),
        MethodNotOffered: () => formError({ field: "method", key: "method" }),
        CardNumberRequired: () => formError({ field: "card_number", key: "cardNumber" }),
        // Another tab started (or finished) a payment first, the link expired, or the account was disabled.
        LinkNotInState: () => stateNow,
        LinkOverdue: () => stateNow,
        MerchantNotInState: () => stateNow,
        ConcurrencyConflict: () => stateNow,
        UnknownLinkTransaction: () => stateNow
      })
    )
  })

const transactionError = (context: Html.PageContext) => (error: { readonly _tag: string }) =>
  error._tag === "LinkNotFound" ||
  error._tag === "MerchantNotFound" ||
  error._tag === "UnknownLinkTransaction"
    ? notFound(context)
    : Effect.fail(error)

/** GET: a transaction's page (its step, its confirmation); a declined one goes back to the link's page. */
const showTransaction = (prefix: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const context = pageContext(request)
    const linkId = yield* param("link_id")
    const transactionId = yield* param("transaction_id")
    return yield* LinkPayments.transaction(linkId, transactionId).pipe(
      Effect.map((current) =>
        current.outcome._tag === "Declined"
          ? afterOutcome(prefix, linkId, current.view.state, transactionId, "Declined", context.locale)
          : respond(Html.transactionPage(context, current), 200)
      ),
      Effect.catchAll(transactionError(context))
    )
  })

/** POST: the payer's decision at the simulated 3DS challenge, bank or wallet. */
const decideTransaction = (prefix: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const linkId = yield* param("link_id")
    const transactionId = yield* param("transaction_id")
    const { params } = Form.read(yield* formBody(request))
    const context = pageContext(request, params.get("lang"))
    const decision = params.get("decision")
    if (decision !== "approve" && decision !== "decline") {
      return yield* LinkPayments.transaction(linkId, transactionId).pipe(
        Effect.map((current) => respond(Html.transactionPage(context, current), 400)),
        Effect.catchAll(transactionError(context))
      )
    }
    return yield* LinkPayments.decide(linkId, transactionId, decision, PAYER).pipe(
      Effect.map((state) =>
        afterOutcome(
          prefix,
          linkId,
          state,
          transactionId,
          decision === "approve" ? "Approved" : "Declined",
          context.locale
        )
      ),
      Effect.catchTags({
        // Too late: the timeout sweeper failed the payment while the payer was away (409, "expired").
        LinkPaymentExpired: () =>
          Effect.map(LinkPayments.transaction(linkId, transactionId), (current) =>
            respond(Html.transactionPage(context, current), 409)
          ),
        PaymentNotAwaitingPayer: () =>
          Effect.succeed(respond(Html.messagePage(context, "alreadyDecided"), 409)),
        LinkNotInState: () => Effect.succeed(respond(Html.messagePage(context, "alreadyDecided"), 409)),
        ConcurrencyConflict: () => Effect.succeed(respond(Html.messagePage(context, "alreadyDecided"), 409))
      }),
      Effect.catchAll(transactionError(context))
    )
  })

/**
 * The page's routes on the API's router, under {@link routePrefix} of the configured `CHECKOUT_URL`.
 * The handlers use the event store, the id generator and the acquirer the server provides.
 */
export const layer: Layer.Layer<never, never, Services> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const urls = yield* PublicUrls.PublicUrls
    const prefix = routePrefix(urls.checkoutUrl)
    const services = yield* Effect.context<Services>()
    const serve = <E>(
      handler: Effect.Effect<
        HttpServerResponse.HttpServerResponse,
        E,
        Services | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
      >
    ) => safely(handler).pipe(Effect.provide(services))
    const linkPath = `${prefix}/:link_id` as HttpRouter.PathInput
    const transactionPattern = `${prefix}/:link_id/payments/:transaction_id` as HttpRouter.PathInput
    yield* router.get(linkPath, serve(showLink(prefix)))
    yield* router.post(linkPath, serve(payLink(prefix)))
    yield* router.get(transactionPattern, serve(showTransaction(prefix)))
    yield* router.post(transactionPattern, serve(decideTransaction(prefix)))
  })
)
