/**
 * Authentication of A, B, C and the fallback query (spec: Authentication): `Authorization: x-api-key
 * <identity key>` resolves through the merchant directory to the current `Credential`. A group
 * requires one integration with `.middleware(Security.TerminalApi)` or `.middleware(Security.PaymentButton)`
 * (`@cobro/api/Security`); its handlers read `CurrentCredential`. This module implements them.
 */
import * as KeyVault from "@cobro/domain/KeyVault"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import type { Integration } from "@cobro/domain/SigningKey"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import * as Errors from "@cobro/api/Errors"
import { Admin, PaymentButton, TerminalApi } from "@cobro/api/Security"

const SCHEME = /^x-api-key[ \t]+(\S+)[ \t]*$/i

const unauthorized = (message: string) => Effect.fail(Errors.Unauthorized.of(message))

/** The identity key of an `Authorization` header value, if it has the `x-api-key <key>` form. */
export const identityKeyOf = (header: string): Option.Option<string> => {
  const match = SCHEME.exec(header)
  return match === null ? Option.none() : Option.some(match[1]!)
}

const forbidden = (integration: Integration) =>
  Effect.fail(
    Errors.Forbidden.of(
      integration === "terminal_api"
        ? "this API takes the terminal API key, not the payment button key"
        : "this API takes the payment button key, not the terminal API key"
    )
  )

const MISSING = "missing Authorization header: send `x-api-key <identity key>`"
const MALFORMED = "malformed Authorization header: send `x-api-key <identity key>`"
const UNKNOWN = "unknown or revoked API key"

/** The request's span (when tracing is on) names the merchant and the mode of the key. */
const annotated = (credential: MerchantDirectory.Credential) =>
  Effect.withFiberRuntime<MerchantDirectory.Credential>((fiber) => {
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (span._tag === "Some" && span.value._tag === "Span") {
      span.value.attribute("cobro.merchant_id", credential.merchantId)
      span.value.attribute("cobro.mode", credential.mode)
    }
    return Effect.succeed(credential)
  })

/**
 * {@link authenticate} over a given vault and directory: what the middlewares call per request, so
 * that a request costs the directory lookup and no context to build (`npm run bench -- http`).
 */
export const authenticateWith =
  (vault: KeyVault.KeyVault["Type"], directory: MerchantDirectory.MerchantDirectory["Type"]) =>
  (
    header: string,
    integration: Integration | undefined
  ): Effect.Effect<MerchantDirectory.Credential, Errors.Unauthorized | Errors.Forbidden> => {
    if (header === "") return unauthorized(MISSING)
    const key = identityKeyOf(header)
    if (Option.isNone(key)) return unauthorized(MALFORMED)
    return Effect.flatMap(
      directory.findByIdentityKey(vault.hashIdentityKey(key.value)),
      (credential): Effect.Effect<MerchantDirectory.Credential, Errors.Unauthorized | Errors.Forbidden> =>
        Option.isNone(credential)
          ? unauthorized(UNKNOWN)
          : integration !== undefined && credential.value.integration !== integration
            ? forbidden(integration)
            : annotated(credential.value)
    )
  }

/**
 * Resolves an `Authorization` header value to a credential: 401 when the header is missing or
 * malformed or the key is unknown (or revoked), 403 when the key belongs to another integration.
 */
export const authenticate = (
  header: string,
  integration: Integration | undefined
): Effect.Effect<
  MerchantDirectory.Credential,
  Errors.Unauthorized | Errors.Forbidden,
  KeyVault.KeyVault | MerchantDirectory.MerchantDirectory
> =>
  Effect.flatMap(KeyVault.KeyVault, (vault) =>
    Effect.flatMap(MerchantDirectory.MerchantDirectory, (directory) =>
      authenticateWith(vault, directory)(header, integration)
    )
  )

const implementation = (integration: Integration) =>
  Effect.gen(function* () {
    const check = authenticateWith(yield* KeyVault.KeyVault, yield* MerchantDirectory.MerchantDirectory)
    return { apiKey: (header: Redacted.Redacted<string>) => check(Redacted.value(header), integration) }
  })

/** The terminal API authentication. */
export const layerTerminalApi: Layer.Layer<
  TerminalApi,
  never,
  KeyVault.KeyVault | MerchantDirectory.MerchantDirectory
> = Layer.effect(TerminalApi, implementation("terminal_api"))

/** The payment button authentication. */
export const layerPaymentButton: Layer.Layer<
  PaymentButton,
  never,
  KeyVault.KeyVault | MerchantDirectory.MerchantDirectory
> = Layer.effect(PaymentButton, implementation("payment_button"))

/** Both authentications. */
export const layer = Layer.mergeAll(layerTerminalApi, layerPaymentButton)

// ---------------------------------------------------------------------------------------------
// Admin
// ---------------------------------------------------------------------------------------------

/** The admin token (`ADMIN_TOKEN`), provided by the server. */
export class AdminToken extends Context.Tag("@cobro/http/AdminToken")<
  AdminToken,
  Redacted.Redacted<string>
>() {}

/** Equal strings, compared in time that does not depend on where they differ. */
export const constantTimeEquals = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/** The admin authentication: the token compared in constant time. */
export const layerAdmin: Layer.Layer<Admin, never, AdminToken> = Layer.effect(
  Admin,
  Effect.map(AdminToken, (token) => ({
    bearer: (sent: Redacted.Redacted<string>) =>
      Redacted.value(token) !== "" && constantTimeEquals(Redacted.value(sent), Redacted.value(token))
        ? Effect.void
        : Effect.fail(
            Errors.Unauthorized.of("missing or wrong admin token: send `Authorization: Bearer <ADMIN_TOKEN>`")
          )
  }))
)
