/**
 * `Idempotency-Key` on every request with an effect (POST, PUT, PATCH, DELETE; beyond the spec, as
 * Stripe and Square have it): the same key with the same method, path and body within 24 hours gets
 * the first response again, byte for byte; the same key with another request is a 409, and so is a
 * retry while the first still runs. Keys are scoped to the merchant and mode of the request's key
 * (admin requests share one admin scope).
 *
 * A key is a record with a recovery point (brief, "Exactly once at the edge";
 * `IdempotencyStore`): the request runs under the key's fence, so its first effect commits with
 * the key marked committed, and from then on no retry runs it again. The request runs to its end
 * even if its client goes away, and its answer is recorded whatever its status, but for a refusal
 * for now (a 5xx with `Retry-After`: the database was away), after which the retry runs the request
 * or, once an effect committed, recovers it at once; a retry after its node died answers from what
 * it wrote (`IdempotencyRecovery`). While it runs it renews its lease every `RENEW_EVERY_MS`; a key
 * whose request died before any effect is free once the lease lapses.
 *
 * A fingerprint is an unsalted SHA-256 kept 24 hours, so a body member that is a secret is left out
 * of it ({@link UNFINGERPRINTED}): the store then never holds a fast, guessable hash of a password.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as ExactJson from "@cobro/domain/ExactJson"
import * as IdempotencyStore from "@cobro/domain/IdempotencyStore"
import * as KeyVault from "@cobro/domain/KeyVault"
import * as MerchantDirectory from "@cobro/domain/MerchantDirectory"
import * as AppendFence from "@cobro/domain/AppendFence"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as FormOnce from "@cobro/panel/FormOnce"
import * as Authentication from "./Authentication.js"
import * as Errors from "@cobro/api/Errors"
import * as Fallback from "./Fallback.js"
import * as IdempotencyRecovery from "./IdempotencyRecovery.js"
import * as RequestBody from "./RequestBody.js"
import * as Unavailability from "./Unavailability.js"

/** The request header. */
export const HEADER = "idempotency-key"

/** The response header set on a replayed response. */
export const REPLAYED_HEADER = "idempotent-replayed"

/** The longest key accepted. */
export const MAX_KEY_LENGTH = 255

const ADMIN_SCOPE = "admin"

const hex = (buffer: ArrayBuffer): string => {
  const bytes = new Uint8Array(buffer)
  let out = ""
  for (let i = 0; i < bytes.length; i++) out += bytes[i]!.toString(16).padStart(2, "0")
  return out
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * The top-level members of a JSON body that a route's fingerprint leaves out, per route (method and
 * path, without the query). `POST /admin/v1/merchants/{merchant_id}/users`: `password`, whose plain
 * SHA-256 would otherwise be kept for a day beside the key. The price is that a retry under the same
 * key with another password answers the first response (the user as created, with the first
 * password): which is what an idempotent create means, since the key names the creation. The same
 * for `PATCH /admin/v1/merchants/{merchant_id}/users/{user_id}`, which sets a new password.
 */
export const UNFINGERPRINTED: ReadonlyArray<{
  readonly method: string
  readonly path: RegExp
  readonly members: ReadonlyArray<string>
}> = [
  { method: "POST", path: /^\/admin\/v1\/merchants\/[^/]+\/users$/, members: ["password"] },
  { method: "PATCH", path: /^\/admin\/v1\/merchants\/[^/]+\/users\/[^/]+$/, members: ["password"] }
]

/** What a route's body is fingerprinted in place of a body that is not a JSON object. */
const NOT_AN_OBJECT = "(not a JSON object)"

/**
 * The text of a body that its fingerprint covers: the body itself, or, on a route of
 * {@link UNFINGERPRINTED}, the JSON object without the members left out (written again, compactly
 * and exactly) or, when it is no JSON object, a fixed text (broken JSON may still hold a password).
 */
export const fingerprintedBody = (method: string, url: string, body: string): string => {
  const path = url.split("?", 1)[0]!
  const rule = UNFINGERPRINTED.find((r) => r.method === method && r.path.test(path))
  if (rule === undefined) return body
  const parsed = ExactJson.parse(body)
  if (parsed._tag === "Left" || typeof parsed.right !== "object" || parsed.right === null)
    return NOT_AN_OBJECT
  if (Array.isArray(parsed.right)) return NOT_AN_OBJECT
  const kept = Object.fromEntries(
    Object.entries(parsed.right).filter(([member]) => !rule.members.includes(member))
  )
  return ExactJson.stringify(kept)
}

