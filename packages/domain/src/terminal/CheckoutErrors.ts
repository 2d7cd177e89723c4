/**
 * The error codes of the terminal checkout (spec "Errors", A3: AP001 to AP006) as domain errors with
 * no HTTP knowledge, and the decoding of a checkout body into a request or the AP error it earns.
 */
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type ErrorItem, type FieldIssue, fieldIssues } from "../shared/Envelope.js"
import { CheckoutRequest } from "./TerminalApi.js"

/**
 * AP001: a failure not mapped to a specific error.
 *
 * @category errors
 */
export class Unmapped extends Schema.TaggedError<Unmapped>()("Unmapped", {
  code: Schema.tag("AP001"),
  reason: Schema.String
}) {}

/**
 * AP002: `amount.taxes` matches no valid tax form.
 *
 * @category errors
 */
export class InvalidTaxes extends Schema.TaggedError<InvalidTaxes>()("InvalidTaxes", {
  code: Schema.tag("AP002"),
  reason: Schema.String
}) {}

/**
 * AP003: the payment method sent is not active for the merchant (or is no known method).
 *
 * @category errors
 */
export class PaymentMethodNotActive extends Schema.TaggedError<PaymentMethodNotActive>()(
  "PaymentMethodNotActive",
  {
    code: Schema.tag("AP003"),
    payment_method: Schema.String
  }
) {}

/**
 * AP004: the selected terminal is not bound to the merchant (or not enabled for the API).
 *
 * @category errors
 */
export class TerminalNotBound extends Schema.TaggedError<TerminalNotBound>()("TerminalNotBound", {
  code: Schema.tag("AP004"),
  terminal_model: Schema.String,
  terminal_serial: Schema.String
}) {}

/**
 * AP005: a required field is missing; `field` is its dotted path, e.g. `amount.currency`.
 *
 * @category errors
 */
export class MissingField extends Schema.TaggedError<MissingField>()("MissingField", {
  code: Schema.tag("AP005"),
  field: Schema.String
}) {}

/**
 * AP006: a field has a type (or a value format) other than the defined one; `field` is its dotted
 * path, `""` for the body itself when it is not a JSON object.
 *
 * @category errors
 */
export class WrongType extends Schema.TaggedError<WrongType>()("WrongType", {
  code: Schema.tag("AP006"),
  field: Schema.String,
  reason: Schema.String
}) {}

/** Any AP error of a terminal checkout. */
export type CheckoutError =
  Unmapped | InvalidTaxes | PaymentMethodNotActive | TerminalNotBound | MissingField | WrongType

/** The errors the decoding of a checkout body can give. */
export type CheckoutDecodeError = InvalidTaxes | PaymentMethodNotActive | MissingField | WrongType

/** The error item (`{code, message, field?}`) of an AP error, for the `errors` array of the envelope. */
export const toErrorItem = (error: CheckoutError): ErrorItem => {
  switch (error._tag) {
    case "Unmapped":
      return { code: error.code, message: `unexpected failure: ${error.reason}` }
    case "InvalidTaxes":
      return {
        code: error.code,
        message: `amount.taxes matches no valid tax form: ${error.reason}`,
        field: "amount.taxes"
      }
    case "PaymentMethodNotActive":
      return {
        code: error.code,
        message: `payment method "${error.payment_method}" is not active`,
        field: "payment_method"
      }
    case "TerminalNotBound":
      return {
        code: error.code,
        message: `terminal ${error.terminal_model} ${error.terminal_serial} is not bound`,
        field: "terminal_serial"
      }
    case "MissingField":
      return { code: error.code, message: `required field ${error.field} is missing`, field: error.field }
    case "WrongType":
      return error.field === ""
        ? { code: error.code, message: `the request body ${error.reason}` }
        : {
            code: error.code,
            message: `field ${error.field} has the wrong type: ${error.reason}`,
            field: error.field
          }
  }
}

/**
 * The checkout fields in the spec's table order, with whether each is required. The order decides
 * which of several problems of one kind is reported first.
 */
export const CHECKOUT_FIELDS: ReadonlyArray<readonly [field: string, required: boolean]> = [
  ["amount", true],
  ["amount.currency", true],
  ["amount.total_amount", true],
  ["amount.total", true],
  ["amount.taxes", true],
  ["amount.tip_amount", true],
  ["amount.tip", true],
  ["user_email", true],
  ["payment_method", true],
  ["terminal_model", true],
  ["terminal_serial", true],
  ["reference", true],
  ["description", false],
  ["payer", false],
  ["payer.email", false],
  ["payer.phone_number", false],
  ["payer.document", false],
  ["payer.document.document_type", false],
  ["payer.document.document_number", false]
]

