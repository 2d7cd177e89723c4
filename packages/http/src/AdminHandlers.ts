/**
 * Handlers of the admin API (issue 4, "Admin and sandbox contract") over `MerchantAdmin`, the same
 * use cases the CLI calls. Domain errors become envelope errors here.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as DeliveryAdmin from "@cobro/domain/DeliveryAdmin"
import type * as EventStore from "@cobro/domain/EventStore"
import { NotificationId } from "@cobro/domain/Ids"
import { TerminalSerial } from "@cobro/domain/Ids"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Merchant from "@cobro/domain/Merchant"
import * as MerchantAdmin from "@cobro/domain/MerchantAdmin"
import type * as PaymentLink from "@cobro/domain/PaymentLink"
import * as SandboxClock from "@cobro/domain/SandboxClock"
import type * as WebhookDelivery from "@cobro/domain/WebhookDelivery"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CobroApi } from "@cobro/api/Api"
import * as AdminEndpoints from "@cobro/api/AdminEndpoints"
import * as Errors from "@cobro/api/Errors"
import * as RequestBody from "./RequestBody.js"
import * as Respond from "./Respond.js"

const V = Errors.Codes.ValidationError

/** The envelope error of a merchant's domain error. */
export const fromMerchantError = (
  error: Merchant.Error
): Errors.BadRequest | Errors.NotFound | Errors.Conflict => {
  switch (error._tag) {
    case "MerchantNotFound":
      return Errors.NotFound.of(Errors.Codes.MerchantNotFound, "no merchant with this id")
    case "TerminalNotBound":
      return Errors.NotFound.of(
        Errors.Codes.TerminalNotFound,
        `no terminal ${error.serial} is bound to the merchant`
      )
    case "UnsupportedTerminalModel":
      return Errors.BadRequest.of(V, "terminal_model must be SMART or SMART_PRO", "terminal_model")
    case "TerminalAlreadyBound":
      return Errors.Conflict.of(
        Errors.Codes.TerminalAlreadyBound,
        `terminal ${error.serial} is bound already with another model or name`,
        "terminal_serial"
      )
    case "InvalidMethodBounds":
      return Errors.BadRequest.of(V, "min must not exceed max", `link.${error.method}`)
    case "InvalidWebhookUrl":
      return Errors.BadRequest.of(
        V,
        `the ${error.mode} webhook must be an ${Merchant.acceptsHttp(error) ? "http:// or https://" : "https://"} URL`,
        "url"
      )
    case "MerchantAlreadyExists":
    case "MerchantNotInState":
    case "IntegrationAlreadyActive":
    case "IntegrationNotActive":
    case "IdentityKeyReused":
      return Errors.Conflict.of(error._tag, "the merchant is not in a state that allows this")
  }
}

const terminalBody = (t: Merchant.Terminal): typeof AdminEndpoints.TerminalBody.Type => ({
  terminal_model: t.model,
  terminal_serial: t.serial,
  name: t.name,
  status: "BINDED",
  api_enabled: t.apiEnabled
})

const clearPair = (pair: MerchantAdmin.ClearKeyPair) => ({
  identity_key: pair.identityKey,
  secret_key: pair.secretKey
})

const clearKeys = (keys: MerchantAdmin.ClearIntegrationKeys) => ({
  production: clearPair(keys.production),
  test: clearPair(keys.test)
})

/** The JSON body of a delivery view (snake_case, times ISO 8601). */
export const deliveryBody = (view: DeliveryAdmin.DeliveryView): typeof AdminEndpoints.DeliveryBody.Type => ({
  notification_id: view.notificationId,
  merchant_id: view.merchantId,
  subject: view.subject,
  type: view.type,
  status: view.status,
  sandbox: view.sandbox,
  url: view.url,
  next_due_at: Option.getOrNull(Option.map(view.nextDueAt, DateTime.formatIso)),
  attempts: view.attempts.map((a) => {
    const answered = Option.isSome(a.statusCode)
    return {
      attempt: a.attempt,
      time: DateTime.formatIso(a.at),
      delivered: a.delivered,
      status_code: Option.getOrNull(a.statusCode),
      error: answered ? null : a.snippet,
      latency_ms: a.latencyMs,
      response_snippet: answered ? a.snippet : null
    }
  })
})

