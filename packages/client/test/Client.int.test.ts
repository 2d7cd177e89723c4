/**
 * The client against a real Cobro server in the test's process, over a real socket (one server for
 * the file): every group's happy path through the Promise client and the Effect client, typed
 * errors, a retry after a cut connection that makes one resource, no retry of a 4xx, a walk of 250
 * links, and a delivered webhook verified.
 * Slow by design: the walk first makes its 250 links through the API, one request each.
 */
import * as AdminEndpoints from "@cobro/api/AdminEndpoints"
import * as Errors from "@cobro/api/Errors"
import * as OnlineApi from "@cobro/domain/OnlineApi"
import * as TerminalApi from "@cobro/domain/TerminalApi"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Client from "../src/Client.js"
import { Cobro } from "../src/Cobro.js"
import * as CobroError from "../src/CobroError.js"
import * as Pagination from "../src/Pagination.js"
import { verifyWebhook, WebhookVerificationError } from "../src/Webhooks.js"
import * as CobroServer from "./support/CobroServer.js"
import {
  cardAttempt,
  eventually,
  fallbackNotifications,
  givenMerchant,
  terminalSale
} from "./support/Merchants.js"
import * as Proxy from "./support/Proxy.js"

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)
const failureOf = <A>(f: () => Promise<A>) =>
  Effect.promise(() =>
    f().then(
      () => undefined as unknown,
      (error: unknown) => error
    )
  )

/** Every item of an async iterable, by `for await`. */
const collect = <A>(iterable: AsyncIterable<A>) =>
  Effect.promise(async () => {
    const items: Array<A> = []
    for await (const item of iterable) items.push(item)
    return items
  })

/** The server: its URL, its admin token and a Promise client of its admin. */
const server = Effect.map(CobroServer.CobroServer, ({ url, adminToken }) => ({
  url,
  adminToken,
  admin: new Cobro({ baseUrl: url, adminToken })
}))

let serials = 0
const nextSerial = () => `SN-CLIENT-${++serials}`

