import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as Nanos from "@cobro/domain/Nanos"
import { rejectedFields } from "../fixtures/Schemas.js"

type Json = Record<string, unknown>

const closeLink = (): Json => ({
  amount_type: "CLOSE",
  amount: {
    currency: "COP",
    taxes: [{ type: "VAT", base: 10000, value: 1900 }],
    tip_amount: 0,
    total_amount: 11900
  },
  reference: "order_42-A",
  description: "Two coffees",
  expiration_date: 1893456000000000000,
  callback_url: "https://shop.example.co/return",
  payment_methods: ["CREDIT_CARD", "PSE"],
  payer_email: "payer@mail.co",
  image_url: "https://cdn.example.co/logo.png"
})

const decode = Schema.decodeUnknownEither(LinkApi.CreateLinkRequest, { errors: "all" })
const accepts = (body: Json) => {
  const result = decode(body)
  if (Either.isLeft(result)) throw new Error(ParseResult.TreeFormatter.formatErrorSync(result.left))
  return result.right
}
const rejectedPaths = rejectedFields(LinkApi.CreateLinkRequest)
const withField = (field: string, value: unknown): Json => ({ ...closeLink(), [field]: value })
/** The sample with `field` set to each of `values` is rejected on that field alone. */
const expectRejected = (field: string, ...values: ReadonlyArray<unknown>) => {
  for (const value of values) expect(rejectedPaths(withField(field, value)), String(value)).toEqual([field])
}

describe("B2 link create request", () => {
  it("the full sample request is accepted", () => {
    expect(accepts(closeLink()).amount?.total_amount).toBe(11900)
  })

  it("a CLOSE link without amount is rejected", () => {
    const { amount: _, ...body } = closeLink()
    expect(rejectedPaths(body)).toContain("amount")
  })

  it("a CLOSE link whose amount has no total_amount is rejected on amount.total_amount", () => {
    expect(rejectedPaths(withField("amount", { currency: "COP" }))).toContain("amount.total_amount")
  })

  it("an OPEN link without amount is accepted", () => {
    accepts({ amount_type: "OPEN" })
  })

  it("amount_type must be OPEN or CLOSE", () => {
    expect(rejectedPaths(withField("amount_type", "FIXED"))).toContain("amount_type")
    expect(rejectedPaths({ amount: { total_amount: 1 } })).toContain("amount_type")
  })

  it("currency is COP or USD", () => {
    accepts(withField("amount", { currency: "USD", total_amount: 10 }))
    expect(rejectedPaths(withField("amount", { currency: "EUR", total_amount: 10 }))).toContain(
      "amount.currency"
    )
  })

  it("taxes items are VAT or CONSUMPTION with base and value", () => {
    accepts(withField("amount", { total_amount: 10, taxes: [{ type: "CONSUMPTION", base: 9, value: 1 }] }))
    expect(rejectedPaths(withField("amount", { total_amount: 10, taxes: [{ type: "IVA_19" }] }))).not.toEqual(
      []
    )
  })

  it("a link reference of 60 characters is accepted", () => {
    accepts(withField("reference", "a".repeat(60)))
  })

  it("a link reference longer than 60 characters is rejected", () => {
    expectRejected("reference", "a".repeat(61))
  })

  it("a link reference with letters, digits, '_' and '-' is accepted", () => {
    accepts(withField("reference", "Order_2025-04-14_XYZ"))
  })

  for (const bad of ["pedido-ñ", "with space", "dot.ted", "slash/", "", "emoji😀"]) {
    it(`a link reference with other characters is rejected: ${JSON.stringify(bad)}`, () => {
      expectRejected("reference", bad)
    })
  }

  it("a link description of 1 character is rejected (2 to 100)", () => {
    expectRejected("description", "a")
  })

  it("a link description of 2 characters is accepted (2 to 100)", () => {
    accepts(withField("description", "ab"))
  })

  it("a link description of 100 characters is accepted (2 to 100)", () => {
    accepts(withField("description", "d".repeat(100)))
  })

  it("a link description of 101 characters is rejected (2 to 100)", () => {
    expectRejected("description", "d".repeat(101))
  })

  it("a link description counts characters, not UTF-16 units", () => {
    accepts(withField("description", "😀".repeat(100)))
  })

  it("expiration_date is integer nanoseconds, kept exact above 2^53", () => {
    const text = `{"amount_type":"OPEN","expiration_date":1893456000123456789}`
    const request = Schema.decodeUnknownSync(LinkApi.CreateLinkRequest)(
      Either.getOrThrow(Nanos.parseJsonExact(text))
    )
    expect(request.expiration_date).toBe(1893456000123456789n)
    expectRejected("expiration_date", 1.5)
  })

  it("callback_url must be a valid URL starting with https://", () => {
    accepts(withField("callback_url", "https://shop.example.co/return?order=42"))
    expectRejected(
      "callback_url",
      "http://shop.example.co/return",
      "ftp://x.co",
      "shop.example.co",
      "https://",
      "HTTPS://shop.co"
    )
  })

  it("image_url must be an https URL ending in .png or .jpg", () => {
    for (const ok of [
      "https://cdn.example.co/logo.png",
      "https://cdn.example.co/a/b/photo.jpg",
      "https://cdn.example.co/LOGO.PNG",
      "https://cdn.example.co/logo.png?v=2"
    ]) {
      accepts(withField("image_url", ok))
    }
    expectRejected(
      "image_url",
      "http://cdn.example.co/logo.png",
      "https://cdn.example.co/logo.gif",
      "https://cdn.example.co/logo.jpeg",
      "https://cdn.example.co/logo.svg",
      "https://cdn.example.co/png",
      "logo.png"
    )
  })

  it("payment_methods are names from the methods query", () => {
    accepts(withField("payment_methods", ["CREDIT_CARD", "PSE", "BOTON_BANK", "WALLET_A"]))
    expect(rejectedPaths(withField("payment_methods", ["CASH"]))).toEqual(["payment_methods.0"])
  })

  it("an empty payment_methods list is accepted (the use case offers all methods, as when absent)", () => {
    expect(accepts(withField("payment_methods", [])).payment_methods).toStrictEqual([])
  })

  it("a CLOSE link with amount.total but no amount.total_amount is rejected (B2 spells total_amount)", () => {
    expect(rejectedPaths(withField("amount", { currency: "COP", total: 11900 }))).toContain(
      "amount.total_amount"
    )
  })

  it("payer_email must be an e-mail address", () => {
    expectRejected("payer_email", "payer.mail.co")
  })

  it("optional fields sent as null are treated as absent", () => {
    const request = accepts({ amount_type: "OPEN", reference: null, description: null, image_url: null })
    expect(request).toStrictEqual({ amount_type: "OPEN" })
  })
})

