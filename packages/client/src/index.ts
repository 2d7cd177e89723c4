/**
 * `@cobro/client`: Cobro's client. The Promise client (`Cobro`), webhook verification
 * (`verifyWebhook`) and the errors; Effect programs import `@cobro/client/Client` and friends.
 */
export { Cobro, type CobroOptions, type RequestOptions } from "./Cobro.js"
export * from "./CobroError.js"
export {
  verifyWebhook,
  WebhookVerificationError,
  type Notification,
  type VerifyOptions,
  type WebhookHeaders
} from "./Webhooks.js"
export { USER_AGENT, VERSION } from "./Version.js"
