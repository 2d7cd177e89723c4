import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as CheckoutErrors from "@cobro/domain/CheckoutErrors"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import { checkoutBody, set } from "../fixtures/Terminal.js"

/** The sample body with a description and the whole payer: phone and document too. */
const sample = () =>
  set(set(checkoutBody(), "description", "Two coffees"), "payer", {
    email: "payer@mail.co",
    phone_number: "3001234567",
    document: { document_type: "CEDULA", document_number: "1020304050" }
  })

const decode = CheckoutErrors.decodeCheckoutRequest

const errorOf = (input: unknown) => {
  const result = decode(input)
  if (Either.isRight(result)) throw new Error("expected the body to be rejected")
  return result.left
}

const expectError = (input: unknown, code: string, field?: string) => {
  const error = errorOf(input)
  const item = CheckoutErrors.toErrorItem(error)
  expect({ code: item.code, field: item.field }).toStrictEqual({ code, field })
}

const expectValid = (input: unknown) => {
  const result = decode(input)
  if (Either.isLeft(result))
    throw new Error(`expected valid, got ${JSON.stringify(CheckoutErrors.toErrorItem(result.left))}`)
  return result.right
}

describe("A3 checkout request: both spellings of total and tip", () => {
  it("the sample spelling amount.total_amount / amount.tip_amount is accepted", () => {
    const request = expectValid(sample())
    expect(request.amount.total_amount).toBe(11900)
    expect(request.amount.tip_amount).toBe(0)
  })

  it("the parameter-table spelling amount.total / amount.tip is accepted and decodes to the same request", () => {
    let body = set(sample(), "amount.total_amount", undefined)
    body = set(body, "amount.tip_amount", undefined)
    body = set(body, "amount.total", 11900)
    body = set(body, "amount.tip", 0)
    expect(expectValid(body)).toStrictEqual(expectValid(sample()))
  })

  it("both spellings present with the same value are accepted", () => {
    expectValid(set(set(sample(), "amount.total", 11900), "amount.tip", 0))
  })

  it("amount.total and amount.total_amount present and different is AP006 on amount.total", () => {
    expectError(set(sample(), "amount.total", 5000), "AP006", "amount.total")
  })

  it("amount.tip and amount.tip_amount present and different is AP006 on amount.tip", () => {
    expectError(set(sample(), "amount.tip", 100), "AP006", "amount.tip")
  })

  it("neither spelling of the total is AP005 naming amount.total_amount", () => {
    expectError(set(sample(), "amount.total_amount", undefined), "AP005", "amount.total_amount")
  })

  it("neither spelling of the tip is AP005 naming amount.tip_amount", () => {
    expectError(set(sample(), "amount.tip_amount", undefined), "AP005", "amount.tip_amount")
  })

  it("a decoded request encodes with the samples' spelling", () => {
    const body = set(
      set(set(sample(), "amount.total_amount", undefined), "amount.total", 11900),
      "amount.tip",
      0
    )
    const encoded = Schema.encodeSync(TerminalApi.CheckoutRequest)(
      expectValid(set(body, "amount.tip_amount", undefined))
    )
    expect(encoded.amount).toStrictEqual({
      currency: "COP",
      total_amount: 11900,
      taxes: [{ type: "VAT", base: 10000, value: 1900 }],
      tip_amount: 0
    })
  })
})

describe("A3 checkout request: payer", () => {
  for (const type of TerminalApi.DocumentType.literals) {
    it(`document type ${type} is accepted`, () => {
      expect(
        expectValid(set(sample(), "payer.document.document_type", type)).payer?.document?.document_type
      ).toBe(type)
    })
  }

  it("an unknown document type is AP006 on payer.document.document_type", () => {
    expectError(set(sample(), "payer.document.document_type", "DNI"), "AP006", "payer.document.document_type")
  })

  it.each([
    ["document_number of 3 characters is rejected (length 4 to 15)", "123", false],
    ["document_number of 4 characters is accepted (length 4 to 15)", "1234", true],
    ["document_number of 15 characters is accepted (length 4 to 15)", "123456789012345", true],
    ["document_number of 16 characters is rejected (length 4 to 15)", "1234567890123456", false]
  ] as const)("%s", (_title, documentNumber, accepted) => {
    const body = set(sample(), "payer.document.document_number", documentNumber)
    if (accepted) expectValid(body)
    else expectError(body, "AP006", "payer.document.document_number")
  })

  it("the whole payer object is optional", () => {
    expect(expectValid(set(sample(), "payer", undefined)).payer).toBeUndefined()
  })

  it("an empty payer object is allowed", () => {
    expect(expectValid(set(sample(), "payer", {})).payer).toStrictEqual({})
  })

  it("an optional field sent as null is treated as absent", () => {
    const request = expectValid(set(set(sample(), "payer", null), "description", null))
    expect(request.payer).toBeUndefined()
    expect(request.description).toBeUndefined()
  })

  it("an invalid payer e-mail is AP006 on payer.email", () => {
    expectError(set(sample(), "payer.email", "not-an-email"), "AP006", "payer.email")
  })
})

