/**
 * Fixtures for webhook tests, shared by the domain's, the store's and the dispatcher's suites (Cobro
 * itself never imports them): merchants with keys and webhooks, and the histories (terminal
 * checkouts, links, online payments) whose outcomes raise notifications, written through the deciders.
 */
import * as CommandHandler from "../kernel/CommandHandler.js"
import * as EventStore from "../kernel/EventStore.js"
import {
  IntegrationId,
  IntentReference,
  MerchantId,
  PaymentLinkId,
  TerminalSerial,
  TransactionId
} from "../shared/Ids.js"
import * as Merchant from "../merchants/Merchant.js"
import { amount } from "../shared/Money.js"
import * as Payment from "../online/Payment.js"
import { IntentAmount } from "../online/PaymentIntent.js"
import * as PaymentLink from "../links/PaymentLink.js"
import { IdentityKeyHash, Integration, SealedSecret } from "../merchants/SigningKey.js"
import * as TerminalCheckout from "../terminal/TerminalCheckout.js"
import * as Chunk from "effect/Chunk"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"

/** 2026-04-14 10:00:00.000 Bogotá (15:00 UTC): well above 2^53 in nanoseconds. */
export const T0 = Date.UTC(2026, 3, 14, 15, 0, 0)
/** The instant `seconds` after {@link T0}. */
export const at = (seconds: number) => DateTime.unsafeMake(T0 + seconds * 1000)
/** Moves the test clock to `T0 + seconds`. */
export const setTime = (seconds: number) => TestClock.setTime(T0 + seconds * 1000)

const hash = (n: number) => IdentityKeyHash.make(n.toString(16).padStart(64, "0"))
/** The sealed secret of key number `n` is `sealed:<n>`; a test vault unseals it to `secret-<n>`. */
export const pair = (n: number): Merchant.KeyPair => ({
  identityKeyHash: hash(n),
  secretKey: SealedSecret.make(`sealed:${n}`)
})
/** The clear secret of a sealed test secret. */
export const unsealTest = (sealed: string): string => sealed.replace("sealed:", "secret-")

const merchants = CommandHandler.make(Merchant.Merchant)
const checkouts = CommandHandler.make(TerminalCheckout.TerminalCheckout)
const links = CommandHandler.make(PaymentLink.PaymentLink)
const payments = CommandHandler.make(Payment.Payment)

/** What {@link merchant} sets up besides the account and its terminal-API keys. */
export interface MerchantSetup {
  readonly production?: string
  readonly test?: string
  /** Activate the payment-button integration too (signing rule 3). */
  readonly button?: boolean
  /** Key numbers base: terminal API keys are base+1 (production), base+2 (test); button base+3, base+4. */
  readonly keyBase?: number
  /** The webhooks registered ask for the Standard Webhooks headers too. */
  readonly standardWebhooks?: boolean
}

/** A merchant with terminal-API keys and the given webhooks. */
export const merchant = (id: string, setup: MerchantSetup = {}) =>
  Effect.gen(function* () {
    const merchantId = MerchantId.make(id)
    const base = setup.keyBase ?? 0
    const standardWebhooks = setup.standardWebhooks ?? false
    const now = yield* DateTime.now
    yield* merchants(id, new Merchant.CreateMerchant({ merchantId, name: "Café Central", now }))
    // Each integration's keys: production key number `first`, test key number `first + 1`.
    const integrations: ReadonlyArray<{ integration: Integration; first: number }> = [
      { integration: "terminal_api", first: base + 1 },
      ...(setup.button ? [{ integration: "payment_button" as const, first: base + 3 }] : [])
    ]
    for (const { first, integration } of integrations) {
      yield* merchants(
        id,
        new Merchant.ActivateIntegration({ integration, production: pair(first), test: pair(first + 1), now })
      )
    }
    for (const mode of ["production", "test"] as const) {
      const url = setup[mode]
      if (url) yield* merchants(id, new Merchant.SetWebhook({ mode, url, standardWebhooks, now }))
    }
    return merchantId
  })

/** Deletes a merchant's webhook. */
export const deleteWebhook = (id: string, mode: "production" | "test") =>
  Effect.flatMap(DateTime.now, (now) => merchants(id, new Merchant.DeleteWebhook({ mode, now })))

/** The card of the sales below: a contactless VISA credit card read on terminal TID-9. */
export const card = new TerminalCheckout.Card({
  maskedPan: "450799******1234",
  brand: "VISA",
  captureMode: "CONTACTLESS_CHIP",
  cardType: "CREDIT",
  cardholderName: "ANA PEREZ",
  installments: 1,
  terminalId: "TID-9"
})

/** An approved card sale on {@link card}. */
export const cardSale = new TerminalCheckout.Sale({
  paymentMethod: "CARD",
  serviceCode: "SC-1",
  approvalNumber: Option.some("123456"),
  payerEmail: Option.some("ana@example.com"),
  card: Option.some(card)
})

/** The terminal checkout `INT_<n>` / `TRX_<n>` of a merchant, and what is not its default. */
export interface CheckoutSetup {
  readonly merchantId: string
  readonly n: number
  readonly sandbox?: boolean
  readonly reference?: string
  readonly paymentMethod?: TerminalCheckout.CreateCheckout["paymentMethod"]
}