/**
 * The fingerprint of a request: method, path and the SHA-256 of its body (of what
 * {@link fingerprintedBody} keeps of it).
 */
export const fingerprint = (method: string, path: string, body: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() =>
      globalThis.crypto.subtle.digest("SHA-256", encoder.encode(fingerprintedBody(method, path, body)))
    ),
    (digest) => `${method} ${path} ${hex(digest)}`
  )

/** Who the key belongs to: the merchant and mode of an API key, or the admin. None when unauthenticated. */
const ownerOf = (
  authorization: string
): Effect.Effect<
  Option.Option<{ readonly merchantId: string; readonly mode: string }>,
  never,
  KeyVault.KeyVault | MerchantDirectory.MerchantDirectory | Authentication.AdminToken
> =>
  Effect.gen(function* () {
    if (/^bearer /i.test(authorization)) {
      const token = yield* Authentication.AdminToken
      return Authentication.constantTimeEquals(authorization.slice(7), Redacted.value(token))
        ? Option.some({ merchantId: ADMIN_SCOPE, mode: ADMIN_SCOPE })
        : Option.none()
    }
    return yield* Authentication.authenticate(authorization, undefined).pipe(
      Effect.map((credential) => Option.some({ merchantId: credential.merchantId, mode: credential.mode })),
      Effect.orElseSucceed(() => Option.none())
    )
  })

const replay = (response: IdempotencyStore.StoredResponse) =>
  HttpServerResponse.text(response.body, {
    status: response.status,
    ...(response.contentType === undefined ? {} : { contentType: response.contentType }),
    headers: { [REPLAYED_HEADER]: "true" }
  })

/**
 * Renews the owner's lease while its request runs (the caller interrupts it when the request is
 * answered). A failed renewal is retried at the next tick; a key taken by another owner ends it.
 */
const renewLease = (
  store: IdempotencyStore.IdempotencyStore["Type"],
  scope: IdempotencyStore.Scope,
  owner: string
) =>
  Effect.gen(function* () {
    for (;;) {
      yield* Effect.sleep(IdempotencyStore.RENEW_EVERY_MS)
      const renewed = yield* DateTime.now.pipe(
        Effect.flatMap((now) => store.renew(scope, owner, now)),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("Idempotency-Key: the lease could not be renewed", cause), true)
        )
      )
      // Lost: another request took the key (completion then records nothing, and says so).
      if (!renewed) return
    }
  })

/** `cobro.idempotency.conflicts`: the 409s of an Idempotency-Key, by their code (reused, in use…). */
export const conflicts = Metric.counter("cobro.idempotency.conflicts", {
  description: "Requests answered 409 because of their Idempotency-Key, by code.",
  incremental: true
})

const conflictsByCode = new Map<string, Metric.Metric.Counter<number>>()

const countConflict = (code: string) => {
  let counter = conflictsByCode.get(code)
  if (counter === undefined) {
    counter = Metric.tagged(conflicts, "code", code)
    conflictsByCode.set(code, counter)
  }
  counter.unsafeUpdate(1, [])
}

const conflict = (code: string, message: string) => {
  countConflict(code)
  return Errors.toResponse(Errors.Conflict.of(code, message))
}

/** The body of a response when it can be recorded (text or bytes), else none. */
const recordable = (response: HttpServerResponse.HttpServerResponse): Option.Option<string> => {
  switch (response.body._tag) {
    case "Empty":
      return Option.some("")
    case "Uint8Array":
      return Option.some(decoder.decode(response.body.body))
    default:
      return Option.none()
  }
}

/** The methods whose requests may have an effect, and so take an `Idempotency-Key`. */
export const METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** How long a client waits before retrying a key in use, or while the database is away: seconds. */
export const RETRY_AFTER_SECONDS = Unavailability.RETRY_AFTER_SECONDS

const withRetryAfter = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))

const inUse = (message: string) => withRetryAfter(conflict(Errors.Codes.IdempotencyKeyInUse, message))

