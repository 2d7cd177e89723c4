import { describe, expect, it } from "@effect/vitest"
import * as HttpApi from "@effect/platform/HttpApi"
import * as Nanos from "@cobro/domain/Nanos"
import * as TerminalSandbox from "@cobro/domain/TerminalSandbox"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Runtime from "effect/Runtime"
import { CobroApi } from "@cobro/api/Api"
import * as Security from "@cobro/api/Security"
import * as Bodies from "./support/Bodies.js"
import * as Calls from "./support/Calls.js"
import { stringPaths, withString } from "./support/JsonStrings.js"
import * as TestApp from "./support/TestApp.js"

interface Target {
  readonly method: "POST" | "PUT" | "PATCH" | "GET"
  readonly path: string
  readonly auth: "terminal" | "button" | "admin" | "none"
}

const targets = (
  methods: ReadonlyArray<Target["method"]> = ["POST", "PUT", "PATCH"]
): ReadonlyArray<Target> => {
  const out: Array<Target> = []
  HttpApi.reflect(CobroApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (!methods.includes(endpoint.method as Target["method"])) return
      const auth = middleware.has(Security.TerminalApi as any)
        ? "terminal"
        : middleware.has(Security.PaymentButton as any)
          ? "button"
          : middleware.has(Security.Admin as any)
            ? "admin"
            : "none"
      out.push({ method: endpoint.method as Target["method"], path: endpoint.path, auth })
    }
  })
  return out
}

const fieldsOf = (spec: any, target: Target): ReadonlyArray<string> => {
  const path = target.path.replace(/:(\w+)/g, "{$1}")
  let schema =
    spec.paths[path]?.[target.method.toLowerCase()]?.requestBody?.content?.["application/json"]?.schema
  for (let i = 0; schema?.$ref !== undefined && i < 5; i++) {
    schema = spec.components.schemas[schema.$ref.slice("#/components/schemas/".length)]
  }
  return Object.keys(schema?.properties ?? {})
}

/** The test key a target's authentication takes, or none (the admin token, or no key). */
const keyFor = (merchant: TestApp.MerchantKeys, target: Target): string | undefined =>
  target.auth === "terminal"
    ? merchant.terminal.test
    : target.auth === "button"
      ? merchant.button.test
      : undefined

const body = (fields: ReadonlyArray<string>) =>
  FastCheck.oneof(
    FastCheck.json(),
    FastCheck.string(),
    FastCheck.jsonValue().map((v) => JSON.stringify(v)),
    fields.length === 0
      ? FastCheck.constant("{}")
      : FastCheck.dictionary(FastCheck.constantFrom(...fields), FastCheck.jsonValue(), {
          maxKeys: fields.length
        }).map((v) => JSON.stringify(v))
  )

describe("fuzz", () => {
  it.live(
    "generated bodies to every POST/PUT/PATCH endpoint of CobroApi: never a 5xx, and nothing stored on a rejection",
    TestApp.withTerminal(function* (merchant) {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      const runtime = yield* Effect.runtime<never>()
      const all = targets()
      expect(all.length).toBeGreaterThanOrEqual(8)
      for (const target of all) {
        const path = target.path
          .replace(":merchant_id", merchant.merchantId)
          .replace(":terminal_serial", merchant.serial)
          .replace(/:(\w+)/g, "X1")
        const key = keyFor(merchant, target)
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(body(fieldsOf(spec, target)), (text) =>
              Runtime.runPromise(runtime as Runtime.Runtime<any>)(
                Effect.gen(function* () {
                  const before = yield* TestApp.logSize
                  const reply = yield* TestApp.send(target.method, path, {
                    body: text,
                    ...(key === undefined ? {} : { key }),
                    ...(target.auth === "admin" ? { admin: true } : {})
                  })
                  expect(reply.status, `${target.method} ${path} ${text} → ${reply.text}`).toBeLessThan(500)
                  if (reply.status >= 400) {
                    expect(
                      reply.json?.errors?.length,
                      `${target.method} ${path} → ${reply.text}`
                    ).toBeGreaterThan(0)
                    expect(yield* TestApp.logSize, `${target.method} ${path} ${text}`).toBe(before)
                  }
                })
              )
            ),
            { numRuns: 25 }
          )
        )
      }
    }),
    120_000
  )
})

