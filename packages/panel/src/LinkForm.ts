/**
 * The panel's "create a payment link" form (issue 22, "Links: … B2's rules and errors, shown beside
 * the fields"): the form's fields read into B2's request, checked by B2's own schema
 * (`LinkApi.CreateLinkRequest`) and then by B2's use case (`LinkPayments.create`), each error placed
 * beside the field it is about, in the page's language, with B2's own message kept beside it.
 */
import * as LinkApi from "@cobro/domain/LinkApi"
import type * as LinkPayments from "@cobro/domain/LinkPayments"
import * as Nanos from "@cobro/domain/Nanos"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as PanelDates from "./PanelDates.js"
import type * as Text from "./PanelText.js"

/** The form's fields that can carry an error (`form`: the form as a whole). */
export type Field =
  | "amount_type"
  | "total_amount"
  | "currency"
  | "tip_amount"
  | "description"
  | "reference"
  | "expiration_date"
  | "payment_methods"
  | "callback_url"
  | "payer_email"
  | "image_url"
  | "form"

/** What an error says, as a key of the page's texts (`PanelText`, which lists them). */
export type ErrorKey = Text.LinkErrorKey

/** One error: which field, what to say, and B2's own message when B2 said it. */
export interface FieldError {
  readonly field: Field
  readonly key: ErrorKey
  readonly apiMessage?: string | undefined
}

/** The form as sent (text), to show again beside its errors. */
export interface Values {
  readonly amount_type: string
  readonly total_amount: string
  readonly currency: string
  readonly tip_amount: string
  readonly description: string
  readonly reference: string
  readonly expiration_date: string
  readonly payment_methods: ReadonlyArray<string>
  readonly callback_url: string
  readonly payer_email: string
  readonly image_url: string
}

/** An empty form: a CLOSE link in pesos. */
export const EMPTY: Values = {
  amount_type: "CLOSE",
  total_amount: "",
  currency: "COP",
  tip_amount: "",
  description: "",
  reference: "",
  expiration_date: "",
  payment_methods: [],
  callback_url: "",
  payer_email: "",
  image_url: ""
}

/** Reads the form's fields (each trimmed and bounded: longer text is B2's to refuse, not ours to read). */
export const read = (form: URLSearchParams): Values => {
  const get = (name: string, max = 2048) => (form.get(name) ?? "").trim().slice(0, max)
  return {
    amount_type: get("amount_type", 10),
    total_amount: get("total_amount", 40),
    currency: get("currency", 10),
    tip_amount: get("tip_amount", 40),
    description: get("description", 400),
    reference: get("reference", 200),
    expiration_date: get("expiration_date", 20),
    payment_methods: form
      .getAll("payment_methods")
      .slice(0, 10)
      .map((m) => m.slice(0, 20)),
    callback_url: get("callback_url"),
    payer_email: get("payer_email", 300),
    image_url: get("image_url")
  }
}

/**
 * An amount as a person types it: `50000`, `50.000` or `1,000,000` (thousands), `12.50` or `12,50`
 * (cents). Anything else is passed on as text, for B2's schema to refuse beside the field.
 */
export const amountOf = (text: string): number | string => {
  const s = text.replace(/[\s$]/g, "")
  if (/^\d{1,3}([.,]\d{3})+$/.test(s)) return Number(s.replace(/[.,]/g, ""))
  if (/^\d+([.,]\d{1,2})?$/.test(s)) return Number(s.replace(",", "."))
  return s
}

/** A `datetime-local` value (`2026-11-30T18:00`) in Bogotá's time as nanoseconds; undefined if not one. */
export const expirationOf = (text: string): bigint | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text)
  if (match === null) return undefined
  const day = PanelDates.startOfDay(match[1]!)
  const [hours, minutes, seconds] = [Number(match[2]), Number(match[3]), Number(match[4] ?? "0")]
  if (day === undefined || hours > 23 || minutes > 59 || seconds > 59) return undefined
  return Nanos.fromEpochMillis(day.getTime() + ((hours * 60 + minutes) * 60 + seconds) * 1000)
}

