/**
 * `Idempotency-Key` on every POST (issue 4, beyond the spec, as Stripe and Square have it): the same
 * key with the same method, path and body within 24 hours gets the first response again, byte for
 * byte; the same key with another request, or while the first is still running, is a 409. Keys are
 * scoped to the merchant and mode of the request's key (admin requests share one admin scope).
 * A running request renews its key's lease (`IdempotencyStore.LEASE_MS`) every
 * `RENEW_EVERY_MS`: a retry cannot run beside it, and after a crash the key is free once the lease
 * lapses (S-8).
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
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Authentication from "./Authentication.js"
import * as Errors from "./Errors.js"
import * as RequestBody from "./RequestBody.js"

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
 * password): which is what an idempotent create means, since the key names the creation.
 */
export const UNFINGERPRINTED: ReadonlyArray<{
  readonly method: string
  readonly path: RegExp
  readonly members: ReadonlyArray<string>
}> = [{ method: "POST", path: /^\/admin\/v1\/merchants\/[^/]+\/users$/, members: ["password"] }]

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

const conflict = (code: string, message: string) => Errors.toResponse(Errors.Conflict.of(code, message))

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

/**
 * Wraps an app that answers every request with a response (errors already written): POST requests
 * with an `Idempotency-Key` of an authenticated caller are reserved, answered once and replayed.
 * Responses of 5xx are not kept: the key can be retried.
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
    if (request.method !== "POST" || key === undefined) return yield* app
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
    const store = yield* IdempotencyStore.IdempotencyStore
    const scope: IdempotencyStore.Scope = { ...owner.value, key }
    const print = yield* fingerprint(request.method, request.url, body.right)
    // This request's claim on the key: only it may renew, complete or release the reservation.
    const reservationOwner = globalThis.crypto.randomUUID()
    const reservation = yield* store.reserve(scope, print, yield* DateTime.now, reservationOwner)
    switch (reservation._tag) {
      case "Replay":
        return replay(reservation.response)
      case "Mismatch":
        return conflict(
          Errors.Codes.IdempotencyKeyReused,
          "this Idempotency-Key was used with another request; use a new key"
        )
      case "InProgress":
        return conflict(
          Errors.Codes.IdempotencyKeyInUse,
          "a request with this Idempotency-Key is still running"
        )
      case "Reserved":
        break
    }
    // Interruptible whatever the region the server runs the app in: it ends when the request is answered.
    const lease = yield* Effect.fork(Effect.interruptible(renewLease(store, scope, reservationOwner)))
    const exit = yield* Effect.exit(app).pipe(
      Effect.ensuring(Fiber.interrupt(lease)),
      Effect.onInterrupt(() => store.release(scope, reservationOwner))
    )
    const kept =
      Exit.isSuccess(exit) && exit.value.status < 500
        ? Option.map(recordable(exit.value), (text) => ({ response: exit.value, text }))
        : Option.none()
    yield* Option.match(kept, {
      onNone: () => store.release(scope, reservationOwner),
      onSome: ({ response, text }) =>
        store
          .complete(scope, reservationOwner, {
            status: response.status,
            contentType: response.headers["content-type"] ?? contentTypeOf(response),
            body: text
          })
          .pipe(
            Effect.tap((recorded) =>
              recorded
                ? Effect.void
                : Effect.logWarning(
                    "Idempotency-Key: the key's lease lapsed while its request ran; its answer is not kept"
                  )
            )
          )
    })
    return yield* exit
  })

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined =>
  response.body._tag === "Uint8Array" ? response.body.contentType : undefined
