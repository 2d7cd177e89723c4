/**
 * The `HttpClient` transformation under every call of the client: the credential, the user agent,
 * an `Idempotency-Key` made once per logical call (reused by each retry), the retries themselves
 * (`Retry`), a timeout per attempt, and the answer read once (so a connection cut while the body
 * arrives is retried too) and put in the shape the contract's schemas decode: the error envelope
 * tagged by its status, integers beyond 2^53 (nanosecond timestamps) kept exact.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as ExactJson from "@cobro/domain/ExactJson"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Random from "effect/Random"
import * as Redacted from "effect/Redacted"
import * as Retry from "../Retry.js"
import { USER_AGENT } from "../Version.js"

/** What one call may set for itself (the Promise client's last argument). */
export interface CallOptions {
  /** The longest an attempt may take; a slower attempt is cut and retried. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The key to send instead of a new one (to retry a call made earlier, by hand). */
  readonly idempotencyKey?: string | undefined
  /** Retries after the first attempt, for this call. */
  readonly maxRetries?: number | undefined
  /** Called once the request is built and about to be sent (its payload encoded). */
  readonly onSend?: (() => void) | undefined
}

/** The options of the call the current fiber makes. */
export const currentCallOptions = globalValue("@cobro/client/currentCallOptions", () =>
  FiberRef.unsafeMake<CallOptions>({})
)

/** What the transport is configured with. */
export interface Options {
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly adminToken: Redacted.Redacted<string> | undefined
  readonly policy: Retry.Policy
  readonly timeout: Duration.DurationInput
}

/** The operator's paths (`Authorization: Bearer`); every other path takes the merchant's key. */
const ADMIN_PATH = /^(?:[a-z]+:\/\/[^/]+)?(?:\/[^?]*)?\/(?:admin\/v1\/|audit\/v1\/proofs\/inclusion(?:$|\?))/

const authorization = (options: Options, url: string): string | undefined => {
  if (ADMIN_PATH.test(url) && options.adminToken !== undefined) {
    return `Bearer ${Redacted.value(options.adminToken)}`
  }
  if (options.apiKey !== undefined) return `x-api-key ${Redacted.value(options.apiKey)}`
  return options.adminToken === undefined ? undefined : `Bearer ${Redacted.value(options.adminToken)}`
}

const newKey = (): string => globalThis.crypto.randomUUID()

/** Once per logical call: the headers, and the idempotency key of a call with an effect. */
const prepare = (options: Options, call: CallOptions, request: HttpClientRequest.HttpClientRequest) => {
  call.onSend?.()
  let prepared = HttpClientRequest.setHeader(request, "user-agent", USER_AGENT)
  const auth = authorization(options, request.url)
  if (auth !== undefined && request.headers["authorization"] === undefined) {
    prepared = HttpClientRequest.setHeader(prepared, "authorization", auth)
  }
  if (Retry.METHODS_WITH_EFFECT.has(request.method) && request.headers["idempotency-key"] === undefined) {
    prepared = HttpClientRequest.setHeader(prepared, "idempotency-key", call.idempotencyKey ?? newKey())
  }
  return prepared
}

/** The tag of the contract's error class (`@cobro/api/Errors`) that answers with each status. */
const TAG_BY_STATUS: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  500: "InternalServerError",
  503: "ServiceUnavailable"
}

const LONG_INTEGER = /[0-9]{16}/
const encoder = new TextEncoder()
const decoder = new TextDecoder()

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]*\+)?json\b/i.test(contentType.trim())

/** Bigints (exact integers beyond 2^53) written as decimal strings, which `Nanos` decodes exactly. */
const stringifyExact = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v))

/** A body read: its bytes as they will be decoded, and the first error code when it is an envelope. */
interface Read {
  readonly body: Uint8Array
  readonly code: string | undefined
}

/**
 * The body as the contract's schemas decode it: an error envelope becomes its error class's encoded
 * form (`{_tag, errors}`, plus `allow` for a 405); a body with long integers keeps them exact.
 */
