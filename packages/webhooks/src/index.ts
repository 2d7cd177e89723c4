/**
 * @cobro/webhooks: spec D's delivery side. The notifier turns logged outcomes into scheduled
 * deliveries, the dispatcher signs and POSTs them with the spec's retries, and `verifySignature`
 * is the helper merchants use on their raw request body. `DeliveryMetrics` counts the attempts, and
 * `TraceContext` links each attempt's span to what scheduled it.
 */
export * as DeliveryMetrics from "./DeliveryMetrics.js"
export * as Dispatcher from "./Dispatcher.js"
export * as HttpTransport from "./HttpTransport.js"
export * as Notifier from "./Notifier.js"
export * as Signature from "./Signature.js"
export { verifySignature } from "./Signature.js"
export * as StreamReplays from "./StreamReplays.js"
export * as TraceContext from "./TraceContext.js"
export * as UrlSafety from "./UrlSafety.js"