// ---------------------------------------------------------------------------------------------
// Against real ids: bodies and paths naming resources that exist, of the caller and of another
// merchant, so that the handlers run past their lookups.
// ---------------------------------------------------------------------------------------------

/** The ids one merchant's resources have. */
interface Resources {
  readonly merchant: TestApp.MerchantKeys & { readonly serial: string }
  readonly link: string
  readonly references: ReadonlyArray<string>
  readonly transactions: ReadonlyArray<string>
  readonly tokens: ReadonlyArray<string>
  readonly integrationId: string
}

const SANDBOX_AMOUNTS = [555001, 555002, 555020, 555040, 555042, 10_000]

/** A merchant with a link, intents in every state (active, paid, challenged, refunded) and a checkout. */
const givenResources = (serial: string) =>
  Effect.gen(function* () {
    const merchant = yield* TestApp.createMerchantWithTerminal({ serial })
    const key = merchant.button.test
    const link = yield* Calls.createLink(key, { amount_type: "CLOSE", amount: { total_amount: 50_000 } })
    expect(link.status).toBe(201)
    const intent = (reference: string, total: number) =>
      Calls.createIntent(key, Bodies.intent(reference, total, { description: undefined }))
    const attempt = (reference: string) =>
      Calls.attempt(key, { reference_id: reference, payment_method: Bodies.card })
    yield* intent("fz-active", 10_000)
    yield* intent("fz-paid", 555040)
    const paid = (yield* attempt("fz-paid")).json.transaction_id as string
    yield* intent("fz-challenge", 555020)
    const challenged = (yield* attempt("fz-challenge")).json.payload
    yield* intent("fz-refunded", 555040)
    const refunded = (yield* attempt("fz-refunded")).json.transaction_id as string
    const refund = yield* Calls.requestRefund(key, {
      reference_id: "fz-refunded",
      transaction_id: refunded,
      reason: "returned"
    })
    expect(refund.status).toBe(204)
    const checkout = yield* Calls.checkout(merchant.terminal.test, Bodies.terminalSale(serial))
    expect(checkout.status).toBe(201)
    return {
      merchant,
      link: link.json.payload.payment_link,
      references: ["fz-active", "fz-paid", "fz-challenge", "fz-refunded"],
      transactions: [paid, challenged.transaction_id, refunded],
      tokens: [challenged.uuid_token],
      integrationId: checkout.json.payload.integration_id
    } satisfies Resources
  })

/** The ids a generated request may name: the caller's, another merchant's, and unknown ones. */
const idPools = (own: Resources, other: Resources) => ({
  reference_id: [...own.references, ...other.references, "fz-unknown", ""],
  transaction_id: [...own.transactions, ...other.transactions, own.integrationId, "TRX_unknown", ""],
  token: [...own.tokens, ...other.tokens, "00000000-0000-4000-8000-000000000000"],
  payment_link: [own.link, other.link, "LNK_unknown"],
  payment_id: [...own.transactions, ...other.transactions, own.integrationId, "order-42", "x"],
  merchant_id: [own.merchant.merchantId, other.merchant.merchantId, "MER_unknown"],
  terminal_serial: [own.merchant.serial, other.merchant.serial, "SN-UNKNOWN"],
  notification_id: ["00000000-0000-4000-8000-000000000001", "not-a-uuid"]
})

type Pools = ReturnType<typeof idPools>

/** A real-looking value for a field: an id of the pools for the fields that name resources. */
const valueFor = (pools: Pools, field: string): FastCheck.Arbitrary<unknown> => {
  const pool = (pools as Record<string, ReadonlyArray<string>>)[field]
  return pool === undefined
    ? FastCheck.jsonValue()
    : FastCheck.oneof(
        { weight: 4, arbitrary: FastCheck.constantFrom(...pool) },
        { weight: 1, arbitrary: FastCheck.jsonValue() }
      )
}

