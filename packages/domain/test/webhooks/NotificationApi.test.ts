import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Envelope from "@cobro/domain/Envelope"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"
import * as TerminalApi from "@cobro/domain/TerminalApi"

const problems = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(schema, { errors: "all" })(input), {
    onRight: () => [],
    onLeft: (e) => Envelope.fieldIssues(e).map((i) => i.field)
  })

const card = {
  capture_mode: "CONTACTLESS_CHIP",
  brand: "VISA",
  cardholder_name: "ANA PEREZ",
  terminal_id: "SN0012345",
  masked_pan: "411111******1111",
  installments: 1,
  card_type: "CREDIT"
}

const data = {
  payment_id: "TRX_abc123",
  merchant_id: "MER_shop1",
  created_at: "2025-04-14T10:31:02.123-05:00",
  amount: { currency: "COP", total: 11900, taxes: [{ base: 10000, type: "VAT", value: 1900 }], tip: 0 },
  user_id: "seller-1",
  metadata: { reference: "order-42" },
  service_code: "SC-0001",
  payer_email: "payer@mail.co",
  payment_method: "CARD",
  card,
  approval_number: "123456",
  integration: "API_INTEGRATIONS"
}

const notification = {
  id: "2b6f0cc9-4c8e-4d6f-8f5e-2a1b3c4d5e6f",
  type: "SALE_APPROVED",
  subject: "TRX_abc123",
  source: "/payments",
  spec_version: "1.0",
  time: 1744644662123456789n,
  data,
  datacontenttype: "application/json",
  seller: { name: "Luis", last_name: "Gómez", email: "luis@shop.co" }
}

describe("D webhook notification", () => {
  it("the full card notification decodes and writes back with `time` exact", () => {
    const decoded = Schema.decodeUnknownSync(Notification.Notification)(notification)
    const text = Nanos.stringifyWithBigInt(Schema.encodeSync(Notification.Notification)(decoded))
    expect(text).toContain(`"time":1744644662123456789,`)
    const again = Schema.decodeUnknownSync(Notification.Notification)(
      Either.getOrThrow(Nanos.parseJsonExact(text))
    )
    expect(again).toStrictEqual(decoded)
  })

  for (const type of ["SALE_APPROVED", "SALE_REJECTED", "VOID_APPROVED", "VOID_REJECTED"]) {
    it(`notification type ${type} is valid`, () => {
      Schema.decodeUnknownSync(Notification.Notification)({ ...notification, type })
    })
  }

  it("an unknown notification type is rejected", () => {
    expect(problems(Notification.Notification, { ...notification, type: "SALE_PENDING" })).toStrictEqual([
      "type"
    ])
  })

  it("the notification id is a UUID", () => {
    expect(problems(Notification.Notification, { ...notification, id: "not-a-uuid" })).toStrictEqual(["id"])
  })

  it("created_at is ISO 8601 with the Bogotá offset -05:00", () => {
    for (const bad of [
      "2025-04-14T15:31:02Z",
      "2025-04-14T10:31:02+00:00",
      "2025-04-14 10:31:02-05:00",
      "2025-13-14T10:31:02-05:00"
    ]) {
      expect(
        problems(Notification.Notification, { ...notification, data: { ...data, created_at: bad } }),
        bad
      ).toContain("data.created_at")
    }
    expect(
      problems(Notification.Notification, {
        ...notification,
        data: { ...data, created_at: "2025-04-14T10:31:02-05:00" }
      })
    ).toStrictEqual([])
  })

  for (const brand of Notification.CardBrand.literals) {
    it(`card brand ${brand} is valid`, () => {
      Schema.decodeUnknownSync(Notification.CardDetails)({ ...card, brand })
    })
  }

  it("the unknown card network is spelled UNKOWN, as the spec spells it", () => {
    expect(Notification.CardBrand.literals).toContain("UNKOWN")
    expect(problems(Notification.CardDetails, { ...card, brand: "UNKNOWN" })).toStrictEqual(["brand"])
    expect(Notification.CardBrand.literals.length - 1).toBe(11)
  })

  it("masked_pan shows the first 6 and last 4 digits only", () => {
    for (const ok of [
      "411111******1111",
      "371449*****8431",
      "601100******0004",
      "6011000*******0004".replace("0*", "**")
    ]) {
      Schema.decodeUnknownSync(Notification.MaskedPan)(ok)
    }
    for (const bad of [
      "4111111111111111",
      "4111********1111",
      "411111******111",
      "411111XXXXXX1111",
      "41111*******1111"
    ]) {
      expect(problems(Notification.MaskedPan, bad), bad).toStrictEqual([""])
    }
  })

  it("capture_mode is CHIP or CONTACTLESS_CHIP, card_type DEBIT or CREDIT, payment_method CARD or SERVICE_TAP", () => {
    Schema.decodeUnknownSync(Notification.CardDetails)({ ...card, capture_mode: "CHIP", card_type: "DEBIT" })
    expect(
      problems(Notification.CardDetails, { ...card, capture_mode: "SWIPE", card_type: "PREPAID" })
    ).toStrictEqual(["capture_mode", "card_type"])
    Schema.decodeUnknownSync(Notification.CardPaymentData)({
      ...data,
      payment_method: "SERVICE_TAP",
      integration: "SERVICE_TAP"
    })
  })

  for (const integration of ["POS", "SERVICE_TAP", "API_INTEGRATIONS"]) {
    it(`data.integration ${integration} is valid`, () => {
      Schema.decodeUnknownSync(Notification.CardPaymentData)({ ...data, integration })
    })
  }

  it("seller is optional", () => {
    const { seller: _, ...rest } = notification
    Schema.decodeUnknownSync(Notification.Notification)(rest)
  })
})

describe("A4 fallback items", () => {
  it("A4 items carry both `brand` and `franchise` so clients of either sample work", () => {
    const decoded = Schema.decodeUnknownSync(Notification.Notification)(notification)
    const encoded = Schema.encodeSync(Notification.FallbackNotification)(decoded)
    const encodedCard = (encoded.data as { card: Record<string, unknown> }).card
    expect(encodedCard["brand"]).toBe("VISA")
    expect(encodedCard["franchise"]).toBe("VISA")
    expect(Schema.decodeUnknownSync(Notification.FallbackNotification)(encoded)).toStrictEqual(decoded)
  })

  it("the A4 response holds at most 10 notifications", () => {
    const item = Schema.encodeSync(Notification.FallbackNotification)(
      Schema.decodeUnknownSync(Notification.Notification)(notification)
    )
    Schema.decodeUnknownSync(TerminalApi.NotificationsResponse)({ notifications: Array(10).fill(item) })
    expect(
      problems(TerminalApi.NotificationsResponse, { notifications: Array(11).fill(item) })
    ).toStrictEqual(["notifications"])
  })
})
