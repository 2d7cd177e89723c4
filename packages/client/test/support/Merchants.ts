/**
 * Merchants made through the Promise client's admin calls, and the request bodies the suites send
 * (as the spec's samples write them, like `packages/http/test/support/Bodies.ts`).
 */
import type { Cobro } from "../../src/Cobro.js"

/** A3: a COP 11,900 sale (VAT 1,900) on the SMART_PRO terminal `serial`. */
export const terminalSale = (serial: string, reference: string) =>
  ({
    amount: {
      currency: "COP",
      total_amount: 11900,
      taxes: [{ type: "VAT", base: 10000, value: 1900 }],
      tip_amount: 0
    },
    user_email: "seller@shop.co",
    payment_method: "POS",
    terminal_model: "SMART_PRO",
    terminal_serial: serial,
    reference
  }) as const

/** C4: the sandbox's approving card. */
export const cardAttempt = (reference_id: string) =>
  ({
    reference_id,
    payer: { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" },
    payment_method: {
      name: "CREDIT_CARD",
      card_number: "4111111111111111",
      cardholder_name: "ANA GOMEZ",
      expiration_month: "12",
      expiration_year: "2030",
      installments: 1,
      cvc: "123"
    }
  }) as const

/**
 * A merchant with the terminal `serial` bound and enabled for the API, POS and card links offered,
 * and (when given) a test-mode webhook: its id and keys.
 */
export const givenMerchant = async (
  admin: Cobro,
  options: { readonly name: string; readonly serial: string; readonly webhookUrl?: string }
) => {
  const created = await admin.admin.merchants.create({ name: options.name })
  const merchant = created.merchant_id
  await admin.admin.terminals.bind(merchant, {
    terminal_model: "SMART_PRO",
    terminal_serial: options.serial,
    name: "Caja"
  })
  await admin.admin.terminals.update(merchant, options.serial, { api_enabled: true })
  await admin.admin.setPaymentMethods(merchant, {
    terminal: { POS: true },
    link: { CREDIT_CARD: { min: 1000, max: 5_000_000 } }
  })
  if (options.webhookUrl !== undefined) {
    await admin.admin.webhooks.set(merchant, {
      url: options.webhookUrl,
      mode: "test",
      standard_webhooks: true
    })
  }
  return { merchant, keys: created.keys }
}

/** Polls `check` every 100 ms until it gives a value, for at most `millis`. */
export const eventually = async <A>(millis: number, check: () => Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + millis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`nothing after ${millis} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * A4 by the merchant's reference (`is_external_reference`), polled until the sale `reference` has
 * its notification, for at most 30 s.
 */
export const fallbackNotifications = (cobro: Cobro, reference: string) =>
  eventually(30_000, async () => {
    const found = await cobro.notifications.list(reference, { is_external_reference: true })
    return found.notifications.length > 0 ? found : undefined
  })