layer(CobroServer.layer, { excludeTestServices: true, timeout: 120_000 })(
  "the client against Cobro",
  (it) => {
    describe("the Promise client", () => {
      it.scoped(
        "terminal A1–A3 on a simulated terminal in test mode, the fallback query A4, and the delivered webhook verifies (both schemes)",
        () =>
          Effect.gen(function* () {
            const { url, admin } = yield* server
            const hook = yield* Proxy.receiver
            const serial = nextSerial()
            const { keys } = yield* promise(() =>
              givenMerchant(admin, { name: "Tienda Terminal", serial, webhookUrl: hook.url })
            )
            const cobro = new Cobro({ baseUrl: url, apiKey: keys.terminal_api.test.identity_key })

            const methods = yield* promise(() => cobro.terminal.paymentMethods())
            expect(JSON.stringify(methods)).toContain("POS")
            const bound = yield* promise(() => cobro.terminal.boundTerminals())
            expect(JSON.stringify(bound)).toContain(serial)
            const checkout = yield* promise(() => cobro.terminal.checkout(terminalSale(serial, "order-A3")))
            expect(checkout.payload.integration_id).toMatch(/^INT_/)

            const fallback = yield* promise(() => fallbackNotifications(cobro, "order-A3"))
            expect(fallback.notifications[0]!.type).toBe("SALE_APPROVED")

            const delivered = yield* promise(() => eventually(30_000, async () => hook.received[0]))
            // Test-mode notifications are signed with the empty secret.
            const notification = verifyWebhook(delivered.body, delivered.headers, "")
            expect(notification.type).toBe("SALE_APPROVED")
            expect(notification.id).toBe(delivered.headers["webhook-id"])
            expect(typeof notification.time).toBe("bigint")
            expect(notification.data.metadata.reference).toBe("order-A3")
            for (const scheme of ["x-service-signature", "standard-webhooks"] as const) {
              expect(verifyWebhook(delivered.body, delivered.headers, "", { scheme }).id).toBe(
                notification.id
              )
            }
            expect(() => verifyWebhook(delivered.body, delivered.headers, "another secret")).toThrow(
              WebhookVerificationError
            )
            expect(() => verifyWebhook(delivered.body + " ", delivered.headers, "")).toThrow(
              WebhookVerificationError
            )
          })
      )

      it.effect(
        "links B1–B3; a link of nobody is a CobroNotFoundError carrying the contract's NotFound",
        () =>
          Effect.gen(function* () {
            const { url, admin } = yield* server
            const { keys } = yield* promise(() =>
              givenMerchant(admin, { name: "Tienda Links", serial: nextSerial() })
            )
            const cobro = new Cobro({ baseUrl: url, apiKey: keys.payment_button.test.identity_key })
            const methods = yield* promise(() => cobro.links.paymentMethods())
            expect(JSON.stringify(methods)).toContain("CREDIT_CARD")
            const created = yield* promise(() =>
              cobro.links.create({
                amount_type: "CLOSE",
                amount: { currency: "COP", total_amount: 25_000 },
                description: "Two coffees",
                reference: "order-B2"
              })
            )
            expect(created.payload.url).toContain(created.payload.payment_link)
            const record = yield* promise(() => cobro.links.retrieve(created.payload.payment_link))
            expect(record).toMatchObject({
              id: created.payload.payment_link,
              total: 25_000,
              status: "ACTIVE"
            })
            // Exact nanoseconds (beyond 2^53), decoded as a bigint.
            expect(typeof record.creation_date).toBe("bigint")
            expect(record.creation_date % 1_000_000n).toBe(0n)

            const missing = yield* failureOf(() => cobro.links.retrieve("LNK_nobody"))
            expect(missing).toBeInstanceOf(CobroError.CobroNotFoundError)
            expect((missing as CobroError.CobroNotFoundError).error).toBeInstanceOf(Errors.NotFound)
            expect((missing as CobroError.CobroNotFoundError).code).toBe("LinkNotFound")
            // Arguments that break the contract are refused before anything is sent.
            const invalid = yield* failureOf(() => cobro.links.create({ amount_type: "CLOSE" }))
            expect(invalid).toBeInstanceOf(CobroError.CobroInvalidRequestError)
          })
      )

      it.effect("an online intent (C1, C2), its attempt with the sandbox's card (C4) and the payment", () =>
        Effect.gen(function* () {
          const { url, admin } = yield* server
          const { keys } = yield* promise(() =>
            givenMerchant(admin, { name: "Tienda Online", serial: nextSerial() })
          )
          const cobro = new Cobro({ baseUrl: url, apiKey: keys.payment_button.test.identity_key })
          const intent = yield* promise(() =>
            cobro.online.intents.create({
              reference_id: "order-C1",
              amount: { currency: "COP", total_amount: 50_000 },
              description: "Order",
              callback_url: "https://shop.example/back"
            })
          )
          expect(intent).toMatchObject({ reference_id: "order-C1", status: "ACTIVE", test: true })
          expect((yield* promise(() => cobro.online.intents.retrieve("order-C1"))).reference_id).toBe(
            "order-C1"
          )
          const attempt = yield* promise(() => cobro.online.payments.create(cardAttempt("order-C1")))
          const transactionId =
            "transaction_id" in attempt ? attempt.transaction_id : attempt.payload.transaction_id
          expect(transactionId).toMatch(/^TRX_/)
          const payment = yield* promise(() =>
            eventually(30_000, async () => {
              const read = await cobro.online.payments.retrieve("order-C1")
              return read.status === "RUNNING" ? undefined : read
            })
          )
          expect(payment).toMatchObject({ transaction_id: transactionId, status: "APPROVED" })
          // The same reference again is the contract's 409, never retried.
          const again = yield* failureOf(() =>
            cobro.online.intents.create({
              reference_id: "order-C1",
              amount: { currency: "COP", total_amount: 50_000 }
            })
          )
          expect(again).toBeInstanceOf(CobroError.CobroConflictError)
          expect((again as CobroError.CobroConflictError).code).toBe("IntentAlreadyExists")
        })
      )

      it.effect(
        "admin: a merchant created is listed (for await); audit: the latest checkpoint and the public key",
        () =>
          Effect.gen(function* () {
            const { url, admin } = yield* server
            const created = yield* promise(() =>
              admin.admin.merchants.create({ name: "Tienda Listada Única" })
            )
            const listed = (yield* collect(admin.admin.merchants.list({ name: "Listada Única" }))).map(
              (m) => m.id
            )
            expect(listed).toEqual([created.merchant_id])

            const audit = new Cobro({ baseUrl: url })
            const key = yield* promise(() => audit.audit.publicKey())
            expect(key).toMatch(/^\S+\+[0-9a-f]{8}\+\S+\n$/)
            const checkpoint = yield* promise(() =>
              eventually(30_000, () => audit.audit.latestCheckpoint().catch(() => undefined))
            )
            const [origin] = checkpoint.split("\n")
            expect(key.startsWith(`${origin}+`)).toBe(true)
            const unauthorized = yield* failureOf(() =>
              new Cobro({ baseUrl: url, adminToken: "wrong" }).admin.merchants.page()
            )
            expect(unauthorized).toBeInstanceOf(CobroError.CobroAuthenticationError)
          })
      )
    })

    it.effect(
      "the Effect client: every group through HttpApiClient, failures typed as the contract declares them",
      () =>
        Effect.gen(function* () {
          const { url, admin, adminToken } = yield* server
          const operator = yield* Client.make({ baseUrl: url, adminToken })
          const created = yield* operator.admin.createMerchant({ payload: { name: "Tienda Effect" } })
          const merchant = created.merchant_id
          const serial = nextSerial()
          yield* Effect.promise(() =>
            admin.admin.terminals.bind(merchant, {
              terminal_model: "SMART_PRO",
              terminal_serial: serial,
              name: "Caja"
            })
          )
          yield* operator.admin.patchTerminal({
            path: { merchant_id: merchant, terminal_serial: serial },
            payload: { api_enabled: true }
          })
          yield* operator.admin.setPaymentMethods({
            path: { merchant_id: merchant },
            payload: Schema.decodeUnknownSync(AdminEndpoints.PaymentMethodsRequest)({
              terminal: { POS: true },
              link: { CREDIT_CARD: { min: 1000, max: 5_000_000 } }
            })
          })

          const terminal = yield* Client.make({
            baseUrl: url,
            apiKey: created.keys.terminal_api.test.identity_key
          })
          // The Effect client takes the contract's decoded types (the Promise client, the wire's).
          const checkout = yield* terminal.terminal.checkout({
            payload: Schema.decodeUnknownSync(TerminalApi.CheckoutRequest)(
              terminalSale(serial, "order-effect")
            )
          })
          expect(checkout.payload.integration_id).toMatch(/^INT_/)
          const fallback = yield* terminal.terminal
            .notifications({
              path: { payment_id: "order-effect" },
              urlParams: { is_external_reference: true }
            })
            .pipe(
              Effect.filterOrFail((found) => found.notifications.length > 0),
              Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds")))
            )
          expect(fallback.notifications[0]!.type).toBe("SALE_APPROVED")

          const button = yield* Client.make({
            baseUrl: url,
            apiKey: created.keys.payment_button.test.identity_key
          })
          const link = yield* button.links.createLink({ payload: { amount_type: "OPEN" } })
          const record = yield* button.links.readLink({ path: { payment_link: link.payload.payment_link } })
          expect(record.amount_type).toBe("OPEN")
          const intent = yield* button.online.createIntent({
            payload: Schema.decodeUnknownSync(OnlineApi.IntentCreateRequest)({
              reference_id: "order-effect",
              amount: { currency: "COP", total_amount: 9_000 }
            })
          })
          expect(intent.status).toBe("ACTIVE")
          // C4 answers 201, as the contract documents it.
          const attempt = yield* button.online.attempt({
            payload: Schema.decodeUnknownSync(OnlineApi.AttemptRequest)(cardAttempt("order-effect"))
          })
          expect(
            "transaction_id" in attempt ? attempt.transaction_id : attempt.payload.transaction_id
          ).toMatch(/^TRX_/)

          const notFound = yield* Effect.flip(button.links.readLink({ path: { payment_link: "LNK_nobody" } }))
          expect(notFound).toBeInstanceOf(Errors.NotFound)
          expect(notFound._tag === "NotFound" && notFound.errors[0].code).toBe("LinkNotFound")
          // A terminal key on the link API: the security middleware's Forbidden.
          const forbidden = yield* Effect.flip(
            terminal.links.createLink({ payload: { amount_type: "OPEN" } })
          )
          expect(forbidden).toBeInstanceOf(Errors.Forbidden)

          const links = yield* operator.adminLists.listLinks({
            path: { merchant_id: merchant },
            urlParams: {}
          })
          expect(links.data.map((l) => l.id)).toEqual([link.payload.payment_link])
          const key = yield* operator.audit.publicKey()
          expect(key.endsWith("\n")).toBe(true)
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    it.scoped(
      "a connection cut after the server answered: the retry with the same Idempotency-Key returns the same link, and one link exists",
      () =>
        Effect.gen(function* () {
          const { url, admin } = yield* server
          const { merchant, keys } = yield* promise(() =>
            givenMerchant(admin, { name: "Tienda Cortada", serial: nextSerial() })
          )
          const proxy = yield* Proxy.proxy(url)
          const cobro = new Cobro({ baseUrl: proxy.url, apiKey: keys.payment_button.test.identity_key })
          proxy.cutNext(1)
          const created = yield* promise(() =>
            cobro.links.create({ amount_type: "CLOSE", amount: { currency: "COP", total_amount: 12_000 } })
          )
          const posts = proxy.seen.filter((s) => s.method === "POST")
          expect(posts).toHaveLength(2)
          expect(posts[1]!.headers["idempotency-key"]).toBe(posts[0]!.headers["idempotency-key"])
          const listed = (yield* collect(admin.admin.links.list({ merchant }))).map((l) => l.id)
          expect(listed).toEqual([created.payload.payment_link])
        })
    )

    it.scoped("a 4xx is never retried: 401, 403, 404 and a 409 each reach the server once", () =>
      Effect.gen(function* () {
        const { url, admin } = yield* server
        const { keys } = yield* promise(() =>
          givenMerchant(admin, { name: "Tienda 4xx", serial: nextSerial() })
        )
        const proxy = yield* Proxy.proxy(url)
        const button = new Cobro({ baseUrl: proxy.url, apiKey: keys.payment_button.test.identity_key })
        const cases: ReadonlyArray<
          readonly [() => Promise<unknown>, new (...args: any) => CobroError.CobroError]
        > = [
          [
            () =>
              new Cobro({ baseUrl: proxy.url, apiKey: "id_test_unknown" }).links.create({
                amount_type: "OPEN"
              }),
            CobroError.CobroAuthenticationError
          ],
          [
            () =>
              new Cobro({ baseUrl: proxy.url, apiKey: keys.terminal_api.test.identity_key }).links.create({
                amount_type: "OPEN"
              }),
            CobroError.CobroPermissionError
          ],
          [() => button.links.retrieve("LNK_nobody"), CobroError.CobroNotFoundError],
          [
            () =>
              button.online.intents.create({
                reference_id: "dup",
                amount: { currency: "COP", total_amount: 5_000 }
              }),
            CobroError.CobroConflictError
          ]
        ]
        yield* promise(() =>
          button.online.intents.create({
            reference_id: "dup",
            amount: { currency: "COP", total_amount: 5_000 }
          })
        )
        for (const [call, type] of cases) {
          const before = proxy.seen.length
          expect(yield* failureOf(call)).toBeInstanceOf(type)
          expect(proxy.seen.length - before, type.name).toBe(1)
        }
      })
    )

    it.effect(
      "for await walks 250 links through starting_after, newest first, none missing; a page call gives one page; the Effect stream the same",
      () =>
        Effect.gen(function* () {
          const { url, admin, adminToken } = yield* server
          const { merchant, keys } = yield* promise(() =>
            givenMerchant(admin, { name: "Tienda 250", serial: nextSerial() })
          )
          const cobro = new Cobro({ baseUrl: url, apiKey: keys.payment_button.test.identity_key })
          const created: Array<string> = []
          for (let i = 0; i < 250; i++) {
            created.push(
              (yield* promise(() => cobro.links.create({ amount_type: "OPEN" }))).payload.payment_link
            )
          }
          const walked = (yield* collect(admin.admin.links.list({ merchant, limit: 7 }))).map((l) => l.id)
          expect(new Set(walked).size).toBe(250)
          expect(walked).toEqual([...created].reverse())

          const page = yield* promise(() => admin.admin.links.page({ merchant, limit: 5 }))
          expect(page.has_more).toBe(true)
          expect(page.data.map((l) => l.id)).toEqual(walked.slice(0, 5))

          const operator = yield* Client.make({ baseUrl: url, adminToken })
          const streamed = yield* Stream.runCollect(
            Pagination.stream((starting_after) =>
              operator.adminLists.listLinks({
                path: { merchant_id: merchant },
                urlParams: { limit: 100, ...(starting_after === undefined ? {} : { starting_after }) }
              })
            )
          )
          expect(Chunk.toReadonlyArray(streamed).map((l) => l.id)).toEqual(walked)
        }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  }
)
