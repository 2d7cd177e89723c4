/**
 * The effect floor of `npm run bench -- http`: the raw floor's work (its tables, statements,
 * validation outcomes, response bodies and statuses) written on Effect's own stack as Cobro
 * configures it: `HttpApi` with Schema-declared payloads and successes served by
 * `HttpApiBuilder.serve()` on `NodeHttpServer`, statements through `SqlClient` (`@effect/sql-pg`
 * over a `pg` pool with Cobro's settings), tracing off. What it costs above the raw floor is the
 * stack's; what Cobro costs above it is Cobro's own.
 *
 * A3 sends A3's statements in A3's order, three round trips: the key with the merchant's methods and
 * the terminal's binding; the checkout with its claim, then the simulated terminal's approval in
 * process; the answer with its notification. The raw floor's A3 has the same shape.
 */
import * as Server from "@cobro/server/Server"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto"
import * as NodeHttp from "node:http"
import * as Pg from "pg"
import * as HttpRequests from "../../../bench/HttpRequests.js"

// ---------------------------------------------------------------------------------------------
// What both floors share: the tables, the merchant, the simulated terminal
// ---------------------------------------------------------------------------------------------

/** The floors' tables: a key per integration, the merchant, its terminals, checkouts, links, notifications. */
const tables = `
  CREATE TABLE api_keys (hash text PRIMARY KEY, merchant_id text NOT NULL, integration text NOT NULL, sandbox boolean NOT NULL);
  CREATE TABLE merchants (id text PRIMARY KEY, enabled boolean NOT NULL, terminal_methods text[] NOT NULL,
    link_min numeric NOT NULL, link_max numeric NOT NULL);
  CREATE TABLE terminals (merchant_id text NOT NULL, serial text NOT NULL, model text NOT NULL, api_enabled boolean NOT NULL,
    PRIMARY KEY (merchant_id, serial));
  CREATE TABLE checkouts (integration_id text PRIMARY KEY, transaction_id text NOT NULL UNIQUE, merchant_id text NOT NULL,
    sandbox boolean NOT NULL, terminal_serial text NOT NULL, terminal_model text NOT NULL, payment_method text NOT NULL,
    total numeric NOT NULL, request jsonb NOT NULL, status text NOT NULL, claimed_at timestamptz,
    answered_at timestamptz, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE links (id text PRIMARY KEY, merchant_id text NOT NULL, sandbox boolean NOT NULL, amount_type text NOT NULL,
    total numeric, reference text NOT NULL, description text, expiration_date bigint, status text NOT NULL,
    creation_date bigint NOT NULL);
  CREATE TABLE notifications (id bigserial PRIMARY KEY, checkout_id text NOT NULL, body jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now());`

export const hashKey = (key: string) => createHash("sha256").update(key, "utf8").digest("hex")

/** `Authorization: x-api-key <key>`'s key. */
export const keyOf = (header: string): string | undefined => /^x-api-key[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1]

/**
 * Creates the floors' tables and one merchant with a terminal and a payment-button key (test keys),
 * `terminals` terminals bound and enabled, POS active and links from 1000 to 5,000,000; not measured.
 */
export const setUp = async (pool: Pg.Pool, terminals: number) => {
  await pool.query(tables)
  const merchantId = `MER_${randomBytes(8).toString("hex")}`
  const terminalKey = `id_test_term_${randomBytes(16).toString("hex")}`
  const buttonKey = `id_test_btn_${randomBytes(16).toString("hex")}`
  await pool.query(
    `INSERT INTO api_keys VALUES ($1, $3, 'terminal_api', true), ($2, $3, 'payment_button', true)`,
    [hashKey(terminalKey), hashKey(buttonKey), merchantId]
  )
  await pool.query(`INSERT INTO merchants VALUES ($1, true, '{POS}', 1000, 5000000)`, [merchantId])
  for (let w = 0; w < terminals; w++) {
    await pool.query(`INSERT INTO terminals VALUES ($1, $2, 'SMART_PRO', true)`, [
      merchantId,
      HttpRequests.serial(w)
    ])
  }
  return { merchantId, terminalKey, buttonKey }
}

/** The simulated terminal in auto-approve: a function call, no I/O. */
export const approve = (checkout: { readonly integrationId: string; readonly total: number }) => ({
  status: "APPROVED" as const,
  authorization_code: String(randomInt(1_000_000)).padStart(6, "0"),
  approved_total: checkout.total
})

/** The webhook body A3's answer schedules. */
export const notification = (
  checkout: { readonly integrationId: string; readonly transactionId: string; readonly total: number },
  answer: ReturnType<typeof approve>
) => ({
  event: "checkout.answered",
  integration_id: checkout.integrationId,
  transaction_id: checkout.transactionId,
  status: answer.status,
  authorization_code: answer.authorization_code,
  total_amount: answer.approved_total
})