const notificationNotFound = () => Errors.NotFound.of("NotificationNotFound", "no notification with this id")

/** A notification id from the path: anything that is not one is an unknown notification (404). */
const notificationIdOf = (raw: string) =>
  Schema.decodeUnknown(NotificationId)(raw).pipe(Effect.mapError(notificationNotFound))

/** The envelope error of a delivery's domain error. */
export const fromDeliveryError = (
  error: WebhookDelivery.Error | DeliveryAdmin.NoWebhookRegistered | EventStore.ConcurrencyConflict
): Errors.NotFound | Errors.Conflict => {
  switch (error._tag) {
    case "DeliveryNotFound":
      return notificationNotFound()
    case "DeliveryNotInState":
      return Errors.Conflict.of(
        "DeliveryNotInState",
        `a ${error.status} notification cannot be re-sent: only DELIVERED or EXHAUSTED ones can`
      )
    case "NoWebhookRegistered":
      return Errors.Conflict.of(
        "NoWebhookRegistered",
        "the merchant has no webhook registered for the notification's mode"
      )
    case "DeliveryAlreadyExists":
    case "UnexpectedAttempt":
    case "ConflictingAttempt":
    case "ConcurrencyConflict":
      return Errors.Conflict.of(error._tag, "the notification changed meanwhile; try again")
  }
}

const linkNotFound = () =>
  Errors.NotFound.of(AdminEndpoints.LinkCodes.LinkNotFound, "no payment link with this id")

/** The 409 of a link that cannot be cancelled: only an ACTIVE link can (spec-decisions CANCELLED). */
export const linkNotCancellable = (status: PaymentLink.Status): Errors.Conflict =>
  Errors.Conflict.of(
    AdminEndpoints.LinkCodes.LinkNotInState,
    status === "PROCESSING"
      ? "a link being paid cannot be cancelled"
      : `a ${status} link cannot be cancelled: only an ACTIVE link can`
  )

const encodeLinkRecord = Respond.encoded(LinkApi.LinkRecord)

/**
 * Cancels a link found by its id alone (the admin sees both modes), after checking its status as a
 * reader sees it now: an overdue ACTIVE link reads EXPIRED (B3) and is refused like a recorded
 * expiry. A payment that starts between the read and the cancellation wins: the append is refused
 * with `LinkNotInState` (PROCESSING), the same 409.
 */
const cancelLink = Effect.fn("AdminHandlers.cancelLink")(function* (linkId: string) {
  const view = yield* LinkPayments.checkout(linkId).pipe(
    Effect.catchTags({
      LinkNotFound: () => Effect.fail(linkNotFound()),
      // Every link names a merchant that exists: a missing one is a broken log, a 500.
      MerchantNotFound: (e) => Effect.die(e)
    })
  )
  if (view.status !== "ACTIVE" && view.status !== "CANCELLED") {
    return yield* linkNotCancellable(view.status)
  }
  const state = yield* LinkPayments.cancel(linkId, ACTOR).pipe(
    Effect.catchAll((e) =>
      e._tag === "LinkNotInState" ? Effect.fail(linkNotCancellable(e.status)) : Effect.die(e)
    )
  )
  return LinkPayments.toRecord(state, yield* DateTime.now)
})

const ACTOR = { actor: "admin" }