describe("A3 checkout request: payment_method", () => {
  for (const method of ["POS", "WALLET_A", "WALLET_B", "PAY_BY_LINK", "PAY_BY_QR_SERVICE", ""]) {
    it(`payment method "${method}" of either API variant is accepted`, () => {
      expect(expectValid(set(sample(), "payment_method", method)).payment_method).toBe(method)
    })
  }

  it("a payment method string that names no method is AP003 (not active)", () => {
    const error = errorOf(set(sample(), "payment_method", "BITCOIN"))
    expect(error).toBeInstanceOf(CheckoutErrors.PaymentMethodNotActive)
    expect(CheckoutErrors.toErrorItem(error)).toMatchObject({ code: "AP003", field: "payment_method" })
  })

  it("a payment method that is not a string is AP006", () => {
    expectError(set(sample(), "payment_method", 1), "AP006", "payment_method")
  })
})

describe("A3 checkout request: AP005 names the missing field", () => {
  const required = [
    "amount",
    "amount.currency",
    "amount.taxes",
    "user_email",
    "payment_method",
    "terminal_model",
    "terminal_serial",
    "reference"
  ]
  for (const field of required) {
    it(`a body without ${field} is AP005 naming ${field}`, () => {
      expectError(set(sample(), field, undefined), "AP005", field)
    })
  }

  it("a required field sent as null is AP005", () => {
    expectError(set(sample(), "terminal_serial", null), "AP005", "terminal_serial")
  })

  it("a required string sent empty is AP005", () => {
    expectError(set(sample(), "terminal_serial", ""), "AP005", "terminal_serial")
    expectError(set(sample(), "reference", "  "), "AP005", "reference")
  })

  it("description is not required", () => {
    expectValid(set(sample(), "description", undefined))
  })

  it("the AP005 error item is {code, message, field}", () => {
    const item = CheckoutErrors.toErrorItem(errorOf(set(sample(), "amount.currency", undefined)))
    expect(item).toStrictEqual({
      code: "AP005",
      message: "required field amount.currency is missing",
      field: "amount.currency"
    })
  })
})

describe("A3 checkout request: AP006 names the mistyped field", () => {
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ["amount.total_amount", "11900"],
    ["amount.tip_amount", true],
    ["amount.total_amount", -1],
    ["amount.currency", 170],
    ["amount.currency", "pesos"],
    ["amount.taxes", "VAT"],
    ["amount", 11900],
    ["user_email", 42],
    ["user_email", "seller"],
    ["terminal_model", ["SMART"]],
    ["reference", 42],
    ["description", 5],
    ["payer", "someone"],
    ["payer.document", "CC 123"]
  ]
  for (const [field, value] of cases) {
    it(`${field} sent as ${JSON.stringify(value)} is AP006 naming ${field}`, () => {
      expectError(set(sample(), field, value), "AP006", field)
    })
  }

  it("a body that is not a JSON object is AP006 with no field", () => {
    for (const body of [null, "text", 42, [sample()]]) {
      const item = CheckoutErrors.toErrorItem(errorOf(body))
      expect(item.code).toBe("AP006")
      expect(item.field).toBeUndefined()
    }
  })

  it("unknown top-level fields are ignored", () => {
    expectValid(set(sample(), "extra_field", { anything: 1 }))
  })
})

