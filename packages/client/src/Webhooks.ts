/**
 * Verifying the webhooks Cobro sends (spec D, Signature; W19): the spec's `x-service-signature`
 * (hex HMAC-SHA256 of the Base64 of the raw body) and, when the endpoint asked for them, the
 * Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`: `v1,` + Base64
 * HMAC-SHA256 of `id.timestamp.body`), both keyed with the UTF-8 bytes of the merchant's secret key
 * (the empty string for test-mode notifications). A verified body is decoded exactly (nanosecond
 * `time` as a bigint) with the domain's `Notification` schema.
 */
import * as ExactJson from "@cobro/domain/ExactJson"
import * as NotificationApi from "@cobro/domain/NotificationApi"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * A notification as Cobro sends it.
 *
 * @category models
 */
export type Notification = NotificationApi.Notification

/**
 * The headers of a delivery: a Fetch `Headers`, or Node's `IncomingHttpHeaders` (any case).
 *
 * @category models
 */
export type WebhookHeaders =
  | { forEach(callback: (value: string, name: string) => void): void }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * Which signatures to check: `"any"` (default) checks every scheme whose headers are present and
 * requires at least one; `"standard-webhooks"` or `"x-service-signature"` requires that one.
 *
 * @category models
 */
export type Scheme = "any" | "standard-webhooks" | "x-service-signature"

/**
 * Options of {@link verifyWebhook}.
 *
 * @category models
 */
export interface VerifyOptions {
  /** How far the Standard Webhooks timestamp may be from now, in seconds (default 300). */
  readonly toleranceSeconds?: number | undefined
  /** Now, in milliseconds since the epoch (default `Date.now()`). */
  readonly nowMillis?: number | undefined
  readonly scheme?: Scheme | undefined
}

/**
 * Why a delivery was refused.
 *
 * @category errors
 */
export type Reason =
  "MissingSignature" | "InvalidSignature" | "TimestampOutOfTolerance" | "InvalidTimestamp" | "InvalidBody"

/**
 * A delivery that is not a verified Cobro notification: answer it 400 and do not process it.
 *
 * @category errors
 */
export class WebhookVerificationError extends Data.TaggedError("WebhookVerificationError")<{
  readonly reason: Reason
  readonly message: string
}> {}

/**
 * The default tolerance of the Standard Webhooks timestamp: 5 minutes.
 *
 * @category constants
 */
export const DEFAULT_TOLERANCE_SECONDS = 300

const bytesOf = (body: Uint8Array | string): Buffer =>
  typeof body === "string"
    ? Buffer.from(body, "utf8")
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength)

const headerMap = (headers: WebhookHeaders): Map<string, string> => {
  const map = new Map<string, string>()
  if (typeof (headers as { forEach?: unknown }).forEach === "function" && !isRecordOfHeaders(headers)) {
    ;(headers as { forEach(callback: (value: string, name: string) => void): void }).forEach((value, name) =>
      map.set(name.toLowerCase(), value)
    )
    return map
  }
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (typeof value === "string") map.set(name.toLowerCase(), value)
    else if (Array.isArray(value) && typeof value[0] === "string")
      map.set(name.toLowerCase(), value.join(", "))
  }
  return map
}

const isRecordOfHeaders = (headers: WebhookHeaders): boolean =>
  Object.getPrototypeOf(headers) === Object.prototype || Object.getPrototypeOf(headers) === null

const equal = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "utf8")
  const y = Buffer.from(b, "utf8")
  return x.length === y.length && timingSafeEqual(x, y)
}

const fail = (reason: Reason, message: string) =>
  Either.left(new WebhookVerificationError({ reason, message }))

/** The spec's signature: hex HMAC-SHA256 of the Base64 of the raw bytes. */
const verifyServiceSignature = (body: Buffer, header: string, secret: string) => {
  const expected = createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(body.toString("base64"), "utf8")
    .digest("hex")
  return equal(header.trim().toLowerCase(), expected)
    ? Either.right(undefined)
    : fail("InvalidSignature", "x-service-signature does not match the body")
}