/** A terminal checkout `INT_<n>` / `TRX_<n>` pushed to a terminal and on it (SENT). */
export const sentCheckout = (setup: CheckoutSetup) =>
  Effect.gen(function* () {
    const id = `INT_${setup.n}`
    const now = yield* DateTime.now
    yield* checkouts(
      id,
      new TerminalCheckout.CreateCheckout({
        integrationId: IntegrationId.make(id),
        transactionId: TransactionId.make(`TRX_${setup.n}`),
        merchantId: MerchantId.make(setup.merchantId),
        sandbox: setup.sandbox ?? false,
        terminalSerial: TerminalSerial.make("SN-0001"),
        terminalModel: "SMART_PRO",
        reference: setup.reference ?? `order-${setup.n}`,
        amount: new TerminalCheckout.CheckoutAmount({
          currency: "COP",
          total: amount(11_900),
          tip: amount(0),
          taxes: [{ type: "VAT", base: amount(10_000), value: amount(1_900) }]
        }),
        paymentMethod: setup.paymentMethod ?? "POS",
        userEmail: "seller@shop.example",
        description: Option.some("Two coffees"),
        payer: Option.none(),
        now
      })
    )
    yield* checkouts(id, new TerminalCheckout.AttemptPush({ now }))
    yield* checkouts(id, new TerminalCheckout.RecordDelivery({ lockedSince: Option.none(), now }))
    return id
  })

/** Runs one outcome command on checkout `INT_<n>` at the clock's now. */
export const checkoutOutcome = (
  n: number,
  outcome: "approve" | "reject" | "rejectWithCard" | "void" | "rejectVoid"
) =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const transactionId = TransactionId.make(`TRX_${n}`)
    const command =
      outcome === "approve"
        ? new TerminalCheckout.ApproveSale({ transactionId, sale: cardSale, now })
        : outcome === "reject"
          ? new TerminalCheckout.RejectSale({ transactionId, reason: "DECLINED", card: Option.none(), now })
          : outcome === "rejectWithCard"
            ? new TerminalCheckout.RejectSale({
                transactionId,
                reason: "DECLINED",
                card: Option.some(card),
                now
              })
            : outcome === "void"
              ? new TerminalCheckout.ApproveVoid({ transactionId, now })
              : new TerminalCheckout.RejectVoid({ transactionId, reason: "NO", now })
    return yield* checkouts(`INT_${n}`, command)
  })

/** An approved terminal card sale `TRX_<n>`. */
export const approvedSale = (setup: CheckoutSetup) =>
  Effect.zipRight(sentCheckout(setup), checkoutOutcome(setup.n, "approve"))

/** A CLOSE link `LNK_<n>` paid (or failed) with `method` by transaction `TRX_<n>`. */
export const linkPayment = (
  setup: { readonly merchantId: string; readonly n: number; readonly sandbox?: boolean },
  outcome: "paid" | "failed",
  method = "PSE"
) =>
  Effect.gen(function* () {
    const id = `LNK_${setup.n}`
    const now = yield* DateTime.now
    const transactionId = TransactionId.make(`TRX_${setup.n}`)
    yield* links(
      id,
      new PaymentLink.CreateLink({
        linkId: PaymentLinkId.make(id),
        merchantId: MerchantId.make(setup.merchantId),
        sandbox: setup.sandbox ?? false,
        amountType: "CLOSE",
        amount: Option.some(
          new PaymentLink.LinkAmount({ currency: "COP", total: amount(50_000), tip: amount(0), taxes: [] })
        ),
        reference: `link-order-${setup.n}`,
        description: Option.none(),
        expiresAt: Option.none(),
        callbackUrl: Option.none(),
        paymentMethods: [method],
        payerEmail: Option.some("payer@example.com"),
        imageUrl: Option.none(),
        now
      })
    )
    yield* links(
      id,
      new PaymentLink.StartPayment({
        transactionId,
        paymentMethod: method,
        amount: amount(50_000),
        bounds: { min: amount(1), max: amount(1_000_000) },
        now
      })
    )
    yield* links(
      id,
      outcome === "paid"
        ? new PaymentLink.CompletePayment({ transactionId, now })
        : new PaymentLink.FailPayment({ transactionId, now })
    )
    return transactionId
  })

/** An online card payment `TRX_<n>`: started, then the given outcomes. */
export const onlinePayment = (
  setup: { readonly merchantId: string; readonly n: number; readonly sandbox?: boolean },
  outcomes: ReadonlyArray<"approve" | "reject" | "void">
) =>
  Effect.gen(function* () {
    const transactionId = TransactionId.make(`TRX_${setup.n}`)
    const now = yield* DateTime.now
    yield* payments(
      transactionId,
      new Payment.StartPayment({
        transactionId,
        merchantId: MerchantId.make(setup.merchantId),
        sandbox: setup.sandbox ?? false,
        referenceId: IntentReference.make(`intent-${setup.n}`),
        amount: new IntentAmount({ currency: "COP", total: amount(80_000), tip: amount(0), taxes: [] }),
        paymentMethod: "CREDIT_CARD",
        card: Option.some({ maskedPan: "411111******1111", cardholderName: "ANA", installments: 1 }),
        payer: Option.some({ email: "ana@example.com" }),
        metadata: Option.none(),
        deviceFingerprint: Option.none(),
        now
      })
    )
    for (const outcome of outcomes) {
      yield* payments(
        transactionId,
        outcome === "approve"
          ? new Payment.ApprovePayment({ approvalNumber: "777001", threeDs: false, now })
          : outcome === "reject"
            ? new Payment.RejectPayment({ reason: "FRAUD", now })
            : new Payment.VoidPayment({ now })
      )
    }
    return transactionId
  })

/** Every event of the log, in commit order. */
export const allEvents: Effect.Effect<
  ReadonlyArray<EventStore.LoggedEvent>,
  never,
  EventStore.EventStore
> = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(Stream.runCollect(store.streamAll()), Chunk.toReadonlyArray)
)

/** The logged events of one type. */
export const eventsOfType = (type: string) =>
  Effect.map(allEvents, (events) => events.filter((e) => e.type === type))
