import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import { rejectedFields } from "../fixtures/Schemas.js"

const problems = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => rejectedFields(schema)(input)

const intent = {
  reference_id: "order-42",
  amount: {
    currency: "COP",
    total_amount: 555001,
    tip_amount: 0,
    taxes: [{ type: "VAT", base: 466387, value: 88614 }]
  },
  description: "Sandbox approved by 3DS",
  callback_url: "https://shop.example.co/return",
  metadata: { key: "cart", value: "42" },
  customer: {
    name: "Ana Pérez",
    phone: "3001234567",
    email: "ana@mail.co",
    billing_address: { street1: "Cra 7 # 72-41", city: "Bogotá", country_code: "CO" },
    shipping_address: { street1: "Cra 7 # 72-41", postal_code: "110231", province: "DC", phone: "3001234567" }
  },
  device_fingerprint: {
    ip: "190.0.0.1",
    device_type: "desktop",
    os: "Linux",
    browser: "Firefox",
    accept_header: "text/html",
    user_agent: "Mozilla/5.0",
    java_enabled: false,
    language: "es-CO",
    color_depth: 24,
    screen_height: 1080,
    screen_width: 1920,
    time_zone_offset: 300,
    latitude: "4.6",
    longitude: "-74.08",
    model: "PC",
    platform: "web"
  }
}

describe("C1-C3 payment intent", () => {
  it("the full create request with device_fingerprint is accepted", () => {
    expect(Schema.decodeUnknownSync(OnlineApi.IntentCreateRequest)(intent)).toStrictEqual(intent)
  })

  it("the minimal intent is reference_id and amount with currency and total_amount", () => {
    Schema.decodeUnknownSync(OnlineApi.IntentCreateRequest)({
      reference_id: "r1",
      amount: { currency: "COP", total_amount: 1 }
    })
    expect(problems(OnlineApi.IntentCreateRequest, {})).toStrictEqual(["reference_id", "amount"])
    expect(problems(OnlineApi.IntentCreateRequest, { reference_id: "r1", amount: {} })).toStrictEqual([
      "amount.currency",
      "amount.total_amount"
    ])
  })

  it("callback_url is optional in the schema (required for PSE and bank button by the use case)", () => {
    const { callback_url: _, ...body } = intent
    Schema.decodeUnknownSync(OnlineApi.IntentCreateRequest)(body)
    expect(problems(OnlineApi.IntentCreateRequest, { ...intent, callback_url: "not a url" })).toStrictEqual([
      "callback_url"
    ])
  })

  it("device_fingerprint members have their types: java_enabled boolean, color_depth integer", () => {
    expect(
      problems(OnlineApi.IntentCreateRequest, {
        ...intent,
        device_fingerprint: { java_enabled: "no", color_depth: 24.5 }
      })
    ).toStrictEqual(["device_fingerprint.java_enabled", "device_fingerprint.color_depth"])
  })

  it("the intent response adds creation_date, status ACTIVE, test and service_transaction_id", () => {
    const { device_fingerprint: _, ...rest } = intent
    const response = {
      ...rest,
      creation_date: "2025-04-14T10:31:02.123Z",
      status: "ACTIVE",
      test: true,
      service_transaction_id: "TRX_1"
    }
    expect(Schema.decodeUnknownSync(OnlineApi.IntentResponse)(response)).toStrictEqual(response)
  })
})

describe("C4 payment attempt", () => {
  const attempt = {
    reference_id: "order-42",
    metadata: { key: "cart", value: "42" },
    payer: {
      person_type: "NATURAL_PERSON",
      name: "Ana Pérez",
      phone: "3001234567",
      email: "ana@mail.co",
      document_type: "CEDULA",
      document_number: "1020304050",
      billing_address: {
        street1: "Cra 7",
        street2: "Apto 1",
        city: "Bogotá",
        zip_code: "110231",
        province: "DC",
        country: "CO",
        phone: "3001234567"
      }
    },
    payment_method: {
      name: "CREDIT_CARD",
      card_number: "4111111111111111",
      cardholder_name: "ANA PEREZ",
      expiration_month: "12",
      expiration_year: "2030",
      installments: 1,
      cvc: "123"
    },
    device_fingerprint: {
      device_type: "mobile",
      os: "Android",
      model: "Pixel",
      browser: "Chrome",
      java_enabled: false,
      language: "es",
      color_depth: 24,
      screen_height: 800,
      screen_width: 400,
      time_zone_offset: 300
    }
  }

  it("the sample attempt is accepted", () => {
    expect(Schema.decodeUnknownSync(OnlineApi.AttemptRequest)(attempt)).toStrictEqual(attempt)
  })

  it("card fields, when given, are well formed", () => {
    const card = (patch: object) => ({ ...attempt, payment_method: { ...attempt.payment_method, ...patch } })
    expect(problems(OnlineApi.AttemptRequest, card({ expiration_month: 12 }))).toStrictEqual([
      "payment_method.expiration_month"
    ])
    expect(problems(OnlineApi.AttemptRequest, card({ expiration_month: "13" }))).toStrictEqual([
      "payment_method.expiration_month"
    ])
    expect(problems(OnlineApi.AttemptRequest, card({ cvc: "12" }))).toStrictEqual(["payment_method.cvc"])
    expect(problems(OnlineApi.AttemptRequest, card({ card_number: "4111 1111" }))).toStrictEqual([
      "payment_method.card_number"
    ])
    expect(problems(OnlineApi.AttemptRequest, card({ installments: 0 }))).toStrictEqual([
      "payment_method.installments"
    ])
    expect(problems(OnlineApi.AttemptRequest, card({ expiration_year: "30" }))).toStrictEqual([])
  })

  it("an attempt requires reference_id and payment_method.name", () => {
    expect(problems(OnlineApi.AttemptRequest, { payment_method: {} })).toStrictEqual([
      "reference_id",
      "payment_method.name"
    ])
  })

  it("the attempt response has status RUNNING and next_actions only when a redirect is required", () => {
    Schema.decodeUnknownSync(OnlineApi.AttemptResponse)({ transaction_id: "TRX_1", status: "RUNNING" })
    Schema.decodeUnknownSync(OnlineApi.AttemptResponse)({
      transaction_id: "TRX_1",
      status: "RUNNING",
      next_actions: { redirect_url: "https://acs.example/3ds", redirect_method: "POST" }
    })
    expect(
      problems(OnlineApi.AttemptResponse, { transaction_id: "TRX_1", status: "APPROVED" })
    ).toStrictEqual(["status"])
    expect(
      problems(OnlineApi.AttemptResponse, {
        transaction_id: "TRX_1",
        status: "RUNNING",
        next_actions: { redirect_url: "https://acs.example/3ds", redirect_method: "PUT" }
      })
    ).toStrictEqual(["next_actions.redirect_method"])
  })

  it("the 3DS response is enveloped, adds status_detail and uuid_token, status lower-case running", () => {
    const body = {
      payload: {
        transaction_id: "TRX_1",
        next_actions: { redirect_url: "https://acs.example/3ds", redirect_method: "GET" },
        status: "running",
        status_detail: "pending_challenge",
        uuid_token: "5f0c6b1e-8c1d-4d7e-9a55-0b1f2a3c4d5e"
      },
      errors: []
    }
    expect(Schema.decodeUnknownSync(OnlineApi.ThreeDsAttemptResponse)(body)).toStrictEqual(body)
  })
})

