/**
 * `verifyWebhook` against the server's own signing (`@cobro/webhooks/Signature`: `sign` for
 * `x-service-signature`, `standardWebhookHeaders` for Standard Webhooks), for any notification,
 * body and secret: what the server signs verifies, any flipped byte fails, a timestamp outside the
 * tolerance fails.
 */
import * as ExactJson from "@cobro/domain/ExactJson"
import * as NotificationApi from "@cobro/domain/NotificationApi"
import * as Signature from "@cobro/webhooks/Signature"
import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Webhooks from "../src/Webhooks.js"

const notifications = Arbitrary.make(NotificationApi.Notification)
const encode = Schema.encodeSync(NotificationApi.Notification)
/** The body as the server writes it: exact JSON (nanosecond `time` as an integer). */
const bodyOf = (notification: NotificationApi.Notification) => ExactJson.stringify(encode(notification))

const secrets = FastCheck.oneof(
  FastCheck.constant(""),
  FastCheck.string(),
  FastCheck.hexaString({ minLength: 32 })
)
const NOW = 1_796_000_000_000

/** Every header the server sends for a body (both schemes), as `Dispatcher.headersFor` writes them. */
const signed = (body: string, id: string, secret: string, timestampSeconds = NOW / 1000) => ({
  "content-type": "application/json",
  [Signature.HEADER]: Signature.sign(body, secret),
  ...Signature.standardWebhookHeaders(id, timestampSeconds, body, secret)
})

const flip = (bytes: Uint8Array, index: number, bit: number) => {
  const copy = Uint8Array.from(bytes)
  copy[index % copy.length]! ^= 1 << bit
  return copy
}

describe("verifyWebhook", () => {
  it.prop(
    "any notification the server signs verifies with its secret, under both schemes, and decodes to itself",
    { notification: notifications, secret: secrets },
    ({ notification, secret }) => {
      const body = bodyOf(notification)
      const verified = Webhooks.verify(body, signed(body, notification.id, secret), secret, {
        nowMillis: NOW
      })
      // `toEqual`: the arbitrary may give an optional member as `undefined`, which JSON leaves out.
      expect(Either.getOrThrow(verified)).toEqual(notification)
      for (const scheme of ["x-service-signature", "standard-webhooks"] as const) {
        expect(
          Either.isRight(
            Webhooks.verify(body, signed(body, notification.id, secret), secret, { nowMillis: NOW, scheme })
          )
        ).toBe(true)
      }
    },
    { fastCheck: { numRuns: 100 } }
  )

  it.prop(
    "any body signed with any secret passes the signatures (a body that is no notification is then InvalidBody)",
    { body: FastCheck.uint8Array({ minLength: 0, maxLength: 512 }), secret: secrets, id: FastCheck.uuid() },
    ({ body, secret, id }) => {
      const headers = {
        [Signature.HEADER]: Signature.sign(body, secret),
        ...Signature.standardWebhookHeaders(id, NOW / 1000, body, secret)
      }
      const result = Webhooks.verify(body, headers, secret, { nowMillis: NOW })
      expect(Either.isLeft(result) ? result.left.reason : "verified").toBe("InvalidBody")
    }
  )

  it.prop(
    "any flipped byte of the body fails both signatures",
    {
      notification: notifications,
      secret: secrets,
      index: FastCheck.nat(),
      bit: FastCheck.integer({ min: 0, max: 7 })
    },
    ({ notification, secret, index, bit }) => {
      const body = new TextEncoder().encode(bodyOf(notification))
      const headers = signed(bodyOf(notification), notification.id, secret)
      const tampered = flip(body, index, bit)
      for (const scheme of ["x-service-signature", "standard-webhooks", "any"] as const) {
        const result = Webhooks.verify(tampered, headers, secret, { nowMillis: NOW, scheme })
        expect(Either.isLeft(result) && result.left.reason).toBe("InvalidSignature")
      }
    }
  )

  it.prop(
    "another secret fails",
    { notification: notifications, secret: secrets, other: secrets },
    ({ notification, secret, other }) => {
      FastCheck.pre(secret !== other)
      const body = bodyOf(notification)
      const result = Webhooks.verify(body, signed(body, notification.id, secret), other, { nowMillis: NOW })
      expect(Either.isLeft(result) && result.left.reason).toBe("InvalidSignature")
    }
  )

  it.prop(
    "a Standard Webhooks timestamp outside the tolerance fails, one inside passes (default 5 minutes)",
    {
      notification: notifications,
      offset: FastCheck.integer({ min: -100_000, max: 100_000 }),
      tolerance: FastCheck.option(FastCheck.integer({ min: 1, max: 3600 }), { nil: undefined })
    },
    ({ notification, offset, tolerance }) => {
      const body = bodyOf(notification)
      const headers = signed(body, notification.id, "", NOW / 1000 + offset)
      const result = Webhooks.verify(body, headers, "", { nowMillis: NOW, toleranceSeconds: tolerance })
      const inside = Math.abs(offset) <= (tolerance ?? Webhooks.DEFAULT_TOLERANCE_SECONDS)
      expect(Either.isLeft(result) ? result.left.reason : "verified").toBe(
        inside ? "verified" : "TimestampOutOfTolerance"
      )
    }
  )

  it("takes Fetch Headers and Node's headers in any case; with no signature it is MissingSignature", () => {
    const [notification] = FastCheck.sample(notifications, { numRuns: 1, seed: 7 })
    const body = bodyOf(notification!)
    const plain = signed(body, notification!.id, "s3cret")
    const upper = Object.fromEntries(Object.entries(plain).map(([k, v]) => [k.toUpperCase(), v]))
    expect(Webhooks.verifyWebhook(body, new Headers(plain), "s3cret", { nowMillis: NOW }).id).toBe(
      notification!.id
    )
    expect(Webhooks.verifyWebhook(body, upper, "s3cret", { nowMillis: NOW }).id).toBe(notification!.id)
    expect(() => Webhooks.verifyWebhook(body, { "content-type": "application/json" }, "s3cret")).toThrow(
      Webhooks.WebhookVerificationError
    )
    const missing = Webhooks.verify(body, {}, "s3cret")
    expect(Either.isLeft(missing) && missing.left.reason).toBe("MissingSignature")
    // Asked for Standard Webhooks, the spec's header alone is not enough.
    const onlyService = { [Signature.HEADER]: Signature.sign(body, "s3cret") }
    const standard = Webhooks.verify(body, onlyService, "s3cret", { scheme: "standard-webhooks" })
    expect(Either.isLeft(standard) && standard.left.reason).toBe("MissingSignature")
  })
})
