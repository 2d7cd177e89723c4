/**
 * Retries made safe: the schedule's properties (`Retry.decide`), then the client against local
 * servers that answer 503, 429, 409 `IdempotencyKeyInUse`, 4xx, slowly or never: what is retried,
 * how long it waits (`Retry-After` honoured), that a call with an effect keeps one
 * `Idempotency-Key` across its retries, timeouts, `AbortSignal`, and the user agent.
 */
import * as Errors from "@cobro/api/Errors"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Client from "../src/Client.js"
import { Cobro } from "../src/Cobro.js"
import * as CobroError from "../src/CobroError.js"
import * as Retry from "../src/Retry.js"
import { USER_AGENT, VERSION } from "../src/Version.js"
import * as Proxy from "./support/Proxy.js"

const policies = FastCheck.record({
  maxRetries: FastCheck.integer({ min: 0, max: 10 }),
  initialDelay: FastCheck.integer({ min: 1, max: 2000 }).map((ms) => `${ms} millis` as const),
  maxDelay: FastCheck.integer({ min: 1, max: 60_000 }).map((ms) => `${ms} millis` as const),
  maxRetryAfter: FastCheck.integer({ min: 0, max: 120_000 }).map((ms) => `${ms} millis` as const)
})

const retryable = FastCheck.oneof(
  FastCheck.constant<Retry.Outcome>({ _tag: "Network" }),
  FastCheck.integer({ min: 500, max: 599 }).map((status): Retry.Outcome => ({
    _tag: "Response",
    status,
    code: undefined
  })),
  FastCheck.constant<Retry.Outcome>({ _tag: "Response", status: 429, code: undefined }),
  FastCheck.constant<Retry.Outcome>({ _tag: "Response", status: 409, code: Retry.IDEMPOTENCY_KEY_IN_USE })
)

const final = FastCheck.oneof(
  FastCheck.integer({ min: 200, max: 499 })
    .filter((status) => status !== 429)
    .map((status): Retry.Outcome => ({ _tag: "Response", status, code: undefined })),
  FastCheck.constantFrom("IntentAlreadyExists", "IdempotencyKeyReused", "IdempotencyKeyUnanswered").map(
    (code): Retry.Outcome => ({ _tag: "Response", status: 409, code })
  )
)

const randoms = FastCheck.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

/** Attempts a call makes when every attempt ends with `outcome`. */
const attemptsOf = (policy: Retry.Policy, outcome: Retry.Outcome, random: number) => {
  let attempts = 1
  for (let retry = 0; retry < 100; retry++) {
    if (Retry.decide(policy, retry, outcome, undefined, random)._tag === "Stop") break
    attempts++
  }
  return attempts
}

describe("the retry schedule", () => {
  it.prop(
    "a retryable failure is tried at most 1 + maxRetries times; any other answer once",
    { policy: policies, outcome: retryable, other: final, random: randoms },
    ({ policy, outcome, other, random }) => {
      expect(attemptsOf(policy, outcome, random)).toBe(1 + policy.maxRetries)
      expect(attemptsOf(policy, other, random)).toBe(1)
    }
  )

  it.prop(
    "delays grow: each retry waits at least as long as any earlier one could, within [backoff/2, backoff]",
    { policy: policies, randoms: FastCheck.array(randoms, { minLength: 10, maxLength: 10 }) },
    ({ policy, randoms }) => {
      const initial = Number.parseInt(policy.initialDelay)
      const cap = Number.parseInt(policy.maxDelay)
      const delays = randoms.map((random, retry) => Retry.delayMillis(policy, retry, undefined, random))
      delays.forEach((delay, retry) => {
        const backoff = Math.min(cap, initial * 2 ** retry)
        expect(delay).toBeGreaterThanOrEqual(Math.floor(backoff / 2))
        expect(delay).toBeLessThanOrEqual(Math.ceil(backoff))
        // Below the cap, the least wait of a retry is the most of the one before.
        if (retry > 0 && initial * 2 ** retry <= cap) {
          expect(delay).toBeGreaterThanOrEqual(Math.floor(Math.min(cap, initial * 2 ** (retry - 1))))
        }
      })
    }
  )

  it.prop(
    "Retry-After is honoured: never retried sooner; past maxRetryAfter not retried at all",
    {
      policy: policies.filter((p) => p.maxRetries > 0),
      retryAfter: FastCheck.integer({ min: 0, max: 200_000 }),
      outcome: retryable,
      random: randoms
    },
    ({ policy, retryAfter, outcome, random }) => {
      const decision = Retry.decide(policy, 0, outcome, retryAfter, random)
      if (retryAfter > Number.parseInt(policy.maxRetryAfter)) expect(decision._tag).toBe("Stop")
      else expect(decision._tag === "Retry" && decision.delayMillis >= retryAfter).toBe(true)
    }
  )

  it("Retry-After as delay-seconds or an HTTP date", () => {
    const now = Date.parse("2026-12-02T12:00:00Z")
    expect(Retry.parseRetryAfter("2", now)).toBe(2000)
    expect(Retry.parseRetryAfter("Wed, 02 Dec 2026 12:00:05 GMT", now)).toBe(5000)
    expect(Retry.parseRetryAfter("soon", now)).toBeUndefined()
    expect(Retry.parseRetryAfter(undefined, now)).toBeUndefined()
  })
})

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Proxy.Scripted => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

