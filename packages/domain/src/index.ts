/**
 * @cobro/domain: the pure core of Cobro, one folder per feature with the decider kernel apart. Each
 * module is one concept: import one as a namespace through its own path (`@cobro/domain/PaymentLink`),
 * or all of them from here.
 */

// The decider kernel: deciders, aggregates, transition tables, the command handler and the event store port
export * as Aggregate from "./kernel/Aggregate.js"
export * as AppendFence from "./kernel/AppendFence.js"
export * as CommandHandler from "./kernel/CommandHandler.js"
export * as Decider from "./kernel/Decider.js"
export * as DerivedId from "./kernel/DerivedId.js"
export * as EventStore from "./kernel/EventStore.js"
export * as IdempotencyStore from "./kernel/IdempotencyStore.js"
export * as IdGenerator from "./kernel/IdGenerator.js"
export * as KnownStates from "./kernel/KnownStates.js"
export * as Outbox from "./kernel/Outbox.js"
export * as Transitions from "./kernel/Transitions.js"
export * as Unchecked from "./kernel/Unchecked.js"

// Values every family uses: ids, money, time, text, the response envelope
export * as Bogota from "./shared/Bogota.js"
export * as Cards from "./shared/Cards.js"
export * as Documents from "./shared/Documents.js"
export * as Envelope from "./shared/Envelope.js"
export * as ExactJson from "./shared/ExactJson.js"
export * as Ids from "./shared/Ids.js"
export * as Locale from "./shared/Locale.js"
export * as Money from "./shared/Money.js"
export * as Nanos from "./shared/Nanos.js"
export * as ReturnUrl from "./shared/ReturnUrl.js"
export * as SafeText from "./shared/SafeText.js"
export * as SandboxClock from "./shared/SandboxClock.js"
export * as Traceparent from "./shared/Traceparent.js"

// Merchants, their keys and terminals (spec: Authentication, A preconditions, B1, D Registration)
export * as KeyVault from "./merchants/KeyVault.js"
export * as Merchant from "./merchants/Merchant.js"
export * as MerchantAdmin from "./merchants/MerchantAdmin.js"
export * as MerchantDirectory from "./merchants/MerchantDirectory.js"
export * as SigningKey from "./merchants/SigningKey.js"

// A: the terminal payment API
export * as CheckoutErrors from "./terminal/CheckoutErrors.js"
export * as Taxes from "./terminal/Taxes.js"
export * as TerminalApi from "./terminal/TerminalApi.js"
export * as TerminalCheckout from "./terminal/TerminalCheckout.js"
export * as TerminalGateway from "./terminal/TerminalGateway.js"
export * as TerminalPayments from "./terminal/TerminalPayments.js"
export * as TerminalSandbox from "./terminal/TerminalSandbox.js"

// B: payment links and the hosted checkout
export * as LinkApi from "./links/LinkApi.js"
export * as LinkPayments from "./links/LinkPayments.js"
export * as PaymentLink from "./links/PaymentLink.js"

// C: online payments
export * as Acquirer from "./online/Acquirer.js"
export * as OnlineApi from "./online/OnlineApi.js"
export * as OnlinePayments from "./online/OnlinePayments.js"
export * as Payment from "./online/Payment.js"
export * as PaymentIntent from "./online/PaymentIntent.js"
export * as Refund from "./online/Refund.js"

// D: webhook notifications and the A4 fallback query
export * as DeliveryAdmin from "./webhooks/DeliveryAdmin.js"
export * as DeliveryQueue from "./webhooks/DeliveryQueue.js"
export * as DevWebhooks from "./webhooks/DevWebhooks.js"
export * as ListenFeed from "./webhooks/ListenFeed.js"
export * as NotificationApi from "./webhooks/NotificationApi.js"
export * as NotificationLog from "./webhooks/NotificationLog.js"
export * as NotificationRules from "./webhooks/NotificationRules.js"
export * as WebhookDelivery from "./webhooks/WebhookDelivery.js"
export * as WebhookTransport from "./webhooks/WebhookTransport.js"

// The operator's and the panel's lists: the listings port, its pagination rule, its in-memory adapter
export * as Listings from "./listings/Listings.js"
export * as ListingsFromLog from "./listings/ListingsFromLog.js"
export * as Pagination from "./listings/Pagination.js"

// The merchant panel: its users, their sign-in and sessions
export * as PanelAccess from "./panel/PanelAccess.js"
export * as PanelSessions from "./panel/PanelSessions.js"
export * as PanelUser from "./panel/PanelUser.js"
export * as PanelUserList from "./panel/PanelUserList.js"
export * as PasswordHasher from "./panel/PasswordHasher.js"
export * as SignInFailures from "./panel/SignInFailures.js"
export * as TestNotification from "./panel/TestNotification.js"

// For auditors: histories, the transparency log port, the state-machine docs
export * as Histories from "./audit/Histories.js"
export * as StateMachinesDoc from "./audit/StateMachinesDoc.js"
export * as TransparencyLog from "./audit/TransparencyLog.js"

// For tests and embedders: an in-memory event store
export * as InMemoryEventStore from "./testing/InMemoryEventStore.js"

/** @deprecated Renamed `NotificationApi` (the wire schemas of spec D); kept for existing imports. */
export * as Notification from "./webhooks/NotificationApi.js"
/** @deprecated Renamed `NotificationRules`; kept for existing imports. */
export * as Notifications from "./webhooks/NotificationRules.js"