/**
 * How an answer's recording is retried while the database is away: backing off to every 5 seconds,
 * for 2 minutes; past that the key is recovered by a retry once its lease lapses.
 */
const recordingSchedule = Schedule.exponential("100 millis").pipe(
  Schedule.either(Schedule.spaced("5 seconds")),
  Schedule.upTo("2 minutes")
)

/**
 * A refusal for now: a 5xx that says when to retry (`Retry-After`: the database was away). It is
 * not the request's answer, so it is never kept: the retry runs the request, or recovers it from
 * its resource when an effect of it committed.
 */
const isTransient = (response: HttpServerResponse.HttpServerResponse): boolean =>
  response.status >= 500 && response.headers["retry-after"] !== undefined

/**
 * What to record of an answer: the response as text, or nothing (a stream cannot be replayed, a
 * transient refusal is not an answer).
 */
const toStored = (
  response: HttpServerResponse.HttpServerResponse
): Option.Option<IdempotencyStore.StoredResponse> =>
  isTransient(response)
    ? Option.none()
    : Option.map(recordable(response), (body) => ({
        status: response.status,
        contentType: response.headers["content-type"] ?? contentTypeOf(response),
        body
      }))

/**
 * Records the end of the owner's request: its answer, or, with none to record (a failure, an
 * interruption, a stream, a transient refusal), the key's release (which keeps a key whose request
 * committed an effect, for the next retry to recover at once).
 */
const settle = (
  store: IdempotencyStore.IdempotencyStore["Type"],
  scope: IdempotencyStore.Scope,
  owner: string,
  answer: Option.Option<IdempotencyStore.StoredResponse>
): Effect.Effect<IdempotencyStore.Completion> =>
  Option.match(answer, {
    onNone: () => Effect.as(store.release(scope, owner), "Released" as const),
    onSome: (response) => store.complete(scope, owner, response)
  })

/**
 * Runs the app under the owner's key, to its end whoever waits for it: its exit is handed to
 * `answered` as soon as the app and the recording of its answer are done, or when the recording
 * fails, which then goes on in the background until the database takes it.
 */
const runHeld = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  store: IdempotencyStore.IdempotencyStore["Type"],
  scope: IdempotencyStore.Scope,
  owner: string,
  answered: Deferred.Deferred<HttpServerResponse.HttpServerResponse, E>
) =>
  Effect.gen(function* () {
    // Interruptible whatever the region the server runs the app in: it ends when the answer is kept.
    const lease = yield* Effect.fork(Effect.interruptible(renewLease(store, scope, owner)))
    const exit = yield* Effect.exit(
      Effect.provideService(app, AppendFence.AppendFence, store.fence(scope, owner))
    )
    const stored = Exit.isSuccess(exit) ? toStored(exit.value) : Option.none()
    const settled = yield* Effect.exit(settle(store, scope, owner, stored))
    if (Exit.isSuccess(settled)) {
      // A 5xx whose key another request had taken: this request's appends were refused by the fence.
      const lost = settled.value === "Lost" && Exit.isSuccess(exit) && exit.value.status >= 500
      yield* Deferred.done(
        answered,
        lost ? Exit.succeed(inUse("another request took this Idempotency-Key over; retry")) : exit
      )
      if (settled.value === "Lost") {
        yield* Effect.logWarning(
          "Idempotency-Key: the key's lease lapsed while its request ran; its answer is not kept"
        )
      }
      return yield* Fiber.interrupt(lease)
    }
    yield* Deferred.done(answered, exit)
    yield* Effect.logError(
      "Idempotency-Key: the answer could not be recorded; retrying in the background",
      settled.cause
    )
    yield* settle(store, scope, owner, stored).pipe(
      Effect.sandbox,
      Effect.retry(recordingSchedule),
      Effect.catchAllCause((cause) =>
        Effect.logError(
          "Idempotency-Key: the answer could not be recorded; a retry recovers the key once its lease lapses",
          cause
        )
      ),
      Effect.ensuring(Fiber.interrupt(lease))
    )
  })

/**
 * Wraps an app that answers every request with a response (errors already written): requests with
 * an effect that carry an `Idempotency-Key` of an authenticated caller are reserved, run once under
 * the key's fence, answered once and replayed.
 */