/** Which kind of problem wins when a body has several: missing, then wrong type, then taxes, then method. */
const KIND_RANK: { readonly [K in CheckoutDecodeError["_tag"]]: number } = {
  MissingField: 0,
  WrongType: 1,
  InvalidTaxes: 2,
  PaymentMethodNotActive: 3
}

const fieldRank = (field: string): number => {
  let best = CHECKOUT_FIELDS.length
  let bestLength = -1
  CHECKOUT_FIELDS.forEach(([name], index) => {
    if ((field === name || field.startsWith(`${name}.`)) && name.length > bestLength) {
      best = index
      bestLength = name.length
    }
  })
  return best
}

const fieldOf = (error: CheckoutDecodeError): string => {
  switch (error._tag) {
    case "InvalidTaxes":
      return "amount.taxes"
    case "PaymentMethodNotActive":
      return "payment_method"
    default:
      return error.field
  }
}

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = input
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}

const isAbsent = (value: unknown): boolean => value === undefined || value === null

const isRequired = (field: string): boolean =>
  CHECKOUT_FIELDS.some(([name, required]) => name === field && required)

/** Maps one issue of the schema to the AP error it stands for. */
const classify = (input: unknown, issue: FieldIssue): CheckoutDecodeError => {
  const { field, path } = issue
  if (path[0] === "amount" && path[1] === "taxes") {
    const taxes = valueAt(input, ["amount", "taxes"])
    if (isAbsent(taxes)) return new MissingField({ field: "amount.taxes" })
    if (!Array.isArray(taxes))
      return new WrongType({ field: "amount.taxes", reason: "expected a list of objects" })
    return new InvalidTaxes({ reason: issue.message })
  }
  if (path.length === 0 && (input === null || typeof input !== "object" || Array.isArray(input))) {
    return new WrongType({ field: "", reason: "must be a JSON object" })
  }
  const value = valueAt(input, path)
  if (isAbsent(value)) return new MissingField({ field })
  if (field === "payment_method" && typeof value === "string") {
    return new PaymentMethodNotActive({ payment_method: value })
  }
  if (typeof value === "string" && value.trim() === "" && isRequired(field))
    return new MissingField({ field })
  return new WrongType({ field, reason: issue.message })
}

const order = (a: CheckoutDecodeError, b: CheckoutDecodeError): number =>
  KIND_RANK[a._tag] - KIND_RANK[b._tag] ||
  fieldRank(fieldOf(a)) - fieldRank(fieldOf(b)) ||
  (fieldOf(a) < fieldOf(b) ? -1 : fieldOf(a) > fieldOf(b) ? 1 : 0)

const decodeAll = Schema.decodeUnknownEither(CheckoutRequest, { errors: "all", onExcessProperty: "ignore" })

/**
 * Every problem of a checkout body, one per field, most important first (see {@link decodeCheckoutRequest}
 * for the order). Empty when the body is a valid checkout request.
 */
export const checkoutRequestProblems = (input: unknown): ReadonlyArray<CheckoutDecodeError> =>
  Either.match(decodeAll(input), {
    onRight: () => [],
    onLeft: (error) => {
      const problems = fieldIssues(error).map((issue) => classify(input, issue))
      const unique = Arr.dedupeWith(problems, (a, b) => a._tag === b._tag && fieldOf(a) === fieldOf(b))
      return [...unique].sort(order)
    }
  })

/**
 * Decodes a checkout body (A3), or gives the one AP error to report:
 *
 * - AP005 {@link MissingField} when a required field is absent, `null` or a blank string, naming its
 *   dotted path (`amount.currency`, `terminal_serial`; a missing total is `amount.total_amount`);
 * - AP006 {@link WrongType} when a field has another type or breaks its format rule;
 * - AP002 {@link InvalidTaxes} when `amount.taxes` is a list that fits no tax form;
 * - AP003 {@link PaymentMethodNotActive} when `payment_method` is a string naming no known method.
 *
 * When several problems exist, the kind decides first (AP005, then AP006, then AP002, then AP003),
 * then the spec's field order ({@link CHECKOUT_FIELDS}): the result is deterministic.
 */
export const decodeCheckoutRequest = (input: unknown): Either.Either<CheckoutRequest, CheckoutDecodeError> =>
  Either.match(decodeAll(input), {
    onRight: (request) => Either.right(request),
    onLeft: () => {
      const [first] = checkoutRequestProblems(input)
      return Either.left(first ?? new WrongType({ field: "", reason: "is not a valid checkout request" }))
    }
  })