describe("A3 checkout request: precedence of several problems", () => {
  it("a missing field wins over a wrong type (AP005 before AP006)", () => {
    expectError(set(set(sample(), "user_email", 42), "reference", undefined), "AP005", "reference")
  })

  it("of two missing fields the first in the spec's field order wins", () => {
    expectError(
      set(set(sample(), "terminal_serial", undefined), "amount.currency", undefined),
      "AP005",
      "amount.currency"
    )
  })

  it("a wrong type wins over a taxes shape error (AP006 before AP002)", () => {
    expectError(set(set(sample(), "amount.taxes", [{ type: "GST" }]), "reference", 1), "AP006", "reference")
  })

  it("a taxes shape error wins over an unknown payment method (AP002 before AP003)", () => {
    expectError(
      set(set(sample(), "amount.taxes", [{ type: "GST" }]), "payment_method", "BITCOIN"),
      "AP002",
      "amount.taxes"
    )
  })

  it("checkoutRequestProblems lists every problem in the same order, one per field", () => {
    const body = set(
      set(set(sample(), "terminal_serial", undefined), "user_email", 1),
      "amount.currency",
      undefined
    )
    const problems = CheckoutErrors.checkoutRequestProblems(set(body, "amount.taxes", [{ type: "X" }]))
    expect(
      problems.map((p) => CheckoutErrors.toErrorItem(p)).map((i) => `${i.code} ${i.field}`)
    ).toStrictEqual([
      "AP005 amount.currency",
      "AP005 terminal_serial",
      "AP006 user_email",
      "AP002 amount.taxes"
    ])
    expect(CheckoutErrors.checkoutRequestProblems(sample())).toStrictEqual([])
  })
})

describe("AP error codes", () => {
  it("each AP error carries its code string", () => {
    expect(new CheckoutErrors.Unmapped({ reason: "boom" }).code).toBe("AP001")
    expect(new CheckoutErrors.InvalidTaxes({ reason: "x" }).code).toBe("AP002")
    expect(new CheckoutErrors.PaymentMethodNotActive({ payment_method: "POS" }).code).toBe("AP003")
    expect(
      new CheckoutErrors.TerminalNotBound({ terminal_model: "SMART", terminal_serial: "SN1" }).code
    ).toBe("AP004")
    expect(new CheckoutErrors.MissingField({ field: "amount" }).code).toBe("AP005")
    expect(new CheckoutErrors.WrongType({ field: "amount", reason: "x" }).code).toBe("AP006")
  })

  it("AP004 and AP001 map to error items", () => {
    expect(
      CheckoutErrors.toErrorItem(
        new CheckoutErrors.TerminalNotBound({ terminal_model: "SMART", terminal_serial: "SN1" })
      )
    ).toStrictEqual({ code: "AP004", message: "terminal SMART SN1 is not bound", field: "terminal_serial" })
    expect(CheckoutErrors.toErrorItem(new CheckoutErrors.Unmapped({ reason: "boom" }))).toStrictEqual({
      code: "AP001",
      message: "unexpected failure: boom"
    })
  })
})

describe("A1, A2, A3 responses and the A4 query", () => {
  it("A1 response: payload.payment_methods[] of {name, enabled}", () => {
    const body = {
      payload: {
        payment_methods: [
          { name: "POS", enabled: true },
          { name: "WALLET_A", enabled: false }
        ]
      },
      errors: []
    }
    expect(Schema.decodeUnknownSync(TerminalApi.PaymentMethodsResponse)(body)).toStrictEqual(body)
  })

  it("A2 response: payload.available_terminals[] with status BINDED", () => {
    const body = {
      payload: {
        available_terminals: [
          { terminal_model: "SMART_PRO", terminal_serial: "SN0012345", status: "BINDED", name: "Caja 1" }
        ]
      },
      errors: []
    }
    expect(Schema.decodeUnknownSync(TerminalApi.BoundTerminalsResponse)(body)).toStrictEqual(body)
  })

  it("A3 response: payload.integration_id and empty errors", () => {
    const body = { payload: { integration_id: "INT_abc123" }, errors: [] }
    expect(
      Schema.encodeSync(TerminalApi.CheckoutResponse)(
        Schema.decodeUnknownSync(TerminalApi.CheckoutResponse)(body)
      )
    ).toStrictEqual(body)
  })

  it("A4 query is_external_reference defaults to false", () => {
    expect(Schema.decodeUnknownSync(TerminalApi.NotificationsQuery)({})).toStrictEqual({
      is_external_reference: false
    })
    expect(
      Schema.decodeUnknownSync(TerminalApi.NotificationsQuery)({ is_external_reference: "true" })
    ).toStrictEqual({
      is_external_reference: true
    })
  })
})