describe("B1 and B2 responses, B3 link record", () => {
  it("B1: payload.payment_methods maps method names to {min, max}", () => {
    const body = {
      payload: {
        payment_methods: { CREDIT_CARD: { min: 1000, max: 5000000 }, PSE: { min: 1000, max: 10000000 } }
      },
      errors: []
    }
    expect(Schema.decodeUnknownSync(LinkApi.PaymentMethodsResponse)(body)).toStrictEqual(body)
  })

  it("B2 response: payload.payment_link (LNK_) and payload.url", () => {
    const body = {
      payload: { payment_link: "LNK_abc123", url: "https://checkout.example.co/LNK_abc123" },
      errors: []
    }
    expect(Schema.decodeUnknownSync(LinkApi.CreateLinkResponse)(body)).toStrictEqual(body)
    expect(
      Either.isLeft(
        Schema.decodeUnknownEither(LinkApi.CreateLinkResponse)({
          ...body,
          payload: { ...body.payload, payment_link: "abc" }
        })
      )
    ).toBe(true)
  })

  const record = {
    api_version: 1,
    id: "LNK_abc123",
    total: 11900,
    subtotal: 10000,
    tip_amount: 0,
    taxes: [{ type: "VAT", base: 10000, value: 1900 }],
    status: "ACTIVE",
    expiration_date: null,
    creation_date: 1712345678901234567n,
    description: null,
    payment_method: "CREDIT_CARD",
    transaction_id: null,
    amount_type: "CLOSE",
    is_sandbox: true,
    reference: "LNK_abc123"
  }

  it("the link record uses `total`, integer api_version 1 and nanosecond creation_date", () => {
    const text = Nanos.stringifyWithBigInt(
      Schema.encodeSync(LinkApi.LinkRecord)(Schema.decodeUnknownSync(LinkApi.LinkRecord)(record))
    )
    expect(text).toContain(`"api_version":1,`)
    expect(text).toContain(`"total":11900,`)
    expect(text).toContain(`"creation_date":1712345678901234567,`)
    expect(text).toContain(`"expiration_date":null,`)
  })

  it("the link record's api_version is the integer 1, not a string", () => {
    expect(
      Either.isLeft(Schema.decodeUnknownEither(LinkApi.LinkRecord)({ ...record, api_version: "1" }))
    ).toBe(true)
  })

  it("the link record's payment_method is upper case, or empty before any payment", () => {
    Schema.decodeUnknownSync(LinkApi.LinkRecord)({ ...record, payment_method: "" })
    expect(
      Either.isLeft(
        Schema.decodeUnknownEither(LinkApi.LinkRecord)({ ...record, payment_method: "credit_card" })
      )
    ).toBe(true)
  })

  for (const status of ["ACTIVE", "PROCESSING", "PAID", "REJECTED", "CANCELLED", "EXPIRED"]) {
    it(`link status ${status} is a valid record status`, () => {
      expect(Schema.decodeUnknownSync(LinkApi.LinkRecord)({ ...record, status }).status).toBe(status)
    })
  }
})