export const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "")}`

// ---------------------------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------------------------

const Amount = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())
const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))
const Email = Text(255).pipe(Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))

const CheckoutRequest = Schema.Struct({
  amount: Schema.Struct({
    currency: Schema.Literal("COP"),
    total_amount: Amount,
    tip_amount: Amount,
    taxes: Schema.Array(Schema.Struct({ type: Text(255), base: Amount, value: Amount }))
  }).pipe(
    Schema.filter(
      (amount) =>
        amount.taxes.reduce((sum, tax) => sum + tax.value, 0) + amount.tip_amount <= amount.total_amount ||
        "taxes and tip above the total"
    )
  ),
  user_email: Email,
  payment_method: Schema.Literal("", "POS", "WALLET_A", "WALLET_B", "PAY_BY_LINK", "PAY_BY_QR_SERVICE"),
  terminal_model: Schema.Literal("SMART", "SMART_PRO"),
  terminal_serial: Text(64).pipe(Schema.minLength(1)),
  reference: Schema.optional(Text(255))
})

const LinkRequest = Schema.Struct({
  amount_type: Schema.Literal("CLOSE", "OPEN"),
  amount: Schema.optional(Schema.Struct({ total_amount: Schema.optional(Amount) })),
  reference: Schema.optional(Text(255)),
  description: Schema.optional(Text(1000)),
  expiration_date: Schema.optional(Schema.Number),
  callback_url: Schema.optional(Text(2048).pipe(Schema.startsWith("https://"))),
  payment_methods: Schema.optional(
    Schema.Array(Schema.Literal("CREDIT_CARD", "PSE", "NEQUI", "BANCOLOMBIA_TRANSFER"))
  ),
  payer_email: Schema.optional(Email)
}).pipe(
  Schema.filter(
    (link) =>
      link.amount_type !== "CLOSE" ||
      link.amount?.total_amount !== undefined || {
        path: ["amount", "total_amount"],
        message: "a CLOSE link needs amount.total_amount"
      }
  )
)

/** The floors' envelope: `errors` empty on success. */
const NoErrors = Schema.Tuple()

const CheckoutCreated = Schema.Struct({
  payload: Schema.Struct({ integration_id: Schema.String }),
  errors: NoErrors
})

const LinkCreated = Schema.Struct({
  payload: Schema.Struct({ payment_link: Schema.String, url: Schema.String }),
  errors: NoErrors
})

/** B3's record, in the raw floor's key order. */
const LinkRecord = Schema.Struct({
  api_version: Schema.Literal(1),
  id: Schema.String,
  total: Schema.Number,
  subtotal: Schema.Number,
  tip_amount: Schema.Number,
  taxes: Schema.Tuple(),
  status: Schema.String,
  expiration_date: Schema.NullOr(Schema.Number),
  creation_date: Schema.Number,
  description: Schema.NullOr(Schema.String),
  payment_method: Schema.Literal(""),
  transaction_id: Schema.Null,
  amount_type: Schema.String,
  is_sandbox: Schema.Boolean,
  reference: Schema.String
})

const ErrorItem = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String)
})
const envelope = { payload: Schema.Struct({}), errors: Schema.Array(ErrorItem) }

/** The floors' error responses: the envelope with one item, by status. */
const errorEnvelope =
  <Self>() =>
  <Tag extends string>(identifier: Tag, status: number) =>
    Schema.Class<Self>(identifier)(envelope, HttpApiSchema.annotations({ status }))
class BadRequest extends errorEnvelope<BadRequest>()("BadRequest", 400) {}
class Unauthorized extends errorEnvelope<Unauthorized>()("Unauthorized", 401) {}
class Forbidden extends errorEnvelope<Forbidden>()("Forbidden", 403) {}
class NotFound extends errorEnvelope<NotFound>()("NotFound", 404) {}
class InternalError extends errorEnvelope<InternalError>()("InternalError", 500) {}

const failure =
  <A>(make: new (fields: Schema.Struct.Type<typeof envelope>) => A) =>
  (code: string, message: string, field?: string): A =>
    new make({ payload: {}, errors: [{ code, message, ...(field === undefined ? {} : { field }) }] })

const badRequest = failure(BadRequest)
const unauthorized = failure(Unauthorized)("Unauthorized", "wrong key")
const forbidden = failure(Forbidden)("Forbidden", "wrong key")

/** The merchant and mode of the request's key. */
class Caller extends Context.Tag("EffectFloor/Caller")<
  Caller,
  { readonly merchantId: string; readonly sandbox: boolean }
>() {}

/** The payment-button key: `x-api-key` → SHA-256 → the key's row. */
class ButtonKey extends HttpApiMiddleware.Tag<ButtonKey>()("EffectFloor/ButtonKey", {
  provides: Caller,
  failure: Schema.Union(Unauthorized, Forbidden),
  security: { apiKey: HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }) }
}) {}

class TerminalGroup extends HttpApiGroup.make("terminal").add(
  HttpApiEndpoint.post("checkout", "/payments/app-checkout")
    .setPayload(CheckoutRequest)
    .addSuccess(CheckoutCreated, { status: 201 })
    .addError(BadRequest)
    .addError(Unauthorized)
    .addError(Forbidden)
    .addError(InternalError)
) {}

class LinkGroup extends HttpApiGroup.make("links")
  .add(
    HttpApiEndpoint.post("createLink", "/online/link/v1")
      .setPayload(LinkRequest)
      .addSuccess(LinkCreated, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
  )
  .add(
    HttpApiEndpoint.get("readLink", "/online/link/v1/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(LinkRecord)
      .addError(NotFound)
  )
  .middleware(ButtonKey) {}

class FloorApi extends HttpApi.make("effect-floor").add(TerminalGroup).add(LinkGroup) {}

// ---------------------------------------------------------------------------------------------
// The handlers
// ---------------------------------------------------------------------------------------------

const layerButtonKey = Layer.effect(
  ButtonKey,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      apiKey: (header) => {
        const key = keyOf(Redacted.value(header))
        if (key === undefined) return Effect.fail(unauthorized)
        return sql<{ merchant_id: string; integration: string; sandbox: boolean }>`
          SELECT merchant_id, integration, sandbox FROM api_keys WHERE hash = ${hashKey(key)}`.pipe(
          Effect.orDie,
          Effect.flatMap(([row]) =>
            row === undefined
              ? Effect.fail(unauthorized)
              : row.integration !== "payment_button"
                ? Effect.fail(forbidden)
                : Effect.succeed({ merchantId: row.merchant_id, sandbox: row.sandbox })
          )
        )
      }
    }
  })
)

interface KeyedTerminal {
  readonly merchant_id: string
  readonly integration: string
  readonly sandbox: boolean
  readonly enabled: boolean | null
  readonly terminal_methods: ReadonlyArray<string> | null
  readonly model: string | null
  readonly api_enabled: boolean | null
}

/**
 * A3 authenticates in its handler: its key is read with the merchant and the terminal the body
 * names, one statement, so the body is decoded first.
 */
const layerTerminal = HttpApiBuilder.group(FloorApi, "terminal", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("checkout", ({ payload: request }) =>
      Effect.gen(function* () {
        const http = yield* HttpServerRequest.HttpServerRequest
        const key = keyOf(http.headers["authorization"] ?? "")
        if (key === undefined) return yield* Effect.fail(unauthorized)
        const [found] = yield* sql<KeyedTerminal>`
          SELECT k.merchant_id, k.integration, k.sandbox, m.enabled, m.terminal_methods, t.model, t.api_enabled
          FROM api_keys k
          LEFT JOIN merchants m ON m.id = k.merchant_id
          LEFT JOIN terminals t ON t.merchant_id = k.merchant_id AND t.serial = ${request.terminal_serial}
          WHERE k.hash = ${hashKey(key)}`.pipe(Effect.orDie)
        if (found === undefined) return yield* Effect.fail(unauthorized)
        if (found.integration !== "terminal_api") return yield* Effect.fail(forbidden)
        if (found.enabled === null || found.terminal_methods === null)
          return yield* Effect.fail(failure(InternalError)("AP001", "unknown merchant"))
        if (!found.terminal_methods.includes(request.payment_method))
          return yield* Effect.fail(badRequest("AP003", "method not active", "payment_method"))
        if (!found.enabled || found.model !== request.terminal_model || found.api_enabled !== true)
          return yield* Effect.fail(badRequest("AP004", "terminal not bound", "terminal_serial"))
        const checkout = {
          integrationId: newId("INT"),
          transactionId: newId("TRX"),
          total: request.amount.total_amount
        }
        yield* sql`
          INSERT INTO checkouts (integration_id, transaction_id, merchant_id, sandbox, terminal_serial, terminal_model,
            payment_method, total, request, status, claimed_at)
          VALUES (${checkout.integrationId}, ${checkout.transactionId}, ${found.merchant_id}, ${found.sandbox},
            ${request.terminal_serial}, ${request.terminal_model}, ${request.payment_method}, ${checkout.total},
            ${JSON.stringify(request)}, 'SENDING', now())`.pipe(Effect.orDie)
        const answer = approve(checkout)
        yield* sql`
          WITH answered AS (
            UPDATE checkouts SET status = ${answer.status}, answered_at = now()
            WHERE integration_id = ${checkout.integrationId} RETURNING integration_id
          )
          INSERT INTO notifications (checkout_id, body)
          SELECT integration_id, ${JSON.stringify(notification(checkout, answer))} FROM answered`.pipe(
          Effect.orDie
        )
        return { payload: { integration_id: checkout.integrationId }, errors: [] as const }
      })
    )
  })
)

interface LinkRow {
  readonly id: string
  readonly total: string | null
  readonly status: string
  readonly expiration_date: string | null
  readonly creation_date: string
  readonly description: string | null
  readonly amount_type: string
  readonly sandbox: boolean
  readonly reference: string
}

const layerLinks = HttpApiBuilder.group(FloorApi, "links", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("createLink", ({ payload: request }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const [merchant] = yield* sql<{ enabled: boolean; link_min: string; link_max: string }>`
            SELECT enabled, link_min, link_max FROM merchants WHERE id = ${caller.merchantId}`.pipe(
            Effect.orDie
          )
          if (merchant === undefined || !merchant.enabled)
            return yield* Effect.fail(failure(Forbidden)("MerchantDisabled", "disabled"))
          const total = request.amount?.total_amount
          if (total !== undefined && (total < Number(merchant.link_min) || total > Number(merchant.link_max)))
            return yield* Effect.fail(
              badRequest("ValidationError", "amount out of range", "amount.total_amount")
            )
          const id = newId("LNK")
          yield* sql`
            INSERT INTO links (id, merchant_id, sandbox, amount_type, total, reference, description, expiration_date,
              status, creation_date)
            VALUES (${id}, ${caller.merchantId}, ${caller.sandbox}, ${request.amount_type}, ${total ?? null},
              ${request.reference ?? ""}, ${request.description ?? null}, ${request.expiration_date ?? null},
              'ACTIVE', ${(BigInt(Date.now()) * 1_000_000n).toString()})`.pipe(Effect.orDie)
          return { payload: { payment_link: id, url: `https://checkout.example/${id}` }, errors: [] as const }
        })
      )
      .handle("readLink", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const [link] = yield* sql<LinkRow>`
            SELECT id, total, status, expiration_date, creation_date, description, amount_type, sandbox, reference
            FROM links WHERE id = ${path.id} AND merchant_id = ${caller.merchantId} AND sandbox = ${caller.sandbox}`.pipe(
            Effect.orDie
          )
          if (link === undefined)
            return yield* Effect.fail(
              failure(NotFound)("LinkNotFound", "no payment link with this id for this key")
            )
          const total = Number(link.total)
          return {
            api_version: 1 as const,
            id: link.id,
            total,
            subtotal: total,
            tip_amount: 0,
            taxes: [] as const,
            status: link.status,
            expiration_date: link.expiration_date === null ? null : Number(link.expiration_date),
            creation_date: Number(link.creation_date),
            description: link.description,
            payment_method: "" as const,
            transaction_id: null,
            amount_type: link.amount_type,
            is_sandbox: link.sandbox,
            reference: link.reference
          }
        })
      )
  })
)