export const middleware = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<
  E,
  | R
  | IdempotencyStore.IdempotencyStore
  | KeyVault.KeyVault
  | MerchantDirectory.MerchantDirectory
  | Authentication.AdminToken
> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = request.headers[HEADER]
    if (!METHODS.has(request.method) || key === undefined) return yield* app
    if (key.trim() === "" || key.length > MAX_KEY_LENGTH) {
      return Errors.toResponse(
        Errors.BadRequest.of(
          Errors.Codes.InvalidIdempotencyKey,
          `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`
        )
      )
    }
    const owner = yield* ownerOf(request.headers.authorization ?? "")
    // An unauthenticated request gets its 401 from the app; a body that cannot be read, its 4xx.
    if (Option.isNone(owner)) return yield* app
    const body = yield* Effect.either(RequestBody.text)
    if (body._tag === "Left") return yield* app
    const scope: IdempotencyStore.Scope = { ...owner.value, key }
    const print = yield* fingerprint(request.method, request.url, body.right)
    const path = request.url.split("?", 1)[0]!
    return yield* once(scope, print, app, (resource) =>
      IdempotencyRecovery.answer(request.method, path, resource)
    )
  })

/**
 * Runs `app` once under the key of `scope` for the request fingerprinted `print`: a retry replays
 * its answer, another request under the key is refused, and a key whose request died after its
 * effect committed is answered with `recover(resource)`, which is then kept as the key's answer.
 * The API's middleware and the panel's forms share it.
 */
export const once = <E, R, R2>(
  scope: IdempotencyStore.Scope,
  print: string,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  recover: (resource: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R2>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  R | R2 | IdempotencyStore.IdempotencyStore | HttpServerRequest.HttpServerRequest
> =>
  Effect.gen(function* () {
    const store = yield* IdempotencyStore.IdempotencyStore
    // This request's claim on the key: only it may renew, fence, complete or release the reservation.
    const reservationOwner = globalThis.crypto.randomUUID()
    const reserved = yield* Effect.exit(store.reserve(scope, print, yield* DateTime.now, reservationOwner))
    if (Exit.isFailure(reserved)) {
      yield* Effect.logError("Idempotency-Key: the key could not be reserved", reserved.cause)
      return Fallback.unavailableResponse(yield* HttpServerRequest.HttpServerRequest)
    }
    const reservation = reserved.value
    switch (reservation._tag) {
      case "Replay":
        return replay(reservation.response)
      case "Mismatch":
        return conflict(
          Errors.Codes.IdempotencyKeyReused,
          "this Idempotency-Key was used with another request; use a new key"
        )
      case "InProgress":
        return inUse("a request with this Idempotency-Key is still running")
      case "Recover": {
        // A recovery that fails (the database away again) hands the key back at once, for the next
        // retry to recover; `Fallback.guard` answers and logs the failure. A release that fails too
        // leaves the key to its lease.
        const response = yield* recover(reservation.resource).pipe(
          Effect.onError(() =>
            Effect.catchAllCause(store.release(scope, reservationOwner), () => Effect.void)
          )
        )
        yield* settle(store, scope, reservationOwner, toStored(response)).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logError("Idempotency-Key: the recovered answer could not be recorded", cause)
          )
        )
        return HttpServerResponse.setHeader(response, REPLAYED_HEADER, "true")
      }
      case "Reserved":
        break
    }
    // The request runs in a fiber of its own: a client that goes away does not stop what it started.
    const answered = yield* Deferred.make<HttpServerResponse.HttpServerResponse, E>()
    yield* Effect.forkDaemon(runHeld(app, store, scope, reservationOwner, answered))
    return yield* Deferred.await(answered)
  })

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined =>
  response.body._tag === "Uint8Array" ? response.body.contentType : undefined

/**
 * The merchant panel's forms act once through this module (`@cobro/panel/FormOnce`): the same
 * record, replay, refusal and recovery as an API call's `Idempotency-Key`.
 */
export const layerForms: Layer.Layer<FormOnce.FormOnce> = Layer.succeed(FormOnce.FormOnce, {
  replayedHeader: REPLAYED_HEADER,
  retryAfterSeconds: RETRY_AFTER_SECONDS,
  fingerprint,
  once
})