/** A valid body for the endpoint (when Cobro knows one), its ids drawn from the pools. */
const validBody = (
  pools: Pools,
  target: Target
): FastCheck.Arbitrary<Record<string, unknown>> | undefined => {
  const pick = (field: keyof Pools) => FastCheck.constantFrom(...pools[field])
  const amount = FastCheck.record({
    currency: FastCheck.constant("COP"),
    total_amount: FastCheck.constantFrom(...SANDBOX_AMOUNTS)
  })
  switch (`${target.method} ${target.path}`) {
    case "POST /payments/app-checkout":
      return FastCheck.record({
        amount: FastCheck.constant(Bodies.saleAmount),
        user_email: FastCheck.constant("seller@shop.co"),
        payment_method: FastCheck.constantFrom("POS", "", "WALLET_A", "PAY_BY_LINK"),
        terminal_model: FastCheck.constantFrom("SMART_PRO", "SMART"),
        terminal_serial: pick("terminal_serial"),
        reference: FastCheck.constant("order-42")
      })
    case "POST /online/link/v1":
      return FastCheck.record({
        amount_type: FastCheck.constantFrom("OPEN", "CLOSE"),
        amount: FastCheck.record({ total_amount: FastCheck.integer({ min: 0, max: 6_000_000 }) }),
        reference: FastCheck.constantFrom("fz-link", "order-42"),
        payment_methods: FastCheck.constantFrom(["CREDIT_CARD"], ["PSE"], [])
      })
    case "POST /v1/payment-intent":
    case "PUT /v1/payment-intent":
      return FastCheck.record({
        reference_id: pick("reference_id"),
        amount,
        description: FastCheck.constant("Order"),
        callback_url: FastCheck.constant("https://shop.example/back")
      })
    case "POST /v1/payment":
      return FastCheck.record({
        reference_id: pick("reference_id"),
        payment_method: FastCheck.record({
          name: FastCheck.constantFrom("CREDIT_CARD", "DEBIT_CARD", "PSE", "BOTON_BANK", "NEQUI"),
          card_number: FastCheck.constantFrom("4111111111111111", "5500000000000004")
        })
      })
    case "POST /v1/payment/void":
      return FastCheck.record({ transaction_id: pick("transaction_id") })
    case "POST /v1/payment/refund":
      return FastCheck.record({
        reference_id: pick("reference_id"),
        transaction_id: pick("transaction_id"),
        reason: FastCheck.constant("returned")
      })
    case "PUT /sandbox/v1/terminals/:terminal_serial/behavior":
      return FastCheck.record({ mode: FastCheck.constantFrom("manual", "auto_approve", "auto_reject") })
    case "POST /sandbox/v1/terminals/:terminal_serial/actions":
      return FastCheck.record({
        action: FastCheck.constantFrom(...TerminalSandbox.Action.literals)
      })
    case "POST /admin/v1/refunds/:transaction_id/review":
      return FastCheck.record({ outcome: FastCheck.constantFrom("APPROVED", "REJECTED") })
    case "PATCH /admin/v1/merchants/:merchant_id/terminals/:terminal_serial":
      return FastCheck.record({ api_enabled: FastCheck.boolean() })
    default:
      return undefined
  }
}

/** A change to a valid body: a member replaced (by an id of the pools or any JSON), or removed. */
const mutated = (pools: Pools, valid: FastCheck.Arbitrary<Record<string, unknown>>) =>
  FastCheck.tuple(
    valid,
    FastCheck.array(
      FastCheck.tuple(
        FastCheck.constantFrom(
          "reference_id",
          "transaction_id",
          "amount",
          "payment_method",
          "terminal_serial",
          "mode",
          "action",
          "outcome",
          "amount_type"
        ),
        FastCheck.oneof(
          FastCheck.constant(undefined),
          FastCheck.jsonValue(),
          FastCheck.constantFrom(...pools.transaction_id, ...pools.reference_id)
        )
      ),
      { maxLength: 2 }
    )
  ).map(([body, changes]) => {
    const copy: Record<string, unknown> = { ...body }
    for (const [field, value] of changes) {
      if (value === undefined) delete copy[field]
      else copy[field] = value
    }
    return copy
  })