describe("C5-C9", () => {
  it("C5 payment read: status, amount as in the intent, payer and ISO attempt_date", () => {
    const body = {
      transaction_id: "TRX_1",
      reference_id: "order-42",
      status: "APPROVED",
      amount: { currency: "COP", total_amount: 555001 },
      payment_method: "CREDIT_CARD",
      payer: {
        person_type: "NATURAL_PERSON",
        name: "Ana",
        document_type: "CEDULA",
        document_number: "1020304050"
      },
      attempt_date: "2025-04-14T10:31:02-05:00"
    }
    expect(Schema.decodeUnknownSync(OnlineApi.PaymentResponse)(body)).toStrictEqual(body)
    expect(problems(OnlineApi.PaymentResponse, { ...body, attempt_date: "14/04/2025" })).toStrictEqual([
      "attempt_date"
    ])
  })

  it("C6 bank list: payload.banks[] of {bank_code, bank_name}", () => {
    const body = { payload: { banks: [{ bank_code: "1007", bank_name: "BANCOLOMBIA" }] }, errors: [] }
    expect(Schema.decodeUnknownSync(OnlineApi.BanksResponse)(body)).toStrictEqual(body)
  })

  it("C7 void request is {transaction_id}", () => {
    expect(problems(OnlineApi.VoidRequest, {})).toStrictEqual(["transaction_id"])
    Schema.decodeUnknownSync(OnlineApi.VoidRequest)({ transaction_id: "TRX_1" })
  })

  it("C8 refund request: reference_id and transaction_id required, reason optional", () => {
    Schema.decodeUnknownSync(OnlineApi.RefundRequest)({
      reference_id: "order-42",
      transaction_id: "TRX_1",
      reason: "customer"
    })
    Schema.decodeUnknownSync(OnlineApi.RefundRequest)({ reference_id: "order-42", transaction_id: "TRX_1" })
    expect(problems(OnlineApi.RefundRequest, { reason: "x" })).toStrictEqual([
      "reference_id",
      "transaction_id"
    ])
  })

  for (const status of ["PROCESSING", "APPROVED", "REJECTED"]) {
    it(`C9 refund status ${status} with an ISO date_applied is valid`, () => {
      const body = {
        payload: { transaction_id: "TRX_1", status, date_applied: "2025-04-14T15:31:02.000Z" },
        errors: []
      }
      expect(Schema.decodeUnknownSync(OnlineApi.RefundStatusResponse)(body)).toStrictEqual(body)
    })
  }

  it("C9 date_applied is null while the refund is PROCESSING", () => {
    const body = {
      payload: { transaction_id: "TRX_1", status: "PROCESSING", date_applied: null },
      errors: []
    }
    expect(Schema.decodeUnknownSync(OnlineApi.RefundStatusResponse)(body)).toStrictEqual(body)
  })

  it("C5 and the intent read with the statuses the deciders produce", () => {
    for (const status of ["ACTIVE", "PROCESSING", "PAID"])
      Schema.decodeUnknownSync(OnlineApi.IntentStatus)(status)
    for (const status of ["RUNNING", "APPROVED", "REJECTED", "VOIDED", "REFUNDED"]) {
      Schema.decodeUnknownSync(OnlineApi.PaymentStatus)(status)
    }
    expect(() => Schema.decodeUnknownSync(OnlineApi.PaymentStatus)("CHALLENGE")).toThrow()
  })

  it("C error bodies use the envelope with {code, message, field?} items", () => {
    const body = {
      payload: {},
      errors: [{ code: "VALIDATION_ERROR", message: "amount.currency is missing", field: "amount.currency" }]
    }
    expect(Schema.decodeUnknownSync(OnlineApi.OnlineError)(body)).toStrictEqual(body)
    expect(problems(OnlineApi.OnlineError, { payload: {}, errors: [] })).toStrictEqual(["errors.0"])
  })
})