const normalize = (status: number, contentType: string | undefined, bytes: Uint8Array): Read => {
  if (!isJson(contentType) || bytes.length === 0) return { body: bytes, code: undefined }
  const text = decoder.decode(bytes)
  const isError = status >= 400
  if (!isError && !LONG_INTEGER.test(text)) return { body: bytes, code: undefined }
  const parsed = ExactJson.parse(text)
  if (parsed._tag === "Left") return { body: bytes, code: undefined }
  const json = parsed.right as any
  const errors: unknown = json !== null && typeof json === "object" ? json.errors : undefined
  if (isError && Array.isArray(errors) && errors.length > 0) {
    const code = typeof errors[0]?.code === "string" ? (errors[0].code as string) : undefined
    const tag = TAG_BY_STATUS[status]
    if (tag === undefined) return { body: bytes, code }
    return { body: encoder.encode(stringifyExact({ ...json, _tag: tag })), code }
  }
  return { body: encoder.encode(stringifyExact(json)), code: undefined }
}

const NO_BODY = new Set([101, 204, 205, 304])

/** The response read whole, then rebuilt from the bytes the schemas should see. */
const readWhole = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
) =>
  Effect.map(response.arrayBuffer, (buffer) => {
    const read = normalize(response.status, response.headers["content-type"], new Uint8Array(buffer))
    const headers = new globalThis.Headers()
    for (const [name, value] of Object.entries(response.headers)) {
      if (name !== "content-length" && name !== "content-encoding") headers.set(name, value)
    }
    const rebuilt = new globalThis.Response(NO_BODY.has(response.status) ? null : read.body, {
      status: response.status,
      headers
    })
    return { response: HttpClientResponse.fromWeb(request, rebuilt), code: read.code }
  })

/** An attempt cut by the timeout: a transport failure (retried like a cut connection). */
const timedOut = (request: HttpClientRequest.HttpClientRequest, timeout: Duration.DurationInput) =>
  new HttpClientError.RequestError({
    request,
    reason: "Transport",
    description: `no answer within ${Duration.format(timeout)}`
  })

/** One attempt: sent, answered and read within the timeout. */
const attempt = (
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.DurationInput
) =>
  send.pipe(
    Effect.flatMap((response) => readWhole(request, response)),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => timedOut(request, timeout) })
  )

const isNetworkError = (error: HttpClientError.HttpClientError): boolean =>
  error._tag === "RequestError" ? error.reason === "Transport" : error.reason === "Decode"

/** Sends the request, retrying what `Retry.decide` allows; the last answer or error stands. */
const withRetries = (
  options: Options,
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.gen(function* () {
    const call = yield* FiberRef.get(currentCallOptions)
    const policy: Retry.Policy =
      call.maxRetries === undefined ? options.policy : { ...options.policy, maxRetries: call.maxRetries }
    const timeout = call.timeout ?? options.timeout
    for (let retry = 0; ; retry++) {
      const result = yield* Effect.either(attempt(send, request, timeout))
      const outcome: Retry.Outcome =
        result._tag === "Left"
          ? { _tag: "Network" }
          : { _tag: "Response", status: result.right.response.status, code: result.right.code }
      if (result._tag === "Left" && !isNetworkError(result.left)) return yield* Effect.fail(result.left)
      const now = yield* Clock.currentTimeMillis
      const retryAfter =
        result._tag === "Right"
          ? Retry.parseRetryAfter(result.right.response.headers["retry-after"], now)
          : undefined
      const decision = Retry.decide(policy, retry, outcome, retryAfter, yield* Random.next)
      if (decision._tag === "Stop") {
        return yield* result._tag === "Left"
          ? Effect.fail(result.left)
          : Effect.succeed(result.right.response)
      }
      yield* Effect.annotateCurrentSpan("cobro.retries", retry + 1)
      yield* Effect.sleep(Duration.millis(decision.delayMillis))
    }
  })

/**
 * The transformation: apply it to the `HttpClient` the contract's client is derived over
 * (`HttpApiClient.make(CobroApi, { transformClient })`).
 */
export const transform =
  (options: Options) =>
  (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    client.pipe(
      HttpClient.mapRequestEffect((request) =>
        Effect.map(FiberRef.get(currentCallOptions), (call) => prepare(options, call, request))
      ),
      HttpClient.transform((send, request) => withRetries(options, send, request))
    )