/** Bodies for one endpoint: valid ones (as is and mutated) and field dictionaries of real ids. */
const realBody = (
  pools: Pools,
  fields: ReadonlyArray<string>,
  target: Target
): FastCheck.Arbitrary<string> => {
  const valid = validBody(pools, target)
  const dictionary =
    fields.length === 0
      ? FastCheck.constant({})
      : FastCheck.dictionary(FastCheck.constantFrom(...fields), FastCheck.jsonValue(), {
          maxKeys: fields.length
        }).chain((base) =>
          FastCheck.record(
            Object.fromEntries(Object.keys(base).map((field) => [field, valueFor(pools, field)]))
          )
        )
  const arbitraries: Array<FastCheck.Arbitrary<unknown>> = [dictionary]
  if (valid !== undefined) arbitraries.push(valid, mutated(pools, valid), mutated(pools, valid))
  return FastCheck.oneof(...arbitraries).map((value) => Nanos.stringifyWithBigInt(value))
}

/** A path with each parameter drawn from the pools. */
const realPath = (pools: Pools, target: Target): FastCheck.Arbitrary<string> => {
  const params = [...target.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)
  return FastCheck.tuple(
    ...params.map((param) =>
      FastCheck.constantFrom(...((pools as Record<string, ReadonlyArray<string>>)[param] ?? ["X1"]))
    )
  ).map((values) => {
    let i = 0
    return target.path.replace(/:(\w+)/g, () => encodeURIComponent(values[i++]!))
  })
}

/** The admin endpoints last (a rotation revokes the keys the others use; a clock advance closes void windows). */
const adminLast = (all: ReadonlyArray<Target>) => {
  const rank = (t: Target) => (t.auth !== "admin" ? 0 : t.path.endsWith("/keys/rotate") ? 2 : 1)
  return [...all].sort((a, b) => rank(a) - rank(b))
}

/** Sends a request; never a 5xx, and an error (in the envelope when JSON) stores nothing. */
const checkReply = (
  runtime: Runtime.Runtime<any>,
  target: Target,
  path: string,
  text: string | undefined,
  key: string | undefined
) =>
  Runtime.runPromise(runtime)(
    Effect.gen(function* () {
      const before = yield* TestApp.logSize
      const reply = yield* TestApp.send(target.method, path, {
        ...(text === undefined ? {} : { body: text }),
        ...(key === undefined ? {} : { key }),
        ...(target.auth === "admin" ? { admin: true } : {})
      })
      expect(reply.status, `${target.method} ${path} ${text} → ${reply.text}`).toBeLessThan(500)
      if (reply.status >= 400) {
        if ((reply.headers["content-type"] ?? "").includes("json")) {
          expect(reply.json?.errors?.length, `${target.method} ${path} → ${reply.text}`).toBeGreaterThan(0)
        }
        expect(yield* TestApp.logSize, `${target.method} ${path} ${text} → ${reply.text}`).toBe(before)
      }
      return reply.status
    })
  )

/**
 * The resources of two merchants (terminals SN-0001 and SN-0002), the pools of their ids, and the
 * runtime the properties' calls run on.
 */
const twoMerchantsResources = Effect.gen(function* () {
  const own = yield* givenResources("SN-0001")
  const other = yield* givenResources("SN-0002")
  const runtime = (yield* Effect.runtime<never>()) as Runtime.Runtime<any>
  return { own, pools: idPools(own, other), runtime }
})

/** A stable fast-check seed for a name. */
const seedOf = (name: string) => [...name].reduce((hash, c) => (hash * 31 + c.charCodeAt(0)) | 0, 7)