/** The field a path of B2's request is about. */
export const fieldOf = (path: string): Field => {
  if (path === "amount" || path.startsWith("amount.total_amount") || path.startsWith("amount.taxes")) {
    return "total_amount"
  }
  if (path.startsWith("amount.tip_amount")) return "tip_amount"
  if (path.startsWith("amount.currency")) return "currency"
  if (path.startsWith("payment_methods")) return "payment_methods"
  const top = path.split(".")[0] ?? ""
  const known: ReadonlyArray<Field> = [
    "amount_type",
    "description",
    "reference",
    "expiration_date",
    "callback_url",
    "payer_email",
    "image_url"
  ]
  return known.includes(top as Field) ? (top as Field) : "form"
}

const schemaKey: Record<Field, ErrorKey> = {
  amount_type: "amountType",
  total_amount: "amount",
  currency: "currency",
  tip_amount: "amount",
  description: "description",
  reference: "reference",
  expiration_date: "expiration",
  payment_methods: "method",
  callback_url: "callbackUrl",
  payer_email: "payerEmail",
  image_url: "imageUrl",
  form: "amount"
}

/** What a B2 issue (from the schema or the use case) says, by its field and message. */
export const errorOf = (issue: { readonly field: string; readonly message: string }): FieldError => {
  const field = fieldOf(issue.field)
  const m = issue.message
  const key: ErrorKey =
    field === "total_amount" && m.includes("requires amount.total_amount")
      ? "totalRequired"
      : field === "total_amount" && m.startsWith("total_amount must include")
        ? "totalBelowParts"
        : field === "total_amount" && m.includes("outside the bounds")
          ? "totalOutsideBounds"
          : field === "expiration_date" && m.includes("must be in the future")
            ? "expirationPast"
            : field === "payment_methods" && m.includes("is not offered")
              ? "methodNotOffered"
              : field === "payment_methods" && m.includes("offers no payment link method")
                ? "noMethods"
                : schemaKey[field]
  return { field, key, apiMessage: m }
}

const decode = Schema.decodeUnknownEither(LinkApi.CreateLinkRequest, { errors: "all" })

/**
 * B2's request from the form, checked by B2's schema: the request, or every field's error (at most
 * one per field, the first).
 */
export const toRequest = (
  values: Values
): Either.Either<LinkApi.CreateLinkRequest, ReadonlyArray<FieldError>> => {
  const ownErrors: Array<FieldError> = []
  // B2's schema says so only once every other field decodes: said at once, beside the field.
  if (values.amount_type === "CLOSE" && values.total_amount === "") {
    ownErrors.push({ field: "total_amount", key: "totalRequired" })
  }
  const body: Record<string, unknown> = { amount_type: values.amount_type }
  const amount: Record<string, unknown> = {}
  if (values.total_amount !== "") amount["total_amount"] = amountOf(values.total_amount)
  if (values.tip_amount !== "") amount["tip_amount"] = amountOf(values.tip_amount)
  if (values.currency !== "") amount["currency"] = values.currency
  // An OPEN link's amount is the payer's: what the form says of it is not sent.
  if (values.amount_type !== "OPEN" && Object.keys(amount).length > 0) body["amount"] = amount
  for (const name of ["reference", "description", "callback_url", "payer_email", "image_url"] as const) {
    if (values[name] !== "") body[name] = values[name]
  }
  if (values.payment_methods.length > 0) body["payment_methods"] = values.payment_methods
  if (values.expiration_date !== "") {
    const nanos = expirationOf(values.expiration_date)
    if (nanos === undefined) ownErrors.push({ field: "expiration_date", key: "expiration" })
    else body["expiration_date"] = nanos
  }
  const decoded = decode(body)
  const schemaErrors = Either.isLeft(decoded)
    ? ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) =>
        errorOf({ field: issue.path.map(String).join("."), message: issue.message })
      )
    : []
  const errors = firstPerField([...ownErrors, ...schemaErrors])
  return errors.length > 0 || Either.isLeft(decoded) ? Either.left(errors) : Either.right(decoded.right)
}

/** B2's use-case refusal (methods, bounds, expiry in the past) as the form's errors. */
export const fromInvalidLinkRequest = (error: LinkPayments.InvalidLinkRequest): ReadonlyArray<FieldError> =>
  firstPerField(error.issues.map(errorOf))

const firstPerField = (errors: ReadonlyArray<FieldError>): ReadonlyArray<FieldError> =>
  errors.filter((e, i) => errors.findIndex((o) => o.field === e.field) === i)
