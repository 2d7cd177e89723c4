/**
 * The request bodies the suites send again and again, as the spec's samples write them: A3's sale,
 * B2's CLOSE link, C1's intent, C4's card attempt, and the hosted checkout page's card form. A test
 * that needs another value says so with the `overrides` (or `extra`) it passes.
 *
 * The server's suites use them too (`packages/server/test/support/ServerProcess.ts`).
 */

/** A3's amount: COP 11,900 with VAT 1,900 in the full form, no tip. */
export const saleAmount = {
  currency: "COP",
  total_amount: 11900,
  taxes: [{ type: "VAT", base: 10000, value: 1900 }],
  tip_amount: 0
}

/** A3's amount of COP 11,900 with the short tax form: VAT at 19 %, its base and value left to Cobro. */
export const saleAmountIva19 = {
  currency: "COP",
  total_amount: 11900,
  taxes: [{ type: "IVA_19" }],
  tip_amount: 0
}

/** An A3 body: a COP 11,900 sale on the SMART_PRO terminal `serial`, reference `order-42`. */
export const terminalSale = (serial: string, overrides: Record<string, unknown> = {}) => ({
  amount: saleAmount,
  user_email: "seller@shop.co",
  payment_method: "POS",
  terminal_model: "SMART_PRO",
  terminal_serial: serial,
  reference: "order-42",
  ...overrides
})

/** A B2 body: a CLOSE link of `total` COP, with the `extra` fields of the test. */
export const closeLink = (total: number, extra: Record<string, unknown> = {}) => ({
  amount_type: "CLOSE",
  amount: { total_amount: total },
  ...extra
})

/** A C1 body: an intent of `total_amount` COP, described "Order", back to `https://shop.example/back`. */
export const intent = (reference_id: string, total_amount: number, extra: Record<string, unknown> = {}) => ({
  reference_id,
  amount: { currency: "COP", total_amount },
  description: "Order",
  callback_url: "https://shop.example/back",
  ...extra
})

/** The sandbox's approving card, with only the fields C4 requires. */
export const card = { name: "CREDIT_CARD", card_number: "4111111111111111" }

/** The payer of {@link cardAttempt}. */
export const payer = { person_type: "NATURAL_PERSON", name: "Ana Gómez", email: "ana@example.com" }

/** A C4 body: a natural person's attempt on the intent `reference_id` with every field of a card. */
export const cardAttempt = (reference_id: string, extra: Record<string, unknown> = {}) => ({
  reference_id,
  payer,
  payment_method: {
    ...card,
    cardholder_name: "ANA GOMEZ",
    expiration_month: "12",
    expiration_year: "2030",
    installments: 1,
    cvc: "123"
  },
  ...extra
})

/** The card form of the hosted checkout page, as a payer fills it in. */
export const cardForm = (extra: Record<string, string> = {}) => ({
  method: "CREDIT_CARD",
  card_number: "4111 1111 1111 1111",
  card_name: "Ana Gómez",
  card_expiry: "12/30",
  card_cvc: "123",
  installments: "1",
  ...extra
})