describe("fuzz against real ids", () => {
  it.live(
    "generated bodies naming real links, intents, payments and terminals of the caller and of another merchant: never a 5xx, nothing stored on a rejection",
    TestApp.given(twoMerchantsResources, function* ({ own, pools, runtime }) {
      const spec = (yield* TestApp.send("GET", "/openapi.json")).json
      const statuses = new Map<string, Set<number>>()
      for (const target of adminLast(targets())) {
        const key = keyFor(own.merchant, target)
        const seen = new Set<number>()
        statuses.set(`${target.method} ${target.path}`, seen)
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(
              realPath(pools, target),
              realBody(pools, fieldsOf(spec, target), target),
              async (path, text) => {
                seen.add(await checkReply(runtime, target, path, text, key))
              }
            ),
            // A fixed seed per endpoint: the check below that real ids reached the handlers
            // (some success) is then a fact about the code, not a matter of chance.
            { numRuns: 40, seed: seedOf(`${target.method} ${target.path}`) }
          )
        )
      }
      // The handlers were reached past their lookups: the real ids gave successes where a body can succeed.
      for (const endpoint of [
        "POST /payments/app-checkout",
        "POST /v1/payment-intent",
        "PUT /v1/payment-intent",
        "POST /v1/payment",
        "POST /sandbox/v1/terminals/:terminal_serial/actions"
      ]) {
        expect(
          [...statuses.get(endpoint)!].some((s) => s < 300),
          `${endpoint}: ${[...statuses.get(endpoint)!]}`
        ).toBe(true)
      }
    }),
    300_000
  )

  it.live(
    "GET endpoints with real ids of the caller and of another merchant in the path: never a 5xx",
    TestApp.given(twoMerchantsResources, function* ({ own, pools, runtime }) {
      for (const target of targets(["GET"]).filter((t) => t.path.includes(":"))) {
        const key = keyFor(own.merchant, target)
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(realPath(pools, target), (path) =>
              checkReply(runtime, target, path, undefined, key).then(() => {})
            ),
            { numRuns: 15 }
          )
        )
      }
    }),
    120_000
  )
})

// ---------------------------------------------------------------------------------------------
// Text that cannot be stored (issue 17): a NUL or an unpaired surrogate put in any string of a
// valid body. PostgreSQL refuses both (`BadInput.int.test.ts` in the server runs this there); the
// rule is the wire's, so every store refuses them the same way.
// ---------------------------------------------------------------------------------------------

/** A valid body with a NUL or an unpaired surrogate put in one of its strings (none when it has none). */
const poisoned = (valid: FastCheck.Arbitrary<Record<string, unknown>>) =>
  FastCheck.tuple(
    valid,
    FastCheck.nat(),
    FastCheck.constantFrom("\u0000", "\ud800", "\udfff", "a\u0000b"),
    FastCheck.nat()
  ).map(([body, pick, bad, at]) => {
    const paths = stringPaths(body)
    if (paths.length === 0) return undefined
    return withString(body, paths[pick % paths.length]!, (s) => {
      const i = s.length === 0 ? 0 : at % (s.length + 1)
      return s.slice(0, i) + bad + s.slice(i)
    })
  })

describe("fuzz with text that cannot be stored", () => {
  it.live(
    "a NUL or an unpaired surrogate in any string of a valid body, on every endpoint with one: a 400 in the envelope, never a 5xx, nothing stored",
    TestApp.given(twoMerchantsResources, function* ({ own, pools, runtime }) {
      let checked = 0
      for (const target of adminLast(targets())) {
        const valid = validBody(pools, target)
        if (valid === undefined) continue
        const key = keyFor(own.merchant, target)
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(realPath(pools, target), poisoned(valid), async (path, body) => {
              if (body === undefined) return
              checked++
              const text = Nanos.stringifyWithBigInt(body)
              const status = await checkReply(runtime, target, path, text, key)
              // An empty id in the pools makes a path no route has: 404 before any body is read.
              expect(status, `${target.method} ${path} ${text}`).toBe(path.includes("//") ? 404 : 400)
            }),
            { numRuns: 20, seed: seedOf(`poison ${target.method} ${target.path}`) }
          )
        )
      }
      expect(checked).toBeGreaterThan(100)
    }),
    300_000
  )
})
