/**
 * Handlers of the terminal payment API (spec A1–A4) over `TerminalPayments`: A3 reads the raw JSON
 * so that its problems earn the spec's codes (AP002–AP006 with the field, AP001 for the rest); A4
 * writes its notifications exactly (`time` beyond 2^53) in the fallback shape (`franchise`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as CheckoutErrors from "@cobro/domain/CheckoutErrors"
import * as Envelope from "@cobro/domain/Envelope"
import * as Nanos from "@cobro/domain/Nanos"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as TerminalPayments from "@cobro/domain/TerminalPayments"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CobroApi } from "@cobro/api/Api"
import * as Security from "@cobro/api/Security"
import * as Errors from "@cobro/api/Errors"
import * as RequestBody from "./RequestBody.js"

/** The envelope error of an AP error: AP001 is a 500, the others a 400. */
export const fromCheckoutError = (
  error: CheckoutErrors.CheckoutError
): Errors.BadRequest | Errors.InternalServerError => {
  const item = CheckoutErrors.toErrorItem(error)
  return error._tag === "Unmapped"
    ? new Errors.InternalServerError({ errors: [item] })
    : new Errors.BadRequest({ errors: [item] })
}

const caller = Effect.map(Security.CurrentCredential, (credential): TerminalPayments.Caller => ({
  merchantId: credential.merchantId,
  sandbox: credential.sandbox
}))

/** What `read` answers for the caller's merchant. */
const ofCallersMerchant = <A, E, R>(
  read: (merchantId: TerminalPayments.Caller["merchantId"]) => Effect.Effect<A, E, R>
) => Effect.flatMap(caller, ({ merchantId }) => read(merchantId))

const encodeNotifications = Schema.encode(TerminalApi.NotificationsResponse)

/** The terminal API's handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "terminal", (handlers) =>
  handlers
    .handle("paymentMethods", () =>
      Effect.map(ofCallersMerchant(TerminalPayments.paymentMethods), (payment_methods) =>
        Envelope.success({ payment_methods })
      )
    )
    .handle("boundTerminals", () =>
      Effect.map(ofCallersMerchant(TerminalPayments.boundTerminals), (available_terminals) =>
        Envelope.success({ available_terminals })
      )
    )
    .handleRaw("checkout", () =>
      Effect.gen(function* () {
        const who = yield* caller
        const body = yield* RequestBody.json
        const created = yield* TerminalPayments.checkout(who, body).pipe(Effect.mapError(fromCheckoutError))
        return Envelope.success({ integration_id: created.integrationId })
      })
    )
    .handle("notifications", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const who = yield* caller
        const notifications = yield* TerminalPayments.fallbackNotifications(
          who,
          path.payment_id,
          urlParams.is_external_reference
        )
        const encoded = yield* encodeNotifications({ notifications }).pipe(Effect.orDie)
        return HttpServerResponse.text(Nanos.stringifyWithBigInt(encoded), {
          contentType: "application/json"
        })
      })
    )
)
