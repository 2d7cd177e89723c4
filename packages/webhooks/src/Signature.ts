/**
 * The webhook signature (spec D, Signature): HMAC-SHA256, in hex, of the Base64 text of the exact
 * raw bytes sent, keyed with the merchant's secret key (the empty string for test-key
 * transactions), in header `x-service-signature`. `verifySignature` is for merchants' Node code.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** The header that carries the signature. */
export const HEADER = "x-service-signature"

const bytesOf = (rawBody: Uint8Array | string): Buffer =>
  typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody)

/**
 * The signature of a body: hex HMAC-SHA256 of the Base64 of its raw bytes, keyed with `secret`.
 * A string body is taken as its UTF-8 bytes.
 */
export const sign = (rawBody: Uint8Array | string, secret: string): string =>
  createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(bytesOf(rawBody).toString("base64"), "utf8")
    .digest("hex")

/**
 * Whether `header` (the received `x-service-signature`) is the signature of `rawBody` under
 * `secretKey`, compared in constant time. Pass the raw bytes as received, never re-serialized JSON:
 * `JSON.stringify(JSON.parse(body))` changes the bytes (and rounds the nanosecond `time`).
 * A consumer answers 400 when this is false (spec D, Signature, step 3).
 *
 * @example
 * ```ts
 * import { verifySignature } from "@cobro/webhooks/Signature"
 * // Express: keep the raw body on this route.
 * app.post("/webhooks/cobro", express.raw({ type: "application/json" }), (req, res) => {
 *   if (!verifySignature(req.body, req.get("x-service-signature"), process.env.COBRO_SECRET_KEY ?? "")) {
 *     return res.sendStatus(400)
 *   }
 *   res.sendStatus(200) // answer at once, then process (deduplicate on the notification `id`)
 * })
 * ```
 */
export const verifySignature = (
  rawBody: Uint8Array | string,
  header: string | ReadonlyArray<string> | null | undefined,
  secretKey: string
): boolean => {
  if (typeof header !== "string") return false
  const expected = Buffer.from(sign(rawBody, secretKey), "utf8")
  const received = Buffer.from(header.trim().toLowerCase(), "utf8")
  return received.length === expected.length && timingSafeEqual(received, expected)
}

/**
 * The Standard Webhooks headers (https://www.standardwebhooks.com), optional beside the spec's
 * header: `webhook-signature` is `v1,` + Base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the
 * UTF-8 bytes of the same secret key.
 */
export const standardWebhookHeaders = (
  notificationId: string,
  timestampSeconds: number,
  rawBody: Uint8Array | string,
  secret: string
): Record<string, string> => {
  const timestamp = String(Math.floor(timestampSeconds))
  const signed = Buffer.concat([Buffer.from(`${notificationId}.${timestamp}.`, "utf8"), bytesOf(rawBody)])
  const signature = createHmac("sha256", Buffer.from(secret, "utf8")).update(signed).digest("base64")
  return {
    "webhook-id": notificationId,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${signature}`
  }
}