/** The admin handlers. */
export const layer = HttpApiBuilder.group(CobroApi, "admin", (handlers) =>
  handlers
    .handleRaw("createMerchant", () =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.CreateMerchantRequest)
        const created = yield* MerchantAdmin.createMerchant(body.name, ACTOR).pipe(
          Effect.mapError(fromMerchantError)
        )
        return {
          merchant_id: created.merchantId,
          keys: {
            terminal_api: clearKeys(created.keys.terminal_api),
            payment_button: clearKeys(created.keys.payment_button)
          }
        }
      })
    )
    .handleRaw("bindTerminal", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.BindTerminalRequest)
        const terminal = yield* MerchantAdmin.bindTerminal(
          path.merchant_id,
          { model: body.terminal_model, serial: body.terminal_serial, name: body.name },
          ACTOR
        ).pipe(Effect.mapError(fromMerchantError))
        return terminalBody(terminal)
      })
    )
    .handleRaw("patchTerminal", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.PatchTerminalRequest)
        const terminal = yield* MerchantAdmin.setTerminalApiEnabled(
          path.merchant_id,
          TerminalSerial.make(path.terminal_serial.trim() === "" ? "-" : path.terminal_serial),
          body.api_enabled,
          ACTOR
        ).pipe(Effect.mapError(fromMerchantError))
        return terminalBody(terminal)
      })
    )
    .handleRaw("setPaymentMethods", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.PaymentMethodsRequest, {
          onExcessProperty: "error"
        })
        return yield* MerchantAdmin.setPaymentMethods(path.merchant_id, body, ACTOR).pipe(
          Effect.mapError(fromMerchantError)
        )
      })
    )
    .handleRaw("setWebhook", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.WebhookRequest)
        const set = yield* MerchantAdmin.setWebhook(path.merchant_id, body.mode, body.url, {
          metadata: ACTOR,
          standardWebhooks: body.standard_webhooks === true
        }).pipe(Effect.mapError(fromMerchantError))
        return AdminEndpoints.webhookBody(set)
      })
    )
    .handle("deleteWebhook", ({ path, urlParams }) =>
      MerchantAdmin.deleteWebhook(path.merchant_id, urlParams.mode, ACTOR).pipe(
        Effect.mapError(fromMerchantError)
      )
    )
    .handleRaw("rotateKey", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.RotateKeyRequest)
        const pair = yield* MerchantAdmin.rotateKey(
          path.merchant_id,
          body.integration,
          body.mode,
          ACTOR
        ).pipe(Effect.mapError(fromMerchantError))
        return { integration: body.integration, mode: body.mode, ...clearPair(pair) }
      })
    )
    .handleRaw("setMerchantStatus", ({ path }) =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.MerchantStatusRequest)
        const changed = yield* MerchantAdmin.setStatus(path.merchant_id, body.status, ACTOR).pipe(
          Effect.mapError(fromMerchantError)
        )
        return { merchant_id: changed.merchantId, status: changed.status }
      })
    )
    .handle("cancelLink", ({ path }) => Effect.map(cancelLink(path.payment_link), (r) => encodeLinkRecord(r)))
    .handle("listDeliveryAttempts", ({ path }) =>
      Effect.flatMap(notificationIdOf(path.notification_id), DeliveryAdmin.listAttempts).pipe(
        Effect.map(deliveryBody),
        Effect.mapError((e) => (e._tag === "NotFound" ? e : fromDeliveryError(e)))
      )
    )
    .handle("resendNotification", ({ path }) =>
      Effect.flatMap(notificationIdOf(path.notification_id), DeliveryAdmin.resend).pipe(
        Effect.map(deliveryBody),
        Effect.mapError((e) => (e._tag === "NotFound" ? e : fromDeliveryError(e)))
      )
    )
    .handleRaw("advanceClock", () =>
      Effect.gen(function* () {
        const body = yield* RequestBody.decode(AdminEndpoints.AdvanceClockRequest)
        const clock = yield* SandboxClock.SandboxClock
        const now = yield* clock
          .advance(body.seconds)
          .pipe(
            Effect.mapError(() =>
              Errors.Conflict.of(
                Errors.Codes.ClockNotVirtual,
                "the clock can be advanced only when the server runs with COBRO_CLOCK=virtual"
              )
            )
          )
        return { now: DateTime.formatIso(now) }
      })
    )
)