/**
 * Tracing off the way that takes: the tracer disabled and the HTTP tracer middleware skipped, both
 * set for the scope of the layers built on them (the server's request fibers inherit them).
 * `HttpMiddleware.withTracerDisabledWhen(Layer.empty, …)` would only hold while the empty layer
 * is built.
 */
const layerTracingOff = Layer.mergeAll(
  Layer.setTracerEnabled(false),
  Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
)

/** The effect floor on a fresh database: its tables and merchant made, listening on a free port. */
export const make = async (databaseUrl: string, terminals: number): Promise<HttpRequests.Target> => {
  // Cobro's pool settings; idle connections never closed (0), so that no backend's CPU is lost
  // between two readings (`Cpu.backendsUs`).
  const pool = new Pg.Pool({
    connectionString: databaseUrl,
    max: Server.defaultPoolSize,
    application_name: "effect-floor",
    options: "-c jit=off",
    idleTimeoutMillis: 0
  })
  pool.on("error", () => {})
  const { terminalKey, buttonKey } = await setUp(pool, terminals)
  const layer = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(Layer.merge(layerTerminal, layerLinks)))),
    Layer.provide(layerButtonKey),
    Layer.provideMerge(NodeHttpServer.layer(NodeHttp.createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(PgClient.layerFromPool({ acquire: Effect.succeed(pool) })),
    Layer.provide(layerTracingOff)
  )
  const runtime = ManagedRuntime.make(layer)
  const server = await runtime.runPromise(HttpServer.HttpServer).catch(async (error) => {
    await pool.end()
    throw error
  })
  if (server.address._tag !== "TcpAddress") throw new Error("the effect floor did not listen on TCP")
  return {
    name: "effect-floor",
    url: `http://127.0.0.1:${server.address.port}`,
    terminalKey,
    buttonKey,
    links: [],
    close: async () => {
      await runtime.dispose()
      await pool.end()
    }
  }
}
