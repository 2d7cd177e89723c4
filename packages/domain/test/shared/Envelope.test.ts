import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Envelope from "@cobro/domain/Envelope"
import * as LinkApi from "@cobro/domain/LinkApi"

describe("response envelope", () => {
  it("a success body is {payload, errors: []}", () => {
    const schema = Envelope.Envelope(Schema.Struct({ integration_id: Schema.String }))
    const body = Envelope.success({ integration_id: "INT_1" })
    expect(body).toStrictEqual({ payload: { integration_id: "INT_1" }, errors: [] })
    expect(Schema.decodeUnknownSync(schema)(body)).toStrictEqual(body)
  })

  it("an error item is {code, message, field?}", () => {
    const item = {
      code: "AP005",
      message: "required field amount.currency is missing",
      field: "amount.currency"
    }
    expect(Schema.decodeUnknownSync(Envelope.ErrorItem)(item)).toStrictEqual(item)
    expect(Schema.decodeUnknownSync(Envelope.ErrorItem)({ code: "AP001", message: "boom" })).toStrictEqual({
      code: "AP001",
      message: "boom"
    })
  })

  it("an error body has an empty payload object and at least one error", () => {
    const body = Envelope.failure({ code: "AP004", message: "terminal not bound", field: "terminal_serial" })
    expect(body).toStrictEqual({
      payload: {},
      errors: [{ code: "AP004", message: "terminal not bound", field: "terminal_serial" }]
    })
    expect(
      Either.isLeft(Schema.decodeUnknownEither(Envelope.ErrorEnvelope)({ payload: {}, errors: [] }))
    ).toBe(true)
  })

  it("errorItemsOf turns a parse error into one item per field, without nullable noise", () => {
    const result = Schema.decodeUnknownEither(LinkApi.CreateLinkRequest, { errors: "all" })({
      amount_type: "OPEN",
      reference: "ñ",
      description: "a"
    })
    if (Either.isRight(result)) throw new Error("expected a failure")
    const items = Envelope.errorItemsOf("VALIDATION_ERROR", result.left)
    expect(items.map((i) => [i.code, i.field])).toStrictEqual([
      ["VALIDATION_ERROR", "reference"],
      ["VALIDATION_ERROR", "description"]
    ])
    expect(items[0]!.message).toBe("expected 1 to 60 letters, digits, '_' or '-'")
  })
})