const created = json(201, {
  payload: { payment_link: "LNK_abc", url: "https://pay.example/LNK_abc" },
  errors: []
})
const envelope = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { payload: {}, errors: [{ code, message: code }] }, headers)

/** A fast backoff, so that the tests measure `Retry-After`, not the backoff. */
const fast = { initialDelay: "10 millis", maxDelay: "50 millis" } as const

const failureOf = (promise: Promise<unknown>) =>
  Effect.promise(() =>
    promise.then(
      () => undefined as unknown,
      (error: unknown) => error
    )
  )

describe("the client's retries against a local server", () => {
  it.scopedLive(
    "a 503 with Retry-After: 1 is retried after a second, with the same Idempotency-Key and the user agent",
    () =>
      Effect.gen(function* () {
        const server = yield* Proxy.scripted([envelope(503, "Unavailable", { "retry-after": "1" }), created])
        const cobro = new Cobro({ baseUrl: server.url, apiKey: "id_test_x", backoff: fast })
        const link = yield* Effect.promise(() => cobro.links.create({ amount_type: "OPEN" }))
        expect(link.payload.payment_link).toBe("LNK_abc")
        expect(server.seen).toHaveLength(2)
        const [first, second] = server.seen as [Proxy.Seen, Proxy.Seen]
        expect(second.at - first.at).toBeGreaterThanOrEqual(950)
        expect(first.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
        expect(second.headers["idempotency-key"]).toBe(first.headers["idempotency-key"])
        expect(first.headers["user-agent"]).toBe(`cobro-client/${VERSION}`)
        expect(first.headers["authorization"]).toBe("x-api-key id_test_x")
        expect(second.body).toBe(first.body)
      })
  )

  it.scopedLive(
    "a 429 with Retry-After: 1 is retried after a second (a GET carries no Idempotency-Key)",
    () =>
      Effect.gen(function* () {
        const server = yield* Proxy.scripted([
          { status: 429, headers: { "retry-after": "1" } },
          { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "cobro+abc+key\n" }
        ])
        const cobro = new Cobro({ baseUrl: server.url, backoff: fast })
        expect(yield* Effect.promise(() => cobro.audit.publicKey())).toBe("cobro+abc+key\n")
        expect(server.seen).toHaveLength(2)
        expect(server.seen[1]!.at - server.seen[0]!.at).toBeGreaterThanOrEqual(950)
        expect(server.seen[0]!.headers["idempotency-key"]).toBeUndefined()
      })
  )

  it.scopedLive("the 409 IdempotencyKeyInUse is retried with the same key; another 409 is not", () =>
    Effect.gen(function* () {
      const inUse = yield* Proxy.scripted([
        envelope(409, "IdempotencyKeyInUse", { "retry-after": "0" }),
        created
      ])
      const cobro = new Cobro({ baseUrl: inUse.url, apiKey: "k", backoff: fast })
      yield* Effect.promise(() => cobro.links.create({ amount_type: "OPEN" }))
      expect(inUse.seen.map((s) => s.headers["idempotency-key"])).toEqual([
        inUse.seen[0]!.headers["idempotency-key"],
        inUse.seen[0]!.headers["idempotency-key"]
      ])

      const reused = yield* Proxy.scripted([envelope(409, "IdempotencyKeyReused"), created])
      const other = new Cobro({ baseUrl: reused.url, apiKey: "k", backoff: fast })
      const failure = yield* failureOf(
        other.online.intents.create({ reference_id: "r-1", amount: { currency: "COP", total_amount: 1000 } })
      )
      expect(failure).toBeInstanceOf(CobroError.CobroConflictError)
      expect((failure as CobroError.CobroConflictError).error).toBeInstanceOf(Errors.Conflict)
      expect((failure as CobroError.CobroConflictError).code).toBe("IdempotencyKeyReused")
      expect(reused.seen).toHaveLength(1)
    })
  )

  it.scopedLive("a 4xx is never retried: 400, 401, 403, 404 each reach the server once", () =>
    Effect.gen(function* () {
      for (const [status, code, type] of [
        [400, "ValidationError", CobroError.CobroBadRequestError],
        [401, "Unauthorized", CobroError.CobroAuthenticationError],
        [403, "Forbidden", CobroError.CobroPermissionError],
        [404, "LinkNotFound", CobroError.CobroNotFoundError]
      ] as const) {
        const server = yield* Proxy.scripted([envelope(status, code), created])
        const cobro = new Cobro({ baseUrl: server.url, apiKey: "k", backoff: fast })
        const failure = yield* failureOf(
          status === 404 ? cobro.links.retrieve("LNK_x") : cobro.links.create({ amount_type: "OPEN" })
        )
        expect(failure, String(status)).toBeInstanceOf(type)
        expect((failure as CobroError.CobroError).status).toBe(status)
        expect(server.seen, String(status)).toHaveLength(1)
      }
    })
  )

  it.scopedLive("a 5xx is retried at most maxRetries times; then the contract's 500 is thrown", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([envelope(500, "InternalError")])
      const cobro = new Cobro({ baseUrl: server.url, apiKey: "k", maxRetries: 2, backoff: fast })
      const failure = yield* failureOf(cobro.links.create({ amount_type: "OPEN" }))
      expect(failure).toBeInstanceOf(CobroError.CobroServerError)
      expect((failure as CobroError.CobroServerError).error).toBeInstanceOf(Errors.InternalServerError)
      expect(server.seen).toHaveLength(3)
      expect(new Set(server.seen.map((s) => s.headers["idempotency-key"])).size).toBe(1)
      // A retry budget of its own for one call.
      const once = yield* Proxy.scripted([envelope(500, "InternalError")])
      yield* failureOf(
        new Cobro({ baseUrl: once.url, apiKey: "k" }).links.create({ amount_type: "OPEN" }, { maxRetries: 0 })
      )
      expect(once.seen).toHaveLength(1)
    })
  )

  it.scopedLive("a Retry-After beyond the client's maximum is not waited for", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([envelope(503, "Unavailable", { "retry-after": "3600" }), created])
      const cobro = new Cobro({ baseUrl: server.url, apiKey: "k", backoff: fast })
      const failure = yield* failureOf(cobro.links.create({ amount_type: "OPEN" }))
      // 503 is not declared on B2: the contract's error is read from the envelope all the same.
      expect(failure).toBeInstanceOf(CobroError.CobroServerError)
      expect((failure as CobroError.CobroServerError).error).toBeInstanceOf(Errors.ServiceUnavailable)
      expect((failure as CobroError.CobroError).status).toBe(503)
      expect(server.seen).toHaveLength(1)
    })
  )

  it.scopedLive("an attempt past its timeout is cut and retried with the same key", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([{ ...created, delayMs: 2000 }, created])
      const cobro = new Cobro({ baseUrl: server.url, apiKey: "k", backoff: fast })
      const started = Date.now()
      const link = yield* Effect.promise(() => cobro.links.create({ amount_type: "OPEN" }, { timeout: 200 }))
      expect(link.payload.payment_link).toBe("LNK_abc")
      expect(Date.now() - started).toBeLessThan(1500)
      expect(server.seen).toHaveLength(2)
      expect(server.seen[1]!.headers["idempotency-key"]).toBe(server.seen[0]!.headers["idempotency-key"])
    })
  )

  it.scopedLive("an AbortSignal aborts the call, its attempt and its waits: CobroAbortError", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([{ ...created, delayMs: 5000 }])
      const cobro = new Cobro({ baseUrl: server.url, apiKey: "k" })
      const started = Date.now()
      const failure = yield* failureOf(
        cobro.links.create({ amount_type: "OPEN" }, { signal: AbortSignal.timeout(200) })
      )
      expect(failure).toBeInstanceOf(CobroError.CobroAbortError)
      expect(Date.now() - started).toBeLessThan(2000)
    })
  )

  it.scopedLive("no server at all: a CobroConnectionError after the retries", () =>
    Effect.gen(function* () {
      const cobro = new Cobro({ baseUrl: "http://127.0.0.1:9", apiKey: "k", maxRetries: 1, backoff: fast })
      expect(yield* failureOf(cobro.links.create({ amount_type: "OPEN" }))).toBeInstanceOf(
        CobroError.CobroConnectionError
      )
    })
  )

  it.scopedLive("the Effect client's calls take their own options (Client.withCallOptions)", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([created])
      const cobro = yield* Client.make({ baseUrl: server.url, apiKey: "k" })
      yield* cobro.links
        .createLink({ payload: { amount_type: "OPEN" } })
        .pipe(Client.withCallOptions({ idempotencyKey: "order-42" }))
      expect(server.seen[0]!.headers["idempotency-key"]).toBe("order-42")
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.scopedLive("arguments the contract refuses are never sent: CobroInvalidRequestError", () =>
    Effect.gen(function* () {
      const server = yield* Proxy.scripted([created])
      const cobro = new Cobro({ baseUrl: server.url, apiKey: "k" })
      // A CLOSE link without its amount breaks B2's schema.
      const invalid = yield* failureOf(cobro.links.create({ amount_type: "CLOSE" }))
      expect(invalid).toBeInstanceOf(CobroError.CobroInvalidRequestError)
      // Exact nanoseconds (a bigint) are valid but JSON.stringify cannot write them (known limit).
      const bigint = yield* failureOf(
        cobro.links.create({ amount_type: "OPEN", expiration_date: 1_796_210_606_636_000_001n })
      )
      expect(bigint).toBeInstanceOf(CobroError.CobroInvalidRequestError)
      expect(server.seen).toHaveLength(0)
    })
  )

  it("the user agent names the package's version", () => {
    const pkg = JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "..", "package.json"), "utf8"))
    expect(VERSION).toBe(pkg.version)
    expect(USER_AGENT).toBe(`cobro-client/${pkg.version}`)
  })
})
