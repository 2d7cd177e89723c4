/**
 * Handlers of the payment link API (spec B1–B3) over `LinkPayments`: B2 reads the raw body exactly
 * (nanosecond `expiration_date`), B3 writes the bare record with exact integer nanoseconds.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Effect from "effect/Effect"
import { CobroApi } from "@cobro/api/Api"
import * as Security from "@cobro/api/Security"
import * as Errors from "@cobro/api/Errors"
import * as LinkEndpoints from "@cobro/api/LinkEndpoints"
import * as PublicUrls from "@cobro/api/PublicUrls"
import * as RequestBody from "./RequestBody.js"
import * as Respond from "./Respond.js"

const linkNotFound = () =>
  Errors.NotFound.of(LinkEndpoints.Codes.LinkNotFound, "no payment link with this id for this key")

const merchantDisabled = () =>
  Errors.Forbidden.of(
    "the merchant account is disabled: it cannot create payment links",
    LinkEndpoints.Codes.MerchantDisabled
  )

/** The 400 of the rules only the merchant's account can check: one item per field. */
export const fromInvalidLinkRequest = (error: LinkPayments.InvalidLinkRequest): Errors.BadRequest =>
  new Errors.BadRequest({
    errors: [
      Errors.item(Errors.Codes.ValidationError, error.issues[0].message, error.issues[0].field),
      ...error.issues
        .slice(1)
        .map((issue) => Errors.item(Errors.Codes.ValidationError, issue.message, issue.field))
    ]
  })

// Built once, not per request: its decoder is compiled here.
const createLinkBody = RequestBody.decode(LinkApi.CreateLinkRequest)

/** The link API's handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "links", (handlers) =>
  handlers
    .handle("paymentMethods", () =>
      Effect.gen(function* () {
        const credential = yield* Security.CurrentCredential
        const methods = yield* LinkPayments.paymentMethods(credential).pipe(Effect.orDie)
        return { payload: { payment_methods: methods }, errors: [] }
      })
    )
    .handleRaw("createLink", () =>
      Effect.gen(function* () {
        const credential = yield* Security.CurrentCredential
        const body = yield* createLinkBody
        const { linkId } = yield* LinkPayments.create(credential, body).pipe(
          Effect.catchTags({
            InvalidLinkRequest: (e) => Effect.fail(fromInvalidLinkRequest(e)),
            MerchantNotInState: () => Effect.fail(merchantDisabled())
          }),
          // Not found merchant of a valid key, a clash of fresh ids, a conflict after the retries: a 500.
          Effect.catchAll((e) =>
            e instanceof Errors.BadRequest || e instanceof Errors.Forbidden ? Effect.fail(e) : Effect.die(e)
          )
        )
        return { payload: { payment_link: linkId, url: yield* PublicUrls.linkUrl(linkId) }, errors: [] }
      })
    )
    .handle("readLink", ({ path }) =>
      Effect.gen(function* () {
        const credential = yield* Security.CurrentCredential
        const record = yield* LinkPayments.read(credential, path.payment_link).pipe(
          Effect.catchTag("LinkNotFound", () => Effect.fail(linkNotFound()))
        )
        // The record is built from the link's state in the wire's own types (its encoding is the
        // identity): written as it is (`PaymentLink.test.ts`, every reachable state's record).
        return Respond.json(record)
      })
    )
)