/** Standard Webhooks: the timestamp within tolerance, one `v1,` signature of `id.timestamp.body`. */
const verifyStandard = (
  body: Buffer,
  id: string,
  timestamp: string,
  signatures: string,
  secret: string,
  nowMillis: number,
  toleranceSeconds: number
) => {
  if (!/^[0-9]{1,15}$/.test(timestamp.trim()))
    return fail("InvalidTimestamp", "webhook-timestamp is not a number of seconds")
  const seconds = Number(timestamp.trim())
  if (Math.abs(nowMillis / 1000 - seconds) > toleranceSeconds) {
    return fail("TimestampOutOfTolerance", `webhook-timestamp is more than ${toleranceSeconds} s from now`)
  }
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp.trim()}.`, "utf8"), body])
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(signed).digest("base64")
  const matches = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .some((s) => equal(s.slice(3), expected))
  return matches ? Either.right(undefined) : fail("InvalidSignature", "no webhook-signature matches the body")
}

const decodeNotification = Schema.decodeUnknownEither(NotificationApi.Notification)

/**
 * Verifies a delivery and decodes its notification, or says why not. `rawBody` must be the bytes
 * as received (never re-serialized JSON: that changes the bytes and rounds the nanosecond `time`).
 *
 * @category verifying
 */
export const verify = (
  rawBody: Uint8Array | string,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {}
): Either.Either<Notification, WebhookVerificationError> => {
  const body = bytesOf(rawBody)
  const map = headerMap(headers)
  const scheme = options.scheme ?? "any"
  const service = map.get("x-service-signature")
  const id = map.get("webhook-id")
  const timestamp = map.get("webhook-timestamp")
  const signatures = map.get("webhook-signature")
  const hasStandard = id !== undefined && timestamp !== undefined && signatures !== undefined
  const checkService = scheme === "x-service-signature" || (scheme === "any" && service !== undefined)
  const checkStandard = scheme === "standard-webhooks" || (scheme === "any" && hasStandard)
  if (!checkService && !checkStandard) {
    return fail(
      "MissingSignature",
      "neither x-service-signature nor the Standard Webhooks headers are present"
    )
  }
  if (checkStandard) {
    if (!hasStandard) return fail("MissingSignature", "the Standard Webhooks headers are missing")
    const verified = verifyStandard(
      body,
      id,
      timestamp,
      signatures,
      secret,
      options.nowMillis ?? Date.now(),
      options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
    )
    if (Either.isLeft(verified)) return Either.left(verified.left)
  }
  if (checkService) {
    if (service === undefined) return fail("MissingSignature", "x-service-signature is missing")
    const verified = verifyServiceSignature(body, service, secret)
    if (Either.isLeft(verified)) return Either.left(verified.left)
  }
  const parsed = ExactJson.parse(body.toString("utf8"))
  if (Either.isLeft(parsed)) return fail("InvalidBody", `the body is not JSON: ${parsed.left.message}`)
  const decoded = decodeNotification(parsed.right)
  if (Either.isLeft(decoded)) {
    return fail(
      "InvalidBody",
      `the body is not a notification: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
    )
  }
  if (hasStandard && checkStandard && decoded.right.id !== id) {
    return fail("InvalidBody", "webhook-id is not the notification's id")
  }
  return Either.right(decoded.right)
}

/**
 * {@link verify} for programs without Effect: the notification, or a thrown
 * {@link WebhookVerificationError} (answer 400).
 *
 * @example
 * ```ts
 * import { verifyWebhook } from "@cobro/client"
 * // Express: keep the raw body on this route.
 * app.post("/webhooks/cobro", express.raw({ type: "application/json" }), (req, res) => {
 *   const notification = verifyWebhook(req.body, req.headers, process.env.COBRO_SECRET_KEY ?? "")
 *   res.sendStatus(200) // then process it, deduplicated on notification.id
 * })
 * ```
 *
 * @category verifying
 */
export const verifyWebhook = (
  rawBody: Uint8Array | string,
  headers: WebhookHeaders,
  secret: string,
  options?: VerifyOptions
): Notification => Either.getOrThrowWith(verify(rawBody, headers, secret, options), (error) => error)

/**
 * {@link verify} as an Effect: fails with {@link WebhookVerificationError}.
 *
 * @category verifying
 */
export const verifyEffect = (
  rawBody: Uint8Array | string,
  headers: WebhookHeaders,
  secret: string,
  options?: VerifyOptions
): Effect.Effect<Notification, WebhookVerificationError> =>
  Effect.suspend(() => verify(rawBody, headers, secret, options))
