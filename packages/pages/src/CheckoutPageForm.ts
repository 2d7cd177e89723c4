/**
 * The checkout page's payment form (issue 6): read from any body a browser (or anyone) may send,
 * checked field by field, so that bad input shows the page again with a message instead of failing.
 */
import type * as LinkPayments from "@cobro/domain/LinkPayments"
import * as SafeText from "@cobro/domain/SafeText"
import * as Either from "effect/Either"
import type { ErrorKey } from "./CheckoutPageText.js"

/** The installments a card payment may choose. */
export const INSTALLMENTS = [1, 2, 3, 6, 12, 24, 36] as const

/** The form's fields as sent (strings), kept to show them again next to their errors. */
export interface Fields {
  readonly method: string
  readonly amount: string
  readonly card_name: string
  readonly card_expiry: string
  readonly installments: string
  readonly bank: string
  readonly phone: string
}

/** The name of a field that can carry an error. */
export type FieldName =
  | "method"
  | "amount"
  | "card_number"
  | "card_name"
  | "card_expiry"
  | "card_cvc"
  | "installments"
  | "bank"
  | "phone"

/** One field's error: what to tell the payer, next to which input. */
export interface FieldError {
  readonly field: FieldName
  readonly key: ErrorKey
  /** For `amountBounds`: the method's bounds. */
  readonly bounds?: { readonly min: number; readonly max: number } | undefined
}

/** A form that passed every check. */
export interface Payment {
  readonly method: string
  /** The payer's amount (OPEN links), or none: the link's total. */
  readonly amount: number | undefined
  /** Digits only; card methods. Never shown again nor recorded. */
  readonly cardNumber: string | undefined
  readonly bank: string | undefined
}

/** What the page knows when it checks a form: the link's methods payable now, its kind, the month. */
export interface Context {
  readonly methods: ReadonlyArray<LinkPayments.PayableMethod>
  readonly open: boolean
  readonly isCard: (method: string) => boolean
  readonly banks: ReadonlyArray<{ readonly code: string }>
  /** The current year and month (1–12), to refuse an expired card. */
  readonly year: number
  readonly month: number
}

/** The largest form body read: anything longer is not the page's form. */
export const MAX_BODY_BYTES = 64 * 1024

const field = (params: URLSearchParams, name: string, max = 200): string =>
  (params.get(name) ?? "").trim().slice(0, max)

/** Reads an `application/x-www-form-urlencoded` text; whatever it holds, it gives fields (maybe empty). */
export const read = (body: string): { readonly params: URLSearchParams; readonly fields: Fields } => {
  let params: URLSearchParams
  try {
    params = new URLSearchParams(body)
  } catch {
    params = new URLSearchParams()
  }
  return {
    params,
    fields: {
      method: field(params, "method", 40),
      amount: field(params, "amount", 40),
      card_name: field(params, "card_name", 100),
      card_expiry: field(params, "card_expiry", 10),
      installments: field(params, "installments", 4),
      bank: field(params, "bank", 10),
      phone: field(params, "phone", 20)
    }
  }
}

/** Whether the digits pass the Luhn check that every card number does. */
export const luhn = (digits: string): boolean => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/**
 * An amount in pesos as a payer types it: digits, with `.`, `,` or spaces as thousands separators and
 * an optional `$`. Decimals are not accepted (COP has none); `undefined` when it is not such a number.
 */
export const parseAmount = (text: string): number | undefined => {
  const cleaned = text.replace(/^\$\s*/, "").replace(/[\s.,]/g, "")
  if (!/^[0-9]{1,15}$/.test(cleaned)) return undefined
  // "50.000,50" or "1.5" would lose their meaning if the separators were just dropped.
  if (/[.,][0-9]{1,2}$/.test(text.trim())) return undefined
  return Number(cleaned)
}

const expiryOk = (text: string, context: Context): boolean => {
  const match = /^(0[1-9]|1[0-2])\s*\/\s*([0-9]{2}|20[0-9]{2})$/.exec(text)
  if (match === null) return false
  const month = Number(match[1])
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2])
  return year > context.year || (year === context.year && month >= context.month)
}

/** Checks a form: the payment to start, or every field's error. */
export const check = (
  params: URLSearchParams,
  fields: Fields,
  context: Context
): Either.Either<Payment, ReadonlyArray<FieldError>> => {
  const errors: Array<FieldError> = []
  const chosen = context.methods.find((m) => m.method === fields.method)
  if (chosen === undefined) errors.push({ field: "method", key: "method" })

  let amount: number | undefined = undefined
  if (context.open) {
    if (fields.amount === "") errors.push({ field: "amount", key: "amountMissing" })
    else {
      amount = parseAmount(fields.amount)
      if (amount === undefined) errors.push({ field: "amount", key: "amountFormat" })
      else if (chosen !== undefined && (amount < chosen.bounds.min || amount > chosen.bounds.max)) {
        errors.push({ field: "amount", key: "amountBounds", bounds: chosen.bounds })
      }
    }
  }

  let cardNumber: string | undefined = undefined
  let bank: string | undefined = undefined
  if (chosen !== undefined && context.isCard(chosen.method)) {
    const digits = (params.get("card_number") ?? "").replace(/[\s-]/g, "")
    if (!/^[0-9]{13,19}$/.test(digits) || !luhn(digits))
      errors.push({ field: "card_number", key: "cardNumber" })
    else cardNumber = digits
    const name = fields.card_name
    if (name.length < 2 || !SafeText.isSafe(name) || SafeText.hasControl(name))
      errors.push({ field: "card_name", key: "cardName" })
    if (!expiryOk(fields.card_expiry, context)) errors.push({ field: "card_expiry", key: "cardExpiry" })
    if (!/^[0-9]{3,4}$/.test((params.get("card_cvc") ?? "").trim())) {
      errors.push({ field: "card_cvc", key: "cardCvc" })
    }
    if (fields.installments !== "" && !INSTALLMENTS.some((n) => String(n) === fields.installments)) {
      errors.push({ field: "installments", key: "installments" })
    }
  } else if (chosen?.method === "PSE") {
    if (!context.banks.some((b) => b.code === fields.bank)) errors.push({ field: "bank", key: "bank" })
    else bank = fields.bank
  } else if (chosen?.method === "WALLET_A") {
    if (!/^3[0-9]{9}$/.test(fields.phone.replace(/[\s-]/g, ""))) errors.push({ field: "phone", key: "phone" })
  }
  return errors.length > 0
    ? Either.left(errors)
    : Either.right({ method: chosen!.method, amount, cardNumber, bank })
}
