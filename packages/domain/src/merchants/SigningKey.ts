/**
 * Which merchant key signs a webhook notification (spec D, Signature: "Key used to sign, in priority
 * order"), and the sealed form in which secret keys are kept in the log.
 */
import * as Schema from "effect/Schema"

/**
 * The two integration types that have their own key pairs (spec, Authentication).
 *
 * @category schemas
 */
export const Integration = Schema.Literal("terminal_api", "payment_button")
export type Integration = typeof Integration.Type

/**
 * Each key has a production version and a test (sandbox) version.
 *
 * @category schemas
 */
export const KeyMode = Schema.Literal("production", "test")
export type KeyMode = typeof KeyMode.Type

/**
 * How the notified payment was made. The link API uses the payment-button identity key, but for
 * signing a link payment is an "other" payment (rule 3); `other` covers everything else (online
 * payments, sales keyed on a terminal outside the API).
 *
 * @category schemas
 */
export const PaymentChannel = Schema.Literal("terminal_api", "payment_button", "payment_link", "other")
export type PaymentChannel = typeof PaymentChannel.Type

/**
 * The key that signs a notification: one of the merchant's production keys, or `EMPTY` for a
 * sandbox transaction, whose secret is the empty string (Signature, step 4). A reference, not the
 * secret: the dispatcher resolves it when it sends, so a rotated key signs the next attempt.
 *
 * @category schemas
 */
export const SigningKey = Schema.Union(
  Schema.Literal("EMPTY"),
  Schema.Struct({ integration: Integration, mode: KeyMode })
)
export type SigningKey = typeof SigningKey.Type

/**
 * A secret key as the handler sealed it (encrypted with the server's key, or any opaque reference
 * the server can resolve). The domain and the event log never hold a secret key in clear: the log
 * is read by auditors, and a secret in it would let a reader forge webhooks.
 *
 * @category schemas
 */
export const SealedSecret = Schema.NonEmptyString.pipe(Schema.brand("SealedSecret"))
export type SealedSecret = typeof SealedSecret.Type

/**
 * SHA-256 of an identity key, lower-case hex: the handler hashes, the domain never sees the key.
 *
 * @category schemas
 */
export const IdentityKeyHash = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/),
  Schema.brand("IdentityKeyHash")
)
export type IdentityKeyHash = typeof IdentityKeyHash.Type

/** What the signing-key choice depends on. */
export interface SigningContext {
  readonly channel: PaymentChannel
  /** The transaction was made with test keys. */
  readonly sandbox: boolean
  /** The merchant has activated the payment-button integration (its keys exist). */
  readonly paymentButtonEnabled: boolean
}

/**
 * The spec's priority: sandbox → the empty key; 1. terminal API → terminal-API key; 2. payment
 * button → payment-button key; 3. anything else → payment-button key when enabled, else terminal-API.
 */
export const signingKeyFor = (context: SigningContext): SigningKey => {
  if (context.sandbox) return "EMPTY"
  switch (context.channel) {
    case "terminal_api":
      return { integration: "terminal_api", mode: "production" }
    case "payment_button":
      return { integration: "payment_button", mode: "production" }
    case "payment_link":
    case "other":
      return {
        integration: context.paymentButtonEnabled ? "payment_button" : "terminal_api",
        mode: "production"
      }
  }
}
