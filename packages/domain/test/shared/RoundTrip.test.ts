import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as Envelope from "@cobro/domain/Envelope"
import * as LinkApi from "@cobro/domain/LinkApi"
import * as Nanos from "@cobro/domain/Nanos"
import * as Notification from "@cobro/domain/Notification"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import * as Taxes from "@cobro/domain/Taxes"
import * as TerminalApi from "@cobro/domain/TerminalApi"

// Every wire schema: a value survives encode then decode, and the JSON text written from it is a
// fixpoint of parse -> decode -> encode -> stringify (the exact JSON path the HTTP layer uses).
const schemas: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>]> = [
  ["Envelope.ErrorItem", Envelope.ErrorItem],
  ["Envelope.ErrorEnvelope", Envelope.ErrorEnvelope],
  ["Envelope.Envelope(String)", Envelope.Envelope(Schema.String)],
  ["Nanos.Nanos", Nanos.Nanos],
  ["Taxes.FullTaxItem", Taxes.FullTaxItem],
  ["Taxes.LabelTaxItem", Taxes.LabelTaxItem],
  ["Taxes.ValueTaxItem", Taxes.ValueTaxItem],
  ["Taxes.CheckoutTaxes", Taxes.CheckoutTaxes],
  ["TerminalApi.PaymentMethodsResponse", TerminalApi.PaymentMethodsResponse],
  ["TerminalApi.BoundTerminalsResponse", TerminalApi.BoundTerminalsResponse],
  ["TerminalApi.Payer", TerminalApi.Payer],
  ["TerminalApi.CheckoutAmount", TerminalApi.CheckoutAmount],
  ["TerminalApi.CheckoutRequest", TerminalApi.CheckoutRequest],
  ["TerminalApi.CheckoutResponse", TerminalApi.CheckoutResponse],
  ["TerminalApi.NotificationsQuery", TerminalApi.NotificationsQuery],
  ["TerminalApi.NotificationsResponse", TerminalApi.NotificationsResponse],
  ["LinkApi.Email", LinkApi.Email],
  ["LinkApi.HttpsUrl", LinkApi.HttpsUrl],
  ["LinkApi.ImageUrl", LinkApi.ImageUrl],
  ["LinkApi.PaymentMethodsResponse", LinkApi.PaymentMethodsResponse],
  ["LinkApi.CreateLinkRequest", LinkApi.CreateLinkRequest],
  ["LinkApi.CreateLinkResponse", LinkApi.CreateLinkResponse],
  ["LinkApi.LinkRecord", LinkApi.LinkRecord],
  ["OnlineApi.IntentCreateRequest", OnlineApi.IntentCreateRequest],
  ["OnlineApi.IntentUpdateRequest", OnlineApi.IntentUpdateRequest],
  ["OnlineApi.IntentResponse", OnlineApi.IntentResponse],
  ["OnlineApi.AttemptRequest", OnlineApi.AttemptRequest],
  ["OnlineApi.AttemptResponse", OnlineApi.AttemptResponse],
  ["OnlineApi.ThreeDsAttemptResponse", OnlineApi.ThreeDsAttemptResponse],
  ["OnlineApi.PaymentResponse", OnlineApi.PaymentResponse],
  ["OnlineApi.BanksResponse", OnlineApi.BanksResponse],
  ["OnlineApi.VoidRequest", OnlineApi.VoidRequest],
  ["OnlineApi.RefundRequest", OnlineApi.RefundRequest],
  ["OnlineApi.RefundStatusResponse", OnlineApi.RefundStatusResponse],
  ["OnlineApi.OnlineError", OnlineApi.OnlineError],
  ["Notification.CardDetails", Notification.CardDetails],
  ["Notification.FallbackCardDetails", Notification.FallbackCardDetails],
  ["Notification.Notification", Notification.Notification],
  ["Notification.FallbackNotification", Notification.FallbackNotification]
]

describe("every wire schema round-trips", () => {
  for (const [name, schema] of schemas) {
    it.prop(`${name}: decode(encode(value)) is the value`, [schema], ([value]) => {
      const encoded = Schema.encodeSync(schema)(value)
      expect(Schema.decodeUnknownSync(schema)(encoded)).toStrictEqual(value)
    })

    it.prop(
      `${name}: its JSON text survives parse, decode, encode and stringify exactly`,
      [schema],
      ([value]) => {
        const text = Nanos.stringifyWithBigInt(Schema.encodeSync(schema)(value))
        const parsed = Either.getOrThrow(Nanos.parseJsonExact(text))
        const again = Nanos.stringifyWithBigInt(
          Schema.encodeSync(schema)(Schema.decodeUnknownSync(schema)(parsed))
        )
        expect(again).toBe(text)
      }
    )

    it(`${name}: has a JSON Schema (for the OpenAPI document)`, () => {
      expect(() => JSONSchema.make(schema)).not.toThrow()
    })
  }
})
